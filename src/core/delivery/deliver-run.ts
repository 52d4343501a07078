// A run of deliver, one folder or several, on one path: the quick checks of every folder first, so that a
// mistake in any of them sends nothing at all; then the months oldest first, at most `jobs` at a time, each
// delivered by deliver.ts's runDelivery. A month that fails does not stop the others; an abort stops them all,
// each saving its delivery record. One folder delivered alone (the library's deliver, `bds deliver <dir>`) is the
// same run of one month, with its folder's own options, and its flat result a projection of the run's.

import { stat } from 'node:fs/promises';
import path from 'node:path';
import { PRODUCTS, type Product } from '../api/types.js';
import { AuthError, BdsError, EXIT_CODES, UsageError, abortError, toBdsError } from '../errors.js';
import type { Operation } from '../operation.js';
import { pathsOf } from '../platform.js';
import {
  validateChoices,
  preflightDeliveryFolder,
  deliveryTarget,
  failedDelivery,
  reviewUnlessStopped,
  runDelivery,
  type DeliverOptions,
  type DeliverResult,
  type DeliveryChoices,
  type DeliveryTarget,
  type DryRunResult,
  type FailedDelivery,
  type MonthInRun,
} from './deliver.js';
import { schemaColumns } from '../preflight/columns.js';
import type { SchemaBaseline } from './plan.js';
import { listFolder, type MonthFolder } from '../preflight/folder.js';
import { validateJobs } from './jobs.js';
import { periodInName } from '../preflight/period.js';
import { duplicateError } from './many-folders.js';
import { RunChecksums } from './same-file.js';
import { errorText, failureData, type FailureData } from '../failure.js';
import { validateReviewChoices, type ReviewChoices, type ReviewRules, type StatusResult } from '../status/status.js';

export interface DeliverManyOptions extends DeliveryChoices, ReviewChoices {
  /** The folders, each named for its month (`out/2024-05`). */
  dirs: string[];
  product?: Product | undefined;
  sourceId?: string | undefined;
  /** How many months run at once: 1 to 8, default 2. */
  jobs?: number | undefined;
}

/**
 * One month of a run: one folder's flat result (or as much of it as was done), its folder and error. `dir` is
 * the folder's absolute path here, as in check's JSON (the events' `dir` is the folder as named: PreflightedFolder's).
 */
export type MonthResult = (DeliverResult | DryRunResult | FailedDelivery) & { dir: string; error: FailureData | null };

/** Every run's result; what `bds deliver <dir>... --json` prints (docs/schemas/deliver.schema.json). */
export interface DeliverManyResult {
  /** Oldest first. */
  deliveries: MonthResult[];
  /**
   * 0 when every month was delivered or already was; else the first failed month's (in period order). With
   * `wait`, once every month is delivered: the review's.
   */
  exit_code: number;
  /**
   * With `wait`: the review of the months, as `bds status --json` prints it; null when a month failed (no wait)
   * or the signal stopped the wait (exit_code is then the signal's).
   */
  review?: StatusResult | null;
}

/**
 * A run of deliver as its callers get it: every month's result; per month, in the result's order, whether its
 * delivery began and what its failure threw; and, for a run that failed as a whole once its months were delivered
 * (the wait for the review failed), that error. A month whose delivery `begun` took its lock and began its pass:
 * the run is one of that month's, for the metrics file. A month stopped before its lock (another process holds
 * it, its state folder cannot be used, or it was never started) is not. Only what comes before the first month's
 * delivery throws.
 */
export interface DeliverRun {
  result: DeliverManyResult;
  /** The rules of the review's verdict when the run waits for it. */
  review: ReviewRules | undefined;
  /** `thrown`: what the month's failure threw, which one folder delivered alone throws as it was. */
  months: Array<{ begun: boolean; thrown?: unknown }>;
  /** The wait for the review failed: the run's error. */
  thrown?: unknown;
}

/** The library's deliverMany: the run's result, or its error thrown. */
export async function deliverMany(options: DeliverManyOptions, op: Operation): Promise<DeliverManyResult> {
  return manyResult(await runDeliver(options, op));
}

/** The library's deliver: one folder's run as its flat result, or its error thrown. */
export async function deliverFolder(options: DeliverOptions, op: Operation): Promise<DeliverResult | DryRunResult> {
  return folderResult(await runDeliver(options, op));
}

/** Several folders' run as `bds deliver <dir>... --json` prints it; a run that failed as a whole throws its error. */
export function manyResult(run: DeliverRun): DeliverManyResult {
  if ('thrown' in run) throw run.thrown;
  return run.result;
}

