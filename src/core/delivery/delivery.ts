// One delivery of a checked file: re-run check, create, upload, complete. An object with one explicit state,
// typed events and abort. It knows nothing of terminals: what happens leaves as events (events.ts).
// The record is written before the upload and after each step, so that a re-run resumes instead of creating
// a second batch, and the server is asked before anything is created, so that a delivered period is never
// delivered twice by accident.

import { createHash } from 'node:crypto';
import { statSync, type Stats } from 'node:fs';
import {
  ApiError,
  BdsError,
  EXIT_CODES,
  NetworkError,
  UploadTooLargeError,
  UsageError,
  abortError,
  type RequestInfo,
} from '../errors.js';
import type { ApiClient } from '../api/client.js';
import { ERROR_CODES, type BatchListEntry, type BatchRef, type KeyMode } from '../api/types.js';
import type { ColumnEntry } from '../preflight/columns.js';
import type { EventListener, Notice, StepData, StepEvent } from '../events.js';
import type { OptionNames } from '../option-names.js';
import type { DeliveryPlan } from './plan.js';
import type { DeliveryKey, DeliveryRecord, Journal } from './journal.js';
import { openUpload } from '../datapass/data-pass.js';
import { throttled, type RateLimiter } from './rate-limit.js';
import { changeSince } from '../datapass/file-stamp.js';
import { decideRerun, isDelivered, type RerunDecision } from './rerun.js';
import { sameFileError, type SameFile } from './same-file.js';

/** What a Delivery is made of: the month's plan, where it goes, and the run's parts it uses. */
export interface DeliverySetup {
  plan: DeliveryPlan;
  /** The API in canonical form (url-rules.ts): what records and locks are keyed by. */
  api: string;
  /** The base URL as written: what bds 0.1 keyed its records by. */
  baseUrl: string;
  /** The key's mode: a batch this machine made with a key of the other mode does not count for this one. */
  keyMode: KeyMode;
  client: ApiClient;
  sourceId: string;
  force: boolean;
  skipDelivered: boolean;
  journal: Journal;
  newIdempotencyKey: () => string;
  now: () => Date;
  onEvent: EventListener;
  /** Aborts the delivery from outside (Ctrl-C, a library caller); abort() does the same. */
  signal?: AbortSignal | undefined;
  /** Another month whose data file this is (same-file.ts): refused before the create, unless --force. */
  sameFile?: SameFile | undefined;
  /** One of several folders: a refusal's hint names this folder alone. */
  many?: boolean | undefined;
  /** How the caller's door names its options, for the hint of a refusal that force would overrule. */
  names: OptionNames;
  /** The run's upload rate cap, shared with the other months' uploads; none: full speed. */
  limiter?: RateLimiter | undefined;
}

/** What a delivery ended with: the batch delivered, or found delivered. */
export interface DeliveredBatch {
  /** With the service's record count when --skip-delivered counted a batch no record here ties to this file. */
  batch: BatchRef & { record_count?: number };
  /** Already delivered by an earlier run (or, with --skip-delivered, from another file): nothing was sent. */
  skipped: boolean;
  /** An interrupted earlier run's batch was finished. */
  resumed: boolean;
}

/** A delivery record could not be written after the batch was created: the batch exists, a re-run resumes it. */
export class RecordNotSavedError extends BdsError {
  readonly exitCode = EXIT_CODES.network;
}

export class Delivery {
  private readonly setup: DeliverySetup;
  private readonly key: DeliveryKey;
  private readonly controller = new AbortController();
  private deliveryRecord: DeliveryRecord | undefined;
  /** This machine's record of the same file delivered with a key of the other mode: it never counts for this one. */
  private readonly otherModeRecord: DeliveryRecord | undefined;
  private stepBatchId: string | undefined;

  constructor(setup: DeliverySetup) {
    this.setup = setup;
    const { plan } = setup;
    this.key = {
      api: setup.api,
      sourceId: setup.sourceId,
      period: plan.period,
      product: plan.product,
      sha256: plan.sha256,
    };
    if (setup.signal?.aborted) this.abort(abortError(setup.signal));
    const { own, other } = setup.journal.read(this.key, setup.keyMode, (corrupt) =>
      this.notice({ code: 'record_set_aside', ...corrupt }),
    );
    this.deliveryRecord = own ?? this.version1Record();
    this.otherModeRecord = other;
  }

