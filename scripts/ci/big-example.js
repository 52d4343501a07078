#!/usr/bin/env node
// @ts-check
// A delivery folder of more than 4 MiB of plain .jsonl, made from the packaged example, for CI's run of the
// arm64 binary (.ci/steps/51-arm64.sh): a file that size is passed over on a thread of its own, checked by the
// WebAssembly parser and gzipped on worker threads.
//
//   node scripts/ci/big-example.js EXAMPLE DIR    EXAMPLE is examples/records-2024-05 (records.jsonl.gz,
//                                                 report.json, schema.json); DIR, an existing folder, gets
//                                                 records.jsonl (5 MiB), report.json and schema.json
//
// The example's lines over and over, their order ids made unique; the report counts the rows.

import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const [example = '', dir = ''] = process.argv.slice(2);
const SIZE = 5 * 1048576;
const lines = zlib
  .gunzipSync(fs.readFileSync(path.join(example, 'records.jsonl.gz')))
  .toString()
  .trimEnd()
  .split('\n');
const out = [];
let bytes = 0;
for (let round = 0; bytes < SIZE; round++) {
  for (const line of lines) {
    const record = JSON.parse(line);
    if (record.order_id) record.order_id = `${record.order_id.slice(0, 24)}${round.toString(16).padStart(8, '0')}`;
    const text = JSON.stringify(record);
    out.push(text);
    bytes += text.length + 1;
  }
}
fs.writeFileSync(path.join(dir, 'records.jsonl'), `${out.join('\n')}\n`);
const report = JSON.parse(fs.readFileSync(path.join(example, 'report.json'), 'utf8'));
report.files = [{ ...report.files[0], path: 'records.jsonl', rows_in: out.length, rows_out: out.length }];
report.totals = { ...report.totals, rows_in: out.length, rows_out: out.length };
fs.writeFileSync(path.join(dir, 'report.json'), JSON.stringify(report, null, 2));
fs.copyFileSync(path.join(example, 'schema.json'), path.join(dir, 'schema.json'));
console.log(`generated ${path.join(dir, 'records.jsonl')}: ${out.length} records, ${bytes} bytes`);
