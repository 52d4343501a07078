// The period of a delivery: YYYY-MM, month 01 to 12, not after the current month (UTC).

import path from 'node:path';
import { UsageError } from '../errors.js';

const PERIOD_FORM = /^(\d{4})-(\d{2})$/;

/** YYYY-MM with a month from 01 to 12. */
export function checkPeriodForm(period: string): void {
  const match = PERIOD_FORM.exec(period);
  if (!match) throw new UsageError(`--period ${period} is not of the form YYYY-MM (for example 2024-05)`);
  const month = Number(match[2]);
  if (month < 1 || month > 12) throw new UsageError(`--period ${period}: month ${match[2]} is not between 01 and 12`);
}

/** The month of `now` in UTC, as YYYY-MM. */
export function currentPeriod(now: Date): string {
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The YYYY-MM in a folder's name (`2024-05`, `records-2024-05`, `orders_2024-05_v2`), if there is one. */
export function periodInName(folder: string): string | undefined {
  return /(?<![0-9])(\d{4}-\d{2})(?![0-9])/.exec(folder)?.[1];
}

/**
 * The period: --period, else the one in the folder's name. A --period that contradicts the name is refused:
 * the wrong month's data is the costliest mistake a seller can make.
 */
export function choosePeriod(given: string | undefined, folder: string): string | undefined {
  const named = periodInName(path.basename(folder));
  if (given !== undefined && given !== '' && named !== undefined && given !== named) {
    throw new UsageError(`--period ${given} contradicts the folder's name ${path.basename(folder)} (${named})`, {
      hint: 'deliver each month from its own folder; rename the folder if its name is wrong',
    });
  }
  return given || named;
}

export function checkPeriod(period: string | undefined, now: Date, warnings: string[]): string {
  if (period === undefined || period === '') {
    throw new UsageError('missing --period YYYY-MM (the month the data covers)', {
      hint: 'name it with --period, or put it in the folder\'s name (out/2024-05)',
    });
  }
  checkPeriodForm(period);
  const current = currentPeriod(now);
  if (period > current) throw new UsageError(`--period ${period} is in the future (this month is ${current}, UTC)`);
  if (period === current) warnings.push(`--period ${period} is the current month, which is not over yet`);
  return period;
}
