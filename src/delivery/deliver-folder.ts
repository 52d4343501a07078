// A whole `bds deliver`, start to end and in the order that keeps it safe: the quick folder checks, the lock
// (before the long read, so that a second bds stops at once), the one pass over the data file, then the
// delivery or, for --dry-run, what it would do. Temp files and the lock are released whatever happens.

import { promises as fs } from 'node:fs';
import type { ApiClient } from '../api/client.js';
import type { BatchListEntry } from '../api/types.js';
import { Delivery, type CheckOutcome, type DeliveryEvent, type DeliveryResult } from './delivery.js';
import { checkFolder, type DeliveryPlan, type PreflightOptions } from './preflight.js';
import type { LockOwner, RecordStore } from './record.js';
import { scanDataFile } from './scan.js';

export interface DeliverFolderOptions {
  folder: PreflightOptions;
  sourceId: string;
  force: boolean;
  dryRun: boolean;
  api: ApiClient;
  records: RecordStore;
  /** Where a gzipped copy of a plain .jsonl goes. */
  tmpDir: string;
  signal: AbortSignal;
  lockOwner: LockOwner;
  isProcessAlive: (pid: number) => boolean;
  newIdempotencyKey: () => string;
  now: () => Date;
  onEvent: (event: DeliveryEvent) => void;
}

export type FolderDelivery =
  | { dryRun: true; plan: DeliveryPlan; outcome: CheckOutcome; existing: BatchListEntry | undefined }
  | ({ dryRun: false; plan: DeliveryPlan } & DeliveryResult);

export async function deliverFolder(options: DeliverFolderOptions): Promise<FolderDelivery> {
  const { api, records, sourceId, onEvent } = options;
  onEvent({ type: 'state', state: 'preflight', detail: `checking ${options.folder.dir}` });
  const folder = await checkFolder(options.folder);
  const unlock = options.dryRun
    ? undefined
    : records.lock(
        { baseUrl: api.baseUrl.toString(), sourceId, period: folder.period, product: folder.product },
        options.lockOwner,
        options.isProcessAlive,
      );
  try {
    const plan: DeliveryPlan = { ...folder, ...(await scanDataFile(folder.dataFile, options.tmpDir, options.signal)) };
    try {
      onEvent({ type: 'checked', plan });
      const delivery = new Delivery({
        plan,
        sourceId,
        force: options.force,
        api,
        records,
        newIdempotencyKey: options.newIdempotencyKey,
        now: options.now,
      });
      delivery.on('event', onEvent);
      if (options.dryRun) return { dryRun: true, plan, ...(await delivery.preview()) };
      return { dryRun: false, plan, ...(await delivery.run()) };
    } finally {
      if (plan.upload.temporary) await fs.rm(plan.upload.path, { force: true });
    }
  } finally {
    unlock?.();
  }
}
