#!/usr/bin/env node
// npm run bench [-- --quick | --size 1GiB --rss-size 4GiB --plain-size 128MiB --runs 3 ...]   (see --help)
//
// On one machine, in one run, side by side as ratios against their targets (issues 11 and 22, the contract's
// "Speed"), each measured twice: on a quiet machine, and while one `gzip -9 </dev/zero` per core keeps every
// core busy (the busy column):
//   - bds's pre-flight of a .jsonl.gz against a bare streaming inflate of the same file (bench/inflate.js);
//   - bds's pre-flight of a plain .jsonl (checked, and gzipped on every core) against `pigz -6` on as many cores;
//   - a re-run of a delivered month against its first delivery, and `deliver` right after `check` against the
//     check (both served by the pass cache);
//   - the peak RSS of `bds check` and `bds deliver` of the .jsonl.gz at two sizes and of the plain .jsonl (GNU
//     time -v of the bds process: its threads are in it);
//   - start-up: bds --version and --help against node -e 0, on this Node and on each pinned Node of
//     scripts/node-from-npm.js already installed, and the standalone binary against its own Node if built;
// and, on the quiet machine, bds deliver against bench/baseline.sh (sha256sum, zcat, jq and curl, one after the
// other) and bds's upload against a plain curl -T to the same storage host.
//
// Every first run of bds has a fresh HOME, XDG_CACHE_HOME (the pass cache) and XDG_STATE_HOME (the delivery
// records). The phases of bds come from its events (bench/bds-timed.js), never from the wording of its output.
// Every delivered file is checked end to end: the sha256 the storage host computed while receiving it must
// equal the local file's. Uploaded objects are deleted after each run, so the disk holds one copy at most.
//
// On a shared machine, every timed run waits for a quiet second first, and a run during which other processes
// (not the bench's own gzip load) took more than --max-others cores' worth of CPU is made again (at most
// --retries times); the table says how busy the machine was.
//
// The cases (bench/cases/) say what is run and what the table shows of it; this file parses the options, makes
// the data, starts the sandbox and runs each column's contenders in turn; report.js writes the results.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CASES, CONTENDERS } from './cases/index.js';
import { dataFolder, plainFolder } from './data-folders.js';
import { cores, parseSize, sizeLabel } from './format.js';
import { Bench, DATA, ROOT } from './harness.js';
import { countAsOwn, load, loadAverage, log, machine, quietMoment, warmCache, which } from './measure.js';
import { LOADS, onlyReport, report, updateReadme } from './report.js';
import { SandboxProcess, coreSplit, removeStaleSandboxes, sandboxRoot, selfSignedCertificate } from './sandbox.js';

const FULL = { size: 2 ** 30, rssSize: 4 * 2 ** 30, plainSize: 128 * 2 ** 20, runs: 3, startupRuns: 20 };
const QUICK = { size: 64 * 2 ** 20, rssSize: 256 * 2 ** 20, plainSize: 16 * 2 ** 20, runs: 1, startupRuns: 5 };
const CONTENDER_NAMES = Object.keys(CONTENDERS);

const USAGE = `usage: npm run bench -- [options]

  --quick              small sizes, one run: ${sizeLabel(QUICK.size)}, ${sizeLabel(QUICK.rssSize)} for RSS, a plain .jsonl from ${sizeLabel(QUICK.plainSize)}
                       (a few minutes once the data is made); the flags below still override it
  --no-busy            only the quiet machine: no busy column (half the time)
  --no-quiet           only the busy machine: no quiet column
  --size <size>        compressed size of the main data file (default ${sizeLabel(FULL.size)}); e.g. 256MiB
  --rss-size <size>    the second size the peak RSS of bds check and deliver is measured at (default ${sizeLabel(FULL.rssSize)})
  --plain-size <size>  the plain .jsonl is this much gzip inflated, about 4.6 times larger (default ${sizeLabel(FULL.plainSize)})
  --runs <n>           timed runs of each contender (default ${FULL.runs})
  --no-baseline        skip the hand-written baseline (it is slow: jq parses every line)
  --startup-runs <n>   runs of node -e 0, bds --version and bds --help per Node (default ${FULL.startupRuns})
  --max-others <n>     make a run again when other processes took more than n cores' worth of CPU during it
                       (default 0.3; Linux only)
  --retries <n>        make a disturbed run again at most n times (default 3)
  --only <names>       only these contenders, comma-separated (${CONTENDER_NAMES.join(', ')}), on the quiet machine
                       unless --no-quiet: their figures, no table (e.g. --only upload,curl: the upload case
                       with the storage host on cores of its own; uploadShared,curlShared: on shared cores)
  --other <dir>        another checkout, built, whose bds the contender uploadOther runs (before and after)
  --http               the storage host over plain HTTP (default HTTPS, with a certificate made by openssl
                       for the run, which bds and curl are told to trust)
  --update-readme      write the results into bench/README.md
  --from <file>        measure nothing: the table of an earlier run's bench/data/latest.json (say, once
                       the targets changed), with --update-readme written into bench/README.md too
  -h, --help           this text

The environment variable BENCH_SIZES=<size>,<rss-size>,<plain-size> sets the three sizes too (flags win).
Data is kept in bench/data/<size>/ between runs (delete it to make it again).`;

