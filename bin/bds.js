#!/usr/bin/env node
// The entry point and the only code that touches the process: argv, env, signals, exit.
import os from 'node:os';
import { main } from '../dist/main.js';
import { InterruptedError } from '../dist/errors.js';
import { sleep } from '../dist/context.js';

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
