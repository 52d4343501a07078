// One delivery: re-run check, create, upload, complete. An object with an explicit state, progress events
// and abort (through the signal it is given). It knows nothing of terminals: what happens leaves as events.
// The record is written before the upload and after each step, so that a re-run resumes instead of
// creating a second batch, and the server is asked before anything is created, so that a delivered period
// is never delivered twice by accident.

import { EventEmitter } from 'node:events';
import { createReadStream, statSync } from 'node:fs';
import { ApiError, NetworkError, UsageError } from '../errors.js';
import type { ApiClient } from '../api/client.js';
import { ERROR_CODES, type BatchListEntry, type BatchRef, type BatchStatus } from '../api/types.js';
import type { DeliveryPlan } from './preflight.js';
import type { DeliveryKey, DeliveryRecord, DeliveryStep, RecordStore } from './record.js';

export type DeliveryState = 'ready' | 'preflight' | 'checking' | 'creating' | 'uploading' | 'completing' | 'done' | 'failed';

/** Statuses that mean the file reached the service: a re-run must not deliver it again. */
export const DELIVERED_STATUSES: readonly BatchStatus[] = ['received', 'in_review', 'accepted'];

export type DeliveryEvent =
  | { type: 'state'; state: DeliveryState; detail: string }
  /** The pre-flight passed: what will be delivered. */
  | { type: 'checked'; plan: DeliveryPlan }
  | { type: 'progress'; sent: number; total: number }
  /** The storage host accepted the whole file. */
  | { type: 'uploaded'; bytes: number; ms: number }
  | { type: 'notice'; message: string };

export interface DeliveryOptions {
  plan: DeliveryPlan;
  sourceId: string;
  force: boolean;
  api: ApiClient;
  records: RecordStore;
  newIdempotencyKey: () => string;
  now: () => Date;
}

/** What the re-run check found on the server and in this machine's record. */
export type CheckOutcome =
  | { kind: 'new' }
  | { kind: 'delivered'; batch: BatchListEntry }
  | { kind: 'resume'; record: DeliveryRecord; batch: BatchListEntry | undefined }
  | { kind: 'conflict'; batch: BatchListEntry };

export interface DeliveryResult {
  batch: BatchRef;
  /** Already delivered by an earlier run: nothing was sent. */
  skipped: boolean;
  /** An interrupted earlier run's batch was finished. */
  resumed: boolean;
}

export class Delivery extends EventEmitter {
  state: DeliveryState = 'ready';
  private readonly options: DeliveryOptions;
  private readonly key: DeliveryKey;
  private record: DeliveryRecord | undefined;

  constructor(options: DeliveryOptions) {
    super();
    this.options = options;
    const { plan } = options;
    this.key = {
      baseUrl: options.api.baseUrl.toString(),
      sourceId: options.sourceId,
      period: plan.period,
      product: plan.product,
      sha256: plan.sha256,
    };
    this.record = options.records.read(this.key);
  }

  /** The re-run check (GET /batches), or with --force only what this machine's record says. */
  async check(): Promise<CheckOutcome> {
    return this.decide(this.options.force ? undefined : await this.periodBatches());
  }

  /** For --dry-run: what run() would do, and the newest batch of this period and product, if any. */
  async preview(): Promise<{ outcome: CheckOutcome; existing: BatchListEntry | undefined }> {
    const batches = await this.periodBatches();
    return { outcome: this.decide(this.options.force ? undefined : batches), existing: batches[0] };
  }

  private async periodBatches(): Promise<BatchListEntry[]> {
    this.setState('checking', `checking ${this.key.sourceId} for an earlier ${this.key.product} batch of ${this.key.period}`);
    return (await this.options.api.listBatches(this.key.sourceId)).filter(
      (b) => b.period === this.key.period && b.product === this.key.product,
    );
  }