  /** bds 0.1's record of this file: the schema it was delivered with is not known, so this file's stands in. */
  private version1Record(): DeliveryRecord | undefined {
    const { journal, baseUrl, plan } = this.setup;
    const record = journal.readVersion1(this.key, baseUrl);
    return record && { ...record, inputsDigest: plan.inputsDigest, columns: plan.columns };
  }

  /** The batch this run's latest step worked on (uploading, completing, done): a failed month's result names it. */
  get batchId(): string | undefined {
    return this.stepBatchId;
  }

  /** Aborted by abort() or by the signal it was given; in-flight requests stop, the record stays saved. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  abort(reason: BdsError = abortError(this.controller.signal)): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  /**
   * For --dry-run: what run() would do, and the newest batch of this period and product, if any. `refusal`: the
   * error run() would stop with (this file is another month's, or the month was delivered from another file).
   */
  preview(): Promise<{ decision: RerunDecision; existing: BatchListEntry | undefined; refusal: BdsError | undefined }> {
    return this.followingSignal(() => this.previewed());
  }

  private async previewed(): Promise<{
    decision: RerunDecision;
    existing: BatchListEntry | undefined;
    refusal: BdsError | undefined;
  }> {
    const batches = await this.periodBatches();
    const decision = this.decide(this.setup.force ? undefined : batches);
    const refusal =
      decision.kind === 'delivered'
        ? undefined
        : (this.sameFileRefusal() ?? (decision.kind === 'conflict' ? this.conflictError(decision.batch) : undefined));
    return { decision, existing: batches[0], refusal };
  }

  run(): Promise<DeliveredBatch> {
    return this.followingSignal(async () => {
      const outcome = await this.deliver();
      this.step({ step: 'done', batchId: outcome.batch.id, status: outcome.batch.status, skipped: outcome.skipped });
      return outcome;
    });
  }

  /**
   * `work`, stopped by the outer signal as by abort(). Its listener goes when the work ends: a backfill's months
   * share one signal, and listeners left behind would pile up (Node warns past ten).
   */
  private async followingSignal<T>(work: () => Promise<T>): Promise<T> {
    const outer = this.setup.signal;
    const onAbort = (): void => this.abort(abortError(outer!));
    outer?.addEventListener('abort', onAbort, { once: true });
    try {
      return await work();
    } catch (error) {
      throw this.signal.aborted ? (this.signal.reason as Error) : error;
    } finally {
      outer?.removeEventListener('abort', onAbort);
    }
  }

  private async deliver(): Promise<DeliveredBatch> {
    const decision = this.decide(this.setup.force ? undefined : await this.periodBatches());
    if (decision.kind !== 'delivered') {
      const refusal = this.sameFileRefusal();
      if (refusal) throw refusal;
    }
    switch (decision.kind) {
      case 'delivered': {
        const { batch } = decision;
        if (!decision.fromThisFile) {
          const { id, status, record_count } = batch;
          return { batch: { id, status, record_count }, skipped: true, resumed: false };
        }
        this.save({ step: 'completed', status: batch.status });
        return { batch: { id: batch.id, status: batch.status }, skipped: true, resumed: false };
      }
      case 'conflict':
        throw this.conflictError(decision.batch);
      case 'resume':
        this.notice({ code: 'resuming', batchId: decision.deliveryRecord.batchId });
        break;
      case 'new':
        if (decision.abandoned) this.notice({ code: 'inputs_changed', batchId: decision.abandoned.batchId });
        this.deliveryRecord = undefined;
    }

    let step = this.deliveryRecord?.step ?? 'creating';
    if (step === 'creating') {
      await this.create(this.deliveryRecord?.idempotencyKey ?? this.setup.newIdempotencyKey());
      step = 'created';
    }
    if (step === 'created') await this.uploadOrRenew();
    return { batch: await this.complete(), skipped: false, resumed: decision.kind === 'resume' };
  }

