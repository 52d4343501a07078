// The peak RSS of `bds check` and `bds deliver` (GNU time -v of the bds process: its threads are in it): of the
// .jsonl.gz's runs of rerun.js and after-check.js, of the plain .jsonl's deliveries (plain.js), and, once per
// column, of a delivery and a check of the second size and a check of the plain .jsonl.

import { mb, mbps, most, pick, seconds, sizeLabel } from '../format.js';
import { log, warmCache } from '../measure.js';

/** The contract's "Speed": at most this many MB, whatever the file's size. */
const LIMIT_MB = 100;

/** Each peak RSS the table shows, of one column's runs. */
const peaks = (column) => ({
  check: most(pick(column.runs.checkThenDeliver, (r) => r.check.peakRss)),
  deliver: most([
    ...pick(column.runs.firstAndRerun, (r) => r.first.peakRss),
    ...pick(column.runs.checkThenDeliver, (r) => r.deliver.peakRss),
  ]),
  bigCheck: column.big.check.peakRss,
  bigDeliver: column.big.deliver.peakRss,
  plainCheck: column.plainCheck.peakRss,
  plainDeliver: most(pick(column.runs.plainDeliver, (r) => r.peakRss)),
});

export default {
  measures: 'peak RSS of bds check and bds deliver, two sizes of .jsonl.gz and a plain .jsonl',
  /** After a column's runs: the second size, delivered and checked fresh, and the plain .jsonl checked. */
  async once(bench, { timed, options }) {
    await warmCache(bench.bigData.file);
    const bigDeliver = await timed(`bds deliver of ${sizeLabel(options.rssSize)} (fresh cache and state)`, () =>
      bench.deliver(bench.freshHome(), bench.bigData),
    );
    log(`  ${seconds(bigDeliver.wall)}, peak RSS ${mb(bigDeliver.peakRss)}`);
    const bigCheck = await timed(`bds check of ${sizeLabel(options.rssSize)}`, () =>
      bench.check(bench.freshHome(), bench.bigData),
    );
    log(`  ${seconds(bigCheck.wall)}, peak RSS ${mb(bigCheck.peakRss)}`);
    await warmCache(bench.plain.file);
    const plainCheck = await timed('bds check of the plain .jsonl', () => bench.check(bench.freshHome(), bench.plain));
    log(`  ${seconds(plainCheck.wall)}, peak RSS ${mb(plainCheck.peakRss)}`);
    return { big: { bytes: bench.bigData.bytes, deliver: bigDeliver, check: bigCheck }, plainCheck };
  },
  rows({ row, n, size, bigSize }) {
    const peak = (what, get) =>
      row(
        what,
        (column) => `${mb(get(peaks(column)))}${get(peaks(column)) / 1e6 <= LIMIT_MB ? '' : ' MISSED'}`,
        `≤ ${LIMIT_MB} MB`,
      );
    return [
      peak(`**peak RSS, bds check** of the .jsonl.gz, ${size} (the most of ${n})`, (p) => p.check),
      peak(`**peak RSS, bds deliver** of the .jsonl.gz, ${size} (the most of ${2 * n})`, (p) => p.deliver),
      peak(`**peak RSS, bds check** of the .jsonl.gz, ${bigSize} (one run)`, (p) => p.bigCheck),
      peak(`**peak RSS, bds deliver** of the .jsonl.gz, ${bigSize} (one run)`, (p) => p.bigDeliver),
      peak(`**peak RSS, bds check** of the plain .jsonl (one run)`, (p) => p.plainCheck),
      peak(`**peak RSS, bds deliver** of the plain .jsonl (the most of ${n})`, (p) => p.plainDeliver),
      row(
        `bds deliver of ${bigSize}: time, pre-flight`,
        ({ big }) => `${seconds(big.deliver.wall)}, ${mbps(big.bytes, big.deliver.preflight)}`,
      ),
    ];
  },
};
