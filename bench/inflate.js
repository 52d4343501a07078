#!/usr/bin/env node
// The floor of bds's pre-flight of a .jsonl.gz: a bare streaming inflate of the file in Node, read and inflated
// in 1 MiB chunks as bds's pass does (src/core/datapass/data-pass.ts), its output dropped. No hash, no count, no
// check. bench/cases/preflight.js runs it in a process of its own:
//
//   node bench/inflate.js <file.jsonl.gz>     prints {"seconds": <the pipeline's time>, "bytes": <inflated>}
//
// The time excludes Node's start-up, as bds's pre-flight phase (from its events) does.

import fs from 'node:fs';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';

const CHUNK = 1 << 20;
const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node bench/inflate.js <file.jsonl.gz>\n');
  process.exit(2);
}

let bytes = 0;
const started = performance.now();
await pipeline(
  fs.createReadStream(file, { highWaterMark: CHUNK }),
  zlib.createGunzip({ chunkSize: CHUNK }),
  new Writable({
    highWaterMark: 4 * CHUNK,
    write(chunk, _encoding, callback) {
      bytes += chunk.length;
      callback();
    },
  }),
);
process.stdout.write(`${JSON.stringify({ seconds: (performance.now() - started) / 1000, bytes })}\n`);
