// What `bds check` prints: per folder, what the portal will show reviewers and what deliver will send (or why
// the folder failed), and with several folders how many are ready; exit 2 if any failed.

import path from 'node:path';
import type { CheckFailure, CheckManyResult, CheckResult } from '../../core/delivery/check.js';
import { cleanText } from '../../core/clean-text.js';
import { EXIT_CODES } from '../../core/errors.js';
import type { IO } from './io.js';
import { counted, formatBytes } from './format.js';
import { renderTable } from './table.js';
import { displayWidth, padToWidth } from './width.js';
import { schemaChangeText } from './words.js';

/** The folders as the user named them, and the core's result: one per folder. */
export type Checked = { dirs: string[]; result: CheckManyResult };

/** Each folder's preview, or why it failed; exit 2 when one failed. One folder's JSON is its own result. */
export function printCheck(io: IO, { dirs, result }: Checked): number | undefined {
  const { checks } = result;
  const ready = checks.filter((check) => check.ok).length;
  io.result(dirs.length === 1 ? checks[0] : result, () =>
    [
      ...checks.map((check, i) => (check.ok ? preview(io, dirs[i]!, check) : failureLine(io, dirs[i]!, check))),
      ...(checks.length > 1 ? [`${ready} of ${checks.length} folders are ready to deliver.`] : []),
    ].join('\n\n'),
  );
  return ready < checks.length ? EXIT_CODES.usage : undefined;
}

function failureLine(io: IO, dir: string, failure: CheckFailure): string {
  return `${io.out.red(io.symbols.failed)} ${dir}: ${failure.error.message}`;
}

/**
 * What the portal will show reviewers, and what deliver will send, for a person to read at a glance. Every name
 * and value from the folder (report, schema, file names) is cleaned as text from a server is: a report cannot
 * set the terminal's title or split a row of the table.
 */
function preview(io: IO, dir: string, result: CheckResult): string {
  const warnings = [
    ...result.warnings.map((warning) => cleanText(warning)),
    ...(result.schema_changes
      ? [
          schemaChangeText(
            { period: result.schema_changes.since.period, batchId: result.schema_changes.since.batch_id },
            result.schema_changes,
          ),
        ]
      : []),
  ];
  const plain = !result.data_file.endsWith('.gz');
  return [
    `${io.out.green(io.symbols.ok)} ${cleanText(dir)} ${result.period ? 'is ready to deliver' : 'is ready to deliver once given --period YYYY-MM'}` +
      `${warnings.length ? `, with ${counted(warnings.length, 'warning')}` : ''}`,
    `Product:   ${result.product}`,
    `Period:    ${result.period ?? "not checked (no --period, and none in the folder's name)"}`,
    `Data file: ${cleanText(inFolder(result.dir, result.data_file))}`,
    `Records:   ${result.record_count}`,
    `Bytes:     ${result.bytes} (${formatBytes(result.bytes)}${plain ? ', gzipped by bds for the upload' : ''})`,
    `SHA-256:   ${result.sha256}`,
    `Report:    ${cleanText(result.report.tool)}, ${counted(result.report.files, 'file')}`,
    ...labelled('Totals:', alignedPairs(Object.entries(result.report.totals)), 'none'),
    ...columnLines(result),
    ...warnings.map((text) => `${io.out.yellow('warning:')} ${text}`),
  ].join('\n');
}

/** The columns grouped by object type (one table, the type named on its first row); episodes' steps alone. */
function columnLines(result: CheckResult): string[] {
  const { columns } = result;
  if (columns.length === 0) return ['Columns:   none (an environment schema lists no columns)'];
  const roles = Object.entries(result.roles).map(([role, count]) => `${cleanText(role)} ${count}`);
  const cells = (c: CheckResult['columns'][number]) =>
    [c.name, c.role, c.kind, c.transform ?? ''].map((cell) => cleanText(cell));
  const table =
    result.product === 'episodes'
      ? renderTable(['NAME', 'ROLE', 'KIND', 'TRANSFORM'], columns.map(cells), true)
      : renderTable(
          ['OBJECT', 'NAME', 'ROLE', 'KIND', 'TRANSFORM'],
          columns.map((c, i) => [c.object === columns[i - 1]?.object ? '' : cleanText(c.object), ...cells(c)]),
          true,
        );
  const objects = new Set(columns.map((c) => c.object)).size;
  return [
    `Columns:   ${columns.length} ${result.product === 'episodes' ? 'per step' : `in ${counted(objects, 'object type')}`}`,
    `Roles:     ${roles.join(', ')}`,
    ...table.split('\n').map((line) => `  ${line}`.trimEnd()),
  ];
}

/** The data file by its name when it is in the folder, else by its whole path. */
function inFolder(dir: string, file: string): string {
  return path.dirname(file) === dir ? path.basename(file) : file;
}

/** `label` before the first line, the others indented under it; `empty` when there are none. */
function labelled(label: string, lines: string[], empty: string): string[] {
  const indent = ' '.repeat(11);
  return lines.length === 0
    ? [`${label.padEnd(11)}${empty}`]
    : lines.map((line, i) => `${i === 0 ? label.padEnd(11) : indent}${line}`);
}

/** The report's totals, keys aligned; keys and values cleaned. */
function alignedPairs(pairs: Array<[string, unknown]>): string[] {
  const keys = pairs.map(([key]) => cleanText(key));
  const width = Math.max(...keys.map((key) => displayWidth(key)));
  return pairs.map(
    ([, value], i) =>
      `${padToWidth(keys[i]!, width)}  ${cleanText(typeof value === 'string' ? value : String(JSON.stringify(value)))}`,
  );
}
