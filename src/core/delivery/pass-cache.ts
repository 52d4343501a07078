// The remembered result of a pass over a data file, so that check, deliver, a re-run and a resume of the same
// unchanged file do not read it again. An entry is found by the file's path and used only when the file's
// size, modification time, inode and change time are still the ones it was made for (a rewrite that keeps
// size and mtime still changes the ctime). An entry that does not parse, fails its own checksum, belongs to
// another file or to another way of making it is ignored, never trusted; and the upload hashes what it sends
// in any case (delivery.ts), so a wrong entry can never get other bytes confirmed.

import { createHash, randomUUID } from 'node:crypto';
import { promises as fs, type Stats } from 'node:fs';
import path from 'node:path';
import { versions } from 'node:process';
import { isObject } from '../checks.js';

/**
 * What an entry's result depends on besides the file: the checks and the gzip of a plain .jsonl (bump the
 * number when either changes), and zlib's version, since another zlib may gzip the same file otherwise.
 */
export const PASS_FORMAT = `1 zlib ${versions.zlib}`;

export interface PassIdentity {
  path: string;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  dev: number;
}

export interface RememberedPass {
  recordCount: number;
  /** SHA-256 of the bytes that are uploaded (the gzipped ones, for a plain .jsonl). */
  sha256: string;
  /** How many bytes are uploaded. */
  uploadSize: number;
}

interface Entry extends PassIdentity, RememberedPass {
  format: string;
  /** SHA-256 of the rest of the entry: a damaged file is not an entry. */
  checksum: string;
}

export function identityOf(file: string, stat: Stats): PassIdentity {
  return { path: path.resolve(file), size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino, dev: stat.dev };
}

export class PassCache {
  private readonly dir: string;

  constructor(cacheDirectory: string) {
    this.dir = path.join(cacheDirectory, 'passes');
  }

  async recall(identity: PassIdentity): Promise<RememberedPass | undefined> {
    let value: unknown;
    try {
      value = JSON.parse(await fs.readFile(this.entryPath(identity.path), 'utf8'));
    } catch {
      return undefined;
    }
    if (!isEntry(value) || value.checksum !== checksumOf(value)) return undefined;
    const same = (['path', 'size', 'mtimeMs', 'ctimeMs', 'ino', 'dev'] as const).every((key) => value[key] === identity[key]);
    if (!same || value.format !== PASS_FORMAT) return undefined;
    return { recordCount: value.recordCount, sha256: value.sha256, uploadSize: value.uploadSize };
  }

  /** Best effort: a cache that cannot be written only costs the next run a pass. */
  async remember(identity: PassIdentity, pass: RememberedPass): Promise<void> {
    const body = { format: PASS_FORMAT, ...identity, ...pass };
    const entry: Entry = { ...body, checksum: checksumOf(body) };
    const file = this.entryPath(identity.path);
    const temp = `${file}.${randomUUID()}.tmp`;
    try {
      await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
      await fs.writeFile(temp, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
      await fs.rename(temp, file);
    } catch {
      await fs.rm(temp, { force: true }).catch(() => undefined);
    }
  }

  private entryPath(file: string): string {
    return path.join(this.dir, `${createHash('sha256').update(path.resolve(file)).digest('hex').slice(0, 32)}.json`);
  }
}

function checksumOf(entry: Omit<Entry, 'checksum'> & { checksum?: string }): string {
  const { checksum: _ignored, ...rest } = entry;
  const fields = Object.keys(rest).sort().map((key) => [key, rest[key as keyof typeof rest]]);
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

function isEntry(value: unknown): value is Entry {
  if (!isObject(value)) return false;
  const numbers = ['size', 'mtimeMs', 'ctimeMs', 'ino', 'dev', 'recordCount', 'uploadSize'];
  return (
    numbers.every((key) => typeof value[key] === 'number' && Number.isFinite(value[key])) &&
    typeof value.path === 'string' &&
    typeof value.format === 'string' &&
    typeof value.checksum === 'string' &&
    typeof value.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(value.sha256) &&
    Number.isSafeInteger(value.recordCount) &&
    (value.recordCount as number) > 0
  );
}
