// bds check: the pre-flight of deliver alone, offline, with a preview of what the portal will show reviewers.
// Several folders are checked one after the other, one result each; exit 2 if any fails.

import type { CheckResult } from '../../core/delivery/check.js';
import { BdsError, EXIT_CODES } from '../../core/errors.js';
import { defineCommand } from '../command.js';
import type { Factory } from '../factory.js';
import { formatBytes } from '../output/format.js';
import { renderTable } from '../output/table.js';

import { folderOf, folderOptions, type FolderFlags } from './folder-options.js';

/** A folder that failed its check, as `--json` shows it among several. */
interface CheckFailure {
  ok: false;
  dir: string;
  error: { message: string; hint: string | null; exit_code: number };
}

type Checked = { dir: string; result: CheckResult | CheckFailure };

export default defineCommand<FolderFlags, Checked[]>({
  name: 'check',
  description: 'check folders as deliver would, offline, and preview what reviewers will see',
  arguments: [{ syntax: '<dir...>', description: 'one or more folders written by the scrubber' }],
  options: folderOptions("compare the schema with this source's deliveries only (BDS_SOURCE_ID)"),
  async run(factory, flags, [dirs]) {
    const folders = Array.isArray(dirs) ? dirs : [String(dirs)];
    const [{ check }, { DeliveryView }] = await Promise.all([
      import('../../core/delivery/check.js'),
      import('../output/delivery-view.js'),
    ]);
    const checked: Checked[] = [];
    for (const dir of folders) {
      const view = new DeliveryView(factory.io, dir, factory.ctx.now);
      try {
        checked.push({ dir, result: await check(folderOf(dir, flags), await factory.operation(view.onEvent)) });
      } catch (error) {
        // One folder: its error is the command's. Several: each failure is a result, and the others go on.
        if (folders.length === 1 || !(error instanceof BdsError) || error.exitCode !== EXIT_CODES.usage) throw error;
        factory.io.failStep();
        checked.push({ dir, result: { ok: false, dir, error: { message: error.message, hint: error.hint ?? null, exit_code: error.exitCode } } });
      }
    }
    return checked;
  },
  print(factory, checked) {
    const { io } = factory;
    const failed = checked.some(({ result }) => !result.ok);
    const json = checked.length === 1 ? checked[0]!.result : { checks: checked.map(({ result }) => result) };
    io.result(json, () => checked.map(({ dir, result }) => (result.ok ? preview(factory, dir, result) : failure(factory, dir, result))).join('\n\n'));
    return failed ? EXIT_CODES.usage : undefined;
  },
});

function preview({ io }: Factory, dir: string, result: CheckResult): string {
  const totals = Object.entries(result.report.totals);
  const roles = Object.entries(result.roles)
    .map(([role, count]) => `${role} ${count}`)
    .join(', ');
  const columns = renderTable(
    ['OBJECT', 'NAME', 'ROLE', 'KIND', 'TRANSFORM'],
    result.columns.map((c) => [c.object, c.name, c.role, c.kind, c.transform ?? '']),
    true,
  );
  return [
    `${io.out.green('✔')} ${dir} is ready to deliver${result.warnings.length ? ` (${result.warnings.length} warning${result.warnings.length > 1 ? 's' : ''})` : ''}`,
    `Product:   ${result.product}`,
    `Period:    ${result.period ?? "not checked (no --period, and none in the folder's name)"}`,
    `Data file: ${result.data_file}`,
    `Records:   ${result.record_count}`,
    `Bytes:     ${result.bytes} (${formatBytes(result.bytes)})`,
    `SHA-256:   ${result.sha256}`,
    `Report:    ${result.report.tool}, ${result.report.files} file${result.report.files === 1 ? '' : 's'}`,
    ...(totals.length ? ['Totals:', ...alignedPairs(totals)] : ['Totals:    (none)']),
    ...(result.columns.length
      ? [`Columns:   ${result.columns.length} (${roles})`, ...columns.split('\n').map((line) => `  ${line}`)]
      : ['Columns:   none (an environment schema lists no columns)']),
    ...(result.schema_changes
      ? [`Schema:    changed since ${result.schema_changes.since.period}${result.schema_changes.since.batch_id ? ` (${result.schema_changes.since.batch_id})` : ''}: see the warning above`]
      : []),
  ].join('\n');
}

function failure({ io }: Factory, dir: string, result: CheckFailure): string {
  return [`${io.out.red('✖')} ${dir}: ${result.error.message}`, ...(result.error.hint ? [`  hint: ${result.error.hint}`] : [])].join('\n');
}

function alignedPairs(pairs: Array<[string, unknown]>): string[] {
  const width = Math.max(...pairs.map(([key]) => key.length));
  return pairs.map(([key, value]) => `  ${key.padEnd(width)}  ${typeof value === 'string' ? value : JSON.stringify(value)}`);
}
