#!/usr/bin/env node
// Start-up of the standalone binary next to `node -e 0` and the npm install: node bench/startup.js [runs]
// (default 40), after `npm run build:binary`. Every command runs once per round, in turn, so that a busy
// machine slows them all alike; a first round warms the disk cache and is not counted. Prints, per command,
// the median and the fastest wall time and the mean CPU time (user + system, from /proc, Linux only),
// which a busy machine disturbs least.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PINNED, nodeFromNpm } from '../scripts/node-from-npm.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BINARY = path.join(ROOT, 'release', 'bds-linux-x64');
const BIN = path.join(ROOT, 'bin', 'bds.js');
const runs = Number(process.argv[2] ?? 40);
if (!fs.existsSync(BINARY)) {
  process.stderr.write('bench/startup.js: release/bds-linux-x64 is missing: npm run build:binary\n');
  process.exit(2);
}
const node24 = nodeFromNpm(24);
const here = `Node ${process.versions.node}`;
const embedded = `Node ${PINNED[24].version}`;
const cases = [
  [`node -e 0 (${here}, this machine's)`, process.execPath, ['-e', '0']],
  [`node -e 0 (${embedded}, the binary's)`, node24, ['-e', '0']],
  ['bds-linux-x64 --version', BINARY, ['--version']],
  ['bds-linux-x64 --help', BINARY, ['--help']],
  [`node bin/bds.js --version (${here})`, process.execPath, [BIN, '--version']],
  [`node bin/bds.js --help (${here})`, process.execPath, [BIN, '--help']],
  [`node bin/bds.js --version (${embedded})`, node24, [BIN, '--version']],
];

/** CPU time of this process's waited-for children so far, in clock ticks (usually 10 ms). */
function childTicks() {
  const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return Number(fields[13]) + Number(fields[14]); // cutime, cstime
}

const wall = cases.map(() => []);
const ticks = cases.map(() => 0);
for (let round = 0; round <= runs; round++) {
  cases.forEach(([name, command, args], i) => {
    const cpuBefore = childTicks();
    const started = process.hrtime.bigint();
    const res = spawnSync(command, args, { stdio: 'ignore' });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (res.status !== 0) throw new Error(`${name} exited ${res.status}`);
    if (round > 0) {
      wall[i].push(ms);
      ticks[i] += childTicks() - cpuBefore;
    }
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const width = Math.max(...cases.map(([name]) => name.length));
const msPerTick = 1000 / 100; // USER_HZ is 100 on Linux
console.log(`${'command'.padEnd(width)}  wall median  wall fastest  CPU mean   (${runs} runs each)`);
cases.forEach(([name], i) => {
  const cells = [median(wall[i]), Math.min(...wall[i]), (ticks[i] * msPerTick) / runs].map((v) => `${v.toFixed(0)} ms`);
  console.log(`${name.padEnd(width)}  ${cells[0].padStart(11)}  ${cells[1].padStart(12)}  ${cells[2].padStart(8)}`);
});
console.log(`binary: ${(fs.statSync(BINARY).size / 1e6).toFixed(1)} MB; load average ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
