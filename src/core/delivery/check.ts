// `check`: the pre-flight of deliver alone, offline (no key, no base URL, no request), with what the portal
// will show reviewers: the report's summary and the columns with their roles, and how the columns differ
// from the newest earlier delivery of the same product recorded on this machine.

import type { Product } from '../api/types.js';
import { isObject } from '../guards.js';
import path from 'node:path';
import { EXIT_CODES, toBdsError, UsageError, type BdsError } from '../errors.js';
import type { OptionNames } from '../option-names.js';
import type { Operation } from '../operation.js';
import { failureData, type FailureData } from '../failure.js';
import { duplicateError } from './many-folders.js';
import { sameFileError } from './same-file.js';
import { stateDir } from '../settings/dirs.js';
import { countRoles, type ColumnEntry } from '../preflight/columns.js';
import { preflightFolder, type PreflightedFolder, type FolderOptions, type MonthFolder } from '../preflight/folder.js';
import { compareSchema, planFolder, type SchemaChanges } from './plan.js';
import { Journal } from './journal.js';

export interface CheckOptions extends FolderOptions {
  /** Narrows the schema comparison to this source's deliveries; default BDS_SOURCE_ID or the config file's. */
  sourceId?: string | undefined;
}

/** What `bds check --json` prints for one folder (docs/schemas/check.schema.json: the fields only grow). */
export interface CheckResult {
  ok: true;
  dir: string;
  data_file: string;
  product: Product;
  /** Null when no period was given or found in the folder's name: the period rules were skipped. */
  period: string | null;
  record_count: number;
  bytes: number;
  sha256: string;
  /**
   * The report's summary as the portal shows it: its tool, its number of files, its totals, and each file's own
   * figures (`per_file`, in the report's order; each entry flattened as the totals are; an entry that is not an
   * object is left out).
   */
  report: { tool: string; files: number; totals: Record<string, unknown>; per_file: Array<Record<string, unknown>> };
  columns: ColumnEntry[];
  roles: Record<string, number>;
  warnings: string[];
  schema_changes: SchemaChanges | null;
}

export interface CheckManyOptions extends Pick<CheckOptions, 'product' | 'sourceId'> {
  /** The folders; each one's period is the YYYY-MM in its name, if any. */
  dirs: string[];
}

/** A folder that failed its check, among several. */
export interface CheckFailure {
  ok: false;
  dir: string;
  error: FailureData;
}

/** What `bds check <dir>... --json` prints for several folders: one result per folder, in the order given. */
export interface CheckManyResult {
  checks: Array<CheckResult | CheckFailure>;
}

/** One folder: its result, or its failure thrown as it was. */
export async function check(options: CheckOptions, op: Operation): Promise<CheckResult> {
  return (await checkFolders(options, op)).checks[0] as CheckResult;
}

/** Several folders: one result each, a failure among them (see checkFolders). */
export function checkMany(options: CheckManyOptions, op: Operation): Promise<CheckManyResult> {
  return checkFolders(options, op);
}

/**
 * One folder alone (CheckOptions: its period and files may be given), or several, one after the other (each
 * one's period the YYYY-MM in its name, if any). One folder's failure is thrown. Of several, a folder that fails
 * (its files, or the rules for several folders: one folder per month and product, one data file per month)
 * becomes a failed result, told by an 'ended' event, and the others are still checked; a folder that passed is
 * told once all are checked: a later folder may show that its data file is also an earlier month's, which fails
 * the later month in period order, as deliver would.
 */
