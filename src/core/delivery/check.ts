// `check`: the pre-flight of deliver alone, offline (no key, no base URL, no request), with what the portal
// will show reviewers: the report's summary and the columns with their roles, and how the columns differ
// from the newest earlier delivery of the same product recorded on this machine.

import type { Product } from '../api/types.js';
import { isObject } from '../checks.js';
import { announceSettings, type Operation } from '../operation.js';
import { stateDir } from '../settings/dirs.js';
import { countRoles, type ColumnEntry } from './columns.js';
import { checkFolder, type FolderOptions } from './folder.js';
import { compareSchema, planFolder, type SchemaChanges } from './plan.js';
import { RecordStore } from './record-store.js';

export interface CheckOptions extends FolderOptions {
  /** Narrows the schema comparison to this source's deliveries; default BDS_SOURCE_ID or the config file's. */
  sourceId?: string | undefined;
}

/** What `bds check --json` prints for one folder. */
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
  report: { tool: string; files: number; totals: Record<string, unknown> };
  columns: ColumnEntry[];
  roles: Record<string, number>;
  warnings: string[];
  schema_changes: SchemaChanges | null;
}

export async function check(options: CheckOptions, op: Operation): Promise<CheckResult> {
  const { runtime } = op;
  await announceSettings(op);
  const settings = await op.connection.settings();
  const folder = await checkFolder({ ...options, cwd: runtime.cwd, now: runtime.now(), periodRequired: false });
  // check sends nothing: a plain .jsonl is gzipped for its checksum only, without a copy.
  const plan = await planFolder(folder, op, { copy: false });

  const records = new RecordStore(stateDir(runtime.env, runtime.homedir));
  const schemaChanges = compareSchema(records, plan, options.sourceId ?? settings.sourceId?.value, op);
  return {
    ok: true,
    dir: plan.dir,
    data_file: plan.dataFile,
    product: plan.product,
    period: plan.period || null,
    record_count: plan.recordCount,
    bytes: plan.upload.size,
    sha256: plan.sha256,
    report: { tool: plan.report.tool, files: plan.report.files.length, totals: flatten(plan.report.totals) },
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
