// bds's pre-flight of a .jsonl.gz (hash, inflate, count, check) against a bare streaming inflate of the same
// file in Node (bench/inflate.js), its floor. The pre-flights are those of the first deliveries (rerun.js) and
// of the checks (after-check.js).

import path from 'node:path';
import { mbps, median, pick, ratioVerdict, seconds, targetAndBefore } from '../format.js';
import { BENCH } from '../harness.js';
import { measure } from '../measure.js';

/** Issue 11's target, and (`was`) the ratio before issue 22, which asks that it get no worse. */
const TARGET = { limit: 1.15, was: { quiet: 1.26, busy: 1.25 } };

/** Every pass over the .jsonl.gz that was not remembered: the first deliveries' and the checks'. */
const preflights = (runs) => [
  ...pick(runs.firstAndRerun, (r) => r.first.preflight),
  ...pick(runs.checkThenDeliver, (r) => r.check.preflight),
];
const inflate = (runs) => median(pick(runs.inflate, (r) => r.seconds));

export default {
  measures: 'bds pre-flight of a .jsonl.gz / bare streaming inflate of it',
  contenders: [
    {
      name: 'inflate',
      /** bench/inflate.js: a streaming inflate of the .jsonl.gz in 1 MiB chunks, its output dropped. */
      async run(bench) {
        const res = await measure(process.execPath, [path.join(BENCH, 'inflate.js'), bench.data.file]);
        if (res.code !== 0) throw new Error(`bench/inflate.js exited ${res.code}: ${res.stderr}`);
        const out = JSON.parse(res.stdout);
        if (out.bytes !== bench.data.rawBytes)
          throw new Error(`bench/inflate.js inflated ${out.bytes} bytes, not ${bench.data.rawBytes}`);
        return { seconds: out.seconds, others: res.others };
      },
      summary: (r) => seconds(r.seconds),
      figure: (r) => r.seconds,
    },
  ],
  rows({ row, loads, present, data, n }) {
    const preflight = ({ runs }) => median(preflights(runs));
    return [
      row(
        `bds pre-flight of the .jsonl.gz (hash, inflate, count, check), median of ${preflights(loads[present[0]].runs).length}`,
        (l) => `${seconds(preflight(l))}, ${mbps(data.rawBytes, preflight(l))} inflated`,
      ),
      row(
        `bare streaming inflate of it (bench/inflate.js), median of ${n}`,
        (l) => `${seconds(inflate(l.runs))}, ${mbps(data.rawBytes, inflate(l.runs))}`,
      ),
      row(
        '**bds pre-flight / bare inflate**',
        (l, load) => ratioVerdict(preflight(l) / inflate(l.runs), TARGET, load),
        targetAndBefore(TARGET),
      ),
    ];
  },
  onlyLines(runs, ratioOfMedians) {
    return runs.firstAndRerun && runs.inflate
      ? [`  pre-flight / bare inflate, of the medians: ${ratioOfMedians('firstAndRerun', 'inflate')}`]
      : [];
  },
};
