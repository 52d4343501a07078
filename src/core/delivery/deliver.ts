// One month's delivery, in the order that keeps it safe: the quick folder checks (what was typed on the line: a
// folder that is not there is said before a setting that is missing), source and key, the lock (before the long
// read, so that a second bds stops at once), the one pass over the data file, the schema compared with the last
// delivery's, then the delivery or, for a dry run, what it would do. Temp files and the lock are released
// whatever happens. The run of one folder or several around it is deliver-run.ts's.

import type { BatchListEntry, BatchStatus, Product } from '../api/types.js';
import { UsageError, type BdsError } from '../errors.js';
import type { OptionNames } from '../option-names.js';
import type { ApiAccess, Operation } from '../operation.js';
import { withDeferred } from '../deferred.js';
import { requireHomeFor, stateDir } from '../settings/dirs.js';
import { uploadRate } from '../settings/rate.js';
import { requireSource } from '../settings/settings.js';
import { Delivery } from './delivery.js';
import { preflightFolder, type FolderOptions, type MonthFolder } from '../preflight/folder.js';
import { takeLock } from './lock.js';
import { compareSchema, planFolder, type DeliveryPlan, type SchemaBaseline, type SchemaChanges } from './plan.js';
import { RateLimiter } from './rate-limit.js';
import { Journal } from './journal.js';
import { removeCopy } from '../datapass/data-pass.js';
import type { RerunDecision } from './rerun.js';
import { reviewOf, type ReviewChoices, type StatusResult } from '../status/status.js';
import { recordedDir, type SameFile } from './same-file.js';
import { failureData, type FailureData } from '../failure.js';

export interface DeliverOptions extends FolderOptions, ReviewChoices {
  /** Default BDS_SOURCE_ID or the config file's sourceId. */
  sourceId?: string | undefined;
  force?: boolean | undefined;
  dryRun?: boolean | undefined;
  /** Count a delivered batch of the period as delivered whatever file it came from (CI runners). */
  skipDelivered?: boolean | undefined;
}

/** What a delivery sends, as both results show it. */
export interface DeliverySummary {
  source_id: string;
  product: Product;
  period: string;
  record_count: number;
  bytes: number;
  sha256: string;
  /** How the columns differ from the newest earlier delivery of the product recorded here; null if not. */
  schema_changes: SchemaChanges | null;
}

/** What was delivered: the object `bds deliver --json` prints (docs/schemas/deliver.schema.json). */
export interface DeliverResult extends DeliverySummary {
  /**
   * `record_count` only when --skip-delivered counted a batch that no record here ties to this file: the service's
   * count of the batch, whose bytes and checksum are not known here (the result's own are this file's).
   */
  batch: { id: string; status: BatchStatus; record_count?: number };
  skipped: boolean;
  /** An interrupted earlier run's batch was finished. */
  resumed: boolean;
  /** With `wait`: the month's review, as `bds status --json` prints it; null when the signal stopped the wait. */
  review?: StatusResult | null;
}

/** What a delivery would do: the object `bds deliver --dry-run --json` prints. */
export interface DryRunResult extends DeliverySummary {
  dry_run: true;
  existing_batch: BatchListEntry | null;
  /**
   * What a real run would do: deliver, resume, skip (already delivered) or stop (delivered from another file, or
   * this file is another month's), with the batch that decides it and, to stop, the error it would stop with.
   */
  would: {
    action: 'deliver' | 'resume' | 'skip' | 'stop';
    batch_id: string | null;
    status: BatchStatus | null;
    error: FailureData | null;
  };
}

/** Several folders: what one month's delivery knows of the others in its run. */
export interface MonthInRun {
  /** The month before this one in the run, to compare the schema with. */
  earlier: SchemaBaseline | undefined;
  /** Tells the run this month's checksum; resolves to an earlier month of the run with the same data file, if any. */
  sameFileBefore: (sha256: string) => Promise<SameFile | undefined>;
}

/** Where a delivery goes: the source and the checked API access. Nothing has been sent. */
export interface DeliveryTarget {
  sourceId: string;
  access: ApiAccess;
  /** The upload rate cap, one for the whole run: every month's upload shares it. */
  limiter: RateLimiter | undefined;
}

/** What a delivery may do once its folder is checked. */
export type DeliveryChoices = Pick<DeliverOptions, 'force' | 'dryRun' | 'skipDelivered'>;

/** What a month that failed got as far as: what its pass found, the batch it created. */
export interface FailedDelivery {
  source_id: string;
  product: Product;
  period: string;
  record_count: number | null;
  bytes: number | null;
  sha256: string | null;
  batch: { id: string; status: BatchStatus | null } | null;
  skipped: false;
  resumed: false;
  schema_changes: null;
}

