#!/usr/bin/env node
// The entry point and the only code of the CLI that touches the process's argv, env, signals and exit.
//
// CommonJS (bin/package.json), unlike the rest of bds: Node's ES module loader costs about a fifth of a bare
// `node -e 0` to start, and `bds --version` and `bds --help` answer without it (answer-quickly.js). It starts
// when the program is imported. Builtins are required without the node: prefix, which Node 12 lacks, and
// those the quick answers do not need (tty and v8 cost 3 ms each) only where they are used.
'use strict';
const nodeModule = require('module');
const os = require('os');
const { nodeTooOld, tooOldMessage } = require('./node-check.js');

// The Node.js version first, before any of bds loads: on an old Node, one line and exit 2 instead of an
// internal error from whatever fails first. So nothing from dist/ is loaded before it.
if (nodeTooOld(process.versions.node)) {
  process.stderr.write(`${tooOldMessage(process.versions.node)}\n`);
  process.exitCode = 2;
} else {
  start();
}

async function start() {
  enableCompileCache();
  const args = process.argv.slice(2);
  if (require('./answer-quickly.js').answeredQuickly(args)) return;

  // A reader that went away (`bds list | head -1`) is not a failure of bds: stop writing to it and carry on,
  // so that a delivery is never cut off half-way by a closed log pipe. A result that cannot be written (a
  // full disk) is: reported below. Progress and messages on stderr that cannot be written are lost, not fatal.
  let resultLost;
  process.stdout.on('error', (error) => {
    if (error.code !== 'EPIPE') resultLost ??= error;
  });
  process.stderr.on('error', () => {});

  // zlib inflates and deflates the data pass on libuv's thread pool (src/core/datapass/): one thread per core,
  // at most 8, and one for reads, rather than libuv's 4. libuv reads it when it starts the pool, at its first
  // use, which is after this (nothing above reads a file asynchronously).
  process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, Math.min(os.availableParallelism(), 8) + 1));

  const [{ main }, { InterruptedError, interruptSignals }, { processRuntime }, { releaseHeldLocks }] =
    await Promise.all([
      import('../dist/cli/main.js'),
      import('../dist/core/errors.js'),
      import('../dist/process-runtime.js'),
      import('../dist/core/delivery/held-locks.js'),
    ]);

  // undici parses HTTP with a WebAssembly module; V8's optimising tier-up of that module costs about 35 MB of
  // RSS (measured with /usr/bin/time -v) and gains nothing at bds's handful of responses. bds's own JSON Lines
  // parser (WebAssembly too) needs that tier-up: the baseline compiler runs it at about half the speed. V8
  // tiers up a function once it has run for a budget of code; a budget of 2e9 bytes is never reached by
  // undici's parser, and is reached by bds's within the first few MB of a file.
  require('v8').setFlagsFromString('--wasm-tiering-budget=2000000000');

  const controller = new AbortController();
  // Ctrl-C; SIGTERM; a closed terminal; on Windows Ctrl-Break too. Each one's exit code is the second one's.
  const exitOnSecond = interruptSignals(process.platform);
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
  // Let stdout drain (a pipe may be asynchronous). The stream reports its error event after this callback: wait
  // for it.
  const resultWritten = () =>
    new Promise((resolve) => process.stdout.write('', () => setImmediate(() => resolve(resultLost))));
  runtime.resultWritten = resultWritten;
  const code = await main(args, runtime);
  // Then leave without waiting for idle sockets. A command's lost result was reported where it ran (before its
  // end ping); this is for what was written outside a command (commander's own output).
  await resultWritten();
  if (resultLost && code === 0) {
    process.stderr.write(`bds: cannot write the result to stdout: ${resultLost.message}\n`);
    process.exit(2);
  }
  process.exit(code);
}

/**
 * Node's compile cache (Node 22.1 and later): the compiled code of bds's modules and packages is kept on disk,
 * and later starts skip compiling them. Under bds's own cache folder, $XDG_CACHE_HOME/bds/compile-cache
 * (default ~/.cache/bds/compile-cache; on Windows %LOCALAPPDATA%\bds\compile-cache), never beside the
 * package, which may be read-only. NODE_COMPILE_CACHE, when set, has Node use that folder instead, and
 * NODE_DISABLE_COMPILE_CACHE turns it off. Not in the standalone binary: its program is no file the cache could know (scripts/sea-main.cjs). A folder that cannot
 * be written only costs the speed-up.
 */
function enableCompileCache() {
  if (typeof nodeModule.enableCompileCache !== 'function' || process.getBuiltinModule?.('node:sea')?.isSea()) return;
  const { compileCacheFolder } = require('./compile-cache.js');
  try {
    // os.homedir() reads USERPROFILE on Windows and HOME elsewhere, as the Runtime's home folder does.
    nodeModule.enableCompileCache(compileCacheFolder(process.env, process.platform, os.homedir()));
  } catch {
    // started without it
  }
}
