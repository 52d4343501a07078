// What a delivery sends, once the whole pre-flight passed: the folder's checks, the one pass over the data
// file, the columns (and how they differ from the last delivery's) and a digest of the report and schema (a
// resume needs them unchanged). Shared by check and deliver.

import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { ScrubReport } from '../api/types.js';
import { isObject } from '../guards.js';
import { cleanText } from '../clean-text.js';
import type { Operation } from '../operation.js';
import { diffColumns, schemaColumns, type ColumnDiff, type ColumnEntry } from '../preflight/columns.js';
import type { PreflightedFolder, MonthFolder } from '../preflight/folder.js';
import { PassCache } from '../datapass/cache.js';
import type { DeliveryRecord, Journal } from './journal.js';
import { cacheDir, homeAllows } from '../settings/dirs.js';
import { passOverDataFile, type DataPass } from '../datapass/data-pass.js';
import { counted } from '../plural.js';

export interface SchemaChanges extends ColumnDiff {
  since: { period: string; batch_id: string | null };
}

/** A folder's plan: deliver's, of a known month (MonthFolder), unless `Folder` says otherwise (check's). */
export type DeliveryPlan<Folder extends PreflightedFolder = MonthFolder> = Folder &
  DataPass & {
    inputsDigest: string;
    columns: ColumnEntry[];
    /** Where the report disagrees with the data file (also in `warnings`, after the folder's own). */
    reportWarnings: string[];
  };

/**
 * The one pass over the data file (or what an earlier pass over the same unchanged file found), told as the
 * steps `checking` and `checked`. `copy`: a delivery wants a gzipped copy of a plain .jsonl to upload.
 */
export async function planFolder<Folder extends PreflightedFolder>(
  folder: Folder,
  op: Operation,
  { copy }: { copy: boolean },
): Promise<DeliveryPlan<Folder>> {
  // A check without a period tells its events with none (''), as it always has.
  const subject = { period: folder.period ?? '', product: folder.product };
  const size = await fs.stat(folder.dataFile).then(
    (stat) => stat.size,
    () => 0,
  );
  op.onEvent({
    type: 'step',
    step: 'checking',
    ...subject,
    dir: folder.dir,
    dataFile: folder.dataFile,
    bytes: size,
  });
  const pass = await passOverDataFile(folder.dataFile, {
    tmpDir: op.tempDir(),
    signal: op.signal,
    onRead: (read, total) => op.onEvent({ type: 'reading', ...subject, read, total }),
    copy,
    owner: op.runtime,
    platform: op.runtime.platform,
    cache: passCache(op),
    name: folder.dataName,
  });
  const plan = makePlan(folder, pass);
  op.onEvent({
    type: 'step',
    step: 'checked',
    ...subject,
    dataFile: plan.dataFile,
    recordCount: plan.recordCount,
    bytes: plan.upload.size,
    sha256: plan.sha256,
    fromCache: plan.fromCache,
  });
  return plan;
}

/** The plan's columns against the newest earlier delivery's of the same product, told as a notice. */
/** What a schema is compared with: an earlier delivery's columns, and which delivery that was. */
export type SchemaBaseline = Pick<DeliveryRecord, 'period' | 'batchId' | 'columns'>;

/**
 * The schema's changes since the nearest earlier delivery recorded here. `runEarlier`: the month before this
 * one in the same run of several folders, nearer than any record older than it; so every month of a backfill
 * is compared with the same month however the deliveries of the run interleave.
 */
export function compareSchema(
  journal: Journal,
  plan: DeliveryPlan<PreflightedFolder>,
  sourceId: string | undefined,
  op: Operation,
  runEarlier?: SchemaBaseline,
): SchemaChanges | null {
  const { period } = plan;
  const recorded = journal.nearestDelivered({ sourceId, period, product: plan.product });
  const earlier =
    runEarlier && period !== undefined && (!recorded || recorded.period > period || recorded.period < runEarlier.period)
      ? runEarlier
      : recorded;
  const diff = earlier && diffColumns(earlier.columns, plan.columns);
  if (!earlier || !diff) return null;
  const since = { period: earlier.period, batchId: earlier.batchId ?? null };
  op.onEvent({
    type: 'notice',
    code: 'schema_changes',
    period: period ?? '',
    product: plan.product,
    since,
    changes: diff,
  });
  return { since: { period: since.period, batch_id: since.batchId }, ...diff };
}

function makePlan<Folder extends PreflightedFolder>(folder: Folder, pass: DataPass): DeliveryPlan<Folder> {
  const reportWarnings = crossCheckReport(folder.report, folder.dataFile, folder.dataName, pass.recordCount);
  return {
    ...folder,
    ...pass,
    warnings: [...folder.warnings, ...reportWarnings],
    reportWarnings,
    inputsDigest: createHash('sha256')
      .update(canonicalJson({ report: folder.report, schema: folder.schema }))
      .digest('hex'),
    columns: schemaColumns(folder.product, folder.schema),
  };
}

/**
 * The report against the data file, once its records are counted: the report is sent as it is, so a reviewer
 * would see its numbers. Its `files[]` should name the data file (a plain .jsonl as itself or gzipped), and
 * `rows_out`, there and in `totals` (when the report covers this one file), should be the file's record
 * count. Warnings, not errors: the scrubber may count otherwise, and the data file is what is delivered.
 */
export function crossCheckReport(
  report: ScrubReport,
  dataFile: string,
  dataName: string,
  recordCount: number,
): string[] {
  const warnings: string[] = [];
  const stem = (name: string) => path.basename(name).replace(/\.gz$/, '');
  const listed = report.files
    .filter(isObject)
    .filter((entry): entry is Record<string, unknown> & { path: string } => typeof entry.path === 'string');
  const entry = listed.find((candidate) => stem(candidate.path) === stem(dataFile));
  if (listed.length > 0 && !entry) {
    const names = listed.slice(0, 3).map((candidate) => cleanText(candidate.path, 100));
    warnings.push(
      `the report's files[] names ${names.join(', ')}${listed.length > 3 ? ', …' : ''}, not ${path.basename(dataFile)}: is it this folder's report?`,
    );
  }
  const differs = (rowsOut: unknown): rowsOut is number => typeof rowsOut === 'number' && rowsOut !== recordCount;
  if (entry && differs(entry.rows_out)) {
    warnings.push(
      `the report's files[] says ${cleanText(entry.path, 100)} has rows_out ${entry.rows_out}, but ${dataName} holds ${counted(recordCount, 'record')}`,
    );
  }
  if (report.files.length <= 1 && differs(report.totals.rows_out)) {
    warnings.push(
      `the report's totals.rows_out is ${report.totals.rows_out}, but ${dataName} holds ${counted(recordCount, 'record')}`,
    );
  }
  return warnings;
}

/** JSON with object keys sorted: the same meaning gives the same digest, whatever the key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Where passes are remembered; none where the cache folder would make a home folder that does not exist. */
function passCache(op: Operation): PassCache | undefined {
  const dir = cacheDir(op.runtime);
  return homeAllows(dir, op.runtime) ? new PassCache(dir, op.runtime.platform) : undefined;
}