/**
 * One month's delivery as data: delivered, a dry run, or failed with what it had learned and what was thrown.
 * `passBegun`: the lock was taken and the pass over the data file began (see deliver-run.ts's DeliverRun).
 */
export type MonthDelivery =
  { result: DeliverResult | DryRunResult } | { result: FailedDelivery; thrown: unknown; passBegun: boolean };

/**
 * The review of months delivered; null when the signal stops the wait. The delivery stands whatever the wait
 * does: its result is returned, and the caller (whose signal it is) reports the interruption.
 */
export async function reviewUnlessStopped(
  ...[months, sourceId, choices, op]: Parameters<typeof reviewOf>
): Promise<StatusResult | null> {
  try {
    return await reviewOf(months, sourceId, choices, op);
  } catch (error) {
    if (op.signal.aborted) return null;
    throw error;
  }
}

/** force delivers a delivered month again; skipDelivered counts it as delivered: never both. */
export function validateChoices({ force, skipDelivered }: DeliveryChoices, names: OptionNames): void {
  if (force && skipDelivered) {
    const [forced, skipping] = [names.name('force'), names.name('skipDelivered')];
    throw new UsageError(`${forced} and ${skipping} cannot be given together`, {
      hint: `${forced} delivers a month although it is delivered; ${skipping} counts it as delivered: choose one`,
      about: { code: 'options_conflict', option: 'force', with: ['skipDelivered'] },
    });
  }
}

/**
 * Source, key and rate cap, checked once however many folders follow (after their quick checks); the rate cap
 * is told with where it came from.
 */
export async function deliveryTarget(op: Operation): Promise<DeliveryTarget> {
  const settings = await op.settings();
  const sourceId = requireSource(settings);
  const access = await op.apiAccess();
  const rate = uploadRate(settings);
  if (access.key.mode === 'test') op.onEvent({ type: 'notice', code: 'test_key' });
  if (rate) op.onEvent({ type: 'notice', code: 'upload_rate', ...rate });
  const { runtime } = op;
  const limiter =
    rate?.bytesPerSecond != null
      ? new RateLimiter(rate.bytesPerSecond, { now: () => runtime.now().getTime(), sleep: runtime.sleep })
      : undefined;
  return { sourceId, access, limiter };
}

/** The quick checks of a folder (period, layout, report, schema, product); its warnings are told. */
export async function preflightDeliveryFolder(options: FolderOptions, op: Operation): Promise<MonthFolder> {
  const { runtime } = op;
  const folder = await preflightFolder({
    ...options,
    cwd: runtime.cwd,
    platform: runtime.platform,
    now: runtime.now(),
    periodRequired: true,
    names: op.names,
  });
  for (const message of folder.warnings) {
    op.onEvent({ type: 'notice', code: 'warning', period: folder.period, product: folder.product, message });
  }
  return folder;
}

/** What a month's delivery has learned as it goes, for the result of one that fails half-way. */
interface Learned {
  passBegun: boolean;
  plan?: DeliveryPlan | undefined;
  delivery?: Delivery | undefined;
}

/**
 * A checked folder's delivery: the lock, the one pass over its data file, the schema compared with the last
 * delivery's, then the delivery itself (or, for a dry run, what it would do). Its failure is its outcome.
 */
export async function runDelivery(
  folder: MonthFolder,
  target: DeliveryTarget,
  options: DeliveryChoices,
  op: Operation,
  run?: MonthInRun,
): Promise<MonthDelivery> {
  const learned: Learned = { passBegun: false };
  try {
    return { result: await lockPlanDeliver(folder, target, options, op, run, learned) };
  } catch (thrown) {
    return { result: failedDelivery(folder, target.sourceId, learned), thrown, passBegun: learned.passBegun };
  }
}

