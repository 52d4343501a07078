#!/usr/bin/env node
// @ts-check
// The README's container commands as written, for CI to run them (.ci/steps/52-image.sh):
//
//   node scripts/ci/readme-container-commands.js README    prints the `podman load` and the
//                                                          `podman run ... --network host` of the README's
//                                                          "In a container" section, one a line
//
// Exits 1 unless there are exactly those two.

import fs from 'node:fs';

const text = fs.readFileSync(process.argv[2] ?? '', 'utf8');
const section = text.split(/^### In a container.*$/m)[1]?.split(/^##/m)[0] ?? '';
const commands = [...section.matchAll(/^```sh\n([\s\S]*?)^```/gm)].flatMap((m) =>
  (m[1] ?? '').replace(/\\\n\s*/g, '').split('\n'),
);
const run = commands.filter((c) => /^podman load |^podman run .*--network host/.test(c));
if (run.length !== 2) throw new Error(`the README's container commands: ${JSON.stringify(commands)}`);
console.log(run.join('\n'));
