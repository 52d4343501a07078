// The remembered findings of a pass over a data file, so that check, deliver, a re-run and a resume of the same
// unchanged file do not read it again. An entry is found by the file's path and used only when the file's
// stamp (size, modification time, change time, inode) is still the one it was made for (a rewrite that keeps
// size and mtime still changes the ctime). An entry that does not parse, fails its own checksum, belongs to
// another file or to another way of making it is ignored, never trusted; and the upload hashes what it sends
// in any case (delivery.ts), so a wrong entry can never get other bytes confirmed.

import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { versions } from 'node:process';
import { isObject } from '../guards.js';
import { makeFolders, writeFileAtomic, type WriteStep } from '../files.js';
import type { Platform } from '../platform.js';
import { changeSince, type FileStamp } from './file-stamp.js';
import type { PassFindings } from './pipeline.js';

/** What an entry's result depends on besides the file: the checks and the gzip of a plain .jsonl (bump it when either changes). */
export const PASS_FORMAT = '3';

/**
 * For a plain .jsonl, the version of the zlib that gzips it, since another zlib may make other bytes of the same
 * file (another Node, the standalone binary); null for a .gz, which is uploaded as it is.
 */
export type ZlibVersion = string | null;

export function zlibFor(gzippedByBds: boolean): ZlibVersion {
  return gzippedByBds ? versions.zlib : null;
}

/** On disk: the stamp (its size is the data file's) and the findings (their size is the upload's, `uploadSize`). */
interface Entry extends FileStamp {
  zlib: ZlibVersion;
  recordCount: number;
  sha256: string;
  uploadSize: number;
  format: string;
  /** SHA-256 of the rest of the entry: a damaged file is not an entry. */
  checksum: string;
}

export class PassCache {
  private readonly dir: string;

  /** `onStep` is told each step of a write (tests inject a crash between them). */
  constructor(
    cacheDirectory: string,
    private readonly platform: Platform,
    private readonly onStep?: (step: WriteStep) => void,
  ) {
    this.dir = path.join(cacheDirectory, 'passes');
  }

  async recall(stamp: FileStamp, zlib: ZlibVersion): Promise<PassFindings | undefined> {
    let value: unknown;
    try {
      value = JSON.parse(await fs.readFile(this.entryPath(stamp.path), 'utf8'));
    } catch {
      return undefined;
    }
    if (!isEntry(value) || value.checksum !== checksumOf(value)) return undefined;
    const same = value.path === stamp.path && value.zlib === zlib && changeSince(stamp, value) === undefined;
    if (!same || value.format !== PASS_FORMAT) return undefined;
    return { recordCount: value.recordCount, sha256: value.sha256, size: value.uploadSize };
  }

  /** Best effort: a cache that cannot be written only costs the next run a pass. */
  async remember(stamp: FileStamp, zlib: ZlibVersion, findings: PassFindings): Promise<void> {
    const { recordCount, sha256, size: uploadSize } = findings;
    const body = { format: PASS_FORMAT, ...stamp, zlib, recordCount, sha256, uploadSize };
    const entry: Entry = { ...body, checksum: checksumOf(body) };
    try {
      makeFolders(this.dir, 0o700);
      // A torn entry would only be ignored (its checksum fails), but a rename that a power cut undoes could
      // leave an empty file where an entry was: the same careful write as a delivery record's.
      writeFileAtomic(this.entryPath(stamp.path), `${JSON.stringify(entry)}\n`, {
        platform: this.platform,
        onStep: this.onStep,
      });
    } catch {
      // the next run passes over the file again
    }
  }

  private entryPath(file: string): string {
    return path.join(this.dir, `${createHash('sha256').update(path.resolve(file)).digest('hex').slice(0, 32)}.json`);
  }
}

function checksumOf(entry: Omit<Entry, 'checksum'> & { checksum?: string }): string {
  const { checksum: _ignored, ...rest } = entry;
  const fields = Object.keys(rest)
    .sort()
    .map((key) => [key, rest[key as keyof typeof rest]]);
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

function isEntry(value: unknown): value is Entry {
  if (!isObject(value)) return false;
  const numbers = ['size', 'mtimeMs', 'ctimeMs', 'ino', 'dev', 'recordCount', 'uploadSize'];
  return (
    numbers.every((key) => typeof value[key] === 'number' && Number.isFinite(value[key])) &&
    typeof value.path === 'string' &&
    (value.zlib === null || typeof value.zlib === 'string') &&
    typeof value.format === 'string' &&
    typeof value.checksum === 'string' &&
    typeof value.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(value.sha256) &&
    Number.isSafeInteger(value.recordCount) &&
    (value.recordCount as number) > 0
  );
}
