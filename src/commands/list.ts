// bds list: a source's batches, newest first. Filters other than the source apply here, on the client.

import { UsageError } from '../errors.js';
import { BATCH_STATUSES, PRODUCTS, type BatchListEntry, type BatchStatus } from '../api/types.js';
import { renderTable } from '../output/table.js';
import type { ChalkInstance } from 'chalk';
import type { Session } from './session.js';

export interface ListOptions {
  period?: string;
  product?: string;
  status?: string;
}

export async function listBatches(session: Session, options: ListOptions): Promise<BatchListEntry[]> {
  if (options.period !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(options.period)) {
    throw new UsageError(`--period ${options.period} is not of the form YYYY-MM`);
  }
  if (options.product !== undefined && !(PRODUCTS as readonly string[]).includes(options.product)) {
    throw new UsageError(`--product ${options.product} is not one of ${PRODUCTS.join(', ')}`);
  }
  if (options.status !== undefined && !(BATCH_STATUSES as readonly string[]).includes(options.status)) {
    throw new UsageError(`--status ${options.status} is not one of ${BATCH_STATUSES.join(', ')}`);
  }
  const { api, settings } = await session.connect();
  const { requireSource } = await import('../settings/settings.js');
  const batches = await api.listBatches(requireSource(settings));
  return batches
    .filter(
      (b) =>
        (options.period === undefined || b.period === options.period) &&
        (options.product === undefined || b.product === options.product) &&
        (options.status === undefined || b.status === options.status),
    );
}

export function printBatches(session: Session, batches: BatchListEntry[]): void {
  const { io } = session;
  io.result({ batches }, () => {
    if (batches.length === 0) {
      if (io.stdoutIsTerminal) io.notice('no batches');
      return '';
    }
    const rows = batches.map((b) => [
      b.id,
      b.period,
      b.product,
      String(b.record_count),
      colourStatus(io.out, b.status),
      b.created_at ?? '',
    ]);
    return renderTable(['ID', 'PERIOD', 'PRODUCT', 'RECORDS', 'STATUS', 'CREATED'], rows, io.stdoutIsTerminal);
  });
}

const STATUS_COLOURS: Record<BatchStatus, keyof Pick<ChalkInstance, 'green' | 'yellow' | 'red' | 'cyan' | 'blue'>> = {
  awaiting_upload: 'yellow',
  received: 'cyan',
  in_review: 'blue',
  accepted: 'green',
  rejected: 'red',
};

function colourStatus(chalk: ChalkInstance, status: BatchStatus): string {
  const colour = STATUS_COLOURS[status];
  return colour ? chalk[colour](status) : status;
}
