// The journal: the delivery records (the contract's name for each file; "records" alone in the code means the
// data file's lines) and the locks beside them. A delivery record is a small JSON file per (API, source, period, product, checksum, key mode) under
// $XDG_STATE_HOME/bds/deliveries, written atomically before the upload and after each step, so that an
// interrupted delivery resumes its own batch. It keeps the schema's columns (never data) so that the next
// month's schema can be compared with it. The lock beside it is lock.ts's.

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { errnoCode, isObject } from '../guards.js';
import { BdsError, UsageError } from '../errors.js';
import type { BatchStatus, KeyMode, UploadTarget } from '../api/types.js';
import type { ColumnEntry } from '../preflight/columns.js';
import { makeFolders, writeFileAtomic, type WriteStep } from '../files.js';
import type { Platform } from '../platform.js';
import { byMode, completedVersion1, keepOldTestRecord, parseVersion1 } from './old-records.js';

/** What a delivery is: the API (canonical, see canonicalApi), source, period, product. */
export interface DeliverySubject {
  api: string;
  sourceId: string;
  period: string;
  product: string;
}

export interface DeliveryKey extends DeliverySubject {
  sha256: string;
}

/** How far a delivery got: the step that finished last. */
export type RecordStep = 'creating' | 'created' | 'uploaded' | 'completed';

export interface DeliveryRecord extends DeliveryKey {
  version: 2;
  step: RecordStep;
  /** Sent on create; the same value on every retry and on a resumed create. */
  idempotencyKey: string;
  /** SHA-256 of the report and schema the batch was created with: a resume needs them unchanged. */
  inputsDigest: string;
  dataFile: string;
  /** The base URL as the settings wrote it (`api` is its canonical form): what messages show. Absent in older records. */
  baseUrl?: string;
  /** The delivery folder (absolute); absent in records of before it was kept. */
  dir?: string;
  bytes: number;
  recordCount: number;
  columns: ColumnEntry[];
  batchId?: string;
  /** The signed upload URL and its headers: a credential, so dropped once the delivery completed. */
  upload?: UploadTarget;
  status?: BatchStatus;
  /** The mode of the key that made the batch; absent in records of before it was kept. */
  keyMode?: KeyMode;
  updatedAt: string;
}

/** What a record of bds 0.1 tells: all but the report and schema it was delivered with. */
export type Version1Record = Omit<DeliveryRecord, 'inputsDigest' | 'columns'>;

/**
 * This machine's records of one file, as a delivery with a key of `mode` sees them: its own, and the other
 * mode's, which never counts for it. A record of an unknown mode (written before the mode was kept) is its own
 * whatever the key, as it always was.
 */
export interface ModeRecords {
  own: DeliveryRecord | undefined;
  other: DeliveryRecord | undefined;
}

/** A record file that could not be read as one: set aside, and said, rather than silently ignored. */
export interface CorruptRecord {
  file: string;
  setAsideAs: string;
}

/** The delivery records of this machine, in the state folder's `deliveries`: read, written, searched. */
export class Journal {
  readonly dir: string;

  /** `onStep` is told each step of a write (tests inject a crash between them). */
  constructor(
    stateDirectory: string,
    private readonly platform: Platform,
    private readonly onStep?: (step: WriteStep) => void,
  ) {
    this.dir = path.join(stateDirectory, 'deliveries');
  }

  /**
   * The records of this file for a key of `mode`; a corrupt one is moved aside and reported through `onCorrupt`.
   * Each mode has a file of its own, so that a delivery with one never replaces the other's: live (and unknown)
   * records keep the name they always had, test records end in `-test.json`. A test record under the old name
   * (from before the modes had a file each) counts as the test record until write() moves it.
   */
  read(key: DeliveryKey, mode: KeyMode, onCorrupt: (corrupt: CorruptRecord) => void): ModeRecords {
    const { live, test } = byMode(
      this.readFile(this.recordPath(key, 'live'), key, onCorrupt),
      this.readFile(this.recordPath(key, 'test'), key, onCorrupt),
    );
    const unknown = live?.keyMode === undefined ? live : undefined;
    return mode === 'live' ? { own: live, other: test } : { own: test ?? unknown, other: unknown ? undefined : live };
  }

