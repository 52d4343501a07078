#!/usr/bin/env node
// Start-up times, measured so that a busy machine disturbs them least: every command runs once per round, in
// turn, so that load slows them all alike; a first round warms the disk cache and is not counted. Per
// command: the median and the fastest wall time and the mean CPU time (user + system, from /proc, Linux only).
//
// bench/cases/startup.js uses timeCommands() for `node -e 0`, `bds --version` and `bds --help`. Run directly, it
// compares the standalone binary with `node -e 0` and the npm install (after `npm run build:binary`):
//
//   node bench/startup.js [runs]     (default 40)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BINARY = path.join(ROOT, 'release', 'bds-linux-x64');
const BIN = path.join(ROOT, 'bin', 'bds.js');
const SECONDS_PER_TICK = 1 / 100; // USER_HZ is 100 on Linux

/** CPU time of this process's waited-for children so far, in clock ticks, or NaN off Linux. */
export function childTicks() {
  try {
    const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return Number(fields[13]) + Number(fields[14]); // cutime, cstime
  } catch {
    return NaN;
  }
}

/**
 * Runs each of `cases` ([name, command, args]) once per round, `runs` rounds after a warm-up round; returns
 * per case {name, wallMedian, wallFastest, cpuMean}, in seconds. Throws when a command fails.
 */
export function timeCommands(cases, runs) {
  const wall = cases.map(() => []);
  const ticks = cases.map(() => 0);
  for (let round = 0; round <= runs; round++) {
    cases.forEach(([name, command, args], i) => {
      const cpuBefore = childTicks();
      const started = process.hrtime.bigint();
      const res = spawnSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 20 });
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (res.status !== 0) throw new Error(`${name} exited ${res.status}: ${res.stderr}`);
      if (round > 0) {
        wall[i].push(seconds);
        ticks[i] += childTicks() - cpuBefore;
      }
    });
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return cases.map(([name], i) => ({
    name,
    wallMedian: median(wall[i]),
    wallFastest: Math.min(...wall[i]),
    cpuMean: (ticks[i] * SECONDS_PER_TICK) / runs,
  }));
}

async function main() {
  const runs = Number(process.argv[2] ?? 40);
  if (!fs.existsSync(BINARY)) {
    process.stderr.write('bench/startup.js: release/bds-linux-x64 is missing: npm run build:binary\n');
    process.exit(2);
  }
  const { PINNED, nodeFromNpm } = await import('../scripts/node-from-npm.js');
  const { NODE_LINE } = await import('../scripts/build-binary.js');
  const embeddedNode = nodeFromNpm(NODE_LINE);
  const here = `Node ${process.versions.node}`;
  const embedded = `Node ${PINNED[NODE_LINE].version}`;
  const results = timeCommands(
    [
      [`node -e 0 (${here}, this machine's)`, process.execPath, ['-e', '0']],
      [`node -e 0 (${embedded}, the binary's)`, embeddedNode, ['-e', '0']],
      ['bds-linux-x64 --version', BINARY, ['--version']],
      ['bds-linux-x64 --help', BINARY, ['--help']],
      [`node bin/bds.js --version (${here})`, process.execPath, [BIN, '--version']],
      [`node bin/bds.js --help (${here})`, process.execPath, [BIN, '--help']],
      [`node bin/bds.js --version (${embedded})`, embeddedNode, [BIN, '--version']],
    ],
    runs,
  );
  const width = Math.max(...results.map((r) => r.name.length));
  const ms = (seconds) => `${(seconds * 1000).toFixed(0)} ms`;
  console.log(`${'command'.padEnd(width)}  wall median  wall fastest  CPU mean   (${runs} runs each)`);
  for (const r of results) {
    console.log(
      `${r.name.padEnd(width)}  ${ms(r.wallMedian).padStart(11)}  ${ms(r.wallFastest).padStart(12)}  ${ms(r.cpuMean).padStart(8)}`,
    );
  }
  console.log(
    `binary: ${(fs.statSync(BINARY).size / 1e6).toFixed(1)} MB; load average ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
