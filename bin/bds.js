#!/usr/bin/env node
// The entry point and the only code of the CLI that touches the process's argv, env, signals and exit.
import v8 from 'node:v8';
import { nodeTooOld, tooOldMessage } from './node-check.js';

// The Node.js version first, before any of bds loads: on an old Node, one line and exit 2 instead of an
// internal error from whatever fails first. So nothing from dist/ is imported statically, and this file
// avoids top-level await (which also lets the standalone binary bundle it as CommonJS).
if (nodeTooOld(process.versions.node)) {
  process.stderr.write(`${tooOldMessage(process.versions.node)}\n`);
  process.exitCode = 2;
} else {
  start();
}

async function start() {
  const [{ main }, { InterruptedError }, { processRuntime }, { releaseHeldLocks }] = await Promise.all([
    import('../dist/cli/main.js'),
    import('../dist/core/errors.js'),
    import('../dist/process-runtime.js'),
    import('../dist/core/delivery/held-locks.js'),
  ]);

  // undici parses HTTP with a WebAssembly module; V8's optimising tier-up of that module costs about 35 MB of
  // RSS (measured with /usr/bin/time -v) and gains nothing at bds's handful of responses. bds's own JSON Lines
  // validator (WebAssembly too) needs that tier-up: the baseline compiler runs it at about half the speed. V8
  // tiers up a function once it has run for a budget of code; a budget of 2e9 bytes is never reached by
  // undici's parser, and is reached by the validator within the first few MB of a file.
  v8.setFlagsFromString('--wasm-tiering-budget=2000000000');

  // A reader that went away (`bds list | head -1`) is not a failure of bds: stop writing to it and carry on,
  // so that a delivery is never cut off half-way by a closed log pipe. A result that cannot be written (a
  // full disk) is: reported below. Progress and messages on stderr that cannot be written are lost, not fatal.
  let resultLost;
  process.stdout.on('error', (error) => {
    if (error.code !== 'EPIPE') resultLost ??= error;
  });
  process.stderr.on('error', () => {});

  const controller = new AbortController();
  const exitOnSecond = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };
  for (const signal of Object.keys(exitOnSecond)) {
    process.on(signal, () => {
      // A second signal means "now": no more clean-up but the locks, which would stop the next run.
      if (controller.signal.aborted) {
        releaseHeldLocks();
        process.stderr.write(`bds: interrupted again by ${signal}: stopped at once\n`);
        process.exit(exitOnSecond[signal]);
      }
      controller.abort(new InterruptedError(signal));
    });
  }

  // Assigned, not spread: the runtime reads the working folder only when a command asks for it, and standard
  // input (which Node opens on first use) only when a command reads it.
  const runtime = Object.assign(processRuntime(), {
    stdout: process.stdout,
    stderr: process.stderr,
    signal: controller.signal,
  });
  Object.defineProperty(runtime, 'stdin', { get: () => process.stdin, enumerable: true });
  const code = await main(process.argv.slice(2), runtime);
  // Let stdout drain (a pipe may be asynchronous), then leave without waiting for idle sockets. A result that
  // could not be written (a full disk) is a failure, not a success with an empty file. The stream reports its
  // error event after this callback: wait for it.
  process.stdout.write('', () =>
    setImmediate(() => {
      if (resultLost && code === 0) {
        process.stderr.write(`bds: cannot write the result to stdout: ${resultLost.message}\n`);
        process.exit(2);
      }
      process.exit(code);
    }),
  );
}
