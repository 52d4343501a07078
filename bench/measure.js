// Running and timing a command on a shared machine: its wall time, CPU, peak RSS and events, how much CPU
// other processes took meanwhile (Linux: /proc/stat), a quiet moment to start in, and the busy load.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { childTicks } from './startup.js';

const SECONDS_PER_TICK = 1 / 100; // USER_HZ is 100 on Linux

export const log = (text) => process.stderr.write(`[bench] ${text}\n`);

export function which(tool) {
  return spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).status === 0;
}

export function machine() {
  const cpus = os.cpus();
  return {
    cpu: `${cpus[0]?.model ?? 'unknown'}`.trim(),
    cores: os.availableParallelism?.() ?? cpus.length,
    memory: `${Math.round(os.totalmem() / 2 ** 30)} GiB`,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
  };
}

export const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/**
 * CPU seconds the whole machine has used so far (Linux: /proc/stat), or NaN. Less this process's and its
 * children's, it tells how much other processes took during a run.
 */
export function machineCpu() {
  try {
    const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = fields;
    return (user + nice + system + irq + softirq + steal) * SECONDS_PER_TICK;
  } catch {
    return NaN;
  }
}

/** CPU seconds of a running process, 0 once it is gone. */
export function processCpu(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * SECONDS_PER_TICK; // utime, stime
  } catch {
    return 0;
  }
}

/** Processes whose CPU is the bench's own doing, not "other processes" (the sandbox process: `cpu()`). */
const ownProcesses = [];

/** Counts the CPU of `child` (anything with a `cpu()` in seconds) as the bench's own from now on. */
export function countAsOwn(child) {
  ownProcesses.push(child);
}

/** CPU seconds of this process, of its waited-for children, and of the processes counted as its own. */
function ownCpu() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6 + childTicks() * SECONDS_PER_TICK + ownProcesses.reduce((sum, p) => sum + p.cpu(), 0);
}

/**
 * The busy machine: one `gzip -9 </dev/zero >/dev/null` per core, each keeping a core busy until stop(). Its
 * CPU is the bench's own doing, not "other processes".
 */
class Load {
  constructor() {
    this.children = [];
  }

  start() {
    const zero = fs.openSync('/dev/zero', 'r');
    try {
      for (let n = 0; n < (os.availableParallelism?.() ?? os.cpus().length); n++) {
        this.children.push(spawn('gzip', ['-9', '-c'], { stdio: [zero, 'ignore', 'ignore'] }));
      }
    } finally {
      fs.closeSync(zero);
    }
  }

  /** CPU seconds the load has taken so far. */
  cpu() {
    return this.children.reduce((sum, child) => sum + processCpu(child.pid), 0);
  }

  stop() {
    for (const child of this.children) child.kill();
    this.children = [];
  }
}

export const load = new Load();
process.on('exit', () => load.stop());

/** CPU seconds of everything but other processes: this one, its children and the load. */
const benchCpu = () => ownCpu() + load.cpu();

/**
 * Waits for a second in which other processes took at most `maxOthers` cores' worth of CPU (a minute at
 * most), so that a timed run starts on a quiet machine rather than in the middle of someone's test suite.
 */
export async function quietMoment(maxOthers) {
  for (let second = 0; second < 60; second++) {
    const machineStart = machineCpu();
    const benchStart = benchCpu();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    if (!(machineCpu() - machineStart - (benchCpu() - benchStart) > maxOthers)) return;
  }
}

/** Reads the file once so that every contender starts with it in the page cache. */
export async function warmCache(file) {
  for await (const _ of fs.createReadStream(file, { highWaterMark: 4 << 20 })) {
    // nothing
  }
}

/**
 * Runs a command, on the cores `cpus` names when given, calling `onEvent` with each bench/bds-timed.js event as it
 * arrives; returns its wall time, output, exit code, peak RSS (GNU time -v when `rss` and available, writing its
 * report in `scratch`, else /proc/<pid>/status VmHWM polled; both count the process's threads), how many cores'
 * worth of CPU other processes took meanwhile (`others`), and its events (bench/bds-timed.js's stderr lines).
 */
export function measure(command, args, { env, rss = false, scratch = os.tmpdir(), cpus, onEvent } = {}) {
  const useTime = rss && fs.existsSync('/usr/bin/time');
  const timeFile = useTime ? path.join(scratch, `time-${process.pid}-${Date.now()}`) : undefined;
  const [timed, timedArgs] = useTime ? ['/usr/bin/time', ['-v', '-o', timeFile, command, ...args]] : [command, args];
  const [cmd, argv] = cpus ? ['taskset', ['-c', cpus, timed, ...timedArgs]] : [timed, timedArgs];
  return new Promise((resolve, reject) => {
    const machineStart = machineCpu();
    const benchStart = benchCpu();
    const started = performance.now();
    const child = spawn(cmd, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let hwmKiB = 0;
    let poll;
    if (rss && !useTime) {
      poll = setInterval(() => {
        try {
          const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
          hwmKiB = Math.max(hwmKiB, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
        } catch {
          // gone
        }
      }, 20);
    }
    child.stdout.setEncoding('utf8').on('data', (text) => (stdout += text));
    let seen = 0;
    child.stderr.setEncoding('utf8').on('data', (text) => {
      stderr += text;
      // Each event as it arrives, for what must be read at its moment (the storage host's CPU).
      const end = stderr.lastIndexOf('\n') + 1;
      for (const line of stderr.slice(seen, end).split('\n')) {
        if (line.startsWith('event ')) onEvent?.(JSON.parse(line.slice('event '.length)));
      }
      seen = end;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const wall = (performance.now() - started) / 1000;
      const others = (machineCpu() - machineStart - (benchCpu() - benchStart)) / wall;
      clearInterval(poll);
      let peakRss = hwmKiB ? hwmKiB * 1024 : NaN;
      let cpu = NaN;
      if (timeFile) {
        try {
          const report = fs.readFileSync(timeFile, 'utf8');
          peakRss = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(report)?.[1]) * 1024;
          // CPU seconds of the command (its threads too): what a busy machine disturbs least.
          cpu =
            Number(/User time \(seconds\): ([\d.]+)/.exec(report)?.[1]) +
            Number(/System time \(seconds\): ([\d.]+)/.exec(report)?.[1]);
        } catch {
          // keep NaN
        }
        fs.rmSync(timeFile, { force: true });
      }
      const events = stderr
        .split('\n')
        .filter((line) => line.startsWith('event '))
        .map((line) => JSON.parse(line.slice('event '.length)));
      resolve({ code, wall, stdout, stderr, events, peakRss, cpu, others: Math.max(0, others) });
    });
  });
}