  private async periodBatches(): Promise<BatchListEntry[]> {
    const { sourceId, period } = this.key;
    this.notice({ code: 'listing_batches', sourceId, period, product: this.setup.plan.product });
    return (await this.setup.client.listBatches(this.key.sourceId, this.signal)).filter(
      (b) => b.period === this.key.period && b.product === this.key.product,
    );
  }

  private decide(batches: BatchListEntry[] | undefined): RerunDecision {
    // A test key's batch is never billable, so it must not make a live key's run "already delivered" (nor a
    // live batch a test key's): the other mode's batch is left out of the decision.
    const { keyMode } = this.setup;
    const other = this.otherModeRecord;
    const decision = decideRerun({
      batches: other?.batchId === undefined ? batches : batches?.filter((batch) => batch.id !== other.batchId),
      deliveryRecord: this.deliveryRecord,
      inputsDigest: this.setup.plan.inputsDigest,
      skipDelivered: this.setup.skipDelivered,
    });
    const ownDelivered = decision.kind === 'delivered' && decision.fromThisFile;
    if (other?.step === 'completed' && other.batchId !== undefined && other.keyMode !== undefined && !ownDelivered) {
      this.notice({ code: 'other_key_mode', batchId: other.batchId, batchKeyMode: other.keyMode, keyMode });
    }
    if (decision.kind === 'delivered' && !decision.fromThisFile) this.warnSkip(decision.batch);
    return decision;
  }

  private conflictError(batch: BatchListEntry): ApiError {
    return conflictError(batch, this.key, this.setup.many ? this.setup.plan.dir : undefined, this.setup.names);
  }

  /** This data file is another month's: the refusal, or with --force a warning that it goes anyway. */
  private sameFileRefusal(): UsageError | undefined {
    const { sameFile, force, plan, many, names } = this.setup;
    if (!sameFile) return undefined;
    if (!force)
      return sameFileError(
        sameFile,
        {
          dataName: plan.dataName,
          period: plan.period,
          sha256: plan.sha256,
          dir: plan.dir,
          many: many === true,
        },
        names,
      );
    this.notice({
      code: 'same_file',
      otherPeriod: sameFile.period,
      otherDir: sameFile.dir,
      otherBatchId: sameFile.batchId,
    });
    return undefined;
  }

  /** --skip-delivered counts a batch this machine has no record of: what it cannot know is said, every time. */
  private warnSkip(batch: BatchListEntry): void {
    const { plan, keyMode } = this.setup;
    if (batch.record_count !== plan.recordCount) {
      this.notice({
        code: 'record_count_differs',
        batchId: batch.id,
        listed: batch.record_count,
        local: plan.recordCount,
      });
    }
    // The list does not say which key made a batch: a test key's, never billable, looks the same.
    if (keyMode === 'live') {
      this.notice({
        code: 'skipped_on_service_word',
        batchId: batch.id,
        status: batch.status,
        sourceId: this.key.sourceId,
        period: this.key.period,
      });
    }
  }

  private async create(idempotencyKey: string): Promise<void> {
    const { plan, client } = this.setup;
    // Saved before the request, so that a create whose answer is lost is repeated with the same key.
    this.save({ step: 'creating', idempotencyKey, batchId: undefined, upload: undefined, status: undefined });
    this.step({ step: 'creating' });
    const created = await client.createBatch(
      {
        source_id: this.key.sourceId,
        product: plan.product,
        period: plan.period,
        record_count: plan.recordCount,
        schema: plan.schema,
        report: plan.report,
      },
      idempotencyKey,
      this.signal,
    );
    this.save({ step: 'created', batchId: created.batch.id, upload: created.upload, status: created.batch.status });
  }

