// bds deliver: the folder's delivery (core/delivery/deliver.ts) shown as it happens, the result out as a
// summary or JSON, and a GitHub Actions step summary.

import { Option } from 'commander';
import type { DeliverResult, DeliverySummary, DryRunResult } from '../../core/delivery/deliver.js';
import { defineCommand } from '../command.js';
import type { Factory } from '../factory.js';
import { formatBytes, formatDuration } from '../output/format.js';
import { appendStepSummary, inGithubActions } from '../output/github.js';

import { folderOf, folderOptions, type FolderFlags } from './folder-options.js';

interface DeliverFlags extends FolderFlags {
  dryRun?: boolean;
  force?: boolean;
  skipDelivered?: boolean;
}

type Outcome = { result: DeliverResult | DryRunResult; elapsedMs: number };

export default defineCommand<DeliverFlags, Outcome>({
  name: 'deliver',
  description: 'check a folder written by the scrubber and deliver it as one batch',
  arguments: [{ syntax: '<dir>', description: 'the folder: report.json, schema.json and one *.jsonl.gz (or *.jsonl)' }],
  options: [
    ...folderOptions('source id (BDS_SOURCE_ID)'),
    new Option('--dry-run', 'check everything and show what would be sent; create nothing'),
    new Option('--force', 'deliver even when this period already has a delivered batch'),
    new Option('--skip-delivered', 'count a delivered batch of this period as delivered, whatever file it came from (CI)'),
  ],
  async run(factory, flags, [dir]) {
    const started = factory.ctx.now().getTime();
    const [{ deliverFolder }, { DeliveryView }] = await Promise.all([
      import('../../core/delivery/deliver.js'),
      import('../output/delivery-view.js'),
    ]);
    const view = new DeliveryView(factory.io, String(dir), factory.ctx.now);
    const result = await deliverFolder(
      {
        ...folderOf(String(dir), flags),
        dryRun: flags.dryRun,
        force: flags.force,
        skipDelivered: flags.skipDelivered,
      },
      await factory.operation(view.onEvent),
    );
    return { result, elapsedMs: factory.ctx.now().getTime() - started };
  },
  print(factory, { result, elapsedMs }) {
    if ('dry_run' in result) printDryRun(factory, result);
    else printDelivery(factory, result, elapsedMs);
  },
});

/** What `--json` prints: the contract's fields, and the schema changes when there are any. */
function common(result: DeliverySummary) {
  const { source_id, product, period, record_count, bytes, sha256, schema_changes } = result;
  return { source_id, product, period, record_count, bytes, sha256, ...(schema_changes ? { schema_changes } : {}) };
}

function printDryRun({ io }: Factory, result: DryRunResult): void {
  const existing = result.existing_batch;
  io.result({ dry_run: true, ...common(result), existing_batch: existing }, () =>
    [
      'Dry run: nothing was created. bds deliver would send:',
      ...details(result),
      `Existing:  ${existing ? `${existing.id} (${existing.status})` : 'no batch for this period yet'}`,
      `Would:     ${wouldText(result.would)}`,
    ].join('\n'),
  );
}

function wouldText({ action, batch_id, status }: DryRunResult['would']): string {
  switch (action) {
    case 'deliver':
      return 'deliver a new batch';
    case 'skip':
      return `nothing: already delivered as ${batch_id} (${status})`;
    case 'stop':
      return `stop with exit 4: ${batch_id} (${status}) came from another file; --force delivers anyway`;
    case 'resume':
      return `resume the interrupted delivery${batch_id ? ` of ${batch_id}` : ''}`;
  }
}

function printDelivery({ io, ctx }: Factory, result: DeliverResult, elapsedMs: number): void {
  const { batch, skipped } = result;
  io.result({ batch: { id: batch.id, status: batch.status }, ...common(result), skipped }, () =>
    io.flags.quiet ? quietLine(result) : summary(result, elapsedMs),
  );
  const summaryFile = ctx.env.GITHUB_STEP_SUMMARY;
  if (!inGithubActions(ctx.env) || !summaryFile) return;
  try {
    appendStepSummary(summaryFile, 'bds deliver', [
      ['Batch', `\`${batch.id}\``],
      ['Status', `${batch.status}${skipped ? ' (already delivered)' : ''}`],
      ['Source', `\`${result.source_id}\``],
      ['Period', result.period],
      ['Product', result.product],
      ['Records', String(result.record_count)],
      ['Size', `${formatBytes(result.bytes)} (${result.bytes} bytes)`],
      ['SHA-256', `\`${result.sha256}\``],
    ]);
  } catch (error) {
    io.warn(`could not write the GitHub step summary to ${summaryFile}: ${(error as Error).message}`);
  }
}

function summary(result: DeliverResult, elapsedMs: number): string {
  const { batch, skipped, resumed } = result;
  return [
    skipped
      ? `Already delivered as ${batch.id} (${batch.status}); nothing was sent.`
      : `Delivered ${batch.id} (${batch.status})${resumed ? ', resuming an interrupted run' : ''}.`,
    ...details(result),
    `Took:      ${formatDuration(elapsedMs)}`,
  ].join('\n');
}

/** --quiet: the one line a delivery's result takes, for cron mail and scripts. */
function quietLine({ batch, skipped, period, product, record_count, bytes }: DeliverResult): string {
  const what = `${batch.id} (${batch.status}): ${period} ${product}`;
  return skipped ? `already delivered as ${what}` : `delivered ${what}, ${record_count} records, ${formatBytes(bytes)}`;
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
