// Where the months stand, as a person reads it: the ledger as a table (tab-separated rows in a pipe), the
// counts and what to do below it, the lines that say why the exit code is 7, and the wait for the review as it
// happens (one live line on a terminal, a timestamped line per change of state elsewhere).

import type { ChalkInstance } from 'chalk';
import type { EventListener, ReviewEvent } from '../../core/events.js';
import { failingMonths, isPending, type FailOnState } from '../../core/status/ledger.js';
import { MONTH_STATES, type MonthState, type MonthStatus } from '../../core/month.js';
import type { StatusResult } from '../../core/status/status.js';
import { counted, plural, timestamp } from './format.js';
import type { IO } from './io.js';
import { renderTable } from './table.js';

const STATE_COLOURS: Record<
  MonthState,
  keyof Pick<ChalkInstance, 'green' | 'yellow' | 'red' | 'cyan' | 'blue' | 'dim'>
> = {
  accepted: 'green',
  in_review: 'blue',
  received: 'cyan',
  rejected: 'red',
  unfinished: 'yellow',
  missing: 'red',
  open: 'dim',
};

/** At most this many months are named in one line; the table has them all. */
const NAMED_AT_MOST = 10;

/** `bds status`'s result: the table on a terminal (with the counts and what to do), rows in a pipe (those on stderr). */
export function printStatus(io: IO, result: StatusResult, verdict: Verdict): number {
  io.result(result, () => (io.stdoutIsTerminal ? statusText(io, result) : statusRows(io, result)));
  if (!io.stdoutIsTerminal && !io.flags.json) for (const line of statusNotes(result)) io.notice(line);
  return sayVerdict(io, result, verdict);
}

/** The table, a blank line, the counts and what to do. */
export function statusText(io: IO, result: StatusResult): string {
  return [
    renderTable(['PERIOD', 'PRODUCT', 'STATE', 'BATCH', 'RECORDS', 'DELIVERED'], cells(io, result.months), true),
    '',
    ...statusNotes(result),
  ].join('\n');
}

/** --quiet after a delivery: one line per month reviewed. */
export function statusLines(result: StatusResult): string {
  return result.months
    .map((m) => `${m.period} ${m.product}: ${m.state}${m.batch_id ? ` (${m.batch_id})` : ''}`)
    .join('\n');
}

/** What makes the exit code 7, for the lines that say so. */
export interface Verdict {
  /** The states --fail-on names (or its default). */
  failOn: FailOnState[];
  /** The --timeout of a wait, as given ('30m' by default); undefined when nothing was waited for. */
  waited: string | undefined;
}

/** Exit 7 said in a line or two on stderr: the months in a state --fail-on names, those still pending after a wait. */
export function sayVerdict(io: IO, result: StatusResult, { failOn, waited }: Verdict): number {
  if (result.exit_code === 0) return 0;
  const pending = waited === undefined ? [] : result.months.filter(isPending);
  const failing = failingMonths(result.months, failOn).filter((month) => !pending.includes(month));
  if (failing.length > 0)
    io.error(`--fail-on ${failOn.join(',')}: ${named(failing, (m) => `${label(m)} is ${m.state}`)}`, undefined);
  if (pending.length > 0) {
    io.error(
      `still pending when --timeout ${waited} ran out: ${named(pending, (m) => `${label(m)} (${m.state})`)}`,
      'the review takes longer than the wait: bds status --wait waits again',
    );
  }
  return result.exit_code;
}

/** Waiting for the review: review events to their view, the others (notices of retries, warnings) to `other`. */
export function routeReview(io: IO, other: EventListener, beforeWait: () => void = () => {}): EventListener {
  const view = new ReviewWaitView(io);
  return (event) => {
    if (event.type !== 'review_waiting' && event.type !== 'review_polled') return other(event);
    if (event.type === 'review_waiting') beforeWait();
    view.onEvent(event);
  };
}

/** The wait as it happens: one live line on a terminal, lines that stay for each change of state. */
class ReviewWaitView {
  private deadline = '';

  constructor(private readonly io: IO) {}