  /**
   * Uploads to the record's target. A storage host that refuses (403: an expired or bad signature) gets one
   * fresh batch and a fresh URL; a second refusal is final.
   */
  private async uploadOrRenew(): Promise<void> {
    try {
      await this.upload();
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 403)) throw error;
      this.notice({ code: 'upload_url_refused', reason: error.message });
      await this.create(this.setup.newIdempotencyKey());
      await this.upload();
    }
  }

  /** Sends the file, hashing what leaves: bytes other than the checked ones are never confirmed. */
  private async upload(): Promise<void> {
    const { plan, client, limiter } = this.setup;
    const { batchId, upload } = this.requireBatch();
    const total = plan.upload.size;
    this.step({ step: 'uploading', batchId, bytes: total, rateCap: limiter?.bytesPerSecond ?? null });
    this.emitProgress(batchId, 0, total);
    let hash = createHash('sha256');
    try {
      await client.upload(
        upload,
        {
          size: total,
          open: () => {
            this.assertFileUnchanged();
            hash = createHash('sha256');
            const file = openUpload(plan.upload);
            return limiter ? throttled(file, limiter, this.signal) : file;
          },
        },
        (sent, chunk) => {
          hash.update(chunk);
          this.emitProgress(batchId, sent, total);
        },
        this.signal,
      );
    } catch (error) {
      // A file that changed under the upload fails it in many ways (a length mismatch, a stall): say the cause.
      if (!this.signal.aborted) this.assertFileUnchanged();
      if (error instanceof UploadTooLargeError)
        throw error.of({ path: plan.dataName, gzipped: plan.upload.form !== 'as-is' });
      throw error;
    }
    this.assertFileUnchanged();
    if (hash.digest('hex') !== plan.sha256) throw this.changedError('its content');
    this.save({ step: 'uploaded' });
  }

  /**
   * Confirms the upload. What a refusal means:
   *
   * | the answer                 | what the batch list or the error says     | then                                  |
   * |----------------------------|-------------------------------------------|---------------------------------------|
   * | 409                        | the batch is received or later            | confirmed: our first answer was lost  |
   * | 409                        | awaiting_upload, or `upload_missing`      | upload once more, confirm again       |
   * | 422 checksum mismatch      | first time                                | upload once more, confirm again       |
   * | 422 checksum mismatch      | after uploading once more                 | fail, naming both checksums           |
   * | anything else              |                                           | fail                                  |
   */
  private async complete(): Promise<BatchRef> {
    const { batchId } = this.requireBatch();
    let uploadedAgain = false;
    for (;;) {
      this.step({ step: 'completing', batchId, sha256: this.key.sha256 });
      let batch: BatchRef;
      let request: RequestInfo | undefined;
      try {
        ({ batch, request } = await this.setup.client.completeBatch(batchId, this.key.sha256, this.signal));
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        const recovery = await this.recovery(error, batchId, uploadedAgain);
        if (recovery.kind === 'confirmed') {
          batch = recovery.batch;
        } else {
          uploadedAgain = true;
          this.notice({ code: 'uploading_again', batchId, reason: recovery.reason, sha256: this.key.sha256 });
          await this.upload();
          continue;
        }
      }
      if (!isDelivered(batch.status)) {
        throw new NetworkError(
          `the service answered complete for ${batchId} with status ${batch.status}, not received`,
          request,
        );
      }
      this.save({ step: 'completed', status: batch.status });
      return batch;
    }
  }

  /** The row of complete()'s table that a refusal falls in; throws for "fail". */
  private async recovery(
    error: ApiError,
    batchId: string,
    uploadedAgain: boolean,
  ): Promise<{ kind: 'confirmed'; batch: BatchRef } | { kind: 'upload'; reason: 'missing' | 'checksum' }> {
    if (error.status === 409) {
      const listed = (await this.setup.client.listBatches(this.key.sourceId, this.signal)).find(
        (b) => b.id === batchId,
      );
      if (listed && isDelivered(listed.status))
        return { kind: 'confirmed', batch: { id: batchId, status: listed.status } };
      if (!uploadedAgain && (listed?.status === 'awaiting_upload' || error.code === ERROR_CODES.uploadMissing)) {
        return { kind: 'upload', reason: 'missing' };
      }
      throw error;
    }
    if (isChecksumMismatch(error)) {
      if (!uploadedAgain) return { kind: 'upload', reason: 'checksum' };
      throw new ApiError(
        `the service still stores other bytes than ${this.setup.plan.dataName} after a second upload: ` +
          `local sha256 ${this.key.sha256}; the service said: ${error.message}`,
        error.request,
        { hint: 'something between bds and the storage host alters the upload; nothing was confirmed' },
      );
    }
    throw error;
  }

  private assertFileUnchanged(): void {
    const { upload, dataName } = this.setup.plan;
    const change = changeSince(upload.source, statOrUndefined(upload.source.path));
    if (change === 'it disappeared')
      throw new UsageError(`${dataName} disappeared during the delivery; nothing was confirmed`);
    if (change !== undefined) throw this.changedError(change);
  }

  private changedError(what: string): UsageError {
    return new UsageError(`${this.setup.plan.dataName} changed during the delivery (${what}); nothing was confirmed`, {
      hint: 'deliver again once the file is final',
      about: { code: 'file_changed' },
    });
  }

  private requireBatch(): { batchId: string; upload: NonNullable<DeliveryRecord['upload']> } {
    const { batchId, upload } = this.deliveryRecord ?? {};
    if (!batchId || !upload) throw new Error('delivery record without a batch');
    return { batchId, upload };
  }

  private save(changes: Partial<DeliveryRecord>): void {
    const { plan } = this.setup;
    this.deliveryRecord = {
      version: 2,
      ...this.key,
      // URL.toString() adds a slash to a bare origin; kept as users write it.
      baseUrl: this.setup.baseUrl.replace(/\/$/, ''),
      dataFile: plan.dataFile,
      dir: plan.absDir,
      bytes: plan.upload.size,
      recordCount: plan.recordCount,
      inputsDigest: plan.inputsDigest,
      columns: plan.columns satisfies ColumnEntry[],
      // A record's mode is that of the key that created its batch; one of an unknown mode stays unknown.
      ...(this.deliveryRecord ? {} : { keyMode: this.setup.keyMode }),
      idempotencyKey: '',
      step: 'creating',
      ...this.deliveryRecord,
      ...changes,
      updatedAt: this.setup.now().toISOString(),
    };
    // A signed upload URL is a credential until it expires; a completed delivery never uploads again.
    if (this.deliveryRecord.step === 'completed') delete this.deliveryRecord.upload;
    try {
      this.setup.journal.write(this.deliveryRecord);
    } catch (error) {
      const batchId = this.deliveryRecord.batchId;
      if (batchId === undefined || !(error instanceof UsageError)) throw error;
      throw new RecordNotSavedError(
        `${batchId} was created, but ${error.message.replace(/^cannot write/, 'bds could not write')}`,
        {
          hint: 'free the space or fix the folder, then deliver again: it resumes this batch',
          about: { code: 'record_not_saved' },
        },
      );
    }
  }

  private step(event: StepData): void {
    if ('batchId' in event) this.stepBatchId = event.batchId;
    this.setup.onEvent({
      type: 'step',
      period: this.key.period,
      product: this.setup.plan.product,
      ...event,
    } as StepEvent);
  }

  private notice(notice: Notice): void {
    this.setup.onEvent({ type: 'notice', period: this.key.period, product: this.setup.plan.product, ...notice });
  }

  private emitProgress(batchId: string, sent: number, total: number): void {
    this.setup.onEvent({
      type: 'progress',
      period: this.key.period,
      product: this.setup.plan.product,
      batchId,
      sent,
      total,
    });
  }
}

function isChecksumMismatch(error: ApiError): boolean {
  return (
    error.code === ERROR_CODES.checksumMismatch || (error.status === 422 && /checksum|sha-?256/i.test(error.message))
  );
}

/**
 * The month was delivered from another file or by another machine: force delivers this one as well. With
 * several folders (`aloneFolder`: this one's, as named), force would deliver every one again: the hint names
 * the one folder instead.
 */
function conflictError(
  batch: BatchListEntry,
  key: DeliveryKey,
  aloneFolder: string | undefined,
  names: OptionNames,
): ApiError {
  const force = names.name('force');
  return new ApiError(
    `${key.period} ${key.product} of ${key.sourceId} was already delivered as ${batch.id} (${batch.status}), ` +
      'from another file or by another machine',
    undefined,
    {
      hint: aloneFolder
        ? `to deliver this file as well, deliver its folder (${aloneFolder}) alone with ${force}; with several folders, ${force} delivers every one of them again`
        : `to deliver this file as well, deliver again with ${force} (or ${names.name('skipDelivered')} to count it as delivered)`,
      about: { code: 'delivered_elsewhere', alone: aloneFolder },
    },
  );
}

function statOrUndefined(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}
