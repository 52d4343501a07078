// Every sentence bds says about a delivery: events (src/core/events.ts) into words, and which notices
// are warnings (shown even with --quiet). The core speaks in data; this is the one place that turns it into
// English.

import { cleanText } from '../../core/clean-text.js';
import type { ColumnDiff, ColumnEntry } from '../../core/preflight/columns.js';
import { pathForPeople } from '../../core/preflight/folder.js';
import type { EventListener, Notice, StepEvent } from '../../core/events.js';
import type { BatchRef } from '../../core/api/types.js';
import { counted, formatBytes, formatDuration } from './format.js';
import type { IO } from './io.js';
import { capText } from './progress.js';

/** The line that opens a step; `cwd`: the working folder, which the data file is named from. */
export function stepText(event: StepEvent, cwd: string): string {
  switch (event.step) {
    case 'checking':
      return `checking ${event.dir}`;
    case 'checked':
      return `checked ${cleanText(pathForPeople(event.dataFile, cwd))}: ${counted(event.recordCount, 'record')}, ${formatBytes(event.bytes)}, sha256 ${event.sha256}${event.fromCache ? ' (remembered from an earlier pass)' : ''}`;
    case 'creating':
      return `creating the ${event.product} batch for ${event.period}`;
    case 'uploading':
      return `uploading ${event.bytes} bytes to ${event.batchId}${event.rateCap === null ? '' : `, ${capText(event.rateCap)}`}`;
    case 'completing':
      return `confirming ${event.batchId} with sha256 ${event.sha256}`;
    case 'done':
      return `${event.batchId} is ${event.status}`;
  }
}

/** Says a notice: as a warning, a notice or a --verbose line, as noticeText decides; `about` starts the line. */
export function sayNotice(io: IO, notice: Notice, about = ''): void {
  const { warning, verbose, text } = noticeText(notice);
  if (warning) io.warn(`${about}${text}`);
  else if (verbose) io.verbose(`${about}${text}`);
  else io.notice(`${about}${text}`);
}

/** For commands without a progress view: notices and warnings, nothing else. */
export function noticePrinter(io: IO): EventListener {
  return (event) => {
    if (event.type === 'notice') sayNotice(io, event);
  };
}

/** "delivered bat_… (received)", or "already delivered as bat_… (received)" for a batch found delivered. */
export function deliveredText(batch: BatchRef, skipped: boolean): string {
  return `${skipped ? 'already delivered as' : 'delivered'} ${batch.id} (${batch.status})`;
}

/** A notice as a line, and whether it is a warning (shown even with --quiet) or for --verbose only. */
export function noticeText(notice: Notice): { warning: boolean; verbose?: boolean; text: string } {
  const info = (text: string) => ({ warning: false, text });
  const warning = (text: string) => ({ warning: true, text });
  const verbose = (text: string) => ({ warning: false, verbose: true, text });
  switch (notice.code) {
    case 'warning':
      return warning(notice.message);
    case 'listing_batches':
      return info(`checking ${notice.sourceId} for an earlier ${notice.product} batch of ${notice.period}`);
    case 'test_key':
      return info('test key (svc_test_): test-mode batches never become billable');
    case 'upload_rate':
      return verbose(
        notice.bytesPerSecond === null
          ? `upload rate: not capped (${notice.written} from ${notice.from})`
          : `upload rate ${capText(notice.bytesPerSecond)} (${notice.written} = ${notice.bytesPerSecond} bytes/s, from ${notice.from})`,
      );
    case 'resuming':
      return info(
        notice.batchId
          ? `resuming the interrupted delivery of ${notice.batchId}`
          : 'resuming an interrupted delivery (its create is repeated with the same idempotency key)',
      );
    case 'inputs_changed':
      return warning(
        `the report or schema changed since the interrupted delivery${notice.batchId ? ` of ${notice.batchId}` : ''}; ` +
          `delivering a fresh batch${notice.batchId ? ` (${notice.batchId} stays awaiting_upload and is never confirmed)` : ''}`,
      );
    case 'upload_url_refused':
      return info(`the storage host refused the upload URL (${notice.reason}); creating a fresh batch once`);
    case 'uploading_again':
      return info(
        notice.reason === 'missing'
          ? `the service has no upload for ${notice.batchId}; uploading again`
          : `the stored file does not match sha256 ${notice.sha256}; uploading again`,
      );
    case 'retry':
      return info(
        `${notice.reason}; retrying in ${formatDuration(notice.delayMs)} (attempt ${notice.attempt} of ${notice.maxAttempts})`,
      );
    case 'record_set_aside':
      return warning(
        `the delivery record ${notice.file} could not be read; it was set aside as ${notice.setAsideAs} and this delivery starts from the server's list`,
      );
    case 'schema_changes':
      return warning(schemaChangeText(notice.since, notice.changes));
    case 'record_count_differs':
      return warning(
        `${notice.batchId} counts ${counted(notice.listed, 'record')}, this file ${notice.local}: it came from another file (--skip-delivered counts it as delivered)`,
      );
    case 'skipped_on_service_word':
      return warning(
        `${notice.batchId} (${notice.status}) counts as delivered on the service's word alone (--skip-delivered, no record of it here): ` +
          `a batch made with a test key, never billable, would look the same; bds status --source ${notice.sourceId} --period ${notice.period} shows the month`,
      );
    case 'same_file':
      return warning(
        `this data file is also ${notice.otherPeriod}'s (${notice.otherDir}${notice.otherBatchId ? `, delivered as ${notice.otherBatchId}` : ''}); delivering it anyway (--force)`,
      );
    case 'other_key_mode':
      return warning(
        `this file was delivered as ${notice.batchId} with a ${notice.batchKeyMode} key, which does not count for this ${notice.keyMode} key` +
          (notice.batchKeyMode === 'test' ? ' (test batches never become billable)' : ''),
      );
  }
}

/** The schema-change warning: several lines, one per column. */
export function schemaChangeText(since: { period: string; batchId: string | null }, changes: ColumnDiff): string {
  // Names and values come from schema files: cleaned, as text from a server is.
  const column = (c: Pick<ColumnEntry, 'object' | 'name'>) => cleanText(`${c.object}.${c.name}`);
  const shown = (value: string | null) => (value === null ? '(none)' : `"${cleanText(value)}"`);
  return [
    `the schema differs from the one delivered for ${since.period}${since.batchId ? ` (${since.batchId})` : ''}:`,
    ...changes.added.map(
      (c) =>
        `  added    ${column(c)} (role ${cleanText(c.role)}, kind ${cleanText(c.kind)}${c.transform ? `, transform ${shown(c.transform)}` : ''})`,
    ),
    ...changes.removed.map((c) => `  removed  ${column(c)}`),
    ...changes.changed.map((c) => `  changed  ${column(c)}: ${c.field} ${shown(c.from)} → ${shown(c.to)}`),
  ].join('\n');
}