/** Lock, plan, deliver; each released (the client closed, the gzipped copy removed, the lock) whatever happens. */
function lockPlanDeliver(
  folder: MonthFolder,
  target: DeliveryTarget,
  options: DeliveryChoices,
  op: Operation,
  run: MonthInRun | undefined,
  learned: Learned,
): Promise<DeliverResult | DryRunResult> {
  const { runtime } = op;
  const state = stateDir(runtime);
  const journal = new Journal(state, runtime.platform);
  return withDeferred(async (defer) => {
    // Its delivery records and lock need the state folder; a dry run writes nothing.
    if (!options.dryRun) {
      requireHomeFor(state, runtime);
      defer(lockMonth(folder, target, journal, runtime));
    }
    learned.passBegun = true;
    const plan = await planFolder(folder, op, { copy: true });
    defer(() => removeCopy(plan.upload, runtime.platform));
    learned.plan = plan;
    const { schemaChanges, sameFile } = await comparePlan(plan, target, journal, op, run);
    const client = await op.client({ period: plan.period, product: plan.product });
    defer(() => client.close());
    const delivery = new Delivery({
      plan,
      api: target.access.api,
      baseUrl: target.access.baseUrl.toString(),
      keyMode: target.access.key.mode,
      client,
      sourceId: target.sourceId,
      force: options.force === true,
      skipDelivered: options.skipDelivered === true,
      journal,
      newIdempotencyKey: () => op.newIdempotencyKey(),
      names: op.names,
      now: runtime.now,
      onEvent: op.onEvent,
      signal: op.signal,
      sameFile,
      many: run !== undefined,
      limiter: target.limiter,
    });
    learned.delivery = delivery;
    const summary: DeliverySummary = {
      source_id: target.sourceId,
      product: plan.product,
      period: plan.period,
      record_count: plan.recordCount,
      bytes: plan.upload.size,
      sha256: plan.sha256,
      schema_changes: schemaChanges,
    };
    if (options.dryRun) {
      const { decision, existing, refusal } = await delivery.preview();
      return {
        dry_run: true,
        ...summary,
        existing_batch: existing ?? null,
        would: wouldDo(decision, refusal, sameFile),
      };
    }
    const delivered = await delivery.run();
    return { batch: delivered.batch, ...summary, skipped: delivered.skipped, resumed: delivered.resumed };
  });
}

/** The month's lock, taken in the state folder; returns its release. */
function lockMonth(
  { period, product }: MonthFolder,
  { sourceId, access }: DeliveryTarget,
  journal: Journal,
  runtime: Operation['runtime'],
): () => void {
  return journal.inStateFolder(() =>
    takeLock({
      file: journal.lockFile({ api: access.api, sourceId, period, product }),
      subject: `${sourceId} ${period} ${product}`,
      owner: { pid: runtime.pid, hostname: runtime.hostname, startedAt: runtime.now().toISOString() },
      platform: runtime.platform,
      isProcessAlive: runtime.isProcessAlive,
      processStartedAt: runtime.processStartedAt,
    }),
  );
}

/**
 * The plan against what came before: the report's warnings told, the schema compared with the last delivery's,
 * and the other month whose data file this is, if any (of the run, or recorded here).
 */
async function comparePlan(
  plan: DeliveryPlan,
  { sourceId, access }: DeliveryTarget,
  journal: Journal,
  op: Operation,
  run: MonthInRun | undefined,
): Promise<{ schemaChanges: SchemaChanges | null; sameFile: SameFile | undefined }> {
  const { period, product, sha256 } = plan;
  for (const message of plan.reportWarnings) op.onEvent({ type: 'notice', code: 'warning', period, product, message });
  const schemaChanges = compareSchema(journal, plan, sourceId, op, run?.earlier);
  const recorded = (): SameFile | undefined => {
    const record = journal.deliveredAsOtherPeriod({ api: access.api, sourceId, period, product, sha256 });
    return record && { period: record.period, dir: recordedDir(record), batchId: record.batchId, inRun: false };
  };
  return { schemaChanges, sameFile: (await run?.sameFileBefore(sha256)) ?? recorded() };
}

/** A failed month's result: its folder's month, and what its pass found and the batch it worked on, if it got so far. */
export function failedDelivery(
  folder: MonthFolder,
  sourceId: string,
  { plan, delivery }: Pick<Learned, 'plan' | 'delivery'>,
): FailedDelivery {
  const batchId = delivery?.batchId;
  return {
    batch: batchId === undefined ? null : { id: batchId, status: null },
    source_id: sourceId,
    product: folder.product,
    period: folder.period,
    record_count: plan?.recordCount ?? null,
    bytes: plan?.upload.size ?? null,
    sha256: plan?.sha256 ?? null,
    skipped: false,
    resumed: false,
    schema_changes: null,
  };
}

/** `refusal`: what a real run would stop with (preview's); `sameFile`: the other month whose data file this is. */
function wouldDo(
  decision: RerunDecision,
  refusal: BdsError | undefined,
  sameFile: SameFile | undefined,
): DryRunResult['would'] {
  const error = refusal ? failureData(refusal) : null;
  switch (decision.kind) {
    case 'delivered':
      return { action: 'skip', batch_id: decision.batch.id, status: decision.batch.status, error: null };
    case 'conflict':
      return { action: 'stop', batch_id: decision.batch.id, status: decision.batch.status, error };
    default:
      // This file is another month's: that month's batch, when a delivery recorded here made it.
      if (refusal) return { action: 'stop', batch_id: sameFile?.batchId ?? null, status: null, error };
      if (decision.kind === 'new') return { action: 'deliver', batch_id: null, status: null, error: null };
      return {
        action: 'resume',
        batch_id: decision.deliveryRecord.batchId ?? null,
        status: decision.deliveryRecord.status ?? null,
        error: null,
      };
  }
}
