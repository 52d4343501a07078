// The quick checks of a delivery folder, before the long pass over its data file (the data pass): the period,
// the folder, report.json, schema.json and the product, and which file holds the data. Every failure is a
// UsageError (exit 2) naming the file.

import { promises as fs, type Stats } from 'node:fs';
import path from 'node:path';
import { errnoCode, isDenied, isObject, permissionDenied } from '../guards.js';
import { UsageError } from '../errors.js';
import type { OptionNames } from '../option-names.js';
import { pathsOf, type Platform } from '../platform.js';
import type { Product, Schema, ScrubReport } from '../api/types.js';
import { checkPeriod, choosePeriod } from './period.js';
import { checkProduct, checkSchema } from './schema.js';

/** A delivery folder and what the user said about it. */
export interface FolderOptions {
  /** The folder the scrubber wrote. */
  dir: string;
  /** YYYY-MM; default the one in the folder's name. */
  period?: string | undefined;
  /** Default from schema.format. */
  product?: Product | undefined;
  /** The data file, when the folder holds several; relative to the working folder (a bare name: or the folder). */
  file?: string | undefined;
  schema?: string | undefined;
  report?: string | undefined;
}

export interface PreflightOptions extends FolderOptions {
  cwd: string;
  platform: Platform;
  now: Date;
  /** deliver needs a period; check without one skips the period rules. */
  periodRequired: boolean;
  /** How the caller's door names its options, for messages about the period, the product and the data file. */
  names: OptionNames;
}

/** What the quick checks establish: everything but the data file's contents. */
export interface PreflightedFolder {
  /** The folder as the caller named it (FolderOptions.dir), for what a person reads. */
  dir: string;
  /** The folder's absolute path. */
  absDir: string;
  /** The data file as the user has it (.jsonl.gz or .jsonl); absolute. */
  dataFile: string;
  /** The data file as every message names it (pathForPeople). */
  dataName: string;
  product: Product;
  /** None only for a check with no period given or in the folder's name: the period rules were skipped. */
  period?: string | undefined;
  schema: Schema;
  report: ScrubReport;
  warnings: string[];
}

/** A preflighted folder of a known month: deliver's, which requires its period. */
export type MonthFolder = PreflightedFolder & { period: string };

/** The quick part of the pre-flight: period, folder, report, schema, product and which file holds the data. */
export async function preflightFolder(options: PreflightOptions & { periodRequired: true }): Promise<MonthFolder>;
export async function preflightFolder(options: PreflightOptions): Promise<PreflightedFolder>;
export async function preflightFolder(options: PreflightOptions): Promise<PreflightedFolder> {
  const warnings: string[] = [];
  const dir = path.resolve(options.cwd, options.dir);
  const entries = await listFolder(dir);
  const chosen = choosePeriod(options.period, dir, options.platform, options.names);
  const period =
    chosen === undefined && !options.periodRequired
      ? undefined
      : checkPeriod(chosen, options.now, warnings, options.names);

  const reportPath = options.report ? path.resolve(options.cwd, options.report) : path.join(dir, 'report.json');
  const schemaPath = options.schema ? path.resolve(options.cwd, options.schema) : path.join(dir, 'schema.json');
  const report = checkReport(await readJson(reportPath, 'the scrub report'), reportPath);
  const schema = await readJson(schemaPath, 'the schema');
  const product = checkProduct(options.product, schema, schemaPath, options.names);
  checkSchema(product, schema, schemaPath);

  const dataFile = options.file
    ? await chosenDataFile(options.file, options.cwd, dir, options.platform)
    : findDataFile(dir, entries, options.names);
  return {
    dir: options.dir,
    absDir: dir,
    dataFile,
    dataName: pathForPeople(dataFile, options.cwd),
    product,
    period,
    schema: schema as Schema,
    report,
    warnings,
  };
}

/**
 * A file as messages name it, one form everywhere: relative to the working folder when it is inside it (the
 * user's `out/2024-05/records.jsonl.gz`), else its absolute path; either way it cannot be mistaken for the
 * same name in another folder.
 */
export function pathForPeople(file: string, cwd: string): string {
  const relative = path.relative(cwd, file);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
}

/**
 * The names in a delivery folder; a missing, unreadable or empty folder, or a file, is a usage error. One the
 * user may not read names the folder that keeps them out and who may read it.
 */
