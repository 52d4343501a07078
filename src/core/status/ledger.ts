// Where each month stands, as pure functions of the source's batches (GET /batches): one row per month and
// product, its state in the ledger's own words, the counts, and which months a --fail-on names. No request,
// no clock: the caller gives the current month.

import { PRODUCTS, type BatchListEntry, type Product } from '../api/types.js';
import { UsageError } from '../errors.js';
import type { OptionNames } from '../option-names.js';
import { MONTH_STATES, type Month, type MonthState, type MonthStatus } from '../month.js';

/** Delivered and not yet decided: what --wait waits for, and --fail-on pending names. */
export const PENDING_STATES: readonly MonthState[] = ['received', 'in_review'];

export function isPending(month: MonthStatus): boolean {
  return PENDING_STATES.includes(month.state);
}

/** YYYY-MM of the month after `period`. */
export function nextMonth(period: string): string {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return month === 12 ? `${year + 1}-01` : `${year}-${String(month + 1).padStart(2, '0')}`;
}

/** YYYY-MM of the month before `period`. */
export function previousMonth(period: string): string {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return month === 1 ? `${year - 1}-12` : `${year}-${String(month - 1).padStart(2, '0')}`;
}

/** Every month from `since` to `until`, both included, oldest first. */
export function monthsBetween(since: string, until: string): string[] {
  const out: string[] = [];
  for (let period = since; period <= until; period = nextMonth(period)) out.push(period);
  return out;
}

/** The products a ledger shows: the one asked for, else those the source has batches for (records if none). */
export function productsOf(batches: readonly BatchListEntry[], product: Product | undefined): Product[] {
  if (product !== undefined) return [product];
  const listed = new Set(batches.map((batch) => batch.product));
  // The API's products first, in its order; a product bds does not know yet after them.
  const known = PRODUCTS.filter((p) => listed.has(p));
  const unknown = [...listed].filter((p) => !PRODUCTS.includes(p)).sort();
  const products = [...known, ...unknown];
  return products.length > 0 ? products : ['records'];
}

/**
 * Each month's state: from its newest batch that is not awaiting_upload (by created_at), `unfinished` when every
 * batch of the month is awaiting_upload, `open` for the current month without a batch, `missing` for another.
 * A rejected month delivered again so shows its new batch.
 */
export function ledger(
  batches: readonly BatchListEntry[],
  months: readonly Month[],
  currentMonth: string,
): MonthStatus[] {
  const byMonth = new Map<string, BatchListEntry[]>();
  for (const batch of batches) {
    const key = monthKey(batch);
    const list = byMonth.get(key);
    if (list) list.push(batch);
    else byMonth.set(key, [batch]);
  }
  return months.map(({ period, product }) => {
    const found = newestFirst(byMonth.get(monthKey({ period, product })) ?? []);
    const delivered = found.find((batch) => batch.status !== 'awaiting_upload');
    const batch = delivered ?? found[0];
    if (!batch)
      return {
        period,
        product,
        state: period === currentMonth ? 'open' : 'missing',
        batch_id: null,
        record_count: null,
        created_at: null,
      };
    return {
      period,
      product,
      state: delivered ? stateOf(delivered.status) : 'unfinished',
      batch_id: batch.id,
      record_count: typeof batch.record_count === 'number' ? batch.record_count : null,
      created_at: typeof batch.created_at === 'string' ? batch.created_at : null,
    };
  });
}

/** How many months are in each state; every state is named, 0 included, so a script need not guess. */
export function countStates(months: readonly MonthStatus[]): Record<MonthState, number> {
  const counts = Object.fromEntries(MONTH_STATES.map((state) => [state, 0])) as Record<MonthState, number>;
  for (const month of months) counts[month.state] += 1;
  return counts;
}

/** What --fail-on may name; `pending` is received or in review. */
export const FAIL_ON_STATES = ['missing', 'rejected', 'unfinished', 'pending'] as const;
export type FailOnState = (typeof FAIL_ON_STATES)[number];

/** failOn as a string (`missing,rejected`) or as a list; an unknown name is a usage error. */
export function parseFailOn(value: string | readonly string[], names: OptionNames): FailOnState[] {
  const states = (typeof value === 'string' ? value.split(',') : [...value])
    .map((name) => String(name).trim())
    .filter(Boolean);
  const wrong = states.filter((name) => !FAIL_ON_STATES.includes(name as FailOnState));
  if (wrong.length > 0 || states.length === 0) {
    const given = typeof value === 'string' ? value : states.join(',');
    const problem =
      wrong.length === 0
        ? 'names no state'
        : `${wrong.join(', ')} ${wrong.length === 1 ? 'is not a state' : 'are not states'} it can name`;
    throw new UsageError(`${names.name('failOn')}${given ? ` ${given}:` : ''} ${problem}`, {
      hint: `name one or more of ${FAIL_ON_STATES.join(', ')}, separated by commas (pending: received or in review)`,
      about: { code: 'option_value', option: 'failOn' },
    });
  }
  return [...new Set(states as FailOnState[])];
}

/** failOn's states; when waiting, rejected unless told otherwise. */
export function failOnFor(
  failOn: string | readonly string[] | undefined,
  waiting: boolean,
  names: OptionNames,
): FailOnState[] {
  if (failOn !== undefined) return parseFailOn(failOn, names);
  return waiting ? ['rejected'] : [];
}

/** The months in a state that `failOn` names. */
export function failingMonths(months: readonly MonthStatus[], failOn: readonly FailOnState[]): MonthStatus[] {
  return months.filter((month) =>
    failOn.some((name) => (name === 'pending' ? isPending(month) : month.state === name)),
  );
}

function monthKey({ period, product }: Month): string {
  return `${period} ${product}`;
}

/** Newest first by created_at; a batch without one counts as oldest. */
function newestFirst(batches: BatchListEntry[]): BatchListEntry[] {
  return [...batches].sort((a, b) => String(b.created_at ?? '').localeCompare(String(a.created_at ?? '')));
}

/** A status this version of bds does not know comes after the upload was confirmed: it counts as in review. */
function stateOf(status: string): MonthState {
  return status === 'accepted' || status === 'rejected' || status === 'received' || status === 'in_review'
    ? status
    : 'in_review';
}
