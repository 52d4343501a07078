// bds deliver: the run of one folder or several (core/delivery/deliver-run.ts) shown as it happens
// (output/delivery-view.ts), then its result (output/deliver-result.ts): one folder's summary, or a table with
// one row per month.

import { Option } from 'commander';
import { validateJobs, JOBS } from '../../core/delivery/jobs.js';
import type { DeliveryChoices } from '../../core/delivery/deliver.js';
import { monthRuns } from '../../core/monitoring/months.js';
import type { ReviewChoices } from '../../core/status/status.js';
import { defineCommand } from '../command.js';
import type { Operation } from '../../core/operation.js';
import type { IO } from '../output/io.js';
import { FLAG_NAMES } from '../output/error-words.js';
import { printDeliver, type Delivered } from '../output/deliver-result.js';
import { routeReview } from '../output/status-view.js';
import { reviewChoices, reviewOptions, type ReviewFlags } from './review-options.js';
import { folderOf, folderOptions, foldersOf, refuseOneFolderFlags, type FolderFlags } from './folder-options.js';
import { runCheck, htmlOption, writeReportPage, type HtmlFlags } from './html-option.js';

interface DeliverFlags extends FolderFlags, ReviewFlags, HtmlFlags {
  dryRun?: boolean;
  force?: boolean;
  skipDelivered?: boolean;
  jobs?: string;
  limitRate?: string;
  pingUrl?: string;
  metricsFile?: string;
}

export default defineCommand<DeliverFlags, Delivered>({
  name: 'deliver',
  description:
    'check a folder written by the scrubber and deliver it as one batch; several folders: one per month, oldest first',
  arguments: [
    {
      syntax: '<dir...>',
      description:
        'the folder: report.json, schema.json and one *.jsonl.gz (or *.jsonl); several: one per month, each named for it',
    },
  ],
  options: [
    ...folderOptions('source id (BDS_SOURCE_ID)'),
    new Option('--dry-run', 'check everything and show what would be sent; create nothing'),
    new Option('--force', 'deliver even when this period already has a delivered batch'),
    new Option(
      '--skip-delivered',
      'count a delivered batch of this period as delivered, whatever file it came from (CI)',
    ),
    new Option(
      '--jobs <n>',
      `several folders: how many months run at once, ${JOBS.min} to ${JOBS.max} (default ${JOBS.default})`,
    ),
    new Option(
      '--limit-rate <rate>',
      'cap the upload at this many bytes/s, all months together: 500K, 10M, 1G, K = 1024 as in curl (BDS_LIMIT_RATE)',
    ),
    ...reviewOptions('then wait for the review of the months delivered (--fail-on defaults to rejected)'),
    new Option('--ping-url <url>', 'ping this URL as the run starts and ends, healthchecks.io-style (BDS_PING_URL)'),
    new Option(
      '--metrics-file <path>',
      "write each month's outcome to this Prometheus textfile after the run (BDS_METRICS_FILE)",
    ),
    htmlOption,
  ],
  async run(op, io, flags, [dirs]) {
    const folders = foldersOf(dirs, op.runtime);
    const jobs = parseJobs(flags.jobs);
    refuseOneFolderFlags(folders, flags, 'deliver');
    if (flags.html !== undefined) await writePreflightPage(op, io, flags.html, folders, flags);
    const started = op.runtime.now().getTime();
    const [{ runDeliver }, { DeliveryView }] = await Promise.all([
      import('../../core/delivery/deliver-run.js'),
      import('../output/delivery-view.js'),
    ]);
    const alone = folders.length === 1;
    const view = new DeliveryView(io, op.runtime.now, op.runtime.cwd, !alone);
    const choices = deliveryChoices(flags);
    try {
      const run = await runDeliver(
        alone
          ? { ...folderOf(folders[0]!, flags), ...choices }
          : { dirs: folders, product: flags.product, jobs, ...choices },
        op.with({ onEvent: routeReview(io, view.onEvent, () => view.close()) }),
      );
      return { alone, run, elapsedMs: op.runtime.now().getTime() - started };
    } finally {
      view.close();
    }
  },
  print: (io, delivered, flags, op) => printDeliver(io, delivered, op, flags.timeout),
  settings: ({ limitRate, pingUrl, metricsFile }) => ({ limitRate, pingUrl, metricsFile }),
  monitored: { months: (delivered) => monthRuns(delivered.run), delivers: (flags) => flags.dryRun !== true },
});

/**
 * --html: the page of the folders' pre-flight, before anything is sent. It is the core's check, which deliver's
 * pre-flight then repeats without reading the data file again (the pass is remembered); its events are not shown,
 * since the delivery shows its own, and whatever it found (a failure too) the delivery then finds and reports.
 */
async function writePreflightPage(
  op: Operation,
  io: IO,
  file: string,
  folders: string[],
  flags: DeliverFlags,
): Promise<void> {
  const checkRun = await runCheck(op.with({ onEvent: () => {} }), folders, flags);
  await writeReportPage(op, io, file, 'deliver', folders, checkRun);
}

/** What the delivery of one folder or several may do, as the core takes it. */
function deliveryChoices(flags: DeliverFlags): DeliveryChoices & ReviewChoices {
  return { dryRun: flags.dryRun, force: flags.force, skipDelivered: flags.skipDelivered, ...reviewChoices(flags) };
}

/** --jobs as a number, checked with one folder too: a typo should not wait for the day it matters. */
function parseJobs(jobs: string | undefined): number | undefined {
  return jobs === undefined
    ? undefined
    : validateJobs(/^\d+$/.test(jobs) ? Number(jobs) : Number.NaN, FLAG_NAMES, jobs);
}
