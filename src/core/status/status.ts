// `bds status` as use cases: where each month stands (status), the same after waiting for the review
// (waitForReview), and the wait that `deliver --wait` does for the months it delivered (reviewOf). Each returns
// the object `bds status --json` prints; a rejected or missing month is its exit_code (7), never a rejection.

import { PRODUCTS, type BatchListEntry, type Product } from '../api/types.js';
import { EXIT_CODES, UsageError } from '../errors.js';
import type { Operation } from '../operation.js';
import type { OptionNames } from '../option-names.js';
import { checkPeriodForm, currentPeriod } from '../preflight/period.js';
import { requireSource } from '../settings/settings.js';
import {
  countStates,
  failingMonths,
  failOnFor,
  isPending,
  ledger,
  monthsBetween,
  previousMonth,
  productsOf,
  type FailOnState,
} from './ledger.js';
import type { Month, MonthState, MonthStatus } from '../month.js';
import { waitWhilePending } from './wait.js';

/** --wait gives up after this long unless told otherwise. */
export const DEFAULT_TIMEOUT_MS = 30 * 60_000;

export interface StatusOptions {
  /** Default BDS_SOURCE_ID or the config file's sourceId. */
  sourceId?: string | undefined;
  /** The first month shown; default the period of the source's earliest batch. */
  since?: string | undefined;
  /** The last month shown; default the later of the last complete month (UTC) and the newest batch's period. */
  until?: string | undefined;
  /** One month: since and until at once. */
  period?: string | undefined;
  /** One product; default those the source has batches for. */
  product?: Product | undefined;
  /** States that make exit_code 7: `missing,rejected` or a list; pending is received or in review. */
  failOn?: string | readonly FailOnState[] | undefined;
}

export interface WaitForReviewOptions extends StatusOptions {
  /** How long to wait, in ms (default 30 minutes); failOn defaults to rejected. */
  timeout?: number | undefined;
}

/** What `deliver` takes to wait for the review of the months it delivered. */
export interface ReviewChoices {
  wait?: boolean | undefined;
  /** In ms; default 30 minutes. */
  timeout?: number | undefined;
  /** Default rejected. */
  failOn?: string | readonly FailOnState[] | undefined;
}

/** How a wait for the review ends, as decided from deliver's choices: its timeout, and the states that fail it. */
export interface ReviewRules {
  timeoutMs: number;
  failOn: FailOnState[];
}

/** What `bds status --json` prints (docs/schemas/status.schema.json). */
export interface StatusResult {
  source_id: string;
  since: string;
  until: string;
  /** Oldest first; within a month, the products in the API's order. */
  months: MonthStatus[];
  counts: Record<MonthState, number>;
  /** What the command exits with: 7 when a month is in a state failOn names, or still pending when the wait timed out. */
  exit_code: number;
}

/** What a status decides from its options: the states that make exit 7, and a wait's timeout (none without one). */
export interface StatusRules {
  failOn: FailOnState[];
  timeoutMs: number | undefined;
}

/** The rules of `status` (waiting false) or `waitForReview` (true) for these options, defaults included. */
export function statusRules(options: WaitForReviewOptions, waiting: boolean, names: OptionNames): StatusRules {
  return {
    failOn: failOnFor(options.failOn, waiting, names),
    timeoutMs: waiting ? validateTimeout(options.timeout, names) : undefined,
  };
}

export async function status(options: StatusOptions, op: Operation): Promise<StatusResult> {
  const query = checkQuery(options, op.runtime.now(), op.names);
  return queriedLedger(op, query, statusRules(options, false, op.names));
}

export async function waitForReview(options: WaitForReviewOptions, op: Operation): Promise<StatusResult> {
  const query = checkQuery(options, op.runtime.now(), op.names);
  return queriedLedger(op, query, statusRules(options, true, op.names));
}

/** The ledger of the months a checked query asks for, of the source the settings name: once, or while waiting. */
async function queriedLedger(op: Operation, query: Query, { failOn, timeoutMs }: StatusRules): Promise<StatusResult> {
  await op.announceSettings();
  const sourceId = requireSource(await op.settings());
  return runLedger(
    op,
    sourceId,
    (batches) => shownMonths(batches, query, sourceId, op.runtime.now(), op.names),
    failOn,
    timeoutMs,
  );
}

/** deliver's wait, timeout and failOn, checked before anything is sent; undefined without wait. */
export function validateReviewChoices(
  choices: ReviewChoices & { dryRun?: boolean | undefined },
  names: OptionNames,
): ReviewRules | undefined {
  const wait = names.name('wait');
  if (!choices.wait) {
    const given = (['timeout', 'failOn'] as const).filter((option) => choices[option] !== undefined);
    if (given.length > 0)
      throw new UsageError(
        `${given.map((option) => names.name(option)).join(' and ')} ${given.length > 1 ? 'go' : 'goes'} with ${wait}`,
        {
          hint: `set ${wait} to wait for the review of what is delivered`,
          about: { code: 'goes_with', options: given, needs: 'wait' },
        },
      );
    return undefined;
  }
  if (choices.dryRun) {
    throw new UsageError(`${wait} cannot be given with ${names.name('dryRun')}`, {
      hint: 'a dry run delivers nothing to wait for',
      about: { code: 'options_conflict', option: 'wait', with: ['dryRun'] },
    });
  }
  return { timeoutMs: validateTimeout(choices.timeout, names), failOn: failOnFor(choices.failOn, true, names) };
}

