// bds's pre-flight of a plain .jsonl (check every line, gzip on every core into the temp copy it uploads, hash
// it), taken from a first delivery, against `pigz -6` on as many cores writing the same kind of file.

import fs from 'node:fs';
import path from 'node:path';
import { mb, mbps, median, pick, ratioVerdict, seconds, targetAndBefore } from '../format.js';
import { CORES } from '../harness.js';
import { measure } from '../measure.js';

/** Issue 11's target, and (`was`) the ratio before issue 22, which asks that it get no worse. */
const TARGET = { limit: 1.2, was: { quiet: 1.01, busy: 0.89 } };

const plainPreflight = (runs) => median(pick(runs.plainDeliver, (r) => r.preflight));
const pigz = (runs) => median(pick(runs.pigz, (r) => r.seconds));

export default {
  measures: 'bds pre-flight of a plain .jsonl (check, gzip, hash) / pigz -6 on as many cores',
  contenders: [
    {
      name: 'plainDeliver',
      plain: true,
      /** A first delivery of the plain .jsonl. */
      async run(bench) {
        const result = await bench.deliver(bench.freshHome(), bench.plain);
        return { preflight: result.preflight, peakRss: result.peakRss, others: result.others };
      },
      summary: (r) => `pre-flight ${seconds(r.preflight)}, peak RSS ${mb(r.peakRss)}`,
      figure: (r) => r.preflight,
    },
    {
      name: 'pigz',
      plain: true,
      when: ({ pigzInstalled }) => pigzInstalled,
      /** pigz -6 on as many threads as the cores bds gzips on, into a file in the temp folder as bds writes its copy. */
      async run(bench) {
        const out = path.join(bench.scratch, 'pigz.gz');
        try {
          const res = await measure('sh', [
            '-c',
            `exec pigz -6 -p ${CORES} -c "$1" > "$2"`,
            'sh',
            bench.plain.file,
            out,
          ]);
          if (res.code !== 0) throw new Error(`pigz exited ${res.code}: ${res.stderr}`);
          return { seconds: res.wall, others: res.others };
        } finally {
          fs.rmSync(out, { force: true });
        }
      },
      summary: (r) => seconds(r.seconds),
      figure: (r) => r.seconds,
    },
  ],
  rows({ row, plain, n, cores, pigzInstalled }) {
    return [
      row(
        `bds pre-flight of the plain .jsonl (check, gzip -6 on ${cores} cores, hash, write), median of ${n}`,
        ({ runs }) => `${seconds(plainPreflight(runs))}, ${mbps(plain.bytes, plainPreflight(runs))}`,
      ),
      row(`pigz -6 -p ${cores} of it, median of ${n}`, ({ runs }) =>
        pigzInstalled ? `${seconds(pigz(runs))}, ${mbps(plain.bytes, pigz(runs))}` : 'n/a',
      ),
      row(
        '**bds plain .jsonl / pigz -6**',
        ({ runs }, load) =>
          pigzInstalled
            ? ratioVerdict(plainPreflight(runs) / pigz(runs), TARGET, load)
            : 'n/a: pigz not installed, `apt-get install pigz`',
        targetAndBefore(TARGET),
      ),
    ];
  },
  onlyLines(runs, ratioOfMedians) {
    return runs.plainDeliver && runs.pigz
      ? [`  pre-flight of the plain .jsonl / pigz, of the medians: ${ratioOfMedians('plainDeliver', 'pigz')}`]
      : [];
  },
};
