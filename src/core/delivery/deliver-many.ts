// Several folders in one run (a backfill of past months, or one month's records and episodes): the quick checks
// of every folder first, so that a mistake in any of them sends nothing at all; then the months oldest first,
// at most `jobs` at a time, each exactly as a single delivery (deliver.ts's runDelivery). A month that fails
// does not stop the others; an abort stops them all, each saving its record.

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
  resultOf,
  reviewUnlessStopped,
  runDelivery,
  type DeliverResult,
  type DeliverRun,
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
import { validateReviewChoices, type ReviewChoices, type StatusResult } from '../status/status.js';

export interface DeliverManyOptions extends DeliveryChoices, ReviewChoices {
  /** The folders, each named for its month (`out/2024-05`). */
  dirs: string[];
  product?: Product | undefined;
  sourceId?: string | undefined;
  /** How many months run at once: 1 to 8, default 2. */
  jobs?: number | undefined;
}

/**
 * One month's outcome: the single delivery's object (or as much of it as was done), its folder and error. `dir` is
 * the folder's absolute path here, as in check's JSON (the events' `dir` is the folder as named: PreflightedFolder's).
 */
export type MonthResult = (DeliverResult | DryRunResult | FailedDelivery) & { dir: string; error: FailureData | null };

/** What `bds deliver <dir>... --json` prints (docs/schemas/deliver.schema.json). */
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

/** The library's deliverMany: the run's result, or its error thrown. */
export async function deliverMany(options: DeliverManyOptions, op: Operation): Promise<DeliverManyResult> {
  return resultOf(await runDeliverMany(options, op));
}

/** Several folders; only what comes before the first month's delivery, and a wait that fails, fail the run. */
export async function runDeliverMany(
  options: DeliverManyOptions,
  op: Operation,
): Promise<DeliverRun<DeliverManyResult>> {
  if (options.dirs.length === 0) throw new UsageError('no folder to deliver');
  validateChoices(options);
  const review = validateReviewChoices(options);
  const jobs = validateJobs(options.jobs);
  await op.announceSettings();
  const folders = await checkAll(options, op);
  const target = await deliveryTarget(op);
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

  const results: MonthResult[] = new Array(folders.length);
  const begun: boolean[] = new Array(folders.length).fill(false);
  const checksums = new RunChecksums(folders);
  let next = 0;
  // A refused key would be refused for every month: the months not yet started are not tried.
  let keyRefused: MonthResult | undefined;
  const worker = async (): Promise<void> => {
    while (next < folders.length && !op.signal.aborted && !keyRefused) {
      const index = next++;
      const month: MonthInRun = {
        earlier: runEarlier(folders, index),
        sameFileBefore: (sha256) => checksums.sameFileBefore(index, sha256),
      };
      const { result, passBegun } = await deliverMonth(folders[index]!, target, options, op, month);
      // A month that failed before its pass found its checksum: the later months stop waiting for it.
      checksums.found(index, undefined);
      if (result.error?.exit_code === EXIT_CODES.auth) keyRefused ??= result;
      results[index] = result;
      begun[index] = passBegun;
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
  const months = results.filter((_, index) => begun[index]);
  const result = (fields: Omit<DeliverManyResult, 'deliveries'>): DeliverRun<DeliverManyResult> => ({
    result: { deliveries: results, ...fields },
    review,
    months,
  });
  if (op.signal.aborted) return result({ exit_code: abortError(op.signal).exitCode });
  const firstFailure = results.find((month) => month.error !== null);
  if (!review) return result({ exit_code: firstFailure?.error?.exit_code ?? EXIT_CODES.ok });
  // The review is waited for once every month is delivered: a failure is told at once, not after the wait.
  if (firstFailure) return result({ exit_code: firstFailure.error!.exit_code, review: null });
  let reviewed: StatusResult | null;
  try {
    reviewed = await reviewUnlessStopped(results, target.sourceId, review, op);
  } catch (thrown) {
    return { thrown, months };
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
          hint: "with several folders, each one's period is the YYYY-MM in its name: rename it (out/2024-05), or deliver it alone with the period option",
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
 * One month as a single delivery; its failure is its result. Either way an 'ended' event says it is over.
 * `passBegun`: its delivery began (see DeliverRun's `months`).
 */
async function deliverMonth(
  folder: MonthFolder,
  target: DeliveryTarget,
  choices: DeliveryChoices,
  op: Operation,
  month: MonthInRun,
): Promise<{ result: MonthResult; passBegun: boolean }> {
  // --verbose's lines of several months at once interleave: each names its month.
  const log = op.log && ((line: string) => op.log!(`${folder.period} ${folder.product}: ${line}`));
  const outcome = await runDelivery(folder, target, choices, op.with({ log }), month);
  const error = 'thrown' in outcome ? failureData(toBdsError(outcome.thrown)) : null;
  const result = { ...outcome.result, dir: folder.absDir, error };
  ended(op, folder, result.error);
  return { result, passBegun: !('thrown' in outcome) || outcome.passBegun };
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
