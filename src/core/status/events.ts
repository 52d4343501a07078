// What waiting for the review tells as it goes (`bds status --wait`, `deliver --wait`): typed data, never
// sentences; the CLI's status view turns them into a live line or timestamped lines.

import type { Product } from '../api/types.js';
import type { MonthState, MonthStatus } from './ledger.js';

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
