// The lock of a delivery: one file per (API, source, period, product) beside the delivery records, so that two
// bds processes never deliver the same month at once. A lock whose holder is gone is taken over.

import { randomUUID } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { errnoCode, writerIsRunning } from '../guards.js';
import { LockedError } from '../errors.js';
import { makeFolders, whileHeld, writeFileAtomic, type WriteStep } from '../files.js';
import type { Platform } from '../platform.js';
import { holdLock } from './held-locks.js';

export interface LockOwner {
  pid: number;
  hostname: string;
  startedAt: string;
}

/** How a lock is taken: by whom, and how its holder is known to be gone. */
export interface LockAttempt {
  /** The lock file. */
  file: string;
  owner: LockOwner;
  /** The system: how a file held open by another process is waited for (files.ts). */
  platform: Platform;
  isProcessAlive: (pid: number) => boolean;
  /** When a running process started (ms since the epoch), where the system tells; see Runtime. */
  processStartedAt?: ((pid: number) => number | undefined) | undefined;
  /** Of the lock file; default 0o600. */
  mode?: number;
  /** Told each step of writing the lock file (tests inject a crash between them). */
  onStep?: ((step: WriteStep) => void) | undefined;
}

export interface LockOptions extends LockAttempt {
  /** What is being delivered, for the message: "src_1 2024-05 records". */
  subject: string;
}

/**
 * Takes the lock, or throws LockedError naming its holder; returns the function that releases it. Until then it
 * is among the held locks that the entry point releases if it must exit at once.
 */
export function takeLock(options: LockOptions): () => void {
  makeFolders(path.dirname(options.file), 0o700);
  const taken = tryLock(options);
  if ('release' in taken) return taken.release;
  const { holder } = taken;
  throw new LockedError(
    `another bds process (${holder ? `pid ${holder.pid} on ${holder.hostname}, since ${holder.startedAt}` : 'unknown'}) ` +
      `is delivering ${options.subject}`,
    { hint: `wait for it to finish; if it is gone, remove ${options.file}` },
  );
}

/**
 * Takes the lock once, taking it over from a holder that is gone; or says who holds it (undefined: not known).
 * The lock is among the held locks until released.
 */
export function tryLock({
  file,
  owner,
  platform,
  isProcessAlive,
  processStartedAt,
  mode,
  onStep,
}: LockAttempt): { release: () => void } | { holder: LockOwner | undefined } {
  for (let attempt = 0; attempt < 3; attempt++) {
    // Written whole to a temp file and linked into place, so nobody ever reads a half-written lock. A lock that
    // a power cut undoes is no loss (its holder is gone with it): a folder not flushed does not fail it.
    try {
      writeFileAtomic(file, JSON.stringify(owner), {
        platform,
        exclusive: true,
        onStep,
        onFolderNotFlushed: () => {},
        ...(mode === undefined ? {} : { mode }),
      });
      const release = holdLock(() => {
        const current = readOwner(file);
        if (current?.pid === owner.pid && current.startedAt === owner.startedAt) rmSync(file, { force: true });
      });
      return { release };
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') throw error;
    }
    const holder = readOwner(file);
    // A pid means nothing on another machine (a shared home folder): such a lock is never taken over.
    if (holder && (holder.hostname !== owner.hostname || holderIsRunning(holder, isProcessAlive, processStartedAt))) {
      return { holder };
    }
    // Taking over: move the stale lock aside. Only one process can move it; if what was moved is not the
    // stale lock we looked at, a rival took over first: put theirs back and stop.
    const aside = `${file}.${randomUUID()}.stale`;
    try {
      whileHeld(platform, () => renameSync(file, aside));
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') continue;
      throw error;
    }
    const moved = readOwner(aside);
    if (moved && holder && (moved.pid !== holder.pid || moved.startedAt !== holder.startedAt)) {
      try {
        linkSync(aside, file);
      } catch {
        // A third process holds it by now; the rival's lock was already superseded.
      }
      rmSync(aside, { force: true });
      return { holder: moved };
    }
    rmSync(aside, { force: true });
  }
  return { holder: readOwner(file) };
}

/**
 * A lock file whose holder is gone (a crashed or killed bds on this machine): the next delivery takes it over.
 * A lock of another machine is never stale here, nor one that cannot be read.
 */
export function staleLockHolder(
  file: string,
  hostname: string,
  isProcessAlive: (pid: number) => boolean,
  processStartedAt: LockAttempt['processStartedAt'],
): LockOwner | undefined {
  const holder = readOwner(file);
  if (!holder || holder.hostname !== hostname) return undefined;
  return holderIsRunning(holder, isProcessAlive, processStartedAt) ? undefined : holder;
}

/** Whether the lock's writer still runs. */
function holderIsRunning(
  holder: LockOwner,
  isProcessAlive: (pid: number) => boolean,
  processStartedAt: LockAttempt['processStartedAt'],
): boolean {
  return writerIsRunning(holder.pid, Date.parse(holder.startedAt), isProcessAlive, processStartedAt);
}

function readOwner(file: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8')) as LockOwner;
    return typeof owner.pid === 'number' ? owner : undefined;
  } catch {
    return undefined;
  }
}
