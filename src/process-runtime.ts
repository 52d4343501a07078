// The running process as a Runtime: read by the two entry points only (bin/bds.js for the CLI, src/index.ts for
// the library), and only when they are used, never on import.

import { readFileSync } from 'node:fs';
import os from 'node:os';
import { errnoCode } from './core/guards.js';
import { UsageError } from './core/errors.js';
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
    homedir: env.HOME || os.homedir(),
    hostname: os.hostname(),
    pid: process.pid,
    uid: process.getuid?.(),
    now: () => new Date(),
    sleep,
    random: Math.random,
    isProcessAlive,
    processStartedAt,
  };
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

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}
