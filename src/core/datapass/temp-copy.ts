// The gzipped copy of a plain .jsonl lives in the temp folder while its delivery runs. A process killed with
// SIGKILL (or a power cut) cannot remove its own copy, so the copy's name carries its host and pid: the next
// delivery removes those of processes that are gone, and doctor counts what is left.

import { randomUUID } from 'node:crypto';
import { promises as fs, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { writerIsRunning } from '../guards.js';

/** Who makes a copy, and how to tell whether another process still runs (the Runtime's, structurally). */
export interface CopyOwner {
  hostname: string;
  pid: number;
  isProcessAlive: (pid: number) => boolean;
  processStartedAt?: ((pid: number) => number | undefined) | undefined;
}

/** A copy left by a process that is gone. */
export interface LeftCopy {
  path: string;
  pid: number;
  bytes: number;
}

/** bds-<host>-<pid>-<uuid>.jsonl.gz: a name of bds's own (the data file's could be too long for the folder). */
const COPY_NAME = /^bds-(.+)-(\d+)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl\.gz$/;

/** The host as a file name may hold it. */
function hostPart(hostname: string): string {
  return hostname.replace(/[^A-Za-z0-9.-]/g, '_').slice(0, 64) || 'host';
}

export function copyPath(tmpDir: string, owner: CopyOwner): string {
  return path.join(tmpDir, `bds-${hostPart(owner.hostname)}-${owner.pid}-${randomUUID()}.jsonl.gz`);
}

/**
 * The copies in `tmpDir` of this host's processes that are gone: the pid is not running, or the process that
 * has it now started after the copy was last written (the pid was reused). Never this process's own, whatever
 * its runtime says: two deliveries of one process may run at once. A copy of another host is left alone (a
 * temp folder shared by machines): its pid means nothing here.
 */
export function leftCopies(tmpDir: string, owner: CopyOwner): LeftCopy[] {
  let names: string[];
  try {
    names = readdirSync(tmpDir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const match = COPY_NAME.exec(name);
    if (!match || match[1] !== hostPart(owner.hostname)) return [];
    const pid = Number(match[2]);
    if (pid === owner.pid) return [];
    const file = path.join(tmpDir, name);
    try {
      const stat = statSync(file);
      if (writerIsRunning(pid, stat.mtimeMs, owner.isProcessAlive, owner.processStartedAt)) return [];
      return [{ path: file, pid, bytes: stat.size }];
    } catch {
      return [];
    }
  });
}

/** Removes the copies left by processes that are gone; one that cannot be removed (another user's) stays. */
export async function removeLeftCopies(tmpDir: string, owner: CopyOwner): Promise<void> {
  await Promise.all(leftCopies(tmpDir, owner).map((left) => fs.rm(left.path, { force: true }).catch(() => undefined)));
}
