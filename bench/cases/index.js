// The bench's cases, in the order of the table's rows; their contenders run in this order too (rotating from one
// run to the next). A case is one module here, whose default export is a Case; a new contender is a new module
// (or one more entry in a case's `contenders`), listed in CASES below.

/**
 * @typedef {object} Contender  what `--only` may name; run `--runs` times per column, in turn with the others
 * @property {string} name
 * @property {(bench: import('../harness.js').Bench) => Promise<{ others: number }>} run  one run: its measures,
 *   and the most cores' worth of CPU other processes took during it
 * @property {(result: any) => string} summary  the line logged after each run
 * @property {(result: any) => number} [figure]  the seconds `--only` lists (default: the wall time)
 * @property {(column: { quiet: boolean, options: any, pigzInstalled: boolean }) => boolean} [when]  whether a
 *   full run runs it in this column (default: always)
 * @property {boolean} [isolated]  run with the storage host on cores of its own (the upload case)
 * @property {boolean} [plain]  it reads the plain .jsonl (kept in the page cache for it), not the .jsonl.gz
 *
 * @typedef {object} Case
 * @property {string} measures  what it compares, in words
 * @property {Contender[]} [contenders]
 * @property {(bench: import('../harness.js').Bench, column: { loadName: string, options: any, timed: any }) => Promise<object> | object} [once]
 *   run once per column after the contenders' runs (not with --only); what it returns is kept in the column's
 *   results
 * @property {(report: any) => string[][]} [rows]  the table's rows (report.js: the run's results, a row helper)
 * @property {(runs: any, ratioOfMedians: (over: string, under: string) => string) => string[]} [onlyLines]  what
 *   `--only` prints after the contenders' figures
 */

import afterCheck from './after-check.js';
import baseline from './baseline.js';
import capped from './capped.js';
import peakRss from './peak-rss.js';
import plain from './plain.js';
import preflight from './preflight.js';
import rerun from './rerun.js';
import sandboxRss from './sandbox-rss.js';
import startup from './startup.js';
import upload from './upload.js';

/** @type {Case[]} */
export const CASES = [preflight, plain, rerun, afterCheck, peakRss, startup, baseline, upload, capped, sandboxRss];

/** Every contender, by name. */
export const CONTENDERS = Object.fromEntries(
  CASES.flatMap((c) => c.contenders ?? []).map((contender) => [contender.name, contender]),
);