  private readFile(
    file: string,
    key: DeliveryKey,
    onCorrupt: (corrupt: CorruptRecord) => void,
  ): DeliveryRecord | undefined {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return undefined;
      throw this.unusable(error);
    }
    const record = parseRecord(text);
    if (record && record.sha256 === key.sha256) return record;
    // bds 0.1 named some records as this version does (a base URL already in its one spelling): readVersion1's.
    if (parseVersion1(text)) return undefined;
    const setAsideAs = `${file}.corrupt`;
    this.inStateFolder(() => renameSync(file, setAsideAs));
    onCorrupt({ file, setAsideAs });
    return undefined;
  }

  /**
   * The record bds 0.1 wrote of a completed delivery of the same file, when there is no record of this
   * version's: keyed by the base URL as written, not the API's one spelling. It makes a re-run "already
   * delivered" rather than "from another file". An unfinished one is not taken over: its report and schema
   * are not known, so it could not be resumed safely (a fresh batch is made, as for a lost record).
   */
  readVersion1(key: DeliveryKey, baseUrl: string): Version1Record | undefined {
    let text: string;
    try {
      // Its name is this version's, with the base URL as written where the API is.
      text = readFileSync(this.recordPath({ ...key, api: baseUrl }, 'live'), 'utf8');
    } catch {
      return undefined;
    }
    const fields = completedVersion1(text, key.sha256);
    return fields && { ...key, version: 2, step: 'completed', ...fields };
  }

  /**
   * Replaces the record atomically: a temp file, flushed, renamed over the old one, the folder flushed. The
   * writer holds the delivery's lock, so it is the one that moves a test record from the old shared name to its
   * own before a live record takes that name (a test record already under its own name makes the old one a
   * stale copy).
   */
  write(record: DeliveryRecord): void {
    this.inStateFolder(() => {
      makeFolders(this.dir, 0o700);
      const file = this.recordPath(record, record.keyMode ?? 'live');
      if (record.keyMode !== 'test') this.moveOldTestRecord(file, this.recordPath(record, 'test'));
      writeFileAtomic(file, `${JSON.stringify(record, null, 2)}\n`, { platform: this.platform, onStep: this.onStep });
    });
  }

  /**
   * What this month's schema is compared with: a completed delivery of the same product (and source, when
   * known) for another period, the nearest month before this one, else the nearest after it (a backfill of
   * older months); with no period (a check without one), the latest month. Of one month, the newest delivery.
   * By month rather than by time, so that a backfill delivering several months at once compares each month
   * with the same one whatever finishes first. Any API: check knows none, and a schema is the same whatever
   * the API.
   */
  nearestDelivered(subject: {
    sourceId: string | undefined;
    /** None: the latest. */
    period: string | undefined;
    product: string;
  }): DeliveryRecord | undefined {
    let nearest: DeliveryRecord | undefined;
    for (const record of this.all()) {
      if (
        record.step === 'completed' &&
        record.product === subject.product &&
        record.period !== subject.period &&
        (subject.sourceId === undefined || record.sourceId === subject.sourceId) &&
        (!nearest || nearer(record, nearest, subject.period))
      ) {
        nearest = record;
      }
    }
    return nearest;
  }

  /** Every record of this version that can be read, in no particular order. */
  all(): DeliveryRecord[] {
    const records: DeliveryRecord[] = [];
    for (const name of this.names('.json')) {
      try {
        const record = parseRecord(readFileSync(path.join(this.dir, name), 'utf8'));
        if (record) records.push(record);
      } catch {
        // gone or unreadable since the folder was listed: not a record
      }
    }
    return records;
  }

  /** Every lock file beside the delivery records. */
  lockFiles(): string[] {
    return this.names('.lock').map((name) => path.join(this.dir, name));
  }

  private moveOldTestRecord(liveFile: string, testFile: string): void {
    let old: DeliveryRecord | undefined;
    try {
      old = parseRecord(readFileSync(liveFile, 'utf8'));
    } catch {
      return;
    }
    if (old?.keyMode === 'test') keepOldTestRecord(liveFile, testFile);
  }

  /**
   * A completed delivery of the same file (by either key) for another period of the same API, source and
   * product, if this machine made one: the oldest such period.
   */
  deliveredAsOtherPeriod(key: DeliveryKey): DeliveryRecord | undefined {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return undefined;
    }
    let found: DeliveryRecord | undefined;
    // Every record's name holds the start of its checksum: only those of this file are read.
    const checksum = `-${key.sha256.slice(0, 16)}`;
    for (const name of names) {
      if (!name.endsWith(`${checksum}.json`) && !name.endsWith(`${checksum}-test.json`)) continue;
      let record: DeliveryRecord | undefined;
      try {
        record = parseRecord(readFileSync(path.join(this.dir, name), 'utf8'));
      } catch {
        continue;
      }
      if (
        record?.step === 'completed' &&
        record.sha256 === key.sha256 &&
        record.api === key.api &&
        record.sourceId === key.sourceId &&
        record.product === key.product &&
        record.period !== key.period &&
        (!found || record.period < found.period)
      ) {
        found = record;
      }
    }
    return found;
  }

  lockFile(subject: DeliverySubject): string {
    return path.join(this.dir, `${baseName(subject)}.lock`);
  }

  /** A state folder bds cannot write is the user's to fix, not a bug. */
  inStateFolder<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      if (error instanceof BdsError || errnoCode(error) === undefined) throw error;
      throw this.unusable(error);
    }
  }

  private unusable(error: unknown): UsageError {
    const code = errnoCode(error);
    return new UsageError(`cannot write the delivery records in ${this.dir} (${code ?? 'unusable'})`, {
      hint: DISK_FAULTS[code ?? ''] ?? STATE_FOLDER_HINT,
    });
  }

  private names(extension: string): string[] {
    try {
      return readdirSync(this.dir).filter((name) => name.endsWith(extension));
    } catch {
      return [];
    }
  }

  private recordPath(key: DeliveryKey, mode: KeyMode): string {
    return path.join(this.dir, `${baseName(key)}-${key.sha256.slice(0, 16)}${mode === 'test' ? '-test' : ''}.json`);
  }
}

