// The one rule for several folders in one run, for check and deliver alike: a folder named twice, or two
// folders for one month and product, is a usage error (which of them is the month's data is the seller's call).

import { UsageError } from '../errors.js';
import type { PreflightedFolder } from '../preflight/folder.js';

/** Why `folder` cannot join the folders before it in the run, if it cannot. */
export function duplicateError(
  folder: PreflightedFolder,
  earlier: readonly PreflightedFolder[],
): UsageError | undefined {
  if (earlier.some((other) => other.absDir === folder.absDir)) {
    return new UsageError('the same folder is named twice', { hint: 'name each folder once' });
  }
  const other = folder.period
    ? earlier.find((e) => e.period === folder.period && e.product === folder.product)
    : undefined;
  if (!other) return undefined;
  return new UsageError(`the same period and product (${folder.period} ${folder.product}) as ${other.dir}`, {
    hint: 'deliver one folder per month and product',
  });
}