// ---------------------------------------------------------------------------------------------- options

// ---------------------------------------------------------------------------------------------- options

function parseArgs(argv, env) {
  const given = {};
  const rest = {
    baseline: true,
    quiet: true,
    busy: true,
    maxOthers: 0.3,
    retries: 3,
    updateReadme: false,
    quick: false,
    https: true,
  };
  if (env.BENCH_SIZES) {
    const sizes = env.BENCH_SIZES.split(',').map(parseSize);
    if (sizes.length !== 3) throw new Error('BENCH_SIZES is <size>,<rss-size>,<plain-size>, e.g. 64MiB,256MiB,16MiB');
    [given.size, given.rssSize, given.plainSize] = sizes;
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--quick') rest.quick = true;
    else if (arg === '--size') given.size = parseSize(value());
    else if (arg === '--rss-size') given.rssSize = parseSize(value());
    else if (arg === '--plain-size') given.plainSize = parseSize(value());
    else if (arg === '--runs') given.runs = whole(value(), arg, 1);
    else if (arg === '--startup-runs') given.startupRuns = whole(value(), arg, 1);
    else if (arg === '--no-baseline') rest.baseline = false;
    else if (arg === '--no-busy') rest.busy = false;
    else if (arg === '--no-quiet') rest.quiet = false;
    else if (arg === '--max-others') rest.maxOthers = Number(value());
    else if (arg === '--retries') rest.retries = whole(value(), arg, 0);
    else if (arg === '--update-readme') rest.updateReadme = true;
    else if (arg === '--from') rest.from = value();
    else if (arg === '--only') rest.only = value().split(',');
    else if (arg === '--other') rest.other = path.resolve(value());
    else if (arg === '--http') rest.https = false;
    else if (arg === '-h' || arg === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`unknown option ${arg}\n\n${USAGE}`);
  }
  if (!(rest.maxOthers >= 0)) throw new Error('--max-others needs a number of cores, e.g. 0.3');
  const unknown = rest.only?.find((name) => !CONTENDER_NAMES.includes(name));
  if (unknown) throw new Error(`--only: no contender ${unknown}; there are ${CONTENDER_NAMES.join(', ')}`);
  if (rest.only && rest.quiet) rest.busy = false;
  if (rest.only?.includes('uploadOther') && !rest.other) throw new Error('uploadOther needs --other <checkout>');
  return { ...(rest.quick ? QUICK : FULL), ...given, ...rest };
}

function whole(text, name, least) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < least) throw new Error(`${name} needs a whole number >= ${least}`);
  return n;
}

function checkTools(options) {
  const needed = ['curl', 'bash', ...(options.https ? ['openssl'] : [])];
  if (options.baseline) needed.push('jq', 'sha256sum', 'zcat', 'wc', 'awk', 'date', 'cut');
  const missing = needed.filter((tool) => !which(tool));
  if (missing.length) {
    throw new Error(
      `missing tool${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}` +
        (missing.includes('jq') ? ' (Debian/Ubuntu: apt-get install -y jq)' : '') +
        (options.baseline ? '; or run with --no-baseline' : ''),
    );
  }
  if (!fs.existsSync(path.join(ROOT, 'dist', 'cli', 'main.js')))
    throw new Error('dist/ is missing: run npm run build (npm ci does it)');
}

// ---------------------------------------------------------------------------------------------- main

/**
 * One column of the table: every contender `runs` times (the order rotating), then each case's once-per-column
 * runs (the second size, the plain check, the start-up).
 */
async function runLoad(loadName, bench, options, pigzInstalled) {
  const quiet = loadName === 'quiet';
  if (!quiet) {
    load.start();
    log(`busy: ${load.children.length} gzip -9 running`);
  }
  const loadAtStart = loadAverage();
  const contenders =
    options.only ??
    CONTENDER_NAMES.filter((name) => CONTENDERS[name].when?.({ quiet, options, pigzInstalled }) ?? true);
  const runs = Object.fromEntries(contenders.map((name) => [name, []]));
  const others = [];
  let retried = 0;
  /** Runs `what` after a quiet moment, again while other processes disturbed it (at most --retries times). */
  const timed = async (label, what) => {
    let result;
    for (let attempt = 0; ; attempt++) {
      log(`${loadName}: ${label}${attempt ? ` (again: other processes took ${cores(result.others)} cores)` : ''}`);
      await quietMoment(options.maxOthers);
      result = await what();
      if (!(result.others > options.maxOthers) || attempt === options.retries) break;
      retried++;
    }
    others.push(result.others);
    return result;
  };
  try {
    for (let run = 0; run < options.runs; run++) {
      // Rotate the order each run, so that no contender always goes first (or after the slow one).
      const order = contenders.map((_, k) => contenders[(k + run) % contenders.length]);
      for (const name of order) {
        const contender = CONTENDERS[name];
        await warmCache(contender.plain ? bench.plain.file : bench.data.file);
        const result = await timed(`run ${run + 1}/${options.runs}: ${name}`, () =>
          contender.isolated ? bench.isolated(() => contender.run(bench)) : contender.run(bench),
        );
        runs[name].push(result);
        log(`  ${contender.summary(result)}; others ${cores(result.others)}`);
      }
    }
    if (options.only) return { runs, others, retried };
    const column = { runs };
    for (const c of CASES) if (c.once) Object.assign(column, await c.once(bench, { loadName, options, timed }));
    return { ...column, others, retried, loadAtStart, loadAtEnd: loadAverage() };
  } finally {
    load.stop();
  }
}

