// Which months a run of deliver was about and how each ended, for the metrics file: from its result (one folder
// or several), or, for a run that failed as a whole, from the deliveries its events say had begun.

import type { DeliverManyResult } from '../delivery/deliver-many.js';
import type { DeliverResult, DryRunResult } from '../delivery/deliver.js';
import type { DeliveryEvent } from '../delivery/events.js';
import type { MonthRun, ReviewVerdict } from './metrics.js';

/** A month of the review that deliver --wait adds to its result. */
type ReviewedMonth = NonNullable<DeliverResult['review']>['months'][number];

/**
 * The months of a result; a dry run delivers nothing and has none. Each month's exit code is its delivery's own,
 * whatever the wait for the review after it ended in; the review is its own sample.
 */
export function monthRuns(result: DeliverResult | DryRunResult | DeliverManyResult): MonthRun[] {
  const months = 'deliveries' in result ? result.deliveries : [{ ...result, error: null }];
  const review = 'review' in result ? result.review : undefined;
  return months.flatMap((month) =>
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

/** The deliveries whose pass over the data file began: a run that fails after that was a run of their month. */
export class MonthsBegun {
  private readonly months = new Map<string, { period: string; product: string }>();

  readonly onEvent = (event: DeliveryEvent): void => {
    if (event.type === 'step')
      this.months.set(`${event.period} ${event.product}`, { period: event.period, product: event.product });
  };

  /** Each month begun, ended with the run's exit code; none without a source to label them with. */
  runs(exitCode: number, source: string | undefined): MonthRun[] {
    if (source === undefined) return [];
    return [...this.months.values()].map(({ period, product }) => ({
      source,
      period,
      product,
      exitCode,
      bytes: null,
      records: null,
    }));
  }
}
