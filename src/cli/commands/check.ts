// bds check: the pre-flight of deliver alone, offline, with a preview of what the portal will show reviewers.
// Several folders are checked one after the other, one result each; exit 2 if any fails.

import path from 'node:path';
import type { CheckResult } from '../../core/delivery/check.js';
import type { DeliveryEvent } from '../../core/delivery/events.js';
import { BdsError, EXIT_CODES } from '../../core/errors.js';
import { defineCommand } from '../command.js';
import type { Factory } from '../factory.js';
import { formatBytes } from '../output/format.js';
import { renderTable } from '../output/table.js';
import { noticeText, schemaChangeText } from '../output/words.js';

import { folderOf, folderOptions, refuseOneFolderFlags, type FolderFlags } from './folder-options.js';

/** A folder that failed its check, as `--json` shows it among several. */
interface CheckFailure {
  ok: false;
  dir: string;
  error: { message: string; hint: string | null; exit_code: number };
}

/** `dir` is the folder as the user named it. */
type Checked = { dir: string; result: CheckResult | CheckFailure };

export default defineCommand<FolderFlags, Checked[]>({
  name: 'check',
  description: 'check folders as deliver would, offline, and preview what reviewers will see',
  arguments: [{ syntax: '<dir...>', description: 'one or more folders written by the scrubber' }],
  options: folderOptions("compare the schema with this source's deliveries only (BDS_SOURCE_ID)"),
  async run(factory, flags, [dirs]) {
    const folders = Array.isArray(dirs) ? dirs : [String(dirs)];
    refuseOneFolderFlags(folders, flags, 'check');
    const [{ check }, { samePeriodError }, { DeliveryView }] = await Promise.all([
      import('../../core/delivery/check.js'),
      import('../../core/delivery/backfill.js'),
      import('../output/delivery-view.js'),
    ]);
    // Settings warnings come with every folder's check: say each once.
    const said = new Set<string>();
    const checked: Checked[] = [];
    const seen = new Map<string, string>();
    for (const dir of folders) {
      const view = new DeliveryView(factory.io, dir, factory.ctx.now);
      const onEvent = (event: DeliveryEvent): void => {
        if (event.type === 'notice') {
          // The preview lists the schema changes with the folder they belong to.
          if (event.code === 'schema_changes') return;
          const { text } = noticeText(event);
          if (said.has(text)) return;
          said.add(text);
        }
        view.onEvent(event);
      };
      try {
        const result = await check(folderOf(dir, flags), await factory.operation(onEvent));
        // deliver refuses two folders for one month and product: so does its check.
        const key = `${result.period} ${result.product}`;
        const other = result.period ? seen.get(key) : undefined;
        if (other !== undefined) throw samePeriodError(key, other);
        seen.set(key, dir);
        checked.push({ dir, result });
      } catch (error) {
        // One folder: its error is the command's. Several: each failure is said as deliver would say it, and
        // becomes that folder's result; the others are still checked.
        if (folders.length === 1 || !(error instanceof BdsError) || error.exitCode !== EXIT_CODES.usage) throw error;
        factory.io.error(error.message, error.hint, error.stack);
        const failure = { message: error.message, hint: error.hint ?? null, exit_code: error.exitCode };
        checked.push({ dir, result: { ok: false, dir: path.resolve(factory.ctx.cwd, dir), error: failure } });
      }
    }
    return checked;
  },
  print(factory, checked) {
    const { io } = factory;
    const ready = checked.filter(({ result }) => result.ok).length;
    const json = checked.length === 1 ? checked[0]!.result : { checks: checked.map(({ result }) => result) };
    io.result(json, () =>
      [
        ...checked.map(({ dir, result }) => (result.ok ? preview(factory, dir, result) : `${io.out.red('✖')} ${dir}: ${result.error.message}`)),
        ...(checked.length > 1 ? [`${ready} of ${checked.length} folders are ready to deliver.`] : []),
      ].join('\n\n'),
    );
    return ready < checked.length ? EXIT_CODES.usage : undefined;
  },
});

/** What the portal will show reviewers, and what deliver will send, for a person to read at a glance. */
function preview({ io }: Factory, dir: string, result: CheckResult): string {
  const warnings = [
    ...result.warnings,
    ...(result.schema_changes
      ? [schemaChangeText({ period: result.schema_changes.since.period, batchId: result.schema_changes.since.batch_id }, result.schema_changes)]
      : []),
  ];
  const plain = !result.data_file.endsWith('.gz');
  return [
    `${io.out.green('✔')} ${dir} ${result.period ? 'is ready to deliver' : 'is ready to deliver once given --period YYYY-MM'}` +
      `${warnings.length ? `, with ${warnings.length} warning${warnings.length > 1 ? 's' : ''}` : ''}`,
    `Product:   ${result.product}`,
    `Period:    ${result.period ?? "not checked (no --period, and none in the folder's name)"}`,
    `Data file: ${inFolder(result.dir, result.data_file)}`,
    `Records:   ${result.record_count}`,
    `Bytes:     ${result.bytes} (${formatBytes(result.bytes)}${plain ? ', gzipped by bds for the upload' : ''})`,
    `SHA-256:   ${result.sha256}`,
    `Report:    ${result.report.tool}, ${result.report.files} file${result.report.files === 1 ? '' : 's'}`,
    ...labelled('Totals:', alignedPairs(Object.entries(result.report.totals)), 'none'),
    ...columnLines(result),
    ...warnings.map((text) => `${io.out.yellow('warning:')} ${text}`),
  ].join('\n');
}

/** The columns grouped by object type (one table, the type named on its first row); episodes' steps alone. */
function columnLines(result: CheckResult): string[] {
  const { columns } = result;
  if (columns.length === 0) return ['Columns:   none (an environment schema lists no columns)'];
  const roles = Object.entries(result.roles).map(([role, count]) => `${role} ${count}`);
  const cells = (c: CheckResult['columns'][number]) => [c.name, c.role, c.kind, c.transform ?? ''];
  const table =
    result.product === 'episodes'
      ? renderTable(['NAME', 'ROLE', 'KIND', 'TRANSFORM'], columns.map(cells), true)
      : renderTable(
          ['OBJECT', 'NAME', 'ROLE', 'KIND', 'TRANSFORM'],
          columns.map((c, i) => [c.object === columns[i - 1]?.object ? '' : c.object, ...cells(c)]),
          true,
        );
  const objects = new Set(columns.map((c) => c.object)).size;
  return [
    `Columns:   ${columns.length} ${result.product === 'episodes' ? 'per step' : `in ${objects} object type${objects === 1 ? '' : 's'}`}`,
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
  return lines.length === 0 ? [`${label.padEnd(11)}${empty}`] : lines.map((line, i) => `${i === 0 ? label.padEnd(11) : indent}${line}`);
}

function alignedPairs(pairs: Array<[string, unknown]>): string[] {
  const width = Math.max(...pairs.map(([key]) => key.length));
  return pairs.map(([key, value]) => `${key.padEnd(width)}  ${typeof value === 'string' ? value : JSON.stringify(value)}`);
}
