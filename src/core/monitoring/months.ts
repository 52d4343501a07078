// Which months a run of deliver was about and how each ended, for the metrics file: the months it had begun
// (each took its lock), with one folder as with several; each as its result says it ended, or, for a run that
// failed as a whole, ended with the run's error.

import type { DeliverResult } from '../delivery/deliver.js';
import type { DeliverRun } from '../delivery/deliver-run.js';
import { toBdsError } from '../errors.js';
import type { MonthRun, ReviewVerdict } from './metrics.js';

/** A month of the review that deliver --wait adds to its result. */
type ReviewedMonth = NonNullable<DeliverResult['review']>['months'][number];

/**
 * The months of a run that began (DeliverRun's `months`); a dry run delivers nothing and has none. Each month's
 * exit code is its delivery's own, whatever the wait for the review after it ended in; the review is its own
 * sample. A run that failed as a whole ended every month it began with its error.
 */
export function monthRuns(run: DeliverRun): MonthRun[] {
  const begun = run.result.deliveries.filter((_, index) => run.months[index]!.begun);
  if ('thrown' in run) {
    const { exitCode } = toBdsError(run.thrown);
    return begun.map(({ source_id, period, product }) => ({
      source: source_id,
      period,
      product,
      exitCode,
      bytes: null,
      records: null,
    }));
  }
  const { review } = run.result;
  return begun.flatMap((month) =>
    'dry_run' in month
      ? []
      : [
          {
            source: month.source_id,
            period: month.period,
            product: month.product,
            exitCode: month.error?.exit_code ?? 0,
            bytes: month.bytes,
            records: month.record_count,
            newBatch: !month.error && !month.skipped,
            review: verdict(review?.months.find((m) => m.period === month.period && m.product === month.product)),
          },
        ],
  );
}

function verdict(month: ReviewedMonth | undefined): ReviewVerdict | undefined {
  switch (month?.state) {
    case 'accepted':
    case 'rejected':
      return month.state;
    case 'received':
    case 'in_review':
      return 'pending';
    default:
      return undefined;
  }
}
