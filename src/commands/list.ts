// bds list: a source's batches, newest first. Filters other than the source apply here, on the client.

import type { BatchListEntry, BatchStatus } from '../api/types.js';
import { renderTable } from '../output/table.js';
import type { ChalkInstance } from 'chalk';
import type { Session } from './session.js';

export interface ListOptions {
  period?: string;
  product?: string;
  status?: string;
}

export async function listBatches(session: Session, options: ListOptions): Promise<BatchListEntry[]> {
  // --product and --status are checked by their choices in main.ts; the period's form is checked here.
  const [{ requireSource }, { checkPeriodForm }] = await Promise.all([
    import('../settings/settings.js'),
    import('../delivery/preflight.js'),
  ]);
  if (options.period !== undefined) checkPeriodForm(options.period);
  const { api, settings } = await session.connect();
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
