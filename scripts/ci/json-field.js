#!/usr/bin/env node
// @ts-check
// A field of a JSON document, for CI's shell steps (.ci/steps/):
//
//   node scripts/ci/json-field.js FILE PATH    prints the field PATH (dotted: keys.test, batch.id) of FILE's
//                                              document, or of standard input's if FILE is -
//
// Exits 1, saying so, if the document has no such field.

import fs from 'node:fs';

const [file, field] = process.argv.slice(2);
if (!file || !field) {
  console.error('usage: node scripts/ci/json-field.js FILE|- PATH');
  process.exit(2);
}
const document = JSON.parse(fs.readFileSync(file === '-' ? 0 : file, 'utf8'));
let value = document;
for (const key of field.split('.')) value = value?.[key];
if (value === undefined) {
  console.error(`${file === '-' ? 'stdin' : file}: no ${field} in ${JSON.stringify(document)}`);
  process.exit(1);
}
console.log(value);
