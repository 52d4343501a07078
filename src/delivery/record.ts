// The delivery record: a small JSON file per (base URL, source, period, product, checksum) under
// $XDG_STATE_HOME/bds/deliveries, written atomically before the upload and after each step, so that an
// interrupted delivery resumes its own batch. Beside it, a lock per (base URL, source, period, product).

import { createHash, randomUUID } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { BdsError, LockedError, UsageError } from '../errors.js';
import type { BatchStatus, UploadTarget } from '../api/types.js';

export interface DeliveryKey {
  baseUrl: string;
  sourceId: string;
  period: string;
  product: string;
  sha256: string;
}

/** How far a delivery got: the step that finished last. */
export type DeliveryStep = 'creating' | 'created' | 'uploaded' | 'completed';

export interface DeliveryRecord extends DeliveryKey {
  version: 1;
  step: DeliveryStep;
  /** Sent on create; the same value on every retry and on a resumed create. */
  idempotencyKey: string;
  dataFile: string;
  bytes: number;
  recordCount: number;
  batchId?: string;
  upload?: UploadTarget;
  status?: BatchStatus;
  updatedAt: string;
}

export interface LockOwner {
  pid: number;
  hostname: string;
  startedAt: string;
}

export function stateDir(env: Readonly<Record<string, string | undefined>>, homedir: string): string {
  const base = env.XDG_STATE_HOME?.trim() || path.join(homedir, '.local', 'state');
  return path.join(base, 'bds');
}

export class RecordStore {
  readonly dir: string;

  constructor(stateDirectory: string) {
    this.dir = path.join(stateDirectory, 'deliveries');
  }

  read(key: DeliveryKey): DeliveryRecord | undefined {
    try {
      const record = JSON.parse(readFileSync(this.recordPath(key), 'utf8')) as DeliveryRecord;
      return record.version === 1 && record.sha256 === key.sha256 ? record : undefined;
    } catch {
      // A missing record is the normal case; an unreadable one is as good as none (the server still guards).
      return undefined;
    }
  }

  /** Replaces the record atomically: a temp file, flushed, then renamed over the old one. */
  write(record: DeliveryRecord): void {
    this.inStateFolder(() => this.writeFile(record));
  }

  private writeFile(record: DeliveryRecord): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const file = this.recordPath(record);
    const temp = `${file}.${randomUUID()}.tmp`;
    const fd = openSync(temp, 'w', 0o600);
    try {
      writeSync(fd, `${JSON.stringify(record, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  }

  /**
   * Takes the lock for a (base URL, source, period, product), or throws LockedError naming its holder.
   * A lock whose holder is no longer running is taken over.
   */
  lock(key: Omit<DeliveryKey, 'sha256'>, owner: LockOwner, isAlive: (pid: number) => boolean): () => void {
    return this.inStateFolder(() => this.takeLock(key, owner, isAlive));
  }

  private takeLock(key: Omit<DeliveryKey, 'sha256'>, owner: LockOwner, isAlive: (pid: number) => boolean): () => void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const file = path.join(this.dir, `${this.baseName(key)}.lock`);
    const locked = (holder: LockOwner | undefined): LockedError =>
      new LockedError(
        `another bds process (${holder ? `pid ${holder.pid} on ${holder.hostname}, since ${holder.startedAt}` : 'unknown'}) ` +
          `is delivering ${key.sourceId} ${key.period} ${key.product}`,
        { hint: `wait for it to finish; if it is gone, remove ${file}` },
      );
    for (let attempt = 0; attempt < 3; attempt++) {
      // Written whole to a temp file and linked into place, so nobody ever reads a half-written lock.
      const temp = `${file}.${randomUUID()}.tmp`;
      writeFileSync(temp, JSON.stringify(owner), { mode: 0o600 });
      try {
        linkSync(temp, file);
        return () => {
          const current = readOwner(file);
          if (current?.pid === owner.pid && current.startedAt === owner.startedAt) rmSync(file, { force: true });
        };
      } catch (error) {
        if ((error as { code?: string }).code !== 'EEXIST') throw error;
      } finally {
        rmSync(temp, { force: true });
      }
      const holder = readOwner(file);
      // A pid means nothing on another machine (a shared home folder): such a lock is never taken over.
      if (holder && (holder.hostname !== owner.hostname || isAlive(holder.pid))) throw locked(holder);
      // Taking over: move the stale lock aside. Only one process can move it; if what was moved is not the
      // stale lock we looked at, a rival took over first: put theirs back and stop.
      const aside = `${file}.${randomUUID()}.stale`;
      try {
        renameSync(file, aside);
      } catch (error) {
        if ((error as { code?: string }).code === 'ENOENT') continue;
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
        throw locked(moved);
      }
      rmSync(aside, { force: true });
    }
    throw locked(readOwner(file));
  }

  /** A state folder bds cannot write is the user's to fix, not a bug. */
  private inStateFolder<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (error instanceof BdsError || code === undefined) throw error;
      throw new UsageError(`cannot write the delivery records in ${this.dir} (${code})`, {
        hint: 'bds keeps them under $XDG_STATE_HOME/bds (default ~/.local/state/bds): make it writable, or set XDG_STATE_HOME',
      });
    }
  }

  private recordPath(key: DeliveryKey): string {
    return path.join(this.dir, `${this.baseName(key)}-${key.sha256.slice(0, 16)}.json`);
  }

  /** Readable for a person looking in the folder, unique through a hash of every part. */
  private baseName(key: Omit<DeliveryKey, 'sha256'>): string {
    const digest = createHash('sha256')
      .update(JSON.stringify([key.baseUrl, key.sourceId, key.period, key.product]))
      .digest('hex')
      .slice(0, 12);
    const safe = key.sourceId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40);
    return `${safe}-${key.period}-${key.product}-${digest}`;
  }
}

function readOwner(file: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8')) as LockOwner;
    return typeof owner.pid === 'number' ? owner : undefined;
  } catch {
    return undefined;
  }
}