/**
 * One folder's run as `bds deliver <dir> --json` prints it: its month's result without the folder and error the
 * run's list adds, with the review after it; a failure (the month's, or the wait's) throws what it threw.
 */
export function folderResult(run: DeliverRun): DeliverResult | DryRunResult {
  if ('thrown' in run) throw run.thrown;
  const { deliveries, review } = run.result;
  const { dir: _dir, error, ...month } = deliveries[0]!;
  if (error) throw run.months[0]!.thrown;
  const result = month as DeliverResult | DryRunResult;
  return 'review' in run.result ? { ...result, review } : result;
}

/**
 * One folder alone (DeliverOptions: its period, files and product may be given) or several (DeliverManyOptions,
 * each one's period in its name). Several folders' run tells the months queued and each one's end as events; one
 * folder's run is its delivery's events alone.
 */
export async function runDeliver(options: DeliverOptions | DeliverManyOptions, op: Operation): Promise<DeliverRun> {
  const several = 'dirs' in options;
  if (several && options.dirs.length === 0) throw new UsageError('no folder to deliver');
  validateChoices(options, op.names);
  const review = validateReviewChoices(options, op.names);
  const jobs = validateJobs(several ? options.jobs : undefined, op.names);
  await op.announceSettings();
  const folders = several ? await checkAll(options, op) : [await preflightDeliveryFolder(options, op)];
  const target = await deliveryTarget(op);
  if (several) {
    op.onEvent({
      type: 'queued',
      deliveries: await Promise.all(
        // The sizes weigh each month in an estimate of the time left; the pass itself reports a file it cannot read.
        folders.map(async ({ dir, period, product, dataFile }) => ({
          dir,
          period,
          product,
          dataFile,
          bytes: await stat(dataFile).then(
            (s) => s.size,
            () => 0,
          ),
        })),
      ),
    });
  }

  const results: MonthResult[] = new Array(folders.length);
  const months: DeliverRun['months'] = folders.map(() => ({ begun: false }));
  const checksums = new RunChecksums(folders);
  let next = 0;
  // A refused key would be refused for every month: the months not yet started are not tried.
  let keyRefused: MonthResult | undefined;
  const worker = async (): Promise<void> => {
    while (next < folders.length && !(several && (op.signal.aborted || keyRefused))) {
      const index = next++;
      const month: MonthInRun | undefined = several
        ? { earlier: runEarlier(folders, index), sameFileBefore: (sha256) => checksums.sameFileBefore(index, sha256) }
        : undefined;
      const { result, ...ran } = await deliverMonth(folders[index]!, target, options, op, month);
      // A month that failed before its pass found its checksum: the later months stop waiting for it.
      checksums.found(index, undefined);
      if (result.error?.exit_code === EXIT_CODES.auth) keyRefused ??= result;
      results[index] = result;
      months[index] = ran;
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, folders.length) }, worker));

  // Months kept from starting by an abort or a refused key: nothing of theirs was sent.
  const stoppedBy = op.signal.aborted
    ? abortError(op.signal)
    : keyRefused && new AuthError(`the key was refused for ${keyRefused.period} ${keyRefused.product}`);
  for (let index = next; stoppedBy && index < folders.length; index++) {
    const error: FailureData = {
      ...failureData(stoppedBy, `not started: ${stoppedBy.message}`),
      about: { code: 'not_started', error: errorText(stoppedBy) },
    };
    results[index] = { ...failedDelivery(folders[index]!, target.sourceId, {}), dir: folders[index]!.absDir, error };
  }
  const result = (fields: Omit<DeliverManyResult, 'deliveries'>): DeliverRun => ({
    result: { deliveries: results, ...fields },
    review,
    months,
  });
  // One folder's delivery ended before the signal: its wait, if any, is stopped by it as it begins.
  if (several && op.signal.aborted) return result({ exit_code: abortError(op.signal).exitCode });
  const firstFailure = results.find((month) => month.error !== null);
  if (!review) return result({ exit_code: firstFailure?.error?.exit_code ?? EXIT_CODES.ok });
  // The review is waited for once every month is delivered: a failure is told at once, not after the wait.
  if (firstFailure) return result({ exit_code: firstFailure.error!.exit_code, review: null });
  let reviewed: StatusResult | null;
  try {
    reviewed = await reviewUnlessStopped(results, target.sourceId, review, op);
  } catch (thrown) {
    return { ...result({ exit_code: toBdsError(thrown).exitCode, review: null }), thrown };
  }
  if (!reviewed) return result({ exit_code: abortError(op.signal).exitCode, review: null });
  return result({ exit_code: reviewed.exit_code, review: reviewed });
}

