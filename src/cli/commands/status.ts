// bds status: where each month stands (core/status/status.ts), optionally after waiting for the review; the
// ledger out as a table, rows or JSON, and exit 7 when --fail-on says so.

import { Option } from 'commander';
import { PRODUCTS, type Product } from '../../core/api/types.js';
import { UsageError } from '../../core/errors.js';
import type { StatusResult, StatusRules } from '../../core/status/status.js';
import { defineCommand, type CommonFlags } from '../command.js';
import { writtenDuration } from '../output/format.js';
import { printStatus, routeReview } from '../output/status-view.js';
import { noticePrinter } from '../output/words.js';
import { reviewChoices, reviewOptions, type ReviewFlags } from './review-options.js';

interface StatusFlags extends CommonFlags, ReviewFlags {
  since?: string;
  until?: string;
  period?: string;
  product?: Product;
}

/** The ledger, and the rules the core decided it by (--fail-on and --timeout, defaults included). */
interface StatusRun {
  result: StatusResult;
  rules: StatusRules;
}

export default defineCommand<StatusFlags, StatusRun>({
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
    const { status, statusRules, waitForReview } = await import('../../core/status/status.js');
    const options = { since: flags.since, until: flags.until, period: flags.period, product: flags.product, failOn };
    const result = wait
      ? await waitForReview({ ...options, timeout }, op.with({ onEvent: routeReview(io, noticePrinter(io)) }))
      : await status(options, op);
    return { result, rules: statusRules({ ...options, timeout }, wait === true, op.names) };
  },
  print(io, { result, rules }, flags) {
    const { failOn, timeoutMs } = rules;
    const waited = timeoutMs === undefined ? undefined : (flags.timeout ?? writtenDuration(timeoutMs));
    return printStatus(io, result, { failOn, waited });
  },
});
