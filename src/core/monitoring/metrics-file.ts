// The metrics file on disk: read back, merged with a run's months (metrics.ts), and replaced through the crash-safe
// write of core/files.ts (a temp file in the same folder, flushed, renamed, the folder flushed), so that
// node_exporter never reads half a file. A lock beside it, taken as a delivery's is (delivery/lock.ts: the pid and
// hostname in it, taken over from a holder that is gone), keeps two runs that end at once (a month's records and
// episodes from two cron lines) from losing each other's months. A file that holds lines bds did not write is
// left alone: the path is probably a mistake.

import { promises as fs } from 'node:fs';
import path from 'node:path';
import { errnoCode } from '../guards.js';
import { writeFileAtomic, type WriteStep } from '../files.js';
import { tryLock, type LockAttempt } from '../delivery/lock.js';
import { ForeignLineError, mergeRuns, parseMetrics, renderMetrics, type MonthRun } from './metrics.js';

export interface MetricsFileUpdate {
  /** An absolute path. */
  file: string;
  runs: MonthRun[];
  at: Date;
  sleep: (ms: number) => Promise<void>;
  /** This process, for the lock: who holds it, and how a holder that is gone is told. */
  self: Pick<LockAttempt, 'platform' | 'isProcessAlive' | 'processStartedAt'> & { pid: number; hostname: string };
  /** Told each step of writing the file (tests inject a crash between them). */
  onStep?: ((step: WriteStep) => void) | undefined;
}

/** The file is written; its folder could not be flushed (the code of the error), so its durability is not known. */
export interface MetricsFileWritten {
  folderNotFlushed: { dir: string; code: string } | undefined;
}

/** How long a run waits for another's lock. */
const LOCK_WAIT = { tries: 40, pauseMs: 50 };

/** Merges the runs into the file; throws an Error whose message says why it could not. */
export async function updateMetricsFile({
  file,
  runs,
  at,
  sleep,
  self,
  onStep,
}: MetricsFileUpdate): Promise<MetricsFileWritten> {
  const release = await lock(`${file}.lock`, at, sleep, self);
  try {
    const [text, mode] = await readExisting(file);
    let earlier;
    try {
      earlier = parseMetrics(text);
    } catch (error) {
      if (!(error instanceof ForeignLineError)) throw error;
      throw new Error(`it holds lines bds did not write (${error.message}); bds leaves it alone`);
    }
    const written: MetricsFileWritten = { folderNotFlushed: undefined };
    const content = renderMetrics(mergeRuns(earlier, runs, Math.floor(at.getTime() / 1000)));
    try {
      // Its temp file (.<name>.<uuid>.tmp) does not end in .prom, which the textfile collector would read.
      writeFileAtomic(file, content, {
        platform: self.platform,
        mode,
        onStep,
        onFolderNotFlushed: (error) => {
          written.folderNotFlushed = { dir: path.dirname(file), code: errnoCode(error) ?? 'unknown' };
        },
      });
    } catch (error) {
      throw new Error(describe(error));
    }
    return written;
  } finally {
    release();
  }
}

/** The file's text and mode, or none and 0644 (node_exporter runs as another user and must read it). */
async function readExisting(file: string): Promise<[string, number]> {
  try {
    const [text, stat] = await Promise.all([fs.readFile(file, 'utf8'), fs.stat(file)]);
    return [text, stat.mode & 0o777];
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return ['', 0o644];
    throw new Error(describe(error));
  }
}

/** Waits for a live holder's lock a little; takes over one whose holder is gone (a kill -9 during the write). */
async function lock(
  file: string,
  at: Date,
  sleep: (ms: number) => Promise<void>,
  { pid, hostname, platform, isProcessAlive, processStartedAt }: MetricsFileUpdate['self'],
): Promise<() => void> {
  for (let attempt = 1; ; attempt++) {
    let taken;
    try {
      const owner = { pid, hostname, startedAt: at.toISOString() };
      taken = tryLock({ file, owner, platform, isProcessAlive, processStartedAt, mode: 0o644 });
    } catch (error) {
      throw new Error(describe(error));
    }
    if ('release' in taken) return taken.release;
    if (attempt >= LOCK_WAIT.tries) {
      const { holder } = taken;
      throw new Error(
        `another bds process (${holder ? `pid ${holder.pid} on ${holder.hostname}` : 'unknown'}) is writing it (${file} exists)`,
      );
    }
    await sleep(LOCK_WAIT.pauseMs);
  }
}

const ERRNO_WORDS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOENT: 'no such folder',
  ENOTDIR: 'a part of its path is not a folder',
  EISDIR: 'it is a folder',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
};

function describe(error: unknown): string {
  const code = errnoCode(error);
  const words = code === undefined ? undefined : ERRNO_WORDS[code];
  if (words) return `${words} (${code})`;
  return error instanceof Error ? error.message : String(error);
}