export async function listFolder(dir: string): Promise<string[]> {
  let stat: Stats;
  try {
    stat = await fs.stat(dir);
  } catch (error) {
    if (isDenied(error)) throw new UsageError(`cannot read the folder ${dir}: ${permissionDenied(dir)}`, DENIED);
    throw new UsageError(`no such folder: ${dir}`);
  }
  if (!stat.isDirectory()) throw new UsageError(`not a folder: ${dir}`, { hint: 'name the folder the scrubber wrote' });
  let entries: string[];
  try {
    entries = await fs.readdir(dir);
  } catch (error) {
    if (isDenied(error)) {
      throw new UsageError(`cannot read the folder ${dir}: ${permissionDenied(dir, { read: true })}`, DENIED);
    }
    throw new UsageError(`cannot read the folder ${dir} (${errnoCode(error) ?? 'unreadable'})`);
  }
  if (entries.length === 0)
    throw new UsageError(`the folder ${dir} is empty`, { hint: 'name the folder the scrubber wrote' });
  return entries;
}

const DENIED = {
  hint: 'run bds as a user who may read it, or change its owner or mode (chown, chmod)',
};

/**
 * How deep report.json and schema.json may nest. Both are sent as is, and serialising a value thousands of
 * levels deep overflows the stack (JSON.stringify fails near 5,000 on Node's default stack); no scrub report or
 * schema comes near this.
 */
export const MAX_JSON_DEPTH = 100;

async function readJson(file: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    const code = errnoCode(error);
    throw new UsageError(`${file}: ${code === 'ENOENT' ? `missing (${what})` : `cannot read it (${code})`}`);
  }
  let value: unknown;
  try {
    // A UTF-8 byte order mark, as some Windows editors write it: RFC 8259 lets a parser ignore it.
    value = JSON.parse(text.replace(/^\uFEFF/, '')) as unknown;
  } catch (error) {
    const where = /position (\d+)/.exec((error as Error).message)?.[1];
    throw new UsageError(`${file}: not valid JSON${where ? ` (at character ${where})` : ''}`);
  }
  const depth = nestingDepth(value);
  if (depth > MAX_JSON_DEPTH) {
    throw new UsageError(`${file}: nested ${depth} levels deep; bds accepts at most ${MAX_JSON_DEPTH}`, {
      hint: `${what} is sent as it is: check what wrote it`,
    });
  }
  return value;
}

/** How many arrays and objects deep a JSON value nests (a scalar: 0), without recursion: any depth is measured. */
function nestingDepth(value: unknown): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length > 0) {
    const [next, depth] = pending.pop()!;
    if (next === null || typeof next !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    for (const inner of Object.values(next)) pending.push([inner, depth + 1]);
  }
  return deepest;
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

/**
 * --file: relative to the working folder, as a path on the command line is. A bare name that is not there is
 * looked for in the delivery folder too: "more than one data file" lists bare names. A name is bare by the
 * system's rules: on Windows `sub\records.jsonl.gz` and `D:records.jsonl.gz` are paths.
 */
export async function chosenDataFile(file: string, cwd: string, dir: string, platform: Platform): Promise<string> {
  const paths = pathsOf(platform);
  const fromCwd = paths.resolve(cwd, file);
  if (paths.basename(file) !== file || (await exists(fromCwd))) return fromCwd;
  const inFolder = paths.join(dir, file);
  return (await exists(inFolder)) ? inFolder : fromCwd;
}

async function exists(file: string): Promise<boolean> {
  return fs.stat(file).then(
    () => true,
    () => false,
  );
}

function findDataFile(dir: string, entries: string[], names: OptionNames): string {
  // Hidden files are never the data: macOS's ._records.jsonl.gz (AppleDouble), an editor's swap file.
  const visible = entries.filter((name) => !name.startsWith('.'));
  const gz = visible.filter((name) => name.endsWith('.jsonl.gz'));
  const plain = visible.filter((name) => name.endsWith('.jsonl'));
  const found = [...gz, ...plain].sort();
  if (found.length === 0) {
    throw new UsageError(`no data file in ${dir}`, {
      hint: `expected one *.jsonl.gz or *.jsonl file, or name it with ${names.phrase('file')}`,
      about: { code: 'no_data_file' },
    });
  }
  if (found.length > 1) {
    throw new UsageError(`more than one data file in ${dir}: ${found.join(', ')}`, {
      hint: `choose one with ${names.phrase('file')}`,
      about: { code: 'data_files' },
    });
  }
  return path.join(dir, found[0]!);
}
