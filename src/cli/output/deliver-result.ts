// What `bds deliver` prints once its run is over: one folder's delivery (or dry run) as a summary, a --quiet
// line or JSON; several folders as a table with one row per month; then, with --wait, the review below it and
// the lines that say why the exit code is 7. In GitHub Actions, a step summary too.

import type { DeliverResult, DeliverySummary, DryRunResult } from '../../core/delivery/deliver.js';
import {
  folderResult,
  type DeliverManyResult,
  type DeliverRun,
  type MonthResult,
} from '../../core/delivery/deliver-run.js';
import { abortError, EXIT_CODES, InterruptedError } from '../../core/errors.js';
import type { Operation } from '../../core/operation.js';
import type { Month } from '../../core/month.js';
import type { StatusResult } from '../../core/status/status.js';
import { counted, formatBytes, formatDuration, writtenDuration } from './format.js';
import type { IO } from './io.js';
import { sayVerdict, statusLines, statusText } from './status-view.js';
import { renderTable } from './table.js';
import { deliveredText } from './words.js';

/** A run of `bds deliver`: the core's run, whether it was of one folder alone, and how long it took. */
export interface Delivered {
  alone: boolean;
  run: DeliverRun;
  elapsedMs: number;
}

/**
 * The run's result, then --wait's verdict; returns the exit code. One folder's is its flat result (its failure
 * thrown here, as a run that failed once months began throws its error, for run-command.ts to report as any
 * other). `timeout`: --timeout as written, if given.
 */
export function printDeliver(
  io: IO,
  { alone, run, elapsedMs }: Delivered,
  op: Operation,
  timeout: string | undefined,
): number | void {
  if ('thrown' in run) throw run.thrown;
  const code = alone ? printFolder(io, op, folderResult(run), elapsedMs) : printMonths(io, op, run.result, elapsedMs);
  const { review } = run.result;
  // --wait: after a delivery, the review's exit code (with several folders, already the result's).
  return review && run.review
    ? sayVerdict(io, review, { failOn: run.review.failOn, waited: timeout ?? writtenDuration(run.review.timeoutMs) })
    : code;
}

/** One folder's flat result: its delivery, its dry run, or its delivery and the wait the signal stopped. */
function printFolder(io: IO, op: Operation, result: DeliverResult | DryRunResult, elapsedMs: number): number | void {
  if ('dry_run' in result) printDryRun(io, result);
  else if (result.review === null) return printStoppedWait(io, op, result, elapsedMs);
  else printDelivery(io, result, elapsedMs);
}

/**
 * A signal stopped --wait after the delivery: the delivery is shown as done (with --json, its object and the
 * interruption), then the interruption, whose hint is the wait's, not a resume's; the exit code is the signal's.
 */
function printStoppedWait(io: IO, op: Operation, result: DeliverResult, elapsedMs: number): number {
  const stopped = abortError(op.signal);
  const message = `${stopped.message} while waiting for the review of ${result.period} ${result.product}`;
  const hint = `${result.batch.id} is delivered; ${statusCommand(result, result)} waits for its review`;
  printDelivery(io, result, elapsedMs, {
    ...result,
    error: { message, hint, exit_code: stopped.exitCode },
  });
  io.error(message, hint);
  return stopped.exitCode;
}

/** The `bds status --wait` that goes on waiting for the review of the months from `first` to `last`. */
function statusCommand(first: Month & { source_id: string }, last: Month): string {
  const months =
    first.period === last.period ? `--period ${first.period}` : `--since ${first.period} --until ${last.period}`;
  return `bds status --source ${first.source_id} ${months} --wait`;
}

/** One row per month, oldest first; the exit code is the first failed month's (an interruption's if stopped). */
function printMonths(io: IO, op: Operation, result: DeliverManyResult, elapsedMs: number): number {
  const { signal } = op;
  const { deliveries, exit_code } = result;
  const interrupted = signal.aborted && signal.reason instanceof InterruptedError ? signal.reason : undefined;
  io.result(result, () =>
    withReview(
      io,
      io.flags.quiet
        ? deliveries.map(quietMonthLine).join('\n')
        : manySummary(io, deliveries, elapsedMs, interrupted !== undefined),
      result.review,
    ),
  );
  if (interrupted)
    io.error(
      interrupted.message,
      result.review === null && deliveries.every((month) => !month.error)
        ? `every month was delivered; ${statusCommand(deliveries[0]!, deliveries.at(-1)!)} waits for the review`
        : 'run the same command again to finish: what was delivered is skipped, what was interrupted resumes',
    );
  const { review } = result;
  io.stepSummary(
    'bds deliver',
    deliveries.map((month) => [
      month.period,
      month.product,
      outcomeWord(month),
      ...(review ? [reviewState(review, month) ?? ''] : []),
      batchOf(month) ? `\`${batchOf(month)!.id}\`` : '',
      month.record_count === null ? '' : String(month.record_count),
      month.error ? `${month.error.message} (exit ${month.error.exit_code})` : '',
    ]),
    ['Period', 'Product', 'Outcome', ...(review ? ['Review'] : []), 'Batch', 'Records', 'Error'],
  );
  return exit_code;
}