/**
 * The quick checks of every folder, all of them before anything is sent; every failure is named, with its
 * folder. The checked folders come back oldest first.
 */
async function checkAll(options: DeliverManyOptions, op: Operation): Promise<MonthFolder[]> {
  const failures: { dir: string; error: BdsError }[] = [];
  const folders: MonthFolder[] = [];
  for (const dir of options.dirs) {
    try {
      const resolved = path.resolve(op.runtime.cwd, dir);
      await listFolder(resolved);
      if (periodInName(pathsOf(op.runtime.platform).basename(resolved)) === undefined) {
        throw new UsageError("the folder's name holds no period (YYYY-MM)", {
          hint: `with several folders, each one's period is the YYYY-MM in its name: rename it (out/2024-05), or deliver it alone with ${op.names.phrase('period')}`,
          about: { code: 'no_period_in_name' },
        });
      }
      folders.push(await preflightDeliveryFolder({ dir, product: options.product }, op));
    } catch (error) {
      if (!(error instanceof BdsError) || error.exitCode !== EXIT_CODES.usage) throw error;
      failures.push({ dir, error });
    }
  }
  const accepted: MonthFolder[] = [];
  for (const folder of folders) {
    const duplicate = duplicateError(folder, accepted);
    if (duplicate) failures.push({ dir: folder.dir, error: duplicate });
    else accepted.push(folder);
  }
  if (failures.length === 1) {
    const [{ dir, error }] = failures as [(typeof failures)[number]];
    throw new UsageError(`${dir}: ${error.message}; nothing was sent`, {
      hint: error.hint,
      about: { code: 'folder_failed', dir, error: errorText(error) },
    });
  }
  if (failures.length > 1) {
    throw new UsageError(
      [
        `${failures.length} of ${options.dirs.length} folders failed their checks; nothing was sent:`,
        ...failures.map(({ dir, error }) => `  ${dir}: ${error.message}`),
      ].join('\n'),
      {
        hint: 'fix these folders, or leave them out, and deliver again',
        about: {
          code: 'folders_failed',
          total: options.dirs.length,
          failures: failures.map(({ dir, error }) => ({ dir, ...errorText(error) })),
        },
      },
    );
  }
  return accepted.sort(
    (a, b) => a.period.localeCompare(b.period) || PRODUCTS.indexOf(a.product) - PRODUCTS.indexOf(b.product),
  );
}

/** The month of the same product before `index` in this run, if any: its schema is the one to compare with. */
function runEarlier(folders: MonthFolder[], index: number): SchemaBaseline | undefined {
  const { product } = folders[index]!;
  const earlier = folders.slice(0, index).findLast((folder) => folder.product === product);
  return (
    earlier && { period: earlier.period, batchId: undefined, columns: schemaColumns(earlier.product, earlier.schema) }
  );
}

/**
 * One month's delivery; its failure is its result, with what it threw. Of several months, an 'ended' event says
 * it is over, and --verbose's lines name it. `begun`: its delivery began (see DeliverRun's `months`).
 */
async function deliverMonth(
  folder: MonthFolder,
  target: DeliveryTarget,
  choices: DeliveryChoices,
  op: Operation,
  month: MonthInRun | undefined,
): Promise<{ result: MonthResult; begun: boolean; thrown?: unknown }> {
  // --verbose's lines of several months at once interleave: each names its month.
  const log = month && op.log && ((line: string) => op.log!(`${folder.period} ${folder.product}: ${line}`));
  const outcome = await runDelivery(folder, target, choices, month ? op.with({ log }) : op, month);
  const error = 'thrown' in outcome ? failureData(toBdsError(outcome.thrown)) : null;
  const result = { ...outcome.result, dir: folder.absDir, error };
  if (month) ended(op, folder, result.error);
  return 'thrown' in outcome ? { result, begun: outcome.passBegun, thrown: outcome.thrown } : { result, begun: true };
}

/** A month is over; a listener that throws must not stop the other months half-way (they hold locks). */
function ended(op: Operation, folder: MonthFolder, error: FailureData | null): void {
  const { period, product } = folder;
  try {
    op.onEvent({ type: 'ended', dir: folder.dir, period, product, error });
  } catch {
    // The listener's trouble; this month's result stands.
  }
}
