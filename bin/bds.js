#!/usr/bin/env node
// The entry point and the only code that touches the process's argv, env, signals and exit.
import os from 'node:os';
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
  const [{ main }, { InterruptedError }, { sleep }] = await Promise.all([
    import('../dist/main.js'),
    import('../dist/errors.js'),
    import('../dist/context.js'),
  ]);

  // undici parses HTTP with a WebAssembly module; V8's optimising tier-up of that module costs about 35 MB of
  // RSS (measured with /usr/bin/time -v) and gains nothing at bds's handful of responses. The baseline
  // compiler alone keeps the peak RSS of bds deliver near what its data pass needs (see bench/README.md).
  v8.setFlagsFromString('--liftoff-only');

  // A reader that went away (`bds list | head -1`) is not a failure of bds: stop writing to it and carry on,
  // so that a delivery is never cut off half-way by a closed log pipe.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});

  const controller = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      // A second signal means "now": no more clean-up.
      if (controller.signal.aborted) process.exit(signal === 'SIGINT' ? 130 : 143);
      controller.abort(new InterruptedError(signal));
    });
  }

  const code = await main(process.argv.slice(2), {
    env: process.env,
    cwd: process.cwd(),
    homedir: os.homedir(),
    hostname: os.hostname(),
    pid: process.pid,
    stdout: process.stdout,
    stderr: process.stderr,
    signal: controller.signal,
    now: () => new Date(),
    sleep,
    random: Math.random,
    isProcessAlive: (pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch (error) {
        return error.code === 'EPERM';
      }
    },
  });
  // Let stdout drain (a pipe may be asynchronous), then leave without waiting for idle sockets.
  process.stdout.write('', () => process.exit(code));
}
