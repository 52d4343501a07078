// Pre-flight: everything about a delivery folder that can be checked before anything is created on the
// server: the period, the folder, report.json, schema.json and the product, then one pass over the data file
// (scan.ts). Every failure is a UsageError (exit 2) naming the file.

import { promises as fs, type Stats } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.js';
import type { Product, Schema, ScrubReport } from '../api/types.js';
import type { ScanResult } from './scan.js';

export interface PreflightOptions {
  dir: string;
  period: string | undefined;
  product?: Product | undefined;
  file?: string | undefined;
  schema?: string | undefined;
  report?: string | undefined;
  cwd: string;
  now: Date;
}

/** What the quick checks establish: everything but the data file's contents. */
export interface FolderCheck {
  dir: string;
  /** The data file as the user has it (.jsonl.gz or .jsonl). */
  dataFile: string;
  product: Product;
  period: string;
  schema: Schema;
  report: ScrubReport;
  warnings: string[];
}

/** A folder that passed the whole pre-flight: the checks, then one pass over the data file (scan.ts). */
export type DeliveryPlan = FolderCheck & ScanResult;

/** The quick part of the pre-flight: period, folder, report, schema, product and which file holds the data. */
export async function checkFolder(options: PreflightOptions): Promise<FolderCheck> {
  const warnings: string[] = [];
  const period = checkPeriod(options.period, options.now, warnings);
  const dir = path.resolve(options.cwd, options.dir);
  const entries = await listFolder(dir);

  const reportPath = options.report ? path.resolve(options.cwd, options.report) : path.join(dir, 'report.json');
  const schemaPath = options.schema ? path.resolve(options.cwd, options.schema) : path.join(dir, 'schema.json');
  const report = checkReport(await readJson(reportPath, 'the scrub report'), reportPath);
  const schema = await readJson(schemaPath, 'the schema');
  const product = checkProduct(options.product, schema, schemaPath);
  checkSchema(product, schema, schemaPath);

  const dataFile = options.file ? path.resolve(options.cwd, options.file) : findDataFile(dir, entries);
  return { dir, dataFile, product, period, schema: schema as Schema, report, warnings };
}

/** YYYY-MM with a month from 01 to 12. */
export function checkPeriodForm(period: string): void {
  const match = /^(\d{4})-(\d{2})$/.exec(period);
  if (!match) throw new UsageError(`--period ${period} is not of the form YYYY-MM (for example 2024-05)`);
  const month = Number(match[2]);
  if (month < 1 || month > 12) throw new UsageError(`--period ${period}: month ${match[2]} is not between 01 and 12`);
}

export function checkPeriod(period: string | undefined, now: Date, warnings: string[]): string {
  if (period === undefined || period === '') throw new UsageError('missing --period YYYY-MM (the month the data covers)');
  checkPeriodForm(period);
  const current = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
  if (period > current) throw new UsageError(`--period ${period} is in the future (this month is ${current}, UTC)`);
  if (period === current) warnings.push(`--period ${period} is the current month, which is not over yet`);
  return period;
}

async function listFolder(dir: string): Promise<string[]> {
  let stat: Stats;
  try {
    stat = await fs.stat(dir);
  } catch {
    throw new UsageError(`no such folder: ${dir}`);
  }
  if (!stat.isDirectory()) throw new UsageError(`not a folder: ${dir}`, { hint: 'name the folder the scrubber wrote' });
  let entries: string[];
  try {
    entries = await fs.readdir(dir);
  } catch (error) {
    throw new UsageError(`cannot read the folder ${dir} (${(error as { code?: string }).code ?? 'unreadable'})`);
  }
  if (entries.length === 0) throw new UsageError(`the folder ${dir} is empty`, { hint: 'name the folder the scrubber wrote' });
  return entries;
}

async function readJson(file: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new UsageError(`${file}: ${code === 'ENOENT' ? `missing (${what})` : `cannot read it (${code})`}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const where = /position (\d+)/.exec((error as Error).message)?.[1];
    throw new UsageError(`${file}: not valid JSON${where ? ` (at character ${where})` : ''}`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function checkReport(report: unknown, file: string): ScrubReport {
  if (!isObject(report)) throw new UsageError(`${file}: the scrub report must be a JSON object`);
  const missing = [
    typeof report.tool === 'string' && report.tool ? undefined : '"tool" (a string)',
    Array.isArray(report.files) ? undefined : '"files" (an array)',
    isObject(report.totals) ? undefined : '"totals" (an object)',
  ].filter(Boolean);
  if (missing.length) throw new UsageError(`${file}: the scrub report lacks ${missing.join(', ')}`);
  return report as ScrubReport;
}

const FORMAT_PRODUCT: Record<string, Product> = { jsonl: 'records', 'episodes/v1': 'episodes' };

/** `requested`: --product, whose value commander has already checked against the products. */
function checkProduct(requested: Product | undefined, schema: unknown, file: string): Product {
  const format = isObject(schema) && typeof schema.format === 'string' ? schema.format : undefined;
  const implied = format === undefined ? undefined : FORMAT_PRODUCT[format];
  if (requested !== undefined) {
    if (implied !== undefined && implied !== requested) {
      throw new UsageError(`--product ${requested} contradicts ${file}, whose format "${format}" is ${implied}`);
    }
    return requested;
  }
  if (implied) return implied;
  throw new UsageError(
    `${file}: cannot tell the product from the schema's format (${format === undefined ? 'none' : `"${format}"`})`,
    { hint: 'records need format "jsonl", episodes "episodes/v1"; environment data needs --product environment' },
  );
}

function checkSchema(product: Product, schema: unknown, file: string): void {
  if (!isObject(schema)) throw new UsageError(`${file}: the schema must be a JSON object`);
  if (product === 'records') {
    if (!isObject(schema.objects) || Object.keys(schema.objects).length === 0) {
      throw new UsageError(`${file}: records need "objects", a non-empty map from object type to its columns`);
    }
    for (const [name, columns] of Object.entries(schema.objects)) checkColumns(columns, `objects.${name}`, file);
  } else if (product === 'episodes') {
    checkColumns(schema.steps, 'steps', file);
  }
}

function checkColumns(columns: unknown, where: string, file: string): void {
  if (!Array.isArray(columns) || columns.length === 0) {
    throw new UsageError(`${file}: ${where} must be a non-empty list of columns`);
  }
  columns.forEach((column: unknown, i) => {
    const at = `${where}[${i}]`;
    if (!isObject(column)) throw new UsageError(`${file}: ${at} must be an object`);
    for (const field of ['name', 'role', 'kind']) {
      const value = column[field];
      if (typeof value !== 'string' || !value) throw new UsageError(`${file}: ${at}.${field} must be a non-empty string`);
    }
    if (column.transform !== undefined && typeof column.transform !== 'string') {
      throw new UsageError(`${file}: ${at}.transform must be a string`);
    }
  });
}

function findDataFile(dir: string, entries: string[]): string {
  const gz = entries.filter((name) => name.endsWith('.jsonl.gz'));
  const plain = entries.filter((name) => name.endsWith('.jsonl'));
  const found = [...gz, ...plain].sort();
  if (found.length === 0) {
    throw new UsageError(`no data file in ${dir}`, { hint: 'expected one *.jsonl.gz or *.jsonl file, or name it with --file' });
  }
  if (found.length > 1) {
    throw new UsageError(`more than one data file in ${dir}: ${found.join(', ')}`, { hint: 'choose one with --file' });
  }
  return path.join(dir, found[0]!);
}
