// Writing a file bds keeps for itself (a delivery record, a remembered pass, a lock, the user's config file) so
// that a crash at any moment leaves the old file or the new one, never a torn or empty one: the content goes to
// a temp file in the same folder, is flushed to disk, is renamed over the file (or linked, for a lock), and the
// folder is flushed so that the rename itself survives a power cut.

import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

/** What has been done so far, in this order; a test stops the process after any of them. */
export type WriteStep = 'written' | 'flushed' | 'renamed' | 'folder-flushed';

export interface AtomicWriteOptions {
  /** Of the new file; default 0o600, since what bds keeps is nobody else's business. */
  mode?: number;
  /**
   * Link the temp file into place instead of renaming it over the file: fails with EEXIST when the file
   * exists (how a lock is taken).
   */
  exclusive?: boolean;
  /** Told each step as it is done (tests inject a crash between steps). */
  onStep?: ((step: WriteStep) => void) | undefined;
}

/** Writes `file` atomically; throws the system call's error (EEXIST for an exclusive one that lost). */
export function writeFileAtomic(file: string, content: string, options: AtomicWriteOptions = {}): void {
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
    if (options.exclusive) linkSync(temp, file);
    else renameSync(temp, file);
    step('renamed');
  } finally {
    // After a rename there is nothing left to remove; after a link (or a failure) the temp name goes.
    rmSync(temp, { force: true });
  }
  flushFolder(path.dirname(file));
  step('folder-flushed');
}

/** Flushes a folder's entries (a rename, a removal) to disk, where the system allows it. */
export function flushFolder(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, 'r');
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    // Some systems (Windows) cannot flush a folder; the rename is as safe as they make it.
  } finally {
    closeSync(fd);
  }
}