  /** `batches`: this period's, newest first; undefined with --force, when only the record counts. */
  private decide(batches: BatchListEntry[] | undefined): CheckOutcome {
    const record = this.record;
    const unfinished = record && record.step !== 'completed' ? record : undefined;
    if (batches === undefined) return unfinished ? { kind: 'resume', record: unfinished, batch: undefined } : { kind: 'new' };

    const delivered = batches.filter((b) => DELIVERED_STATUSES.includes(b.status));
    const ours = record?.batchId === undefined ? undefined : batches.find((b) => b.id === record.batchId);
    if (ours && DELIVERED_STATUSES.includes(ours.status)) return { kind: 'delivered', batch: ours };
    if (delivered[0]) return { kind: 'conflict', batch: delivered[0] };
    if (unfinished && (unfinished.batchId === undefined || ours?.status === 'awaiting_upload')) {
      return { kind: 'resume', record: unfinished, batch: ours };
    }
    return { kind: 'new' };
  }

  async run(): Promise<DeliveryResult> {
    try {
      const result = await this.deliver();
      this.setState('done', `${result.batch.id} is ${result.batch.status}`);
      return result;
    } catch (error) {
      this.state = 'failed';
      throw error;
    }
  }

  private async deliver(): Promise<DeliveryResult> {
    const outcome = await this.check();
    if (outcome.kind === 'delivered') {
      this.save({ step: 'completed', status: outcome.batch.status });
      return { batch: { id: outcome.batch.id, status: outcome.batch.status }, skipped: true, resumed: false };
    }
    if (outcome.kind === 'conflict') throw conflictError(outcome.batch, this.key);

    let resumed = false;
    if (outcome.kind === 'resume') {
      resumed = true;
      this.emitEvent({
        type: 'notice',
        message: outcome.record.batchId
          ? `resuming the interrupted delivery of ${outcome.record.batchId}`
          : 'resuming an interrupted delivery (its create is repeated with the same idempotency key)',
      });
    } else {
      this.record = undefined;
    }

    let step: DeliveryStep = this.record?.step ?? 'creating';
    if (step === 'creating') {
      await this.create(this.record?.idempotencyKey ?? this.options.newIdempotencyKey());
      step = 'created';
    }
    if (step === 'created') await this.uploadOrRenew();
    const batch = await this.complete();
    return { batch, skipped: false, resumed };
  }

  private async create(idempotencyKey: string): Promise<void> {
    const { plan, api } = this.options;
    // Saved before the request, so that a create whose answer is lost is repeated with the same key.
    this.save({ step: 'creating', idempotencyKey, batchId: undefined, upload: undefined, status: undefined });
    this.setState('creating', `creating the ${plan.product} batch for ${plan.period}`);
    const created = await api.createBatch(
      {
        source_id: this.key.sourceId,
        product: plan.product,
        period: plan.period,
        record_count: plan.recordCount,
        schema: plan.schema,
        report: plan.report,
      },
      idempotencyKey,
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
      this.emitEvent({
        type: 'notice',
        message: `the storage host refused the upload URL (${error.message}); creating a fresh batch once`,
      });
      await this.create(this.options.newIdempotencyKey());
      await this.upload();
    }
  }

  private async upload(): Promise<void> {
    const { plan, api } = this.options;
    const record = this.requireRecord();
    const total = plan.upload.size;
    this.setState('uploading', `uploading ${plan.upload.size} bytes to ${record.batchId}`);
    const started = this.options.now().getTime();
    this.emitEvent({ type: 'progress', sent: 0, total });
    await api.upload(
      record.upload!,
      {
        size: total,
        open: () => {
          this.assertFileUnchanged();
          return createReadStream(plan.upload.path, { highWaterMark: 1 << 20 });
        },
      },
      (sent) => this.emitEvent({ type: 'progress', sent, total }),
    );
    this.assertFileUnchanged();
    this.save({ step: 'uploaded' });
    this.emitEvent({ type: 'uploaded', bytes: total, ms: this.options.now().getTime() - started });
  }

