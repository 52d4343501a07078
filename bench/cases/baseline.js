// On the quiet machine: bds deliver against bench/baseline.sh, the same checks and steps as a seller writes them
// by hand, one after the other (sha256sum, zcat | wc -l, zcat | jq, curl create, curl -T, curl complete).

import path from 'node:path';
import { median, ratio, seconds, verdict } from '../format.js';
import { BENCH, PERIOD } from '../harness.js';
import { measure } from '../measure.js';
import { firstDelivery } from './rerun.js';

/** Issue 11's target: bds deliver in at most this share of the baseline's time. */
const LIMIT = 0.5;

export default {
  measures: '`bds deliver` / `baseline.sh` (wall time)',
  contenders: [
    {
      name: 'baseline',
      // It is slow (jq parses every line), and a comparison with hand-written tools is for a quiet machine.
      when: ({ quiet, options }) => quiet && options.baseline,
      async run(bench) {
        const res = await measure('bash', [path.join(BENCH, 'baseline.sh'), bench.data.dir, PERIOD], {
          env: bench.env(bench.freshHome(), { BDS_SOURCE_ID: await bench.source() }),
        });
        if (res.code !== 0) throw new Error(`baseline.sh exited ${res.code}:\n${res.stderr.slice(-2000)}`);
        const id = res.stdout.trim().split('\n').pop();
        const batch = await bench.verifyAndClean(id, 'baseline', bench.data);
        if (batch.status !== 'received') throw new Error(`baseline: batch ${id} is ${batch.status}`);
        const phases = Object.fromEntries(
          [...(/phases (.*)/.exec(res.stderr)?.[1] ?? '').matchAll(/(\w+)=([\d.]+)/g)].map((m) => [m[1], Number(m[2])]),
        );
        return { wall: res.wall, phases, others: res.others };
      },
      summary: (r) =>
        `${seconds(r.wall)}, ${Object.entries(r.phases)
          .map(([k, v]) => `${k} ${v.toFixed(2)}`)
          .join(', ')}`,
    },
  ],
  rows({ loads }) {
    const runs = loads.quiet?.runs.baseline ?? [];
    if (!runs.length) return [];
    const first = firstDelivery(loads.quiet.runs);
    const phase = (p) => seconds(median(runs.map((r) => r.phases[p])));
    const baseline = median(runs.map((r) => r.wall));
    const noCheck = median(runs.map((r) => r.wall - (r.phases.check ?? NaN)));
    return [
      [
        `baseline.sh, median of ${runs.length}`,
        `${seconds(baseline)} (sha256sum ${phase('hash')}, zcat|wc -l ${phase('count')}, zcat|jq ${phase('check')}, curl -T ${phase('upload')})`,
        '',
        '',
      ],
      ['**bds deliver / baseline.sh**', ratio(first / baseline), '', verdict(first / baseline, LIMIT)],
      ['bds deliver / baseline.sh without its jq check', ratio(first / noCheck), '', 'information'],
    ];
  },
};