async function main() {
  const options = parseArgs(process.argv.slice(2), process.env);
  if (options.from) {
    const markdown = report(JSON.parse(fs.readFileSync(options.from, 'utf8')));
    process.stdout.write(markdown);
    if (options.updateReadme) updateReadme(markdown);
    return;
  }
  checkTools(options);
  fs.mkdirSync(DATA, { recursive: true });
  const info = machine();
  const data = await dataFolder(options.size);
  // --only needs the plain .jsonl for its two contenders alone, and the second size never.
  const bigData = options.only ? undefined : await dataFolder(options.rssSize);
  const needsPlain = !options.only || options.only.some((name) => CONTENDERS[name].plain);
  const plain = needsPlain ? await plainFolder(options.plainSize) : undefined;
  const pigzInstalled = which('pigz');
  if (!pigzInstalled) log('pigz is not installed: no comparison with it (apt-get install pigz)');

  removeStaleSandboxes();
  const sizes = [data, bigData, plain].filter(Boolean).map((files) => files.bytes);
  const root = sandboxRoot(
    Math.max(...sizes),
    sizes.reduce((sum, bytes) => sum + bytes, 0),
  );
  // Removed however the run ends, short of SIGKILL (the next run then removes it).
  const sandboxDir = path.join(root, `bds-bench-sandbox-${process.pid}`);
  const certDir = options.https ? path.join(sandboxDir, 'tls') : undefined;
  let box;
  try {
    if (certDir) selfSignedCertificate(certDir);
    box = await SandboxProcess.start(sandboxDir, certDir);
  } catch (error) {
    fs.rmSync(sandboxDir, { recursive: true, force: true });
    throw error;
  }
  // Its CPU is the bench's own doing, not "other processes".
  countAsOwn(box);
  const bench = new Bench(box, { data, bigData, plain });
  bench.other = options.other;
  bench.cert = certDir && path.join(certDir, 'cert.pem');
  bench.split = coreSplit();
  const stop = async () => {
    load.stop();
    await box.close();
    fs.rmSync(sandboxDir, { recursive: true, force: true });
    bench.close();
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => void stop().then(() => process.exit(128 + os.constants.signals[signal])));
  }

  try {
    log(`sandbox at ${box.baseUrl}, storage at ${box.storageUrl}, keeping uploads in ${sandboxDir}`);
    log(
      bench.split
        ? `upload comparison: the storage host on cores ${bench.split.storage}, bds and curl on ${bench.split.contender}`
        : 'upload comparison: the storage host shares every core with bds and curl',
    );
    const loads = {};
    for (const loadName of LOADS.filter((load) => options[load])) {
      loads[loadName] = await runLoad(loadName, bench, options, pigzInstalled);
    }
    if (options.only) {
      onlyReport(loads, data);
      return;
    }
    const results = {
      options: { ...options, from: undefined },
      data: { bytes: data.bytes, rawBytes: data.rawBytes, records: data.records, sha256: data.sha256 },
      bigData: { bytes: bigData.bytes, records: bigData.records },
      plain: { bytes: plain.bytes, records: plain.records, sha256: bench.plainSha256 },
      machine: info,
      pigzInstalled,
      loads,
      sandboxRss: await box.call('maxRss'),
      uploadCores: bench.split ?? null,
      sandboxRoot: path.dirname(sandboxDir),
      finishedAt: Date.now(),
    };
    const markdown = report(results);
    process.stdout.write(`\n${markdown}`);
    fs.writeFileSync(
      path.join(DATA, 'latest.json'),
      `${JSON.stringify(results, (key, value) => (key === 'out' ? undefined : value), 2)}\n`,
    );
    fs.writeFileSync(path.join(DATA, 'latest.md'), markdown);
    if (options.updateReadme) updateReadme(markdown);
  } finally {
    await stop();
  }
}

main().catch((error) => {
  load.stop();
  process.stderr.write(`bench: ${error.message}\n`);
  process.exit(1);
});
