// Waiting for the review: poll until no month is pending (received or in review), politely (every 15 s for the
// first minute, every 30 s until the third, then every minute), at most until the deadline. The clock and the
// sleep are the Runtime's, so a test's clock runs a 30-minute wait at once; the HTTP layer retries each poll
// (network trouble, 429 and 503 with their Retry-After) as it retries every request.

import { abortError } from '../errors.js';
import type { Operation } from '../operation.js';
import type { StateChange } from '../events.js';
import { isPending } from './ledger.js';
import type { MonthStatus } from '../month.js';

/** The wait before the next poll, by how long the wait has lasted. */
export function pollDelay(elapsedMs: number): number {
  if (elapsedMs < 60_000) return 15_000;
  if (elapsedMs < 180_000) return 30_000;
  return 60_000;
}

export interface WaitOutcome {
  months: MonthStatus[];
  /** The deadline came with months still pending. */
  timedOut: boolean;
}

/**
 * From the first poll's months, polls until none is pending or `timeoutMs` has passed (a last poll at the
 * deadline). Events: 'review_waiting' once, if anything is pending; 'review_polled' after each poll. An abort
 * (Ctrl-C) rejects at once, mid-sleep or mid-request.
 */
export async function waitWhilePending(
  first: MonthStatus[],
  poll: () => Promise<MonthStatus[]>,
  timeoutMs: number,
  op: Operation,
): Promise<WaitOutcome> {
  const { runtime, signal } = op;
  const clock = (): number => runtime.now().getTime();
  const started = clock();
  const deadline = started + timeoutMs;
  const nextPoll = (): number => Math.min(clock() + pollDelay(clock() - started), deadline);
  let months = first;
  if (!months.some(isPending)) return { months, timedOut: false };
  let next = nextPoll();
  op.onEvent({
    type: 'review_waiting',
    pending: months.filter(isPending),
    deadline: iso(deadline),
    nextPollAt: iso(next),
  });
  for (;;) {
    if (clock() >= deadline) return { months, timedOut: true };
    await runtime.sleep(Math.max(0, next - clock()), signal);
    if (signal.aborted) throw abortError(signal);
    const polled = await poll();
    const changes = changesBetween(months, polled);
    months = polled;
    const pending = months.filter(isPending);
    const over = pending.length === 0 || clock() >= deadline;
    if (!over) next = nextPoll();
    op.onEvent({ type: 'review_polled', changes, pending, nextPollAt: over ? null : iso(next) });
    if (pending.length === 0) return { months, timedOut: false };
  }
}

/** The months whose state (or batch) changed from one poll to the next; both polls show the same months. */
function changesBetween(before: readonly MonthStatus[], after: readonly MonthStatus[]): StateChange[] {
  return after.flatMap((month, index) => {
    const earlier = before[index];
    if (!earlier || (earlier.state === month.state && earlier.batch_id === month.batch_id)) return [];
    return [
      { period: month.period, product: month.product, from: earlier.state, to: month.state, batchId: month.batch_id },
    ];
  });
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
