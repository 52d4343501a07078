// The re-run decision (src/core/delivery/rerun.ts), a pure function: what the service lists for the period and
// what this machine's record says, in; deliver, resume, already delivered or stop, out.
import { describe, expect, it } from 'vitest';
import type { BatchListEntry, BatchStatus } from '../src/core/api/types.js';
import type { DeliveryRecord, RecordStep } from '../src/core/delivery/journal.js';
import { decideRerun, type RerunFacts } from '../src/core/delivery/rerun.js';

const DIGEST = 'digest-of-report-and-schema';

function batch(id: string, status: BatchStatus): BatchListEntry {
  return { id, period: '2024-05', product: 'records', record_count: 3, status, created_at: '2024-06-01T03:00:00Z' };
}

function record(step: RecordStep, batchId?: string, inputsDigest = DIGEST): DeliveryRecord {
  return {
    version: 2,
    api: 'http://loopback:8787',
    sourceId: 'src_1',
    period: '2024-05',
    product: 'records',
    sha256: 'a'.repeat(64),
    step,
    idempotencyKey: 'idem-1',
    inputsDigest,
    dataFile: 'records.jsonl.gz',
    bytes: 10,
    recordCount: 3,
    columns: [],
    ...(batchId === undefined ? {} : { batchId }),
    keyMode: 'live',
    updatedAt: '2024-06-01T03:00:00Z',
  };
}

function decide(facts: Partial<RerunFacts>) {
  return decideRerun({ batches: [], deliveryRecord: undefined, inputsDigest: DIGEST, skipDelivered: false, ...facts });
}

describe('decideRerun', () => {
  it('nothing listed, no deliveryRecord: deliver', () => {
    expect(decide({})).toEqual({ kind: 'new', abandoned: undefined });
  });

  it('our own batch delivered: already delivered from this file, whatever else is listed', () => {
    const ours = batch('bat_ours', 'in_review');
    expect(
      decide({ batches: [batch('bat_other', 'received'), ours], deliveryRecord: record('completed', 'bat_ours') }),
    ).toEqual({
      kind: 'delivered',
      batch: ours,
      fromThisFile: true,
    });
  });

  it('another delivered batch: stop, or with --skip-delivered count it as delivered; a rejected one does not count', () => {
    const other = batch('bat_other', 'accepted');
    expect(decide({ batches: [other] })).toEqual({ kind: 'conflict', batch: other });
    expect(decide({ batches: [other], skipDelivered: true })).toEqual({
      kind: 'delivered',
      batch: other,
      fromThisFile: false,
    });
    expect(decide({ batches: [batch('bat_no', 'rejected')], skipDelivered: true })).toEqual({
      kind: 'new',
      abandoned: undefined,
    });
  });

  it('an interrupted delivery whose batch awaits its upload: resume it', () => {
    const interrupted = record('created', 'bat_ours');
    expect(decide({ batches: [batch('bat_ours', 'awaiting_upload')], deliveryRecord: interrupted })).toEqual({
      kind: 'resume',
      deliveryRecord: interrupted,
    });
  });

  it('a create whose answer was lost (no batch id) with an awaiting_upload batch listed: resume, repeating the create', () => {
    const lost = record('creating');
    expect(decide({ batches: [batch('bat_maybe', 'awaiting_upload')], deliveryRecord: lost })).toEqual({
      kind: 'resume',
      deliveryRecord: lost,
    });
  });

  it('a create that made nothing (refused, say with 401) and nothing awaiting upload: deliver, not resume', () => {
    expect(decide({ batches: [], deliveryRecord: record('creating') })).toEqual({ kind: 'new', abandoned: undefined });
    expect(decide({ batches: [batch('bat_old', 'rejected')], deliveryRecord: record('creating') })).toEqual({
      kind: 'new',
      abandoned: undefined,
    });
  });

  it('the report or schema changed: deliver a fresh batch, abandoning the half-way one; nothing abandoned when nothing was made', () => {
    const changed = record('created', 'bat_ours', 'another digest');
    expect(decide({ batches: [batch('bat_ours', 'awaiting_upload')], deliveryRecord: changed })).toEqual({
      kind: 'new',
      abandoned: changed,
    });
    const lost = record('creating', undefined, 'another digest');
    expect(decide({ batches: [batch('bat_maybe', 'awaiting_upload')], deliveryRecord: lost })).toEqual({
      kind: 'new',
      abandoned: lost,
    });
    expect(decide({ batches: [], deliveryRecord: lost })).toEqual({ kind: 'new', abandoned: undefined });
  });

  it('--force (nothing listed, the record alone): resume what can be resumed, else deliver', () => {
    const interrupted = record('created', 'bat_ours');
    expect(decide({ batches: undefined, deliveryRecord: interrupted })).toEqual({
      kind: 'resume',
      deliveryRecord: interrupted,
    });
    expect(decide({ batches: undefined, deliveryRecord: record('completed', 'bat_ours') })).toEqual({
      kind: 'new',
      abandoned: undefined,
    });
  });
});
