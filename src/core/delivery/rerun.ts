// The re-run decision, as a pure function of what the server lists for the period and what this machine's
// delivery record says: deliver, resume an interrupted delivery, say "already delivered", or refuse.

import type { BatchListEntry, BatchStatus } from '../api/types.js';
import type { DeliveryRecord } from './journal.js';

/** Statuses that mean the file reached the service: a re-run must not deliver it again. */
export const DELIVERED_STATUSES: readonly BatchStatus[] = ['received', 'in_review', 'accepted'];

export function isDelivered(status: BatchStatus): boolean {
  return DELIVERED_STATUSES.includes(status);
}

export type RerunDecision =
  /** Create a batch. `abandoned`: an interrupted delivery whose report or schema changed since; not resumed. */
  | { kind: 'new'; abandoned: DeliveryRecord | undefined }
  /** Finish the interrupted delivery of this delivery record. */
  | { kind: 'resume'; deliveryRecord: DeliveryRecord }
  /** Already delivered: by this machine from this file, or (with --skip-delivered) from any file. */
  | { kind: 'delivered'; batch: BatchListEntry; fromThisFile: boolean }
  /** Delivered from another file or by another machine: stop unless --force. */
  | { kind: 'conflict'; batch: BatchListEntry };

export interface RerunFacts {
  /** This period's and product's batches, newest first; undefined with --force, when only the delivery record counts. */
  batches: BatchListEntry[] | undefined;
  /** This machine's delivery record of the same file, if any. */
  deliveryRecord: DeliveryRecord | undefined;
  /** The digest of the report and schema being delivered now. */
  inputsDigest: string;
  skipDelivered: boolean;
}

export function decideRerun({ batches, deliveryRecord, inputsDigest, skipDelivered }: RerunFacts): RerunDecision {
  const unfinished = deliveryRecord && deliveryRecord.step !== 'completed' ? deliveryRecord : undefined;
  // A batch created with another report or schema is never confirmed with this one.
  const resumable = unfinished?.inputsDigest === inputsDigest ? unfinished : undefined;
  const fresh: RerunDecision = { kind: 'new', abandoned: resumable ? undefined : unfinished };
  if (batches === undefined) return resumable ? { kind: 'resume', deliveryRecord: resumable } : fresh;

  const ours = deliveryRecord?.batchId === undefined ? undefined : batches.find((b) => b.id === deliveryRecord.batchId);
  if (ours && isDelivered(ours.status)) return { kind: 'delivered', batch: ours, fromThisFile: true };
  const delivered = batches.find((b) => isDelivered(b.status));
  if (delivered)
    return skipDelivered
      ? { kind: 'delivered', batch: delivered, fromThisFile: false }
      : { kind: 'conflict', batch: delivered };
  // A delivery record without a batch id: its create was sent, but no answer said which batch it made. An
  // awaiting_upload batch of the period may be that one (its create is repeated with the same key); with none,
  // the create made nothing (it was refused, or never arrived): nothing to resume, nothing left half-way.
  if (unfinished && unfinished.batchId === undefined && !batches.some((b) => b.status === 'awaiting_upload'))
    return { kind: 'new', abandoned: undefined };
  if (resumable && (resumable.batchId === undefined || ours?.status === 'awaiting_upload'))
    return { kind: 'resume', deliveryRecord: resumable };
  return fresh;
}