  private async complete(): Promise<BatchRef> {
    const record = this.requireRecord();
    const id = record.batchId!;
    let uploadedAgain = false;
    for (;;) {
      this.setState('completing', `confirming ${id} with sha256 ${this.key.sha256}`);
      let batch: BatchRef;
      try {
        batch = await this.options.api.completeBatch(id, this.key.sha256);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        if (error.status === 409) {
          // Already completed (our own earlier answer was lost) or not uploaded: the list says which.
          const listed = (await this.options.api.listBatches(this.key.sourceId)).find((b) => b.id === id);
          if (listed && DELIVERED_STATUSES.includes(listed.status)) {
            batch = { id, status: listed.status };
          } else if (!uploadedAgain && (listed?.status === 'awaiting_upload' || error.code === ERROR_CODES.uploadMissing)) {
            uploadedAgain = true;
            this.emitEvent({ type: 'notice', message: `the service has no upload for ${id}; uploading again` });
            await this.upload();
            continue;
          } else {
            throw error;
          }
        } else if (isChecksumMismatch(error)) {
          if (uploadedAgain) {
            throw new ApiError(
              `the service still stores other bytes than ${this.options.plan.dataFile} after a second upload: ` +
                `local sha256 ${this.key.sha256}; the service said: ${error.message}`,
              error.request,
              { hint: 'something between bds and the storage host alters the upload; nothing was confirmed' },
            );
          }
          uploadedAgain = true;
          this.emitEvent({ type: 'notice', message: `the stored file does not match sha256 ${this.key.sha256}; uploading again` });
          await this.upload();
          continue;
        } else {
          throw error;
        }
      }
      if (!DELIVERED_STATUSES.includes(batch.status)) {
        throw new NetworkError(`the service answered complete for ${id} with status ${batch.status}, not received`);
      }
      this.save({ step: 'completed', status: batch.status });
      return batch;
    }
  }

  private assertFileUnchanged(): void {
    const { upload, dataFile } = this.options.plan;
    let now: { size: number; mtimeMs: number };
    try {
      now = statSync(upload.path);
    } catch {
      throw new UsageError(`${dataFile} disappeared during the delivery; nothing was confirmed`);
    }
    if (now.size !== upload.size || now.mtimeMs !== upload.mtimeMs) {
      throw new UsageError(`${dataFile} changed during the delivery (its size or modification time); nothing was confirmed`, {
        hint: 'run bds deliver again once the file is final',
      });
    }
  }

  private requireRecord(): DeliveryRecord {
    if (!this.record?.batchId || !this.record.upload) throw new Error('delivery record without a batch');
    return this.record;
  }

  private save(changes: Partial<DeliveryRecord>): void {
    const { plan } = this.options;
    this.record = {
      version: 1,
      ...this.key,
      dataFile: plan.dataFile,
      bytes: plan.upload.size,
      recordCount: plan.recordCount,
      idempotencyKey: '',
      step: 'creating',
      ...this.record,
      ...changes,
      updatedAt: this.options.now().toISOString(),
    };
    this.options.records.write(this.record);
  }

  private setState(state: DeliveryState, detail: string): void {
    this.state = state;
    this.emitEvent({ type: 'state', state, detail });
  }

  private emitEvent(event: DeliveryEvent): void {
    this.emit('event', event);
  }
}

function isChecksumMismatch(error: ApiError): boolean {
  return error.code === ERROR_CODES.checksumMismatch || (error.status === 422 && /checksum|sha-?256/i.test(error.message));
}

function conflictError(batch: BatchListEntry, key: DeliveryKey): ApiError {
  return new ApiError(
    `${key.period} ${key.product} of ${key.sourceId} was already delivered as ${batch.id} (${batch.status}), ` +
      'from another file or by another machine',
    undefined,
    { hint: 'to deliver this file as well, run again with --force' },
  );
}