export async function checkFolders(options: CheckOptions | CheckManyOptions, op: Operation): Promise<CheckManyResult> {
  const several = 'dirs' in options;
  if (several && options.dirs.length === 0) throw new UsageError('no folder to check');
  await op.announceSettings();
  const folders: CheckOptions[] = several
    ? options.dirs.map((dir) => ({ dir, product: options.product, sourceId: options.sourceId }))
    : [options];
  const checks: CheckManyResult['checks'] = [];
  const earlier: PreflightedFolder[] = [];
  const passed: Array<{ index: number; folder: PreflightedFolder; result: CheckResult }> = [];
  const fail = (index: number, dir: string, error: BdsError): void => {
    const failure = failureData(error);
    op.onEvent({ type: 'ended', dir, error: failure });
    checks[index] = { ok: false, dir: path.resolve(op.runtime.cwd, dir), error: failure };
  };
  for (const [index, folderOptions] of folders.entries()) {
    try {
      const folder = await preflight(folderOptions, op);
      const duplicate = duplicateError(folder, earlier);
      if (duplicate) throw duplicate;
      earlier.push(folder);
      const result = await checkPreflighted(folder, folderOptions, op);
      checks[index] = result;
      const month = { index, folder, result };
      // Folders without a period are never delivered together, so only months are compared.
      const other = isMonth(month)
        ? passed.filter(isMonth).find((p) => p.folder.product === folder.product && p.result.sha256 === result.sha256)
        : undefined;
      if (!other || !isMonth(month)) {
        passed.push(month);
        continue;
      }
      // Of the two, the later month in period order is refused.
      const [first, later] = month.folder.period < other.folder.period ? [month, other] : [other, month];
      fail(later.index, later.folder.dir, sameFileInRun(first.folder, later.folder, later.result, op.names));
      if (later === other) passed.splice(passed.indexOf(other), 1, month);
    } catch (thrown) {
      if (!several) throw thrown;
      const error = toBdsError(thrown);
      if (error.exitCode !== EXIT_CODES.usage) throw error;
      fail(index, folderOptions.dir, error);
    }
  }
  if (several) for (const { folder } of passed) op.onEvent({ type: 'ended', dir: folder.dir, error: null });
  return { checks };
}

/** A checked folder of a known month. */
function isMonth<Entry extends { folder: PreflightedFolder }>(entry: Entry): entry is Entry & { folder: MonthFolder } {
  return entry.folder.period !== undefined;
}

/** deliver's refusal of a data file that an earlier month of the run has, in its words. */
function sameFileInRun(first: MonthFolder, later: MonthFolder, result: CheckResult, names: OptionNames): BdsError {
  return sameFileError(
    { period: first.period, dir: first.dir, batchId: undefined, inRun: true },
    { dataName: later.dataName, period: later.period, sha256: result.sha256, dir: later.dir, many: true },
    names,
  );
}

function preflight(options: CheckOptions, op: Operation): Promise<PreflightedFolder> {
  return preflightFolder({
    ...options,
    cwd: op.runtime.cwd,
    platform: op.runtime.platform,
    now: op.runtime.now(),
    periodRequired: false,
    names: op.names,
  });
}

async function checkPreflighted(folder: PreflightedFolder, options: CheckOptions, op: Operation): Promise<CheckResult> {
  const { runtime } = op;
  const settings = await op.settings();
  // check sends nothing: a plain .jsonl is gzipped for its checksum only, without a copy.
  const plan = await planFolder(folder, op, { copy: false });

  const journal = new Journal(stateDir(runtime), runtime.platform);
  const schemaChanges = compareSchema(journal, plan, options.sourceId ?? settings.sourceId?.value, op);
  return {
    ok: true,
    dir: plan.absDir,
    data_file: plan.dataFile,
    product: plan.product,
    period: plan.period ?? null,
    record_count: plan.recordCount,
    bytes: plan.upload.size,
    sha256: plan.sha256,
    report: {
      tool: plan.report.tool,
      files: plan.report.files.length,
      totals: flatten(plan.report.totals),
      per_file: plan.report.files.filter(isObject).map((file) => flatten(file)),
    },
    columns: plan.columns,
    roles: countRoles(plan.columns),
    warnings: plan.warnings,
    schema_changes: schemaChanges,
  };
}

/** Nested objects as dotted keys: {a: {b: 1}} is {"a.b": 1}. */
function flatten(value: Record<string, unknown>, prefix = ''): Record<string, unknown> {
  const flat: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (isObject(inner) && Object.keys(inner).length > 0) Object.assign(flat, flatten(inner, `${prefix}${key}.`));
    else flat[`${prefix}${key}`] = inner;
  }
  return flat;
}
