// The bench's results in words: the table (each case's rows, bench/cases/) under a header that says what was
// measured where and how busy the machine was; the figures of `--only`; and the table written into the README.

import fs from 'node:fs';
import path from 'node:path';
import { CASES, CONTENDERS } from './cases/index.js';
import { coreList, cores, mbps, median, ratio, seconds, sizeLabel, table } from './format.js';
import { BENCH } from './harness.js';
import { log } from './measure.js';

/** The table's columns: the quiet machine, then the busy one. */
export const LOADS = ['quiet', 'busy'];

/** The Markdown of a run's results (what bench/data/latest.json holds): its header, then the table. */
export function report(results) {
  const { options, data, plain, machine: m, loads } = results;
  const present = LOADS.filter((load) => loads[load]);
  const size = sizeLabel(options.size);
  const bigSize = sizeLabel(options.rssSize);
  const n = options.runs;
  const context = {
    ...results,
    present,
    n,
    size,
    bigSize,
    /** The cores bds gzipped a plain .jsonl on (at most 8), and so pigz's -p, on the machine of the run. */
    cores: Math.min(m.cores, 8),
    /** A row: the measure, then each column's cell from `cell(column's results, load)`, then the target. */
    row: (measure, cell, target = '') => [
      measure,
      ...LOADS.map((load) => (loads[load] ? cell(loads[load], load) : 'not measured')),
      target,
    ],
  };
  const rows = [
    ['measure', 'quiet machine', 'busy machine (gzip -9 on every core)', 'target'],
    ...CASES.flatMap((c) => c.rows?.(context) ?? []),
  ];
  const header = [
    `Data: ${size}: ${(data.bytes / 2 ** 20).toFixed(0)} MiB compressed, ${(data.rawBytes / 2 ** 20).toFixed(0)} MiB inflated (${(data.rawBytes / data.bytes).toFixed(2)}:1), ${data.records} records; ` +
      `${bigSize}: ${(results.bigData.bytes / 2 ** 20).toFixed(0)} MiB; plain .jsonl ${(plain.bytes / 2 ** 20).toFixed(0)} MiB (${sizeLabel(options.plainSize)} inflated).`,
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memory} RAM, ${m.os}, Node ${m.node}.`,
    `Run: finished ${new Date(results.finishedAt).toISOString()}, ${n} run${n > 1 ? 's' : ''} of each contender per column, alternating; files in the page cache.`,
    results.uploadCores
      ? `Upload comparison: the storage host on ${coreList(results.uploadCores.storage)}, bds and curl on ${coreList(results.uploadCores.contender)} (taskset), then all sharing every core; it keeps uploads in ${results.sandboxRoot}. "Storage host busy": its CPU over the upload's time.`
      : `Upload comparison: the storage host shares every core with bds and curl; it keeps uploads in ${results.sandboxRoot ?? 'bench/data'}.`,
    ...present.map((load) => {
      const l = loads[load];
      return (
        `${load === 'quiet' ? 'Quiet' : `Busy (one gzip -9 per core)`}: load average ${l.loadAtStart} at the start, ${l.loadAtEnd} at the end; other processes took ` +
        `${cores(median(l.others))} cores' worth of CPU during the median timed run, ${cores(Math.max(...l.others))} at most; ` +
        `${l.retried} run${l.retried === 1 ? '' : 's'} made again for it (more than ${options.maxOthers}).`
      );
    }),
  ].join('\n');
  return `${header}\n\n${table(rows)}\n`;
}

/** With --only: each contender's runs and median, then what its case says of them (ratios, shares). */
export function onlyReport(loads, data) {
  for (const [loadName, { runs, retried }] of Object.entries(loads)) {
    const figure = (name) => CONTENDERS[name].figure ?? ((r) => r.wall);
    const ratioOfMedians = (over, under) =>
      ratio(median(runs[over].map(figure(over))) / median(runs[under].map(figure(under))));
    const lines = [`${loadName} (${retried} runs made again):`];
    for (const [name, results] of Object.entries(runs)) {
      const values = results.map(figure(name));
      lines.push(
        `  ${name}: ${values.map(seconds).join(', ')}; median ${seconds(median(values))}, ${mbps(data.bytes, median(values))}`,
      );
      // CPU seconds of the whole command: what a busy machine disturbs least.
      const cpu = results.map((r) => r.cpu);
      if (cpu.some(Number.isFinite))
        lines.push(`    CPU ${cpu.map(seconds).join(', ')}; median ${seconds(median(cpu))}`);
    }
    for (const c of CASES) lines.push(...(c.onlyLines?.(runs, ratioOfMedians) ?? []));
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}

/** Writes `markdown` between the results markers of bench/README.md. */
export function updateReadme(markdown) {
  const readme = path.join(BENCH, 'README.md');
  const start = '<!-- results:start -->';
  const end = '<!-- results:end -->';
  const text = fs.readFileSync(readme, 'utf8');
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from === -1 || to === -1) throw new Error(`${readme} lacks the ${start} and ${end} markers`);
  fs.writeFileSync(readme, `${text.slice(0, from + start.length)}\n${markdown}${text.slice(to)}`);
  log(`wrote the results into ${readme}`);
}
