// The period of a delivery: YYYY-MM, month 01 to 12, not after the current month (UTC).

import { UsageError } from '../errors.js';
import type { NamedOption, OptionNames } from '../option-names.js';
import { pathsOf, type Platform } from '../platform.js';

const PERIOD_FORM = /^(\d{4})-(\d{2})$/;

/**
 * YYYY-MM with a month from 01 to 12. `option`: the option that gave it (messages start with its name, as `names`
 * words it), unless `inName` says it came from a folder's name.
 */
export function checkPeriodForm(
  period: string,
  names: OptionNames,
  option: NamedOption = 'period',
  inName?: string,
): void {
  const what = inName ?? `${names.name(option)} ${period}`;
  const about = inName === undefined ? ({ code: 'option_value', option } as const) : undefined;
  const match = PERIOD_FORM.exec(period);
  if (!match) throw new UsageError(`${what} is not of the form YYYY-MM (for example 2024-05)`, { about });
  const month = Number(match[2]);
  if (month < 1 || month > 12) throw new UsageError(`${what}: month ${match[2]} is not between 01 and 12`, { about });
  if (match[1] === '0000')
    throw new UsageError(`${what}: there is no year 0000`, { hint: 'a year of four digits, such as 2024', about });
}

/** The month of `now` in UTC, as YYYY-MM. */
export function currentPeriod(now: Date): string {
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The YYYY-MM in a folder's name (`2024-05`, `records-2024-05`, `orders_2024-05_v2`), if there is one. */
export function periodInName(folder: string): string | undefined {
  return periodsInName(folder)[0];
}

/** Every distinct YYYY-MM in a folder's name, in order. */
function periodsInName(folder: string): string[] {
  return [...new Set(Array.from(folder.matchAll(/(?<![0-9])(\d{4}-\d{2})(?![0-9])/g), (match) => match[1]!))];
}

/** A period and where it came from, so that a message about it names what the user wrote. */
export interface ChosenPeriod {
  period: string;
  /** The folder's name, when the period came from it. */
  fromName?: string;
}

/**
 * The period: the option, else the one in the folder's name. A period option that contradicts the name is refused,
 * and so is a name that holds two months: the wrong month's data is the costliest mistake a seller can make.
 */
export function choosePeriod(
  given: string | undefined,
  folder: string,
  platform: Platform,
  names: OptionNames,
): ChosenPeriod | undefined {
  // By the system's rules: on Windows C:\out\records-2024-05 (or C:/out/...) is named records-2024-05.
  const name = pathsOf(platform).basename(folder);
  const named = periodsInName(name);
  if (given !== undefined && given !== '') {
    // Not a month at all (2024-13) is said as such, before any comparison with the name.
    checkPeriodForm(given, names);
    if (named.length > 0 && !named.includes(given)) {
      // A name that is just the month says it once: "2024-02", not "2024-02 (2024-02)".
      const months = name === named.join() ? '' : ` (${named.join(', ')})`;
      throw new UsageError(`${names.name('period')} ${given} contradicts the folder's name ${name}${months}`, {
        hint: 'deliver each month from its own folder; rename the folder if its name is wrong',
        about: { code: 'option_value', option: 'period' },
      });
    }
    return { period: given };
  }
  if (named.length > 1) {
    throw new UsageError(`the folder's name ${name} holds more than one period (${named.join(', ')})`, {
      hint: `name the month with ${names.phrase('period')}`,
      about: { code: 'periods_in_name' },
    });
  }
  return named.length === 1 ? { period: named[0]!, fromName: name } : undefined;
}

/** The period's rules: YYYY-MM, not after the current month (UTC); the current month itself is a warning. */
export function checkPeriod(
  chosen: ChosenPeriod | undefined,
  now: Date,
  warnings: string[],
  names: OptionNames,
): string {
  if (chosen === undefined) {
    throw new UsageError(
      `missing ${names.name('period')} YYYY-MM (the month the data covers), and the folder's name holds none`,
      {
        hint: `name it with ${names.phrase('period')}, or put it in the folder's name (out/2024-05)`,
        about: { code: 'no_period' },
      },
    );
  }
  const { period, fromName } = chosen;
  const inName = fromName === undefined ? undefined : `the period ${period} in the folder's name ${fromName}`;
  const what = inName ?? `${names.name('period')} ${period}`;
  checkPeriodForm(period, names, 'period', inName);
  const current = currentPeriod(now);
  if (period > current) {
    throw new UsageError(`${what} is in the future (this month is ${current}, UTC)`, {
      about: inName === undefined ? { code: 'option_value', option: 'period' } : undefined,
    });
  }
  if (period === current) warnings.push(`${what} is the current month, which is not over yet`);
  return period;
}