/** --wait: the month's state when the wait ended (accepted, rejected, still in_review...), for the step summary. */
function reviewState(review: StatusResult, month: Month): string | undefined {
  return review.months.find((reviewed) => reviewed.period === month.period && reviewed.product === month.product)
    ?.state;
}

/** An error in the table is cut here (a refused upload names its signed URL); --json and stderr have it whole. */
const ERROR_CELL_WIDTH = 100;

function cut(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

const SIGNAL_EXIT_CODES: readonly number[] = [EXIT_CODES.sighup, EXIT_CODES.sigint, EXIT_CODES.sigterm];

function outcomeWord(month: MonthResult): string {
  if (month.error) return SIGNAL_EXIT_CODES.includes(month.error.exit_code) ? 'interrupted' : 'failed';
  if ('dry_run' in month) return `would ${month.would.action}`;
  return 'skipped' in month && month.skipped ? 'already delivered' : 'delivered';
}

/** The month's batch: delivered, found, created before a failure, or (dry run) the existing one. */
function batchOf(month: MonthResult): { id: string; status: string | null } | null {
  return 'dry_run' in month ? month.existing_batch : month.batch;
}

function outcomeText(month: MonthResult): string {
  const found = batchOf(month);
  const batch = found ? ` ${found.id}${found.status ? ` (${found.status})` : ''}` : '';
  return `${outcomeWord(month)}${batch}${month.error ? `: ${month.error.message}` : ''}`;
}

function quietMonthLine(month: MonthResult): string {
  if (!month.error && !('dry_run' in month)) return quietLine(month as DeliverResult);
  if (month.error && outcomeWord(month) === 'interrupted') {
    // "interrupted by SIGINT" is said once for the run; a month not started says so.
    const rest = month.error.message.replace(/:? ?interrupted by \w+$/, '');
    return `interrupted ${month.period} ${month.product}${rest ? `: ${rest}` : ''}`;
  }
  if (month.error) return `failed ${month.period} ${month.product}: ${month.error.message}`;
  return `${outcomeText(month)}: ${month.period} ${month.product}`;
}

function manyVerdict(deliveries: MonthResult[], failed: number, interrupted: boolean): string {
  const total = deliveries.length;
  if (interrupted && failed === 0) return `Interrupted while waiting for the review: every folder is delivered.`;
  if (interrupted) {
    return `Interrupted: ${total - failed} of ${folders(total)} delivered. Run the same command again to finish the others.`;
  }
  if (deliveries.some((month) => 'dry_run' in month)) {
    return `Dry run: nothing was created.${failed ? ` ${failed} of ${folders(total)} failed.` : ''}`;
  }
  return failed === 0
    ? `${total === 2 ? 'Both folders are' : `All ${folders(total)} are`} delivered.`
    : `${total - failed} of ${folders(total)} delivered; ${failed} failed. Fix what their errors say (for a network failure, wait), ` +
        'then run the same command again: what is delivered is skipped.';
}

/** "1 folder", "3 folders": a month's records and episodes are two. */
function folders(count: number): string {
  return counted(count, 'folder');
}

function manySummary(io: IO, deliveries: MonthResult[], elapsedMs: number, interrupted: boolean): string {
  const failed = deliveries.filter((month) => month.error).length;
  const rows = deliveries.map((month) => [
    month.period,
    month.product,
    month.error ? io.out.red(outcomeWord(month)) : outcomeWord(month),
    batchOf(month)?.id ?? '',
    ...recordsAndBytes(month),
    errorCell(month),
  ]);
  return [
    renderTable(['PERIOD', 'PRODUCT', 'OUTCOME', 'BATCH', 'RECORDS', 'BYTES', 'ERROR'], rows, true),
    '',
    manyVerdict(deliveries, failed, interrupted),
    `Took:      ${formatDuration(elapsedMs)}`,
  ].join('\n');
}

/** The month's records and bytes: its file's, or a batch counted from a file no record here names, the service's count. */
function recordsAndBytes(month: MonthResult): [string, string] {
  const batchRecords = 'dry_run' in month || month.error ? undefined : (month as DeliverResult).batch.record_count;
  if (batchRecords !== undefined) return [String(batchRecords), ''];
  return [
    month.record_count === null ? '' : String(month.record_count),
    month.bytes === null ? '' : formatBytes(month.bytes),
  ];
}

/** --wait: the review of the months delivered, below what was delivered. */
function withReview(io: IO, text: string, review: StatusResult | null | undefined): string {
  if (!review) return text;
  return io.flags.quiet ? `${text}\n${statusLines(review)}` : `${text}\n\n${statusText(io, review)}`;
}

/** A failed month's error; in a dry run, the error a month that would stop would stop with. */
function errorCell(month: MonthResult): string {
  const error = month.error ?? ('dry_run' in month ? month.would.error : null);
  return error ? `${cut(error.message, ERROR_CELL_WIDTH)} (exit ${error.exit_code})` : '';
}

function printDryRun(io: IO, result: DryRunResult): void {
  const existing = result.existing_batch;
  io.result(result, () =>
    [
      'Dry run: nothing was created. bds deliver would send:',
      ...details(result),
      `Existing:  ${existing ? `${existing.id} (${existing.status})` : 'no batch for this period yet'}`,
      `Would:     ${wouldText(result.would)}`,
    ].join('\n'),
  );
}

function wouldText({ action, batch_id, status, error }: DryRunResult['would']): string {
  switch (action) {
    case 'deliver':
      return 'deliver a new batch';
    case 'skip':
      return `nothing: already delivered as ${batch_id} (${status})`;
    case 'stop':
      return error?.exit_code === EXIT_CODES.usage
        ? `stop with exit 2: ${error.message}; --force delivers anyway`
        : `stop with exit 4: ${batch_id} (${status}) came from another file; --force delivers anyway`;
    case 'resume':
      return `resume the interrupted delivery${batch_id ? ` of ${batch_id}` : ''}`;
  }
}

function printDelivery(io: IO, result: DeliverResult, elapsedMs: number, json: object = result): void {
  const { batch, skipped } = result;
  io.result(json, () => withReview(io, io.flags.quiet ? quietLine(result) : summary(result, elapsedMs), result.review));
  const file = [
    ['Records', String(result.record_count)],
    ['Size', `${formatBytes(result.bytes)} (${result.bytes} bytes)`],
    ['SHA-256', `\`${result.sha256}\``],
  ];
  io.stepSummary('bds deliver', [
    ['Batch', `\`${batch.id}\``],
    ['Status', `${batch.status}${skipped ? ' (already delivered)' : ''}`],
    ...(result.review ? [['Review', reviewState(result.review, result) ?? '']] : []),
    ['Source', `\`${result.source_id}\``],
    ['Period', result.period],
    ['Product', result.product],
    ...(batch.record_count === undefined
      ? file
      : [
          ['Records', `${batch.record_count} (the service's count; from a file no record here names)`],
          ['This file', `${counted(result.record_count, 'record')}, ${formatBytes(result.bytes)}, not sent`],
        ]),
  ]);
}

function summary(result: DeliverResult, elapsedMs: number): string {
  const { batch, skipped, resumed } = result;
  return [
    `${capitalized(deliveredText(batch, skipped))}${skipped ? '; nothing was sent' : resumed ? ', resuming an interrupted run' : ''}.`,
    ...(batch.record_count === undefined ? details(result) : otherFileDetails(result, batch.record_count)),
    `Took:      ${formatDuration(elapsedMs)}`,
  ].join('\n');
}

/**
 * --skip-delivered counted a batch that no record here ties to this file: the batch as the service counts it,
 * and this file apart, since the batch's bytes and checksum are not known here.
 */
function otherFileDetails(result: DeliverResult, batchRecords: number): string[] {
  return [
    `Source:    ${result.source_id}`,
    `Period:    ${result.period} (${result.product})`,
    `Batch:     ${result.batch.id} holds ${counted(batchRecords, 'record')} (the service's count), from a file no record here names`,
    `This file: ${counted(result.record_count, 'record')}, ${formatBytes(result.bytes)}, sha256 ${result.sha256}; not sent`,
  ];
}

/** --quiet: the one line a delivery's result takes, for cron mail and scripts. */
function quietLine({ batch, skipped, period, product, record_count, bytes }: DeliverResult): string {
  const what = `${deliveredText(batch, skipped)}: ${period} ${product}`;
  return skipped ? what : `${what}, ${counted(record_count, 'record')}, ${formatBytes(bytes)}`;
}

function capitalized(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}

function details(result: DeliverySummary): string[] {
  return [
    `Source:    ${result.source_id}`,
    `Period:    ${result.period} (${result.product})`,
    `Records:   ${result.record_count}`,
    `Bytes:     ${result.bytes} (${formatBytes(result.bytes)})`,
    `SHA-256:   ${result.sha256}`,
  ];
}
