// bds deliver: settings and API client in, the folder's delivery (delivery/deliver-folder.ts) run with its
// events shown, the result out as a summary or JSON (and a GitHub Actions step summary).

import os from 'node:os';
import type { Product } from '../api/types.js';
import type { CheckOutcome, DeliveryEvent } from '../delivery/delivery.js';
import type { FolderDelivery } from '../delivery/deliver-folder.js';
import { formatBytes, formatDuration, formatRate } from '../output/format.js';
import { appendStepSummary, inGithubActions } from '../output/github.js';
import type { Session } from './session.js';

export interface DeliverOptions {
  period?: string;
  product?: Product;
  file?: string;
  schema?: string;
  report?: string;
  dryRun?: boolean;
  force?: boolean;
}

export type DeliverResult = FolderDelivery & { sourceId: string; elapsedMs: number };

export async function deliver(session: Session, dir: string, options: DeliverOptions): Promise<DeliverResult> {
  const { ctx, io } = session;
  const started = ctx.now().getTime();
  const settings = await session.settings();
  const [{ requireSource }, { deliverFolder }, { RecordStore, stateDir }] = await Promise.all([
    import('../settings/settings.js'),
    import('../delivery/deliver-folder.js'),
    import('../delivery/record.js'),
  ]);
  const sourceId = requireSource(settings);
  const { api, key } = await session.connect();
  if (key.mode === 'test') io.notice('test key (svc_test_): test-mode batches never become billable');
  await io.prepare();

  const result = await deliverFolder({
    folder: {
      dir,
      period: options.period,
      product: options.product,
      file: options.file,
      schema: options.schema,
      report: options.report,
      cwd: ctx.cwd,
      now: ctx.now(),
    },
    sourceId,
    force: options.force === true,
    dryRun: options.dryRun === true,
    api,
    records: new RecordStore(stateDir(ctx.env, ctx.homedir)),
    tmpDir: ctx.env.TMPDIR || os.tmpdir(),
    signal: ctx.signal,
    lockOwner: { pid: ctx.pid, hostname: ctx.hostname, startedAt: ctx.now().toISOString() },
    isProcessAlive: ctx.isProcessAlive,
    newIdempotencyKey: () => session.newIdempotencyKey(),
    now: ctx.now,
    onEvent: eventPrinter(session),
  });
  return { ...result, sourceId, elapsedMs: ctx.now().getTime() - started };
}

function eventPrinter(session: Session): (event: DeliveryEvent) => void {
  const { io } = session;
  return (event) => {
    switch (event.type) {
      case 'progress':
        return io.progress(event.sent, event.total);
      case 'uploaded':
        return io.done(
          `uploaded ${formatBytes(event.bytes)} in ${formatDuration(event.ms)}${event.ms > 0 ? ` (${formatRate(event.bytes, event.ms)})` : ''}`,
        );
      case 'notice':
        return io.notice(event.message);
      case 'checked': {
        const { plan } = event;
        io.done(`checked ${plan.dataFile}: ${plan.recordCount} records, ${formatBytes(plan.upload.size)}, sha256 ${plan.sha256}`);
        for (const warning of plan.warnings) io.warn(warning);
        return;
      }
      case 'state':
        return event.state === 'done' ? io.done() : io.step(event.detail);
    }
  };
}

/** For --dry-run: what a real run would do after the re-run check. */
function wouldDo(outcome: CheckOutcome): string {
  switch (outcome.kind) {
    case 'new':
      return 'deliver a new batch';
    case 'delivered':
      return `nothing: already delivered as ${outcome.batch.id} (${outcome.batch.status})`;
    case 'conflict':
      return `stop with exit 4: ${outcome.batch.id} (${outcome.batch.status}) came from another file; --force delivers anyway`;
    case 'resume':
      return `resume the interrupted delivery${outcome.record.batchId ? ` of ${outcome.record.batchId}` : ''}`;
  }
}

export function printDelivery(session: Session, result: DeliverResult): void {
  const { io, ctx } = session;
  const { plan, sourceId } = result;
  const common = {
    source_id: sourceId,
    product: plan.product,
    period: plan.period,
    record_count: plan.recordCount,
    bytes: plan.upload.size,
    sha256: plan.sha256,
  };
  if (result.dryRun) {
    const { outcome, existing } = result;
    io.result({ dry_run: true, ...common, existing_batch: existing ?? null }, () =>
      [
        'Dry run: nothing was created. bds deliver would send:',
        ...details(result),
        `Existing:  ${existing ? `${existing.id} (${existing.status})` : 'no batch for this period yet'}`,
        `Would:     ${wouldDo(outcome)}`,
      ].join('\n'),
    );
    return;
  }
  const { batch, skipped, resumed } = result;
  io.result({ batch: { id: batch.id, status: batch.status }, ...common, skipped }, () =>
    [
      skipped
        ? `Already delivered as ${batch.id} (${batch.status}); nothing was sent.`
        : `Delivered ${batch.id} (${batch.status})${resumed ? ', resuming an interrupted run' : ''}.`,
      ...details(result),
      `Took:      ${formatDuration(result.elapsedMs)}`,
    ].join('\n'),
  );
  const summaryFile = ctx.env.GITHUB_STEP_SUMMARY;
  if (!inGithubActions(ctx.env) || !summaryFile) return;
  try {
    appendStepSummary(summaryFile, 'bds deliver', [
      ['Batch', `\`${batch.id}\``],
      ['Status', `${batch.status}${skipped ? ' (already delivered)' : ''}`],
      ['Source', `\`${sourceId}\``],
      ['Period', plan.period],
      ['Product', plan.product],
      ['Records', String(plan.recordCount)],
      ['Size', `${formatBytes(plan.upload.size)} (${plan.upload.size} bytes)`],
      ['SHA-256', `\`${plan.sha256}\``],
    ]);
  } catch (error) {
    io.warn(`could not write the GitHub step summary to ${summaryFile}: ${(error as Error).message}`);
  }
}

function details({ plan, sourceId }: DeliverResult): string[] {
  return [
    `Source:    ${sourceId}`,
    `Period:    ${plan.period} (${plan.product})`,
    `Records:   ${plan.recordCount}`,
    `Bytes:     ${plan.upload.size} (${formatBytes(plan.upload.size)})`,
    `SHA-256:   ${plan.sha256}`,
  ];
}