const STATE_FOLDER_HINT =
  'bds keeps them under $XDG_STATE_HOME/bds (default ~/.local/state/bds): make it writable, or set XDG_STATE_HOME';

/** Failures of the disk, not of permissions: making the folder writable would not help. */
const DISK_FAULTS: Record<string, string> = {
  EIO: 'an I/O error is a fault of the disk or its file system, not of permissions: check the disk (the system log says more), or set XDG_STATE_HOME to a folder on another disk',
  ENOSPC: 'the disk is full: free some space, or set XDG_STATE_HOME to a folder on another disk',
};

/** Whether `a` is a better baseline than `b` for a delivery of `period` ('' when not known). */
function nearer(a: DeliveryRecord, b: DeliveryRecord, period: string | undefined): boolean {
  if (a.period === b.period) return a.updatedAt > b.updatedAt;
  const aBefore = period === undefined || a.period < period;
  const bBefore = period === undefined || b.period < period;
  if (aBefore !== bBefore) return aBefore;
  return aBefore ? a.period > b.period : a.period < b.period;
}

/** Readable for a person looking in the folder, unique through a hash of every part. */
function baseName(subject: DeliverySubject): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([subject.api, subject.sourceId, subject.period, subject.product]))
    .digest('hex')
    .slice(0, 12);
  return `${safeSource(subject.sourceId)}-${subject.period}-${subject.product}-${digest}`;
}

function safeSource(sourceId: string): string {
  return sourceId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40);
}

function parseRecord(text: string): DeliveryRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value) || value.version !== 2 || typeof value.sha256 !== 'string' || typeof value.step !== 'string') {
    return undefined;
  }
  if (!Array.isArray(value.columns)) return undefined;
  return value as unknown as DeliveryRecord;
}
