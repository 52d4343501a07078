// The metrics file on disk: read back, merged with a run's months (metrics.ts), and replaced atomically (a temp
// file in the same folder, flushed, renamed), so that node_exporter never reads half a file. A lock beside it
// keeps two runs that end at once (a month's records and episodes from two cron lines) from losing each other's
// months. A file that holds lines bds did not write is left alone: the path is probably a mistake.

import { randomUUID } from 'node:crypto';
import { promises as fs, renameSync } from 'node:fs';
import path from 'node:path';
import { errnoCode } from '../guards.js';
import { flushFolder, whileHeld } from '../files.js';
import type { Platform } from '../platform.js';
import { ForeignLineError, mergeRuns, parseMetrics, renderMetrics, type MonthRun } from './metrics.js';

export interface MetricsFileUpdate {
  /** An absolute path. */
  file: string;
  runs: MonthRun[];
  at: Date;
  sleep: (ms: number) => Promise<void>;
  platform: Platform;
}

/** How long a run waits for another's lock, and when a lock counts as left behind by a process that died. */
const LOCK_WAIT = { tries: 40, pauseMs: 50 };
const STALE_LOCK_MS = 30_000;

/** Merges the runs into the file; throws an Error whose message says why it could not. */
export async function updateMetricsFile({ file, runs, at, sleep, platform }: MetricsFileUpdate): Promise<void> {
  const unlock = await lock(`${file}.lock`, at, sleep);
  try {
    const [text, mode] = await readExisting(file);
    let earlier;
    try {
      earlier = parseMetrics(text);
    } catch (error) {
      if (!(error instanceof ForeignLineError)) throw error;
      throw new Error(`it holds lines bds did not write (${error.message}); bds leaves it alone`);
    }
    await replace(file, renderMetrics(mergeRuns(earlier, runs, Math.floor(at.getTime() / 1000))), mode, platform);
  } finally {
    await unlock();
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

async function replace(file: string, text: string, mode: number, platform: Platform): Promise<void> {
  // Not ending in .prom, which the textfile collector would read.
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomUUID()}.tmp`);
  try {
    const handle = await fs.open(temp, 'wx', mode);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    // node_exporter reading the file holds it open: on Windows the rename waits for it (files.ts).
    whileHeld(platform, () => renameSync(temp, file));
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw new Error(describe(error));
  }
  // The rename itself survives a crash once the folder is flushed.
  flushFolder(path.dirname(file), platform);
}

async function lock(file: string, at: Date, sleep: (ms: number) => Promise<void>): Promise<() => Promise<void>> {
  for (let attempt = 1; ; attempt++) {
    try {
      await (await fs.open(file, 'wx', 0o644)).close();
      return () => fs.rm(file, { force: true });
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') throw new Error(describe(error));
    }
    const written = await fs.stat(file).then(
      (stat) => stat.mtimeMs,
      () => undefined,
    );
    if (written !== undefined && at.getTime() - written > STALE_LOCK_MS) await fs.rm(file, { force: true });
    else if (attempt >= LOCK_WAIT.tries) throw new Error(`another bds process is writing it (${file} exists)`);
    else await sleep(LOCK_WAIT.pauseMs);
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
