// How many months of a backfill run at once. A module of its own, so that the CLI can name the range in
// its help without loading the delivery core (start-up stays near Node's own).

import { UsageError } from '../errors.js';
import type { OptionNames } from '../option-names.js';

export const JOBS = { default: 2, min: 1, max: 8 } as const;

/** How many months at once: 1 to 8 (default 2). `given` is how the caller wrote it, for the message. */
export function validateJobs(jobs: number | undefined, names: OptionNames, given = String(jobs)): number {
  if (jobs === undefined) return JOBS.default;
  if (!Number.isInteger(jobs) || jobs < JOBS.min || jobs > JOBS.max) {
    throw new UsageError(`${names.name('jobs')} must be a whole number from ${JOBS.min} to ${JOBS.max}, not ${given}`, {
      hint: 'more months at once rarely helps: each already uses every core for its pass',
      about: { code: 'option_value', option: 'jobs' },
    });
  }
  return jobs;
}
