// On the quiet machine: a first delivery with --limit-rate 50000000 (50 MB/s): the rate its upload phase
// achieved, against the cap (issue 34).

import { mbps, median, pick, ratio, seconds } from '../format.js';

/** The capped upload's --limit-rate: 50 MB/s, in the decimal units of the table's rates. */
const RATE_CAP = 50_000_000;

const capped = (runs) => median(pick(runs.capped, (r) => r.upload));

export default {
  measures: 'upload rate with `--limit-rate 50000000` / 50 MB/s',
  contenders: [
    {
      name: 'capped',
      when: ({ quiet }) => quiet,
      async run(bench) {
        const result = await bench.deliver(bench.freshHome(), bench.data, {
          args: ['--limit-rate', String(RATE_CAP)],
        });
        return { upload: result.upload, bytes: result.out.bytes, others: result.others };
      },
      summary: (r) => `upload ${seconds(r.upload)}, ${mbps(r.bytes, r.upload)}`,
      figure: (r) => r.upload,
    },
  ],
  rows({ loads, data, n }) {
    const time = loads.quiet && capped(loads.quiet.runs);
    if (!Number.isFinite(time)) return [];
    const achieved = data.bytes / time / RATE_CAP;
    return [
      [
        `bds upload phase with --limit-rate ${RATE_CAP}, median of ${n}`,
        `${seconds(time)}, ${mbps(data.bytes, time)} (${ratio(achieved)} of the cap)`,
        '',
        `within 10% of ${mbps(RATE_CAP, 1)}: ${Math.abs(achieved - 1) <= 0.1 ? 'met' : 'MISSED'}`,
      ],
    ];
  },
};
