#!/usr/bin/env node
// bin/bds.js with a stopwatch: the same CLI run, the same V8 flags, plus one line on stderr per event of the
// delivery, `event {"at": <ms since start>, "type": ..., "step": ...}`, so that the benchmark takes the
// phases' times from data rather than from the wording of progress lines (and whether the pass was remembered:
// `fromCache` on `checked`).
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import { main } from '../dist/cli/main.js';
import { processRuntime } from '../dist/process-runtime.js';

v8.setFlagsFromString('--wasm-tiering-budget=2000000000');

const code = await main(process.argv.slice(2), {
  ...processRuntime(),
  stdout: process.stdout,
  stderr: process.stderr,
  signal: new AbortController().signal,
  observe: (event) => {
    if (event.type !== 'step') return;
    process.stderr.write(
      `event ${JSON.stringify({ at: performance.now(), type: event.type, step: event.step, fromCache: event.fromCache })}\n`,
    );
  },
});
process.stdout.write('', () => process.exit(code));
