// The running process as a Runtime: read by the two entry points only (bin/bds.js for the CLI, src/index.ts for
// the library), and only when they are used, never on import.

import { readFileSync } from 'node:fs';
import os from 'node:os';
import { errnoCode } from './core/guards.js';
import { UsageError } from './core/errors.js';
import type { Platform } from './core/platform.js';
import { sleep, type Env, type Runtime } from './core/runtime.js';

export function processRuntime(given: { env?: Env | undefined; cwd?: string | undefined } = {}): Runtime {
  const env = given.env ?? process.env;
  return {
    env,
    // Read when a command needs it, inside its error handling: a working folder deleted under the shell is one
    // line and exit 2 (and `bds --help` still works), not Node's crash in uv_cwd.
    get cwd() {
      return given.cwd ?? workingFolder();
    },
    homedir: homeFolder(env, process.platform),
    platform: process.platform,
    hostname: os.hostname(),
    pid: process.pid,
    uid: process.getuid?.(),
    now: () => new Date(),
    sleep,
    random: Math.random,
    isProcessAlive: (pid) => processAlive(() => process.kill(pid, 0)),
    processStartedAt: startTimes(process.platform),
  };
}

/**
 * The home folder as Node's os.homedir() finds it, but from the environment bds was given (a library caller's
 * `env`): USERPROFILE on Windows, where a HOME that is set at all is a Unix shell's (Git Bash, MSYS2, Cygwin),
 * HOME elsewhere; else the system's answer.
 */
export function homeFolder(env: Env, platform: Platform): string {
  return (platform === 'win32' ? env.USERPROFILE : env.HOME) || os.homedir();
}

/**
 * When a process started: Linux tells, in /proc. macOS and Windows tell no other process without a command
 * run or a native call, so there the answer is the machine's boot, the earliest any running process can have
 * started: a lock written before it is stale whoever has its pid now, and after it a reused pid keeps the lock
 * (its hint says which file to remove). This process knows its own start: a lock naming its pid, written
 * before it started, is a dead process's whose pid it was given (Wine gives a crashed process's pid to the
 * next one at once).
 */
export function startTimes(platform: Platform): (pid: number) => number | undefined {
  if (platform === 'linux') return processStartedAt;
  return (pid) => Date.now() - (pid === process.pid ? process.uptime() : os.uptime()) * 1000;
}

function workingFolder(): string {
  try {
    return process.cwd();
  } catch (error) {
    const code = errnoCode(error);
    throw new UsageError(
      code === 'ENOENT'
        ? 'the working folder no longer exists (it was deleted or moved)'
        : `cannot read the working folder (${code ?? 'unreadable'})`,
      { hint: 'cd to an existing folder and run the command again' },
    );
  }
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

/**
 * Whether the process that `probe` (process.kill(pid, 0): no signal is sent, on Windows neither) asks about
 * runs. Node answers alike on every system: ESRCH, no such process (on Windows too, for a pid that is gone
 * or has exited); EPERM, it runs as another user (Windows: access denied to it). Any other answer means the
 * system cannot tell, and a lock is kept rather than taken from a process that may be running.
 */
export function processAlive(probe: () => void): boolean {
  try {
    probe();
    return true;
  } catch (error) {
    return errnoCode(error) !== 'ESRCH';
  }
}
