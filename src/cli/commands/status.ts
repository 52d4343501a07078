// bds status: where each month stands (core/status/status.ts), optionally after waiting for the review; the
// ledger out as a table, rows or JSON, and exit 7 when --fail-on says so.

import { Option } from 'commander';
import { PRODUCTS, type Product } from '../../core/api/types.js';
import { UsageError } from '../../core/errors.js';
import { failOnFor } from '../../core/status/ledger.js';
import type { StatusResult } from '../../core/status/status.js';
import { defineCommand, type CommonOptions } from '../command.js';
import { printStatus, routeReview } from '../output/status-view.js';
import { noticePrinter } from '../output/words.js';
import { reviewChoices, reviewOptions, type ReviewFlags } from './review-options.js';

interface StatusFlags extends CommonOptions, ReviewFlags {
  since?: string;
  until?: string;
  period?: string;
  product?: Product;
}

export default defineCommand<StatusFlags, StatusResult>({
  name: 'status',
  description: 'where each month stands: accepted, in review, received, rejected, unfinished, missing',
  options: [
    new Option('--source <id>', 'source id (BDS_SOURCE_ID)'),
    new Option('--since <YYYY-MM>', "the first month (default: the source's earliest batch)"),
    new Option('--until <YYYY-MM>', 'the last month (default: the last complete month, or a later batch)'),
    new Option('--period <YYYY-MM>', 'only this month'),
    new Option('--product <product>', 'only this product (default: those the source has batches for)').choices(
      PRODUCTS,
    ),
    ...reviewOptions('poll until no month shown is received or in review (then --fail-on defaults to rejected)'),
  ],
  async run(op, io, flags) {
    const { wait, timeout, failOn } = reviewChoices(flags);
    if (timeout !== undefined && !wait)
      throw new UsageError('--timeout goes with --wait', { hint: 'add --wait to wait for the review' });
    const { status, waitForReview } = await import('../../core/status/status.js');
    const options = { since: flags.since, until: flags.until, period: flags.period, product: flags.product, failOn };
    if (!wait) return status(options, op);
    return waitForReview({ ...options, timeout }, op.with({ onEvent: routeReview(io, noticePrinter(io)) }));
  },
  print(io, result, flags) {
    return printStatus(io, result, {
      failOn: failOnFor(flags.failOn, flags.wait === true),
      waited: flags.wait ? (flags.timeout ?? '30m') : undefined,
    });
  },
});