  onEvent(event: ReviewEvent): void {
    const { io } = this;
    if (event.type === 'review_waiting') {
      this.deadline = event.deadline;
      if (io.interactive) io.live([this.liveLine(event.pending, event.nextPollAt)]);
      else
        io.notice(
          `waiting for the review of ${pendingText(event.pending)}; checking every 15 s to 60 s, at most until ${timestamp(new Date(event.deadline))}`,
        );
      return;
    }
    // The wait is over: the live line goes first, so that the changes are the last lines above the result.
    if (!event.nextPollAt) io.endLive();
    for (const change of event.changes) {
      io.notice(`${label(change)}: ${change.from} → ${change.to}${change.batchId ? ` (${change.batchId})` : ''}`);
    }
    if (io.interactive && event.nextPollAt) io.live([this.liveLine(event.pending, event.nextPollAt)]);
  }

  /** The times first: a line cut at the terminal's width loses the end of the list of months, not them. */
  private liveLine(pending: MonthStatus[], nextPollAt: string): string {
    return `${this.io.err.cyan('…')} waiting, next check ${clock(nextPollAt)}, gives up ${clock(this.deadline)} UTC, for the review of ${pendingText(pending)}`;
  }
}

/** The counts of each state there is, and what to do about the missing, rejected, unfinished and pending months. */
function statusNotes(result: StatusResult): string[] {
  const counts = MONTH_STATES.filter((state) => result.counts[state] > 0).map(
    (state) => `${result.counts[state]} ${state}`,
  );
  const periods = (state: MonthState) => [
    ...new Set(result.months.filter((m) => m.state === state).map((m) => m.period)),
  ];
  // A folder holds one product: with several, each product of a month is a folder of its own to deliver.
  const products = new Set(result.months.map((m) => m.product));
  const folders = (state: MonthState) =>
    products.size > 1
      ? result.months
          .filter((m) => m.state === state)
          .map((m) => `out/${m.product}-${m.period}`)
          .join(' ')
      : periods(state)
          .map((period) => `out/${period}`)
          .join(' ');
  const missing = periods('missing');
  const rejected = periods('rejected');
  const unfinished = result.months.filter((m) => m.state === 'unfinished');
  const pending = result.months.filter(isPending);
  const todo = [
    missing.length > 0 && `deliver the missing ${plural(missing.length, 'month')}: bds deliver ${folders('missing')}`,
    rejected.length > 0 &&
      `deliver the rejected ${plural(rejected.length, 'month')} again, once fixed: bds deliver ${folders('rejected')}`,
    unfinished.length > 0 &&
      `finish the unfinished ${plural(unfinished.length, 'delivery', 'deliveries')} (${named(unfinished, label)}): the same bds deliver command again resumes ${plural(unfinished.length, 'it', 'them')}`,
    pending.length > 0 &&
      `${counted(pending.length, 'month')} received or in review: bds status --wait waits for the verdict`,
  ].filter((line): line is string => typeof line === 'string');
  return [
    counts.length > 0 ? counts.join(', ') : 'no months',
    ...(todo.length > 0 ? ['To do:', ...todo.map((line) => `  ${line}`)] : []),
  ];
}

/** In a pipe: the same columns, tab-separated, no header, no colour. */
function statusRows(io: IO, result: StatusResult): string {
  return renderTable([], cells(io, result.months), false);
}

function cells(io: IO, months: MonthStatus[]): string[][] {
  return months.map((m) => [
    m.period,
    m.product,
    io.out[STATE_COLOURS[m.state]](m.state),
    m.batch_id ?? '',
    m.record_count === null ? '' : String(m.record_count),
    m.created_at?.slice(0, 10) ?? '',
  ]);
}

function pendingText(pending: MonthStatus[]): string {
  if (pending.length <= 3) return named(pending, (m) => `${label(m)} (${m.state})`);
  const inReview = pending.filter((m) => m.state === 'in_review').length;
  return `${pending.length} months (${inReview} in_review, ${pending.length - inReview} received)`;
}

/** The first months named, and how many more. */
function named<T>(list: T[], name: (item: T) => string): string {
  const shown = list.slice(0, NAMED_AT_MOST).map(name).join(', ');
  return list.length > NAMED_AT_MOST ? `${shown} and ${list.length - NAMED_AT_MOST} more` : shown;
}

function label({ period, product }: { period: string; product: string }): string {
  return `${period} ${product}`;
}

/** HH:MM:SS of an ISO time (UTC). */
function clock(iso: string): string {
  return iso.slice(11, 19);
}
