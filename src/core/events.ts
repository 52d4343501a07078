// What a call tells as it goes (a delivery, a check, a wait for the review): typed data, never sentences. The
// CLI's output layer turns these into words (src/cli/output/words.ts, status-view.ts); a library caller gets them
// through `onEvent`. Below every use case, with the Operation that carries the listener.

import type { BatchStatus, KeyMode, Product } from './api/types.js';
import type { ColumnDiff } from './preflight/columns.js';
import type { FailureData } from './failure.js';
import type { Month, MonthState, MonthStatus } from './month.js';

/**
 * What a delivery is doing, as events name it (the contract's words). Where it stands between runs is its
 * record's step (record-store.ts), which a re-run resumes from.
 */
export type Step = StepEvent['step'];

export type StepEvent = Month & { type: 'step' } & (
    | /** The one pass over the data file begins. */ {
        step: 'checking';
        dir: string;
        dataFile: string;
        bytes: number;
      }
    | { step: 'checked'; dataFile: string; recordCount: number; bytes: number; sha256: string; fromCache: boolean }
    | { step: 'creating' }
    | /** `rateCap`: the run's upload rate cap in bytes per second (--limit-rate), null for none. */ {
        step: 'uploading';
        batchId: string;
        bytes: number;
        rateCap: number | null;
      }
    | { step: 'completing'; batchId: string; sha256: string }
    | { step: 'done'; batchId: string; status: BatchStatus; skipped: boolean }
  );

/** A step event without what every event of a delivery carries. */
export type StepData = StepEvent extends infer E
  ? E extends StepEvent
    ? Omit<E, 'type' | 'period' | 'product'>
    : never
  : never;

export type Notice =
  /** A settings or pre-flight warning; its text is the core's, like an error message. */
  | { code: 'warning'; message: string }
  | { code: 'test_key' }
  /** The upload rate cap of the run (bytesPerSecond null: lifted by a 0), as written and where it came from. */
  | { code: 'upload_rate'; bytesPerSecond: number | null; written: string; from: string }
  /** The re-run check begins: the source's batches of the month are listed (after `checked`, before `creating`). */
  | { code: 'listing_batches'; sourceId: string; period: string; product: Product }
  | { code: 'resuming'; batchId: string | undefined }
  /** An interrupted delivery made with another report or schema: left awaiting_upload, a fresh batch instead. */
  | { code: 'inputs_changed'; batchId: string | undefined }
  | { code: 'upload_url_refused'; reason: string }
  | { code: 'uploading_again'; batchId: string; reason: 'missing' | 'checksum'; sha256: string }
  | {
      code: 'retry';
      method: string;
      url: string;
      attempt: number;
      maxAttempts: number;
      delayMs: number;
      reason: string;
    }
  | { code: 'record_set_aside'; file: string; setAsideAs: string }
  | { code: 'schema_changes'; since: { period: string; batchId: string | null }; changes: ColumnDiff }
  /** --skip-delivered found a delivered batch whose record count differs from this file's. */
  | { code: 'record_count_differs'; batchId: string; listed: number; local: number }
  /**
   * --skip-delivered with a live key counted a batch with no record here: the service's list does not say which
   * key made it, and a test key's batch (never billable) would look the same.
   */
  | { code: 'skipped_on_service_word'; batchId: string; status: BatchStatus; sourceId: string; period: string }
  /** --force: this data file is also another month's (of this run, or delivered from here), delivered anyway. */
  | { code: 'same_file'; otherPeriod: string; otherDir: string; otherBatchId: string | undefined }
  /** This machine delivered the file as batchId with a key of the other mode: it does not count for this key. */
  | { code: 'other_key_mode'; batchId: string; batchKeyMode: KeyMode; keyMode: KeyMode };

export type DeliveryEvent =
  | StepEvent
  /** Bytes of the data file read by the pre-flight pass. */
  | (Month & { type: 'reading'; read: number; total: number })
  /** Bytes of the upload sent. */
  | (Month & { type: 'progress'; batchId: string; sent: number; total: number })
  | (Partial<Month> & { type: 'notice' } & Notice)
  /** Several folders: all passed their quick checks; these deliveries follow, in this order (oldest first). */
  | { type: 'queued'; deliveries: Array<Month & { dir: string; dataFile: string; bytes: number }> }
  /**
   * Several folders: this one's delivery (or check) is over, done (error null) or failed (the others go on).
   * `dir` is the folder as the caller named it; a check that failed before its product was known has no subject.
   * `error` is the failure as the result holds it.
   */
  | (Partial<Month> & { type: 'ended'; dir: string; error: FailureData | null })
  /** --wait: waiting for the review of what was delivered (or of the months `bds status` shows). */
  | ReviewEvent;

export type EventListener = (event: DeliveryEvent) => void;

// What waiting for the review tells as it goes (`bds status --wait`, `deliver --wait`); the CLI's status view
// turns it into a live line or timestamped lines.

/** A month whose state changed between two polls. */
export interface StateChange {
  period: string;
  product: Product;
  from: MonthState;
  to: MonthState;
  /** The batch the new state comes from (a month delivered again has a new one). */
  batchId: string | null;
}

export type ReviewEvent =
  /** These months are pending (received or in review): the wait begins; it gives up at `deadline` (ISO 8601). */
  | { type: 'review_waiting'; pending: MonthStatus[]; deadline: string; nextPollAt: string }
  /** A poll's answer: what changed since the last one, what is still pending, and the next poll (null: the wait is over). */
  | { type: 'review_polled'; changes: StateChange[]; pending: MonthStatus[]; nextPollAt: string | null };
