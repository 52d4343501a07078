// bds deliver: pre-flight, then the delivery (re-run check, create, upload, complete), or with --dry-run
// what would be sent. The command wires settings, pre-flight, the delivery and the output together.

import { appendFileSync, promises as fs } from 'node:fs';
import os from 'node:os';
import type { BatchListEntry, BatchRef } from '../api/types.js';
import type { DeliveryEvent } from '../delivery/delivery.js';
import type { DeliveryPlan } from '../delivery/preflight.js';
import { formatBytes, formatDuration, formatRate } from '../output/format.js';
import type { Session } from './session.js';

export interface DeliverOptions {
  period?: string;
  product?: string;
  file?: string;
  schema?: string;
  report?: string;
  dryRun?: boolean;
  force?: boolean;
}

export interface DeliverResult {
  plan: DeliveryPlan;
  sourceId: string;
  dryRun: boolean;
  /** For --dry-run: the batch the re-run check found for this period, if any. */
  existing?: BatchListEntry | undefined;
  batch?: BatchRef;
  skipped: boolean;
  resumed: boolean;
  elapsedMs: number;
}

export async function deliver(session: Session, dir: string, options: DeliverOptions): Promise<DeliverResult> {
  const { ctx, io } = session;
  const started = ctx.now().getTime();
  const settings = await session.settings();
  const [{ requireSource }, { checkFolder }, { scanDataFile }, { Delivery }, { RecordStore, stateDir }] = await Promise.all([
    import('../settings/settings.js'),
    import('../delivery/preflight.js'),
    import('../delivery/scan.js'),
    import('../delivery/delivery.js'),
    import('../delivery/record.js'),
  ]);
  const sourceId = requireSource(settings);
  const { api, key } = await session.connect();
  if (key.mode === 'test') io.notice('test key (svc_test_): test-mode batches never become billable');
  await io.prepare();

  io.step(`checking ${dir}`);
  const folder = await checkFolder({
    dir,
    period: options.period,
    product: options.product,
    file: options.file,
    schema: options.schema,
    report: options.report,
    cwd: ctx.cwd,
    now: ctx.now(),
  });
  const records = new RecordStore(stateDir(ctx.env, ctx.homedir));
  // Taken before the long read of the data file, so that a second bds stops at once.
  const unlock = options.dryRun
    ? () => {}
    : records.lock(
        { baseUrl: api.baseUrl.toString(), sourceId, period: folder.period, product: folder.product },
        { pid: ctx.pid, hostname: ctx.hostname, startedAt: ctx.now().toISOString() },
        ctx.isProcessAlive,
      );
  try {
    const plan = { ...folder, ...(await scanDataFile(folder.dataFile, ctx.env.TMPDIR || os.tmpdir(), ctx.signal)) };
    try {
      return await deliverPlan(plan);
    } finally {
      if (plan.upload.temporary) await fs.rm(plan.upload.path, { force: true });
    }
  } finally {
    unlock();
  }

  async function deliverPlan(plan: DeliveryPlan): Promise<DeliverResult> {
    io.done(`checked ${plan.dataFile}: ${plan.recordCount} records, ${formatBytes(plan.upload.size)}, sha256 ${plan.sha256}`);
    for (const warning of plan.warnings) io.warn(warning);

    const delivery = new Delivery({
      plan,
      sourceId,
      force: options.force === true,
      api,
      records,
      newIdempotencyKey: () => session.newIdempotencyKey(),
      now: ctx.now,
    });
    delivery.on('event', eventPrinter(session));

    if (options.dryRun) {
      const outcome = await delivery.check();
      const existing = 'batch' in outcome ? outcome.batch : undefined;
      io.done();
      return { plan, sourceId, dryRun: true, existing, skipped: false, resumed: false, elapsedMs: ctx.now().getTime() - started };
    }
    const result = await delivery.run();
    return { plan, sourceId, dryRun: false, ...result, elapsedMs: ctx.now().getTime() - started };
  }
}

/** Turns the delivery's events into output; the upload step closes with its size, time and rate. */
function eventPrinter(session: Session): (event: DeliveryEvent) => void {
  const { io, ctx } = session;
  let upload: { started: number; total: number } | undefined;
  return (event) => {
    if (event.type === 'progress') {
      upload ??= { started: ctx.now().getTime(), total: event.total };
      io.progress(event.sent, event.total);
      return;
    }
    if (event.type === 'notice') return io.notice(event.message);
    if (upload && event.state !== 'uploading') {
      const ms = ctx.now().getTime() - upload.started;
      io.done(`uploaded ${formatBytes(upload.total)} in ${formatDuration(ms)}${ms > 0 ? ` (${formatRate(upload.total, ms)})` : ''}`);
      upload = undefined;
    }
    if (event.state === 'done') io.done();
    else io.step(event.detail);
  };
}

export function printDelivery(session: Session, result: DeliverResult): void {
  const { io, ctx } = session;
  const { plan } = result;
  if (result.dryRun) {
    io.result(
      {
        dry_run: true,
        source_id: result.sourceId,
        product: plan.product,
        period: plan.period,
        record_count: plan.recordCount,
        bytes: plan.upload.size,
        sha256: plan.sha256,
        existing_batch: result.existing ?? null,
      },
      () =>
        [
          'Dry run: nothing was created. bds deliver would send:',
          ...details(result),
          result.existing
            ? `Existing:  ${result.existing.id} (${result.existing.status}) for this period`
            : 'Existing:  no batch for this period yet',
        ].join('\n'),
    );
    return;
  }
  const batch = result.batch!;
  io.result(
    {
      batch: { id: batch.id, status: batch.status },
      source_id: result.sourceId,
      product: plan.product,
      period: plan.period,
      record_count: plan.recordCount,
      bytes: plan.upload.size,
      sha256: plan.sha256,
      skipped: result.skipped,
    },
    () =>
      [
        result.skipped
          ? `Already delivered as ${batch.id} (${batch.status}); nothing was sent.`
          : `Delivered ${batch.id} (${batch.status})${result.resumed ? ', resuming an interrupted run' : ''}.`,
        ...details(result),
        `Took:      ${formatDuration(result.elapsedMs)}`,
      ].join('\n'),
  );
  appendStepSummary(session, result, batch, ctx.env.GITHUB_STEP_SUMMARY);
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

/** On GitHub Actions, a short Markdown table for the job's summary page. */
function appendStepSummary(session: Session, result: DeliverResult, batch: BatchRef, file: string | undefined): void {
  if (session.ctx.env.GITHUB_ACTIONS !== 'true' || !file) return;
  const { plan } = result;
  const rows = [
    ['Batch', `\`${batch.id}\``],
    ['Status', `${batch.status}${result.skipped ? ' (already delivered)' : ''}`],
    ['Source', `\`${result.sourceId}\``],
    ['Period', plan.period],
    ['Product', plan.product],
    ['Records', String(plan.recordCount)],
    ['Size', `${formatBytes(plan.upload.size)} (${plan.upload.size} bytes)`],
    ['SHA-256', `\`${plan.sha256}\``],
  ];
  const markdown = [
    '### bds deliver',
    '',
    '| | |',
    '|---|---|',
    ...rows.map(([name, value]) => `| ${name} | ${value} |`),
    '',
  ].join('\n');
  try {
    appendFileSync(file, `${markdown}\n`);
  } catch (error) {
    session.io.warn(`could not write the GitHub step summary to ${file}: ${(error as Error).message}`);
  }
}