/** After a delivery: waits for the review of the months it delivered, as `bds status --wait` does for its months. */
export async function reviewOf(
  months: readonly Month[],
  sourceId: string,
  { timeoutMs, failOn }: ReviewRules,
  op: Operation,
): Promise<StatusResult> {
  const sorted = [...months].sort(
    (a, b) => a.period.localeCompare(b.period) || PRODUCTS.indexOf(a.product) - PRODUCTS.indexOf(b.product),
  );
  const shown: Shown = { since: sorted[0]!.period, until: sorted.at(-1)!.period, months: sorted };
  return runLedger(op, sourceId, () => shown, failOn, timeoutMs);
}

/** Only the library's timeout gets here as it was given: the CLI reads --timeout as a duration itself. */
function validateTimeout(timeout: number | undefined, names: OptionNames): number {
  if (timeout === undefined) return DEFAULT_TIMEOUT_MS;
  if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout < 0) {
    throw new UsageError(`${names.name('timeout')} ${String(timeout)} is not a duration`, {
      hint: 'milliseconds, 0 or more',
      about: { code: 'option_value', option: 'timeout' },
    });
  }
  return timeout;
}

/** What was asked: a range (either end may be left to the batches), one product or all. */
interface Query {
  since: string | undefined;
  until: string | undefined;
  product: Product | undefined;
}

/** The options' own rules, before any request: periods of the form YYYY-MM, none in the future, in order. */
function checkQuery(options: StatusOptions, now: Date, names: OptionNames): Query {
  const { period, since, until, product } = options;
  const [month, first, last] = [names.name('period'), names.name('since'), names.name('until')];
  if (period !== undefined && (since !== undefined || until !== undefined)) {
    throw new UsageError(`${month} cannot be given with ${first} or ${last}`, {
      hint: `${month} is one month; ${first} and ${last} name a range`,
      about: { code: 'options_conflict', option: 'period', with: ['since', 'until'] },
    });
  }
  const current = currentPeriod(now);
  for (const [option, value] of [
    ['period', period],
    ['since', since],
    ['until', until],
  ] as const) {
    if (value === undefined) continue;
    checkPeriodForm(value, names, option);
    if (value > current) {
      throw new UsageError(`${names.name(option)} ${value} is in the future (this month is ${current}, UTC)`, {
        about: { code: 'option_value', option },
      });
    }
  }
  if (since !== undefined && until !== undefined && since > until) {
    throw new UsageError(`${first} ${since} is after ${last} ${until}`, {
      hint: 'the first month comes first',
      about: { code: 'since_after_until', since, until },
    });
  }
  if (product !== undefined && !PRODUCTS.includes(product)) {
    throw new UsageError(`${names.name('product')} ${String(product)} is not a product`, {
      hint: `one of ${PRODUCTS.join(', ')}`,
      about: { code: 'option_value', option: 'product' },
    });
  }
  return period !== undefined ? { since: period, until: period, product } : { since, until, product };
}

/** The months a ledger shows. */
interface Shown {
  since: string;
  until: string;
  months: Month[];
}

/** The months and products to show, their defaults taken from the source's batches. */
function shownMonths(
  batches: readonly BatchListEntry[],
  query: Query,
  sourceId: string,
  now: Date,
  names: OptionNames,
): Shown {
  const periods = batches
    .map((batch) => batch.period)
    .filter((period) => /^\d{4}-(0[1-9]|1[0-2])$/.test(period))
    .sort();
  const earliest = periods[0];
  const since = query.since ?? earliest;
  if (since === undefined) {
    throw new UsageError(`source ${sourceId} has no batch yet, so its first month is not known`, {
      hint: `name the first month it should have delivered with ${names.phrase('since')} (YYYY-MM)`,
      about: { code: 'no_first_month' },
    });
  }
  // The current month shows only when asked for, or when it has a batch: it is not over yet.
  const until =
    query.until ??
    [previousMonth(currentPeriod(now)), periods.at(-1) ?? since, since].reduce((a, b) => (a > b ? a : b));
  if (since > until) {
    throw new UsageError(`the source's earliest batch is of ${since}, after ${names.name('until')} ${until}`, {
      hint: `name the first month with ${names.phrase('since')} (YYYY-MM)`,
      about: { code: 'earliest_after_until', earliest: since, until },
    });
  }
  const products = productsOf(batches, query.product);
  return {
    since,
    until,
    months: monthsBetween(since, until).flatMap((period) => products.map((product) => ({ period, product }))),
  };
}

/** One list of the batches (or, waiting, one per poll) made into the ledger of the months `choose` picks from the first. */
async function runLedger(
  op: Operation,
  sourceId: string,
  choose: (batches: readonly BatchListEntry[]) => Shown,
  failOn: FailOnState[],
  timeoutMs: number | undefined,
): Promise<StatusResult> {
  const current = currentPeriod(op.runtime.now());
  const client = await op.client();
  try {
    let shown: Shown | undefined;
    const poll = async (): Promise<MonthStatus[]> => {
      const batches = await client.listBatches(sourceId, op.signal);
      shown ??= choose(batches);
      return ledger(batches, shown.months, current);
    };
    const first = await poll();
    const { months, timedOut } =
      timeoutMs === undefined ? { months: first, timedOut: false } : await waitWhilePending(first, poll, timeoutMs, op);
    const failed = failingMonths(months, failOn).length > 0 || (timedOut && months.some(isPending));
    return {
      source_id: sourceId,
      since: shown!.since,
      until: shown!.until,
      months,
      counts: countStates(months),
      exit_code: failed ? EXIT_CODES.status : EXIT_CODES.ok,
    };
  } finally {
    await client.close();
  }
}
