// A month of a product, and the states the ledger gives it: what results, events and the call's API clients
// speak of, below every use case that does.

import type { Product } from './api/types.js';

/** A month's state, in the order the counts list them. */
export const MONTH_STATES = ['accepted', 'in_review', 'received', 'rejected', 'unfinished', 'missing', 'open'] as const;
export type MonthState = (typeof MONTH_STATES)[number];

/** One month of one product: a row of the ledger, and which delivery an event is about. */
export interface Month {
  period: string;
  product: Product;
}

/** One row of the ledger, as `bds status --json` prints it. */
export interface MonthStatus extends Month {
  state: MonthState;
  /** The batch the state comes from; null for a month without one (missing, open). */
  batch_id: string | null;
  record_count: number | null;
  created_at: string | null;
}
