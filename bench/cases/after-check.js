// `bds check` with a fresh cache, then `bds deliver` of the same folder, whose pass comes from the cache: the
// delivery after a check against the check.

import { mb, median, pick, ratioVerdict, seconds, targetAndBefore } from '../format.js';

/** Issue 11's target, and (`was`) the ratio before issue 22, which asks that it get no worse. */
const TARGET = { limit: 0.5, was: { quiet: 0.25, busy: 0.22 } };

const check = (runs) => median(pick(runs.checkThenDeliver, (r) => r.check.wall));
const afterCheck = (runs) => median(pick(runs.checkThenDeliver, (r) => r.deliver.wall));

export default {
  measures: '`deliver` right after `check` / the check',
  contenders: [
    {
      name: 'checkThenDeliver',
      async run(bench) {
        const home = bench.freshHome();
        const checked = await bench.check(home, bench.data);
        const deliver = await bench.deliver(home, bench.data, { fromCache: true });
        return { check: checked, deliver, others: Math.max(checked.others, deliver.others) };
      },
      summary: (r) =>
        `check ${seconds(r.check.wall)} (pre-flight ${seconds(r.check.preflight)}, peak RSS ${mb(r.check.peakRss)}), deliver after it ${seconds(r.deliver.wall)} (peak RSS ${mb(r.deliver.peakRss)})`,
      // The pre-flight, which the target compares with the inflate.
      figure: (r) => r.check.preflight,
    },
  ],
  rows({ row, n }) {
    return [
      row(`bds check (fresh cache), median of ${n}`, ({ runs }) => seconds(check(runs))),
      row(`bds deliver right after it, median of ${n}`, ({ runs }) => seconds(afterCheck(runs))),
      row(
        '**deliver after check / check**',
        ({ runs }, load) => ratioVerdict(afterCheck(runs) / check(runs), TARGET, load),
        targetAndBefore(TARGET),
      ),
    ];
  },
};
