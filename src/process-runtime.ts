// The running process as a Runtime: read by the two entry points only (bin/bds.js for the CLI, src/index.ts for
// the library), and only when they are used, never on import.

import { readFileSync } from 'node:fs';
import os from 'node:os';
import { sleep, type Env, type Runtime } from './core/runtime.js';

export function processRuntime(given: { env?: Env | undefined; cwd?: string | undefined } = {}): Runtime {
  const env = given.env ?? process.env;
  return {
    env,
    cwd: given.cwd ?? process.cwd(),
    homedir: env.HOME || os.homedir(),
    hostname: os.hostname(),
    pid: process.pid,
    now: () => new Date(),
    sleep,
    random: Math.random,
    isProcessAlive,
    processStartedAt,
  };
}

/** When a process started, from Linux's /proc; undefined where that cannot be read (other systems). */
function processStartedAt(pid: number): number | undefined {
  try {
    // Field 22 of /proc/<pid>/stat, counted after the command name (which may hold spaces) in parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    const bootSeconds = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1]);
    // Linux counts in clock ticks of 100 a second (USER_HZ) on every architecture bds runs on.
    const ms = bootSeconds * 1000 + ticks * 10;
    return Number.isFinite(ms) ? ms : undefined;
  } catch {
    return undefined;
  }
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}
