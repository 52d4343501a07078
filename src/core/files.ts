// Writing a file bds keeps for itself (a delivery record, a remembered pass, a lock, the user's config file, the
// metrics file) so that a crash at any moment leaves the old file or the new one, never a torn or empty one: the
// content goes to a temp file in the same folder, is flushed to disk, is renamed over the file (or linked, for a
// lock), and the folder is flushed so that the rename itself survives a power cut (where the system can flush a
// folder: not Windows, whose NTFS journals the rename itself).

import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Platform } from './platform.js';

/** What has been done so far, in this order; a test stops the process after any of them. */
export type WriteStep = 'written' | 'flushed' | 'renamed' | 'folder-flushed';

export interface AtomicWriteOptions {
  /** The system: whether a folder can be flushed, and whether a rename waits for a file held open. */
  platform: Platform;
  /** Of the new file; default 0o600, since what bds keeps is nobody else's business. */
  mode?: number;
  /**
   * Link the temp file into place instead of renaming it over the file: fails with EEXIST when the file
   * exists (how a lock is taken).
   */
  exclusive?: boolean;
  /** Told each step as it is done (tests inject a crash between steps). */
  onStep?: ((step: WriteStep) => void) | undefined;
  /**
   * Told when the folder could not be flushed (EIO): the file is whole, but whether its rename survives a power
   * cut is not known. Without it, that is the write's failure: the error is thrown.
   */
  onFolderNotFlushed?: ((error: unknown) => void) | undefined;
}

/**
 * Writes `file` atomically; throws the system call's error (EEXIST for an exclusive one that lost; a folder's
 * failed flush, unless `onFolderNotFlushed` takes it).
 */
export function writeFileAtomic(file: string, content: string, options: AtomicWriteOptions): void {
  const step = options.onStep ?? (() => {});
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomUUID()}.tmp`);
  try {
    const fd = openSync(temp, 'wx', options.mode ?? 0o600);
    try {
      const bytes = Buffer.from(content);
      for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done);
      step('written');
      fsyncSync(fd);
      step('flushed');
    } finally {
      closeSync(fd);
    }
    // A lock's name may still be taken on Windows for a moment after its removal (delete pending while another
    // process has it open): EPERM then, waited for like a rename's.
    whileHeld(options.platform, () => (options.exclusive ? linkSync(temp, file) : renameSync(temp, file)));
    step('renamed');
  } finally {
    // After a rename there is nothing left to remove; after a link (or a failure) the temp name goes.
    rmSync(temp, { force: true });
  }
  try {
    flushFolder(path.dirname(file), options.platform);
  } catch (error) {
    if (!options.onFolderNotFlushed) throw error;
    options.onFolderNotFlushed(error);
  }
  step('folder-flushed');
}

/**
 * On Windows a file another process holds open (a reader without FILE_SHARE_DELETE, an antivirus scanner, the
 * search indexer, node_exporter reading the metrics file) cannot be replaced or removed for a moment: the rename
 * or removal fails with EPERM, EACCES or EBUSY. As graceful-fs does, it is tried again, here for about a second at most, growing
 * pauses, then the error stands. Elsewhere these errors mean what they say and are thrown at once.
 */
const HELD_CODES = new Set(['EPERM', 'EACCES', 'EBUSY']);
const HELD_PAUSES_MS = [10, 20, 40, 80, 100, 150, 200, 200, 200];

/**
 * Runs `attempt` (a rename, link or removal), again while Windows says another process holds the file; `pause`
 * waits (tests count it).
 */
export function whileHeld<T>(platform: Platform, attempt: () => T, pause: (ms: number) => void = pauseThread): T {
  for (const ms of platform === 'win32' ? HELD_PAUSES_MS : []) {
    try {
      return attempt();
    } catch (error) {
      if (!HELD_CODES.has((error as { code?: string }).code ?? '')) throw error;
    }
    pause(ms);
  }
  return attempt();
}

/** Waits without returning to the event loop: the writes here are synchronous, and the wait is short. */
function pauseThread(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** What a file system says when it has no flush for a folder (some FUSE and network ones): nothing failed. */
const NO_FOLDER_FLUSH = new Set(['EINVAL', 'ENOTSUP', 'EOPNOTSUPP']);

/**
 * Flushes a folder's entries (a rename, a removal) to disk, where the system allows it; says whether it did, and
 * throws the error of a flush that failed (EIO; a folder that cannot be opened): the rename may not survive a
 * power cut. Windows has no such call (a folder cannot even be opened for it: EISDIR or EPERM), and is not asked.
 */
export function flushFolder(dir: string, platform: Platform): boolean {
  if (platform === 'win32') return false;
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
    return true;
  } catch (error) {
    if (NO_FOLDER_FLUSH.has((error as { code?: string }).code ?? '')) return false;
    throw error;
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes a folder and those above it that are missing, one at a time, top down: Node's recursive mkdir reports
 * ENOENT when a level fails with another error (EIO, say), and this throws that error.
 */
export function makeFolders(dir: string, mode: number): void {
  const missing: string[] = [];
  for (let at = path.resolve(dir); !exists(at); at = path.dirname(at)) {
    missing.unshift(at);
    if (path.dirname(at) === at) break;
  }
  for (const folder of missing) {
    try {
      mkdirSync(folder, { mode });
    } catch (error) {
      // Made meanwhile by another process: as good. Anything else there (a link to nowhere) is the error.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !isFolder(folder)) throw error;
    }
  }
}

function exists(file: string): boolean {
  try {
    statSync(file);
    return true;
  } catch {
    return false;
  }
}

function isFolder(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}
