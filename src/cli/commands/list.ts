// bds list: a source's batches, newest first. Filters other than the source apply in the core, on the client.

import { Option } from 'commander';
import type { ChalkInstance } from 'chalk';
import { BATCH_STATUSES, PRODUCTS, type BatchListEntry, type BatchStatus, type Product } from '../../core/api/types.js';
import { defineCommand } from '../command.js';
import type { CommonFlags } from '../command.js';
import { renderTable } from '../output/table.js';

interface ListFlags extends CommonFlags {
  period?: string;
  product?: Product;
  status?: BatchStatus;
}

export default defineCommand<ListFlags, { batches: BatchListEntry[] }>({
  name: 'list',
  description: "list a source's batches, newest first",
  options: [
    new Option('--source <id>', 'source id (BDS_SOURCE_ID)'),
    new Option('--period <YYYY-MM>', 'only this month'),
    new Option('--product <product>', 'only this product').choices(PRODUCTS),
    new Option('--status <status>', 'only this status').choices(BATCH_STATUSES),
  ],
  async run(op, _io, flags) {
    const { listBatches } = await import('../../core/service.js');
    return listBatches({ period: flags.period, product: flags.product, status: flags.status }, op);
  },
  print(io, { batches }) {
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
  },
});

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
