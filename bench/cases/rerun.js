// A first delivery (fresh cache and state) and the same command again, which says "already delivered": the
// re-run against the first.

import { mb, median, pick, ratioVerdict, seconds, targetAndBefore } from '../format.js';

/** Issue 11's target, and (`was`) the ratio before issue 22, which asks that it get no worse. */
const TARGET = { limit: 0.1, was: { quiet: 0.02, busy: 0.02 } };

/** The median wall time of the first deliveries (baseline.js compares with it too). */
export const firstDelivery = (runs) => median(pick(runs.firstAndRerun, (r) => r.first.wall));
const rerun = (runs) => median(pick(runs.firstAndRerun, (r) => r.rerun.wall));

export default {
  measures: 'a re-run of a delivered month / its first delivery',
  contenders: [
    {
      name: 'firstAndRerun',
      async run(bench) {
        const home = bench.freshHome();
        const source = await bench.source();
        const first = await bench.deliver(home, bench.data, { source });
        const again = await bench.deliver(home, bench.data, { fromCache: true, source });
        if (!again.out.skipped)
          throw new Error(`the re-run delivered ${again.out.batch.id} again instead of skipping it`);
        return { first, rerun: again, others: Math.max(first.others, again.others) };
      },
      summary: (r) =>
        `first ${seconds(r.first.wall)} (pre-flight ${seconds(r.first.preflight)}, upload ${seconds(r.first.upload)}, peak RSS ${mb(r.first.peakRss)}), re-run ${seconds(r.rerun.wall)}`,
      // The pre-flight, which the target compares with the inflate.
      figure: (r) => r.first.preflight,
    },
  ],
  rows({ row, n }) {
    return [
      row(`bds deliver, first (fresh cache and state), median of ${n}`, ({ runs }) => seconds(firstDelivery(runs))),
      row(`the same deliver again: already delivered, median of ${n}`, ({ runs }) => seconds(rerun(runs))),
      row(
        '**re-run / first delivery**',
        ({ runs }, load) => ratioVerdict(rerun(runs) / firstDelivery(runs), TARGET, load),
        targetAndBefore(TARGET),
      ),
    ];
  },
};
