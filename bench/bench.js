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

import { fork, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { NODE_LINE as BINARY_NODE } from '../scripts/build-binary.js';
import { PINNED, pinnedNodePath } from '../scripts/node-from-npm.js';
import { generate, readMeta } from './generate.js';
import { childTicks, timeCommands } from './startup.js';

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(BENCH);
const DATA = path.join(BENCH, 'data');
const BIN = path.join(ROOT, 'bin', 'bds.js');
/** bin/bds.js plus one line per delivery event with its time, for the phases. */
const TIMED_BIN = path.join(BENCH, 'bds-timed.js');
const BINARY = path.join(ROOT, 'release', 'bds-linux-x64');
const PERIOD = '2024-05';
/**
 * The targets, and (`was`) the ratios before issue 22, which asks that none get worse, on a quiet machine or
 * a busy one: on the quiet machine what bench/README.md reported then; on the busy one what this bench
 * measured of the code of then, main at 919c393 (bench/README.md, "Before issue 22 on a busy machine").
 */
const TARGETS = {
  inflate: { limit: 1.15, was: { quiet: 1.26, busy: 1.25 } },
  pigz: { limit: 1.2, was: { quiet: 1.01, busy: 0.89 } },
  rerun: { limit: 0.1, was: { quiet: 0.02, busy: 0.02 } },
  afterCheck: { limit: 0.5, was: { quiet: 0.25, busy: 0.22 } },
  rssMB: 100,
  startup: 1.2,
  startupNode20: 1.5,
  baseline: 0.5,
  // The contract: at least 0.9 of curl -T over HTTPS to the same storage host (issue 34).
  upload: 0.9,
};
/** The cores bds gzips a plain .jsonl on (src/core/datapass/gzip.ts: at most 8), and so pigz's -p. */
const CORES = Math.min(os.availableParallelism?.() ?? os.cpus().length, 8);
/** libuv's thread pool as bin/bds.js sizes it; bench/bds-timed.js, an ES module, gets it from its environment. */
const THREADPOOL = String(Math.max(4, CORES + 1));
const LOADS = ['quiet', 'busy'];
/** The capped upload's --limit-rate: 50 MB/s, in the decimal units of the table's rates. */
const RATE_CAP = 50_000_000;
/** What `--only` may name: the contenders of a column (bench.<name>()). */
const CONTENDERS = [
  'firstAndRerun',
  'inflate',
  'checkThenDeliver',
  'plainDeliver',
  'pigz',
  'baseline',
  'curl',
  'capped',
  'upload',
  'uploadOther',
  'uploadShared',
  'curlShared',
];
/**
 * The contenders of "bds upload / curl -T", run with the storage host on cores of its own (coreSplit);
 * uploadShared and curlShared are the same two on shared cores.
 */
const UPLOAD_COMPARISON = new Set(['upload', 'uploadOther', 'curl']);
const SECONDS_PER_TICK = 1 / 100; // USER_HZ is 100 on Linux

const FULL = { size: 2 ** 30, rssSize: 4 * 2 ** 30, plainSize: 128 * 2 ** 20, runs: 3, startupRuns: 20 };
const QUICK = { size: 64 * 2 ** 20, rssSize: 256 * 2 ** 20, plainSize: 16 * 2 ** 20, runs: 1, startupRuns: 5 };

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
  --only <names>       only these contenders, comma-separated (${CONTENDERS.join(', ')}), on the quiet machine
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

function parseSize(text) {
  const match = /^(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|KB|MB|GB|K|M|G)?$/i.exec(String(text).trim());
  if (!match) throw new Error(`not a size: ${text} (try 256MiB or 4GiB)`);
  const unit = (match[2] ?? 'B').toLowerCase();
  const factor = {
    b: 1,
    k: 1024,
    kib: 1024,
    kb: 1e3,
    m: 2 ** 20,
    mib: 2 ** 20,
    mb: 1e6,
    g: 2 ** 30,
    gib: 2 ** 30,
    gb: 1e9,
  }[unit];
  return Math.round(Number(match[1]) * factor);
}

function sizeLabel(bytes) {
  if (bytes % 2 ** 30 === 0) return `${bytes / 2 ** 30}GiB`;
  if (bytes % 2 ** 20 === 0) return `${bytes / 2 ** 20}MiB`;
  return `${bytes}B`;
}

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
  const unknown = rest.only?.find((name) => !CONTENDERS.includes(name));
  if (unknown) throw new Error(`--only: no contender ${unknown}; there are ${CONTENDERS.join(', ')}`);
  if (rest.only && rest.quiet) rest.busy = false;
  if (rest.only?.includes('uploadOther') && !rest.other) throw new Error('uploadOther needs --other <checkout>');
  return { ...(rest.quick ? QUICK : FULL), ...given, ...rest };
}

function whole(text, name, least) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < least) throw new Error(`${name} needs a whole number >= ${least}`);
  return n;
}

// ---------------------------------------------------------------------------------------------- helpers

const log = (text) => process.stderr.write(`[bench] ${text}\n`);
const median = (values) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const seconds = (s) => (Number.isFinite(s) ? `${s.toFixed(2)} s` : 'n/a');
const ms = (s) => (Number.isFinite(s) ? `${(s * 1000).toFixed(0)} ms` : 'n/a');
const mbps = (bytes, s) => (Number.isFinite(s) && s > 0 ? `${(bytes / 1e6 / s).toFixed(0)} MB/s` : 'n/a');
const mb = (bytes) => (Number.isFinite(bytes) ? `${(bytes / 1e6).toFixed(1)} MB` : 'n/a');
const ratio = (r) => (Number.isFinite(r) ? r.toFixed(2) : 'n/a');
const cores = (n) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
/** "≤ 1.15: met", "≤ 1.15: MISSED by 12%" (by how much the value is beyond the limit), "≤ 150 MB: met". */
function verdict(value, limit, { atLeast = false, unit = '' } = {}) {
  const target = `${atLeast ? '≥' : '≤'} ${limit}${unit}`;
  if (!Number.isFinite(value)) return target;
  const ok = atLeast ? value >= limit : value <= limit;
  return `${target}: ${ok ? 'met' : `MISSED by ${Math.abs((value / limit - 1) * 100).toFixed(0)}%`}`;
}

function which(tool) {
  return spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).status === 0;
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

function machine() {
  const cpus = os.cpus();
  return {
    cpu: `${cpus[0]?.model ?? 'unknown'}`.trim(),
    cores: os.availableParallelism?.() ?? cpus.length,
    memory: `${Math.round(os.totalmem() / 2 ** 30)} GiB`,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
  };
}

const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/**
 * CPU seconds the whole machine has used so far (Linux: /proc/stat), or NaN. Less this process's and its
 * children's, it tells how much other processes took during a run.
 */
function machineCpu() {
  try {
    const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = fields;
    return (user + nice + system + irq + softirq + steal) * SECONDS_PER_TICK;
  } catch {
    return NaN;
  }
}

/** CPU seconds of a running process, 0 once it is gone. */
function processCpu(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * SECONDS_PER_TICK; // utime, stime
  } catch {
    return 0;
  }
}

/**
 * The sandbox, in a process of its own (bench/sandbox-process.js): its storage host gets its own event loop,
 * as a real one is another machine. Its store is asked over IPC.
 */
class SandboxProcess {
  static async start(dataDir, certDir) {
    const child = fork(path.join(BENCH, 'sandbox-process.js'), [dataDir, ...(certDir ? [certDir] : [])], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const ready = await new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`the sandbox process exited ${code}`)));
      child.once('message', (message) => resolve(message.ready));
    });
    return new SandboxProcess(child, ready);
  }

  constructor(child, { baseUrl, storageUrl, keys }) {
    this.child = child;
    this.baseUrl = baseUrl;
    this.storageUrl = storageUrl;
    this.keys = keys;
    this.pending = new Map();
    this.nextId = 0;
    child.on('message', ({ id, value, error }) => {
      const call = this.pending.get(id);
      this.pending.delete(id);
      if (error) call?.reject(new Error(`sandbox process: ${error}`));
      else call?.resolve(value);
    });
  }

  call(op, ...args) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, op, args });
    });
  }

  /** Moves the sandbox process, every thread of it, to these cores (taskset's list). */
  pin(cpus) {
    const res = spawnSync('taskset', ['-a', '-p', '-c', cpus, String(this.child.pid)], { encoding: 'utf8' });
    if (res.status !== 0) throw new Error(`taskset could not move the sandbox process to cores ${cpus}: ${res.stderr}`);
  }

  /** CPU seconds the sandbox has taken so far, read from /proc: no IPC inside a measure. */
  cpu() {
    return processCpu(this.child.pid);
  }

  async close() {
    if (!this.child.connected) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.disconnect();
    await exited;
  }
}

/**
 * The cores this process may run on (Linux: /proc/self/status), split in two for the upload comparison, or
 * undefined (fewer than two cores, or no taskset). The comparison runs with the storage host on cores of its
 * own, as another machine's are: the sandbox process on the second half, bds or curl on the first. Sharing
 * every core, the storage host (about 1.2 cores' worth at full speed on 2 cores) borrowed the second core while
 * curl ran, but less while bds did, whose SHA-256 of the bytes it sends (the contract's) takes 0.6 s of CPU per
 * GiB: that figure measures the contest for two cores, not which side of the upload is short.
 */
function coreSplit() {
  let allowed;
  try {
    allowed = /Cpus_allowed_list:\s*(\S+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1];
  } catch {
    return undefined;
  }
  const ids = (allowed ?? '').split(',').flatMap((part) => {
    const [from, to = from] = part.split('-').map(Number);
    return Array.from({ length: to - from + 1 }, (_, k) => from + k);
  });
  if (ids.length < 2 || ids.some((id) => !Number.isInteger(id)) || !which('taskset')) return undefined;
  const half = ids.length >> 1;
  return { contender: ids.slice(0, half).join(','), storage: ids.slice(half).join(','), all: ids.join(',') };
}

/**
 * Where the sandbox keeps what it receives: a memory file system (/dev/shm) when it has room for the largest
 * upload. On this VM, the storage host's writes into ext4's page cache (copy_folio_from_iter_atomic) took from
 * 3 % to 27 % of its CPU from one run to the next, and made the upload's figure bimodal (2.9 s or 4.1 s for 1 GiB
 * of the same bds).
 */
function sandboxRoot(largest, dataFiles) {
  try {
    const { bavail, bsize } = fs.statfsSync('/dev/shm');
    // tmpfs says how large it may grow, not how much memory is free: the data files must stay in the page cache.
    const available = Number(/MemAvailable:\s+(\d+)/.exec(fs.readFileSync('/proc/meminfo', 'utf8'))?.[1]) * 1024;
    const needed = largest * 1.25 + 256 * 2 ** 20;
    if (bavail * bsize > needed && available > needed + dataFiles + 2 ** 30) return '/dev/shm';
  } catch {
    // no /dev/shm or /proc/meminfo
  }
  return DATA;
}

/** Removes the sandbox folders of earlier bench runs that died before they could (their process is gone). */
function removeStaleSandboxes() {
  for (const root of ['/dev/shm', DATA]) {
    let names = [];
    try {
      names = fs.readdirSync(root);
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = Number(/^bds-bench-sandbox-(\d+)$/.exec(name)?.[1]);
      if (!pid || alive(pid)) continue;
      fs.rmSync(path.join(root, name), { recursive: true, force: true });
      log(`removed ${path.join(root, name)}, left by a bench run that ended without cleaning up`);
    }
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * A key and a self-signed certificate for 127.0.0.1 in `dir` (key.pem, cert.pem), made for this run: the
 * storage host's, trusted by bds (NODE_EXTRA_CA_CERTS) and curl (--cacert) alone.
 */
function selfSignedCertificate(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const made = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=bds bench storage',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      path.join(dir, 'key.pem'),
      '-out',
      path.join(dir, 'cert.pem'),
    ],
    { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] },
  );
  if (made.status !== 0) throw new Error(`openssl req could not make the storage host's certificate: ${made.stderr}`);
  return dir;
}

/** The sandbox process of this run, once started: its CPU is the bench's own doing, not "other processes". */
let sandboxProcess;

/** CPU seconds of this process, of its waited-for children, and of the sandbox process. */
function ownCpu() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6 + childTicks() * SECONDS_PER_TICK + (sandboxProcess?.cpu() ?? 0);
}

/**
 * The busy machine: one `gzip -9 </dev/zero >/dev/null` per core, each keeping a core busy until stop(). Its
 * CPU is the bench's own doing, not "other processes".
 */
class Load {
  constructor() {
    this.children = [];
  }

  start() {
    const zero = fs.openSync('/dev/zero', 'r');
    try {
      for (let n = 0; n < (os.availableParallelism?.() ?? os.cpus().length); n++) {
        this.children.push(spawn('gzip', ['-9', '-c'], { stdio: [zero, 'ignore', 'ignore'] }));
      }
    } finally {
      fs.closeSync(zero);
    }
  }

  /** CPU seconds the load has taken so far. */
  cpu() {
    return this.children.reduce((sum, child) => sum + processCpu(child.pid), 0);
  }

  stop() {
    for (const child of this.children) child.kill();
    this.children = [];
  }
}

const load = new Load();
process.on('exit', () => load.stop());

/** CPU seconds of everything but other processes: this one, its children and the load. */
const benchCpu = () => ownCpu() + load.cpu();

/**
 * Waits for a second in which other processes took at most `maxOthers` cores' worth of CPU (a minute at
 * most), so that a timed run starts on a quiet machine rather than in the middle of someone's test suite.
 */
async function quietMoment(maxOthers) {
  for (let second = 0; second < 60; second++) {
    const machineStart = machineCpu();
    const benchStart = benchCpu();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    if (!(machineCpu() - machineStart - (benchCpu() - benchStart) > maxOthers)) return;
  }
}

/** The data folder of this size (records.jsonl.gz, schema.json, report.json), made if it is missing. */
async function dataFolder(size) {
  const dir = path.join(DATA, sizeLabel(size));
  let meta = readMeta(dir);
  if (!meta) {
    const free = fs.statfsSync ? fs.statfsSync(DATA) : undefined;
    if (free && free.bavail * free.bsize < size * 2.5) {
      throw new Error(`not enough free disk under ${DATA} for a ${sizeLabel(size)} file and its upload`);
    }
    log(`making ${dir} (${sizeLabel(size)} compressed; kept for later runs)`);
    let shown = 0;
    meta = await generate(dir, size, {
      onProgress: (written, target) => {
        const percent = Math.floor((written / target) * 100);
        if (percent >= shown + 10) {
          shown = percent - (percent % 10);
          log(`  ${shown}%`);
        }
      },
    });
    log(
      `made ${(meta.bytes / 2 ** 20).toFixed(0)} MiB (${(meta.rawBytes / meta.bytes).toFixed(2)}:1, ${meta.records} records) in ${meta.seconds.toFixed(0)} s`,
    );
  }
  return { dir, file: path.join(dir, 'records.jsonl.gz'), ...meta };
}

/** A folder with the inflated data file of the folder of this size, as a plain records.jsonl. */
async function plainFolder(size) {
  const gz = await dataFolder(size);
  const dir = path.join(DATA, `${sizeLabel(size)}-plain`);
  const file = path.join(dir, 'records.jsonl');
  if (!fs.existsSync(file) || fs.statSync(file).size !== gz.rawBytes) {
    log(`inflating ${gz.file} into ${file} (kept for later runs)`);
    fs.mkdirSync(dir, { recursive: true });
    for (const name of ['schema.json', 'report.json']) fs.copyFileSync(path.join(gz.dir, name), path.join(dir, name));
    await pipeline(fs.createReadStream(gz.file), zlib.createGunzip(), fs.createWriteStream(`${file}.partial`));
    fs.renameSync(`${file}.partial`, file);
  }
  return { dir, file, bytes: gz.rawBytes, records: gz.records };
}

/** Reads the file once so that every contender starts with it in the page cache. */
async function warmCache(file) {
  for await (const _ of fs.createReadStream(file, { highWaterMark: 4 << 20 })) {
    // nothing
  }
}

/**
 * Runs a command, on the cores `cpus` names when given, calling `onEvent` with each bench/bds-timed.js event as it
 * arrives; returns its wall time, output, exit code, peak RSS (GNU time -v when `rss` and available, writing its
 * report in `scratch`, else /proc/<pid>/status VmHWM polled; both count the process's threads), how many cores'
 * worth of CPU other processes took meanwhile (`others`), and its events (bench/bds-timed.js's stderr lines).
 */
function measure(command, args, { env, rss = false, scratch = os.tmpdir(), cpus, onEvent } = {}) {
  const useTime = rss && fs.existsSync('/usr/bin/time');
  const timeFile = useTime ? path.join(scratch, `time-${process.pid}-${Date.now()}`) : undefined;
  const [timed, timedArgs] = useTime ? ['/usr/bin/time', ['-v', '-o', timeFile, command, ...args]] : [command, args];
  const [cmd, argv] = cpus ? ['taskset', ['-c', cpus, timed, ...timedArgs]] : [timed, timedArgs];
  return new Promise((resolve, reject) => {
    const machineStart = machineCpu();
    const benchStart = benchCpu();
    const started = performance.now();
    const child = spawn(cmd, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let hwmKiB = 0;
    let poll;
    if (rss && !useTime) {
      poll = setInterval(() => {
        try {
          const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
          hwmKiB = Math.max(hwmKiB, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
        } catch {
          // gone
        }
      }, 20);
    }
    child.stdout.setEncoding('utf8').on('data', (text) => (stdout += text));
    let seen = 0;
    child.stderr.setEncoding('utf8').on('data', (text) => {
      stderr += text;
      // Each event as it arrives, for what must be read at its moment (the storage host's CPU).
      const end = stderr.lastIndexOf('\n') + 1;
      for (const line of stderr.slice(seen, end).split('\n')) {
        if (line.startsWith('event ')) onEvent?.(JSON.parse(line.slice('event '.length)));
      }
      seen = end;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const wall = (performance.now() - started) / 1000;
      const others = (machineCpu() - machineStart - (benchCpu() - benchStart)) / wall;
      clearInterval(poll);
      let peakRss = hwmKiB ? hwmKiB * 1024 : NaN;
      let cpu = NaN;
      if (timeFile) {
        try {
          const report = fs.readFileSync(timeFile, 'utf8');
          peakRss = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(report)?.[1]) * 1024;
          // CPU seconds of the command (its threads too): what a busy machine disturbs least.
          cpu =
            Number(/User time \(seconds\): ([\d.]+)/.exec(report)?.[1]) +
            Number(/System time \(seconds\): ([\d.]+)/.exec(report)?.[1]);
        } catch {
          // keep NaN
        }
        fs.rmSync(timeFile, { force: true });
      }
      const events = stderr
        .split('\n')
        .filter((line) => line.startsWith('event '))
        .map((line) => JSON.parse(line.slice('event '.length)));
      resolve({ code, wall, stdout, stderr, events, peakRss, cpu, others: Math.max(0, others) });
    });
  });
}

// ---------------------------------------------------------------------------------------------- contenders

/**
 * Each contender is one run of something timed; a pair (a first run and the one that should be served from
 * the pass cache) runs together with the same HOME. Each returns its measures and `others`, the most cores'
 * worth of CPU other processes took during any of its commands.
 */
class Bench {
  constructor(box, data, plain) {
    this.box = box;
    this.data = data;
    this.plain = plain;
    /** Every HOME and temp file of the run is made in here, so that one removal cleans up, even after Ctrl-C. */
    this.scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'bds-bench-'));
  }

  /** A fresh HOME with its own cache (the pass cache), state (delivery records) and config folders. */
  freshHome() {
    return fs.mkdtempSync(path.join(this.scratch, 'home-'));
  }

  env(home, extra = {}) {
    return {
      PATH: process.env.PATH,
      HOME: home,
      XDG_CACHE_HOME: path.join(home, 'cache'),
      XDG_STATE_HOME: path.join(home, 'state'),
      XDG_CONFIG_HOME: path.join(home, 'config'),
      TMPDIR: process.env.TMPDIR || os.tmpdir(),
      LANG: process.env.LANG || 'C.UTF-8',
      UV_THREADPOOL_SIZE: THREADPOOL,
      BDS_BASE_URL: this.box.baseUrl,
      BDS_API_KEY: this.box.keys.live,
      // The storage host's certificate, for bds (Node) and for curl in baseline.sh.
      ...(this.cert ? { NODE_EXTRA_CA_CERTS: this.cert, CURL_CA_BUNDLE: this.cert } : {}),
      ...extra,
    };
  }

  /**
   * Runs `what` with the sandbox process on its own cores and every command `what` measures on the others
   * (coreSplit); as is when the cores cannot be split.
   */
  async isolated(what) {
    if (!this.split) return what();
    this.box.pin(this.split.storage);
    this.contenderCpus = this.split.contender;
    try {
      return await what();
    } finally {
      this.contenderCpus = undefined;
      try {
        this.box.pin(this.split.all);
      } catch (error) {
        // Not worth hiding what `what` threw; the rest of the run then has the storage host on fewer cores.
        log(`warning: ${error.message}`);
      }
    }
  }

  /** A fresh source, so that no first delivery is "already delivered". */
  source() {
    return this.box.call('createSource', `bench ${Date.now()}`);
  }

  /** Checks that the storage host received `expected` ({sha256, bytes}) and frees its disk. */
  async verifyAndClean(batchId, what, expected) {
    const batch = await this.box.call('batch', batchId);
    if (!batch?.upload) throw new Error(`${what}: the storage host has no upload for ${batchId}`);
    if (batch.upload.sha256 !== expected.sha256) {
      throw new Error(`${what}: the storage host stored sha256 ${batch.upload.sha256}, expected ${expected.sha256}`);
    }
    if (batch.upload.bytes !== expected.bytes)
      throw new Error(`${what}: stored ${batch.upload.bytes} bytes, not ${expected.bytes}`);
    await this.box.call('removeUpload', batchId);
    return batch;
  }

  /**
   * bds (bench/bds-timed.js) with these arguments and HOME, under GNU time for its peak RSS; checks its exit
   * code, its record count and checksum against the data's (a plain .jsonl's against the first run's), and
   * whether its pass was remembered (`fromCache`) as expected.
   */
  async bds(args, { home, data, fromCache, bin = TIMED_BIN }) {
    // The storage host's CPU over the upload phase alone, read when its two events arrive.
    const storageAt = {};
    const res = await measure(process.execPath, [bin, ...args, '--period', PERIOD, '--json'], {
      env: this.env(home),
      rss: true,
      scratch: this.scratch,
      cpus: this.contenderCpus,
      onEvent: (event) => {
        if (event.step === 'uploading' || event.step === 'completing') storageAt[event.step] = this.box.cpu();
      },
    });
    const storageCpu = storageAt.completing - storageAt.uploading;
    const what = `bds ${args[0]} ${path.basename(data.dir)}`;
    if (res.code !== 0) throw new Error(`${what} exited ${res.code}:\n${res.stderr}`);
    const out = JSON.parse(res.stdout);
    if (out.record_count !== data.records)
      throw new Error(`${what} counted ${out.record_count} records, the file has ${data.records}`);
    if (data.sha256 && out.sha256 !== data.sha256)
      throw new Error(`${what} reported sha256 ${out.sha256}, the file's is ${data.sha256}`);
    if (!data.sha256) {
      // The same gzip whatever the run: the same checksum every time.
      this.plainSha256 ??= out.sha256;
      if (out.sha256 !== this.plainSha256)
        throw new Error(`${what} gave sha256 ${out.sha256}, earlier ${this.plainSha256}`);
    }
    const at = (step) => res.events.find((e) => e.step === step);
    if (at('checked')?.fromCache !== fromCache) {
      throw new Error(
        `${what}: its pass was ${at('checked')?.fromCache ? '' : 'not '}remembered, expected ${fromCache ? '' : 'not '}to be`,
      );
    }
    const between = (from, to) => (at(to)?.at - at(from)?.at) / 1000;
    const preflight = between('checking', 'checked');
    // A step event that is missing means the bench no longer knows bds's events: fail, rather than print n/a.
    if (Number.isNaN(preflight)) throw new Error(`${what}: no 'checking' or 'checked' step event from bds-timed.js`);
    return {
      out,
      wall: res.wall,
      preflight,
      upload: between('uploading', 'completing'),
      peakRss: res.peakRss,
      cpu: res.cpu,
      storageCpu,
      others: res.others,
    };
  }

  /** bds deliver, its upload checked against the local file (or, for a plain .jsonl, against bds's checksum). */
  async deliver(home, data, { fromCache = false, source, args = [], bin } = {}) {
    source ??= await this.source();
    const result = await this.bds(['deliver', data.dir, '--source', source, ...args], { home, data, fromCache, bin });
    if (!result.out.skipped) {
      const expected = data.sha256 ? data : { sha256: result.out.sha256, bytes: result.out.bytes };
      await this.verifyAndClean(result.out.batch.id, `bds deliver ${path.basename(data.dir)}`, expected);
    }
    return result;
  }

  check(home, data, bin) {
    return this.bds(['check', data.dir], { home, data, fromCache: false, bin });
  }

  /** A first delivery with --limit-rate: its upload phase, whose rate the table compares with the cap. */
  async capped() {
    const result = await this.deliver(this.freshHome(), this.data, { args: ['--limit-rate', String(RATE_CAP)] });
    return { upload: result.upload, bytes: result.out.bytes, others: result.others };
  }

  /** A first delivery, then the same command again: "already delivered". */
  async firstAndRerun() {
    const home = this.freshHome();
    const source = await this.source();
    const first = await this.deliver(home, this.data, { source });
    const rerun = await this.deliver(home, this.data, { fromCache: true, source });
    if (!rerun.out.skipped) throw new Error(`the re-run delivered ${rerun.out.batch.id} again instead of skipping it`);
    return { first, rerun, others: Math.max(first.others, rerun.others) };
  }

  /** bds check of a fresh HOME, then deliver: its pass comes from the cache. */
  async checkThenDeliver() {
    const home = this.freshHome();
    const check = await this.check(home, this.data);
    const deliver = await this.deliver(home, this.data, { fromCache: true });
    return { check, deliver, others: Math.max(check.others, deliver.others) };
  }

  /** The upload case: a check remembers the pass, then a delivery whose upload phase is the figure. */
  async upload(bin = TIMED_BIN) {
    const home = this.freshHome();
    await this.check(home, this.data, bin);
    const deliver = await this.deliver(home, this.data, { fromCache: true, bin });
    const { upload, wall, peakRss, cpu, storageCpu, others } = deliver;
    return { upload, wall, peakRss, cpu, storageCpu, others };
  }

  /** The upload case with the storage host on every core, as bds: what two shared cores give. */
  uploadShared() {
    return this.upload();
  }

  /** curl -T with the storage host on every core, as curl. */
  curlShared() {
    return this.curl();
  }

  /** The upload case with the bds of another checkout (--other), interleaved with this one's: before and after. */
  uploadOther() {
    return this.upload(path.join(this.other, 'bench', 'bds-timed.js'));
  }

  /** bench/inflate.js: the floor of the pre-flight of a .jsonl.gz. */
  async inflate() {
    const res = await measure(process.execPath, [path.join(BENCH, 'inflate.js'), this.data.file]);
    if (res.code !== 0) throw new Error(`bench/inflate.js exited ${res.code}: ${res.stderr}`);
    const out = JSON.parse(res.stdout);
    if (out.bytes !== this.data.rawBytes)
      throw new Error(`bench/inflate.js inflated ${out.bytes} bytes, not ${this.data.rawBytes}`);
    return { seconds: out.seconds, others: res.others };
  }

  /**
   * A first delivery of the plain .jsonl: its pre-flight checks every line, gzips on every core into the temp
   * copy that is then uploaded, and hashes it.
   */
  async plainDeliver() {
    const result = await this.deliver(this.freshHome(), this.plain);
    return { preflight: result.preflight, peakRss: result.peakRss, others: result.others };
  }

  /** pigz -6 on as many threads as the cores bds gzips on, into a file in the temp folder as bds writes its copy. */
  async pigz() {
    const out = path.join(this.scratch, 'pigz.gz');
    try {
      const res = await measure('sh', ['-c', `exec pigz -6 -p ${CORES} -c "$1" > "$2"`, 'sh', this.plain.file, out]);
      if (res.code !== 0) throw new Error(`pigz exited ${res.code}: ${res.stderr}`);
      return { seconds: res.wall, others: res.others };
    } finally {
      fs.rmSync(out, { force: true });
    }
  }

  async baseline() {
    const res = await measure('bash', [path.join(BENCH, 'baseline.sh'), this.data.dir, PERIOD], {
      env: this.env(this.freshHome(), { BDS_SOURCE_ID: await this.source() }),
    });
    if (res.code !== 0) throw new Error(`baseline.sh exited ${res.code}:\n${res.stderr.slice(-2000)}`);
    const id = res.stdout.trim().split('\n').pop();
    const batch = await this.verifyAndClean(id, 'baseline', this.data);
    if (batch.status !== 'received') throw new Error(`baseline: batch ${id} is ${batch.status}`);
    const phases = Object.fromEntries(
      [...(/phases (.*)/.exec(res.stderr)?.[1] ?? '').matchAll(/(\w+)=([\d.]+)/g)].map((m) => [m[1], Number(m[2])]),
    );
    return { wall: res.wall, phases, others: res.others };
  }

  async curl() {
    const created = await this.api('POST', '/api/v1/batches', {
      source_id: await this.source(),
      product: 'records',
      period: PERIOD,
      record_count: this.data.records,
      schema: JSON.parse(fs.readFileSync(path.join(this.data.dir, 'schema.json'), 'utf8')),
      report: JSON.parse(fs.readFileSync(path.join(this.data.dir, 'report.json'), 'utf8')),
    });
    const headers = Object.entries(created.upload.headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
    const storageBefore = this.box.cpu();
    const res = await measure(
      'curl',
      [
        '-sS',
        '--fail-with-body',
        '-X',
        created.upload.method,
        '-T',
        this.data.file,
        ...(this.cert ? ['--cacert', this.cert] : []),
        ...headers,
        created.upload.url,
        '-o',
        '/dev/null',
      ],
      { rss: true, scratch: this.scratch, cpus: this.contenderCpus },
    );
    const storageCpu = this.box.cpu() - storageBefore;
    if (res.code !== 0) throw new Error(`curl -T exited ${res.code}: ${res.stderr}`);
    await this.verifyAndClean(created.batch.id, 'curl -T', this.data);
    return { wall: res.wall, cpu: res.cpu, storageCpu, others: res.others };
  }

  async api(method, route, body) {
    const res = await fetch(`${this.box.baseUrl}${route}`, {
      method,
      headers: { authorization: `Bearer ${this.box.keys.live}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`${method} ${route} → ${res.status}: ${JSON.stringify(json)}`);
    return json;
  }

  close() {
    fs.rmSync(this.scratch, { recursive: true, force: true });
  }
}

/** How each contender's result is logged. */
const SUMMARY = {
  firstAndRerun: (r) =>
    `first ${seconds(r.first.wall)} (pre-flight ${seconds(r.first.preflight)}, upload ${seconds(r.first.upload)}, peak RSS ${mb(r.first.peakRss)}), re-run ${seconds(r.rerun.wall)}`,
  checkThenDeliver: (r) =>
    `check ${seconds(r.check.wall)} (pre-flight ${seconds(r.check.preflight)}, peak RSS ${mb(r.check.peakRss)}), deliver after it ${seconds(r.deliver.wall)} (peak RSS ${mb(r.deliver.peakRss)})`,
  inflate: (r) => seconds(r.seconds),
  plainDeliver: (r) => `pre-flight ${seconds(r.preflight)}, peak RSS ${mb(r.peakRss)}`,
  pigz: (r) => seconds(r.seconds),
  baseline: (r) =>
    `${seconds(r.wall)}, ${Object.entries(r.phases)
      .map(([k, v]) => `${k} ${v.toFixed(2)}`)
      .join(', ')}`,
  curl: (r) => `${seconds(r.wall)} (CPU ${seconds(r.cpu)}, ${storageBusy(r.storageCpu, r.wall)})`,
  capped: (r) => `upload ${seconds(r.upload)}, ${mbps(r.bytes, r.upload)}`,
  uploadOther: (r) => SUMMARY.upload(r),
  uploadShared: (r) => SUMMARY.upload(r),
  curlShared: (r) => SUMMARY.curl(r),
  upload: (r) =>
    `upload ${seconds(r.upload)} (delivery ${seconds(r.wall)}, CPU ${seconds(r.cpu)}, peak RSS ${mb(r.peakRss)}, ${storageBusy(r.storageCpu, r.upload)})`,
};

/**
 * The storage host's CPU during an upload, and as a share of the upload's time: near 1 on cores of its own, the
 * storage host was the short side; well under, the client was.
 */
function storageBusy(cpu, upload) {
  return `storage host CPU ${seconds(cpu)}, ${ratio(cpu / upload)} of the upload`;
}

/**
 * Start-up: node -e 0, bds --version and bds --help, interleaved (bench/startup.js), on this Node and on each
 * pinned Node of scripts/node-from-npm.js that is installed already (the bench installs nothing: `node
 * scripts/node-from-npm.js 22` does); and release/bds-linux-x64 against its own Node, when both are there.
 * HOME is the user's: the first, uncounted round fills Node's compile cache, as any first run does.
 */
function startup(runs) {
  const nodes = [{ version: process.versions.node, file: process.execPath }];
  for (const major of Object.keys(PINNED).map(Number)) {
    const { version } = PINNED[major];
    const file = pinnedNodePath(major);
    if (major >= 20 && version !== process.versions.node && fs.existsSync(file)) nodes.push({ version, file });
  }
  const cases = nodes.flatMap(({ version, file }) => [
    [`${version} node`, file, ['-e', '0']],
    [`${version} version`, file, [BIN, '--version']],
    [`${version} help`, file, [BIN, '--help']],
  ]);
  const binaryNode = PINNED[BINARY_NODE] && pinnedNodePath(BINARY_NODE);
  const binary = fs.existsSync(BINARY) && binaryNode && fs.existsSync(binaryNode);
  if (binary) cases.push(['binary version', BINARY, ['--version']], ['binary help', BINARY, ['--help']]);
  const timed = Object.fromEntries(timeCommands(cases, runs).map((result) => [result.name, result]));
  return {
    nodes: nodes.map(({ version }) => ({
      version,
      node: timed[`${version} node`],
      showVersion: timed[`${version} version`],
      showHelp: timed[`${version} help`],
    })),
    binary: binary
      ? {
          version: PINNED[BINARY_NODE].version,
          node: timed[`${PINNED[BINARY_NODE].version} node`],
          showVersion: timed['binary version'],
          showHelp: timed['binary help'],
        }
      : undefined,
  };
}

// ---------------------------------------------------------------------------------------------- report

function table(rows) {
  rows = rows.map((row) => row.map((cell) => String(cell ?? '').replace(/\|/g, '\\|')));
  const widths = rows[0].map((_, col) => Math.max(...rows.map((row) => String(row[col] ?? '').length)));
  const line = (row) => `| ${row.map((cell, col) => cell.padEnd(widths[col])).join(' | ')} |`;
  return [line(rows[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

/** "1.08: met"; "1.20: no worse" (than before issue 22, the first target missed); "1.30: WORSE". */
function ratioVerdict(value, { limit, was }, load) {
  if (!Number.isFinite(value)) return 'n/a';
  const shown = ratio(value);
  if (Number(shown) <= limit) return `${shown}: met`;
  return Number(shown) <= was[load] ? `${shown}: no worse` : `${shown}: WORSE`;
}

/** The medians and peaks of one load's runs. */
function summarize(loadResult, options) {
  const { runs } = loadResult;
  const pick = (list, get) => (list ?? []).map(get);
  // Every pass over the .jsonl.gz that was not remembered: the first deliveries' and the checks'.
  const preflights = [
    ...pick(runs.firstAndRerun, (r) => r.first.preflight),
    ...pick(runs.checkThenDeliver, (r) => r.check.preflight),
  ];
  const most = (values) => (values.length ? Math.max(...values) : NaN);
  return {
    preflights: preflights.length,
    preflight: median(preflights),
    inflate: median(pick(runs.inflate, (r) => r.seconds)),
    plainPreflight: median(pick(runs.plainDeliver, (r) => r.preflight)),
    pigz: median(pick(runs.pigz, (r) => r.seconds)),
    first: median(pick(runs.firstAndRerun, (r) => r.first.wall)),
    // The upload case against curl -T, each with the storage host on cores of its own (coreSplit) and on every
    // core; a bench of before them took the first deliveries' uploads.
    upload: median(runs.upload ? pick(runs.upload, (r) => r.upload) : pick(runs.firstAndRerun, (r) => r.first.upload)),
    uploadFrom: runs.upload ? 'deliver after check' : 'first deliveries',
    uploadCases: {
      isolated: runs.upload && uploadCase(runs.upload, runs.curl),
      shared: runs.uploadShared && uploadCase(runs.uploadShared, runs.curlShared),
    },
    rerun: median(pick(runs.firstAndRerun, (r) => r.rerun.wall)),
    check: median(pick(runs.checkThenDeliver, (r) => r.check.wall)),
    afterCheck: median(pick(runs.checkThenDeliver, (r) => r.deliver.wall)),
    rss: {
      check: most(pick(runs.checkThenDeliver, (r) => r.check.peakRss)),
      deliver: most([
        ...pick(runs.firstAndRerun, (r) => r.first.peakRss),
        ...pick(runs.checkThenDeliver, (r) => r.deliver.peakRss),
      ]),
      bigCheck: loadResult.big.check.peakRss,
      bigDeliver: loadResult.big.deliver.peakRss,
      plainCheck: loadResult.plainCheck.peakRss,
      plainDeliver: most(pick(runs.plainDeliver, (r) => r.peakRss)),
    },
    start: loadResult.start,
    big: loadResult.big,
    baseline: runs.baseline ?? [],
    curl: median(pick(runs.curl, (r) => r.wall)),
    capped: median(pick(runs.capped, (r) => r.upload)),
    n: options.runs,
  };
}

/**
 * The rows of one upload case: bds's upload phase (deliver after check) and curl -T, with the CPU of each command
 * and the storage host's CPU as a share of the upload's time, then their ratio: against the target when `judged`.
 */
function uploadRows(c, { where, judged, bytes, n }) {
  const row = (what, time, cpu, storage) => [
    `${what}, ${where}`,
    `${seconds(time)}, ${mbps(bytes, time)} (CPU ${seconds(cpu)}; storage host busy ${ratio(storage)})`,
    '',
    '',
  ];
  return [
    row(`bds upload phase (deliver after check), median of ${n}`, c.upload, c.uploadCpu, c.uploadStorage),
    row(`curl -T, median of ${n}`, c.curl, c.curlCpu, c.curlStorage),
    [
      `**bds upload / curl -T** (throughput), ${where}`,
      ratio(c.curl / c.upload),
      '',
      judged ? verdict(c.curl / c.upload, TARGETS.upload, { atLeast: true }) : 'information',
    ],
  ];
}

/** "core 1", "cores 2,3": a taskset list of cores, in words. */
function coreList(list) {
  return `core${list.includes(',') ? 's' : ''} ${list}`;
}

/** Medians of an upload case and of curl -T beside it: times, CPU of the command, the storage host's share. */
function uploadCase(uploads, curls = []) {
  return {
    upload: median(uploads.map((r) => r.upload)),
    uploadCpu: median(uploads.map((r) => r.cpu)),
    uploadStorage: median(uploads.map((r) => r.storageCpu / r.upload)),
    curl: median(curls.map((r) => r.wall)),
    curlCpu: median(curls.map((r) => r.cpu)),
    curlStorage: median(curls.map((r) => r.storageCpu / r.wall)),
  };
}

function report(results) {
  const { options, data, plain, machine: m, loads, pigzInstalled } = results;
  const present = LOADS.filter((load) => loads[load]);
  const sums = Object.fromEntries(present.map((load) => [load, summarize(loads[load], options)]));
  const size = sizeLabel(options.size);
  const bigSize = sizeLabel(options.rssSize);
  const n = options.runs;
  /** A row: the measure, then each load's cell from `cell(summary)`, then the target. */
  const row = (measure, cell, target = '') => [
    measure,
    ...LOADS.map((load) => (sums[load] ? cell(sums[load], load) : 'not measured')),
    target,
  ];
  const rssCell = (get) => (s) => `${mb(get(s.rss))}${get(s.rss) / 1e6 <= TARGETS.rssMB ? '' : ' MISSED'}`;
  const rssTarget = `≤ ${TARGETS.rssMB} MB`;
  const was = (t) => `≤ ${t.limit}; before: ${t.was.quiet} quiet, ${t.was.busy} busy`;

  const rows = [['measure', 'quiet machine', 'busy machine (gzip -9 on every core)', 'target']];
  rows.push(
    row(
      `bds pre-flight of the .jsonl.gz (hash, inflate, count, check), median of ${sums[present[0]].preflights}`,
      (s) => `${seconds(s.preflight)}, ${mbps(data.rawBytes, s.preflight)} inflated`,
    ),
    row(
      `bare streaming inflate of it (bench/inflate.js), median of ${n}`,
      (s) => `${seconds(s.inflate)}, ${mbps(data.rawBytes, s.inflate)}`,
    ),
    row(
      '**bds pre-flight / bare inflate**',
      (s, load) => ratioVerdict(s.preflight / s.inflate, TARGETS.inflate, load),
      was(TARGETS.inflate),
    ),
    row(
      `bds pre-flight of the plain .jsonl (check, gzip -6 on ${CORES} cores, hash, write), median of ${n}`,
      (s) => `${seconds(s.plainPreflight)}, ${mbps(plain.bytes, s.plainPreflight)}`,
    ),
    row(`pigz -6 -p ${CORES} of it, median of ${n}`, (s) =>
      pigzInstalled ? `${seconds(s.pigz)}, ${mbps(plain.bytes, s.pigz)}` : 'n/a',
    ),
    row(
      '**bds plain .jsonl / pigz -6**',
      (s, load) =>
        pigzInstalled
          ? ratioVerdict(s.plainPreflight / s.pigz, TARGETS.pigz, load)
          : 'n/a: pigz not installed, `apt-get install pigz`',
      was(TARGETS.pigz),
    ),
    row(`bds deliver, first (fresh cache and state), median of ${n}`, (s) => seconds(s.first)),
    row(`the same deliver again: already delivered, median of ${n}`, (s) => seconds(s.rerun)),
    row(
      '**re-run / first delivery**',
      (s, load) => ratioVerdict(s.rerun / s.first, TARGETS.rerun, load),
      was(TARGETS.rerun),
    ),
    row(`bds check (fresh cache), median of ${n}`, (s) => seconds(s.check)),
    row(`bds deliver right after it, median of ${n}`, (s) => seconds(s.afterCheck)),
    row(
      '**deliver after check / check**',
      (s, load) => ratioVerdict(s.afterCheck / s.check, TARGETS.afterCheck, load),
      was(TARGETS.afterCheck),
    ),
    row(
      `**peak RSS, bds check** of the .jsonl.gz, ${size} (the most of ${n})`,
      rssCell((r) => r.check),
      rssTarget,
    ),
    row(
      `**peak RSS, bds deliver** of the .jsonl.gz, ${size} (the most of ${2 * n})`,
      rssCell((r) => r.deliver),
      rssTarget,
    ),
    row(
      `**peak RSS, bds check** of the .jsonl.gz, ${bigSize} (one run)`,
      rssCell((r) => r.bigCheck),
      rssTarget,
    ),
    row(
      `**peak RSS, bds deliver** of the .jsonl.gz, ${bigSize} (one run)`,
      rssCell((r) => r.bigDeliver),
      rssTarget,
    ),
    row(
      `**peak RSS, bds check** of the plain .jsonl (one run)`,
      rssCell((r) => r.plainCheck),
      rssTarget,
    ),
    row(
      `**peak RSS, bds deliver** of the plain .jsonl (the most of ${n})`,
      rssCell((r) => r.plainDeliver),
      rssTarget,
    ),
    row(
      `bds deliver of ${bigSize}: time, pre-flight`,
      (s) => `${seconds(s.big.deliver.wall)}, ${mbps(s.big.bytes, s.big.deliver.preflight)}`,
    ),
  );
  // Start-up is judged on the quiet machine; on the busy one, where a new process waits for a core as long
  // as the scheduler pleases, the wall times are loose and shown for information (the CPU times are not).
  const startRatio = (run, node, limit, load) => {
    const value = run.wallMedian / node.wallMedian;
    const missed = load === 'quiet' && Number(ratio(value)) > limit;
    return `${ratio(value)}${missed ? ' MISSED' : ''} (${ms(run.wallMedian)}; CPU ${ratio(run.cpuMean / node.cpuMean)})`;
  };
  const startFirst = sums[present[0]].start;
  startFirst.nodes.forEach(({ version }, i) => {
    const limit = Number(version.split('.')[0]) >= 22 ? TARGETS.startup : TARGETS.startupNode20;
    rows.push(
      row(
        `Node ${version}: node -e 0, median of ${options.startupRuns}`,
        (s) => `${ms(s.start.nodes[i].node.wallMedian)} (CPU ${ms(s.start.nodes[i].node.cpuMean)})`,
      ),
      row(
        `**Node ${version}: bds --version / node -e 0**`,
        (s, load) => startRatio(s.start.nodes[i].showVersion, s.start.nodes[i].node, limit, load),
        `≤ ${limit} (quiet)`,
      ),
      row(
        `**Node ${version}: bds --help / node -e 0**`,
        (s, load) => startRatio(s.start.nodes[i].showHelp, s.start.nodes[i].node, limit, load),
        `≤ ${limit} (quiet)`,
      ),
    );
  });
  if (startFirst.binary) {
    const limit = TARGETS.startup;
    rows.push(
      row(
        `**release/bds-linux-x64 --version / its Node's (${startFirst.binary.version}) -e 0**`,
        (s, load) => startRatio(s.start.binary.showVersion, s.start.binary.node, limit, load),
        `≤ ${limit} (quiet)`,
      ),
      row(
        `**release/bds-linux-x64 --help / its Node's -e 0**`,
        (s, load) => startRatio(s.start.binary.showHelp, s.start.binary.node, limit, load),
        `≤ ${limit} (quiet)`,
      ),
    );
  }
  const quiet = sums.quiet;
  if (quiet?.baseline.length) {
    const phase = (p) => seconds(median(quiet.baseline.map((r) => r.phases[p])));
    const baseline = median(quiet.baseline.map((r) => r.wall));
    const noCheck = median(quiet.baseline.map((r) => r.wall - (r.phases.check ?? NaN)));
    rows.push(
      [
        `baseline.sh, median of ${quiet.baseline.length}`,
        `${seconds(baseline)} (sha256sum ${phase('hash')}, zcat|wc -l ${phase('count')}, zcat|jq ${phase('check')}, curl -T ${phase('upload')})`,
        '',
        '',
      ],
      [
        '**bds deliver / baseline.sh**',
        ratio(quiet.first / baseline),
        '',
        verdict(quiet.first / baseline, TARGETS.baseline),
      ],
      ['bds deliver / baseline.sh without its jq check', ratio(quiet.first / noCheck), '', 'information'],
    );
  }
  const cases = quiet?.uploadCases ?? {};
  const split = results.uploadCores;
  if (cases.isolated) {
    const where = `storage host on ${coreList(split.storage)}`;
    rows.push(...uploadRows(cases.isolated, { where, judged: true, bytes: data.bytes, n }));
  } else if (quiet) {
    // A bench of before the two cases: the storage host shared every core.
    rows.push(
      [
        `bds upload phase (${quiet.uploadFrom}), median of ${n}`,
        `${seconds(quiet.upload)}, ${mbps(data.bytes, quiet.upload)}`,
        '',
        '',
      ],
      [
        `curl -T to the storage host, median of ${n}`,
        `${seconds(quiet.curl)}, ${mbps(data.bytes, quiet.curl)}`,
        '',
        '',
      ],
      [
        '**bds upload / curl -T** (throughput)',
        ratio(quiet.curl / quiet.upload),
        '',
        verdict(quiet.curl / quiet.upload, TARGETS.upload, { atLeast: true }),
      ],
    );
  }
  if (cases.shared) {
    const where = 'cores shared';
    rows.push(...uploadRows(cases.shared, { where, judged: false, bytes: data.bytes, n }));
  }
  if (Number.isFinite(quiet?.capped)) {
    const achieved = data.bytes / quiet.capped / RATE_CAP;
    rows.push([
      `bds upload phase with --limit-rate ${RATE_CAP}, median of ${n}`,
      `${seconds(quiet.capped)}, ${mbps(data.bytes, quiet.capped)} (${ratio(achieved)} of the cap)`,
      '',
      `within 10% of ${mbps(RATE_CAP, 1)}: ${Math.abs(achieved - 1) <= 0.1 ? 'met' : 'MISSED'}`,
    ]);
  }
  rows.push([
    'sandbox process peak RSS (its own process since issue 34)',
    mb(results.sandboxRss),
    '',
    'uploads stream to a file',
  ]);

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

function updateReadme(markdown) {
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

// ---------------------------------------------------------------------------------------------- main

/** One column of the table: every contender `runs` times (the order rotating), the second size and the plain check once, and the start-up. */
async function runLoad(loadName, bench, options, { data, bigData, plain, pigzInstalled }) {
  const quiet = loadName === 'quiet';
  if (!quiet) {
    load.start();
    log(`busy: ${load.children.length} gzip -9 running`);
  }
  const loadAtStart = loadAverage();
  const contenders = options.only ?? [
    'firstAndRerun',
    'inflate',
    'checkThenDeliver',
    'plainDeliver',
    ...(pigzInstalled ? ['pigz'] : []),
    // The comparisons with hand-written tools are for a quiet machine.
    ...(quiet && options.baseline ? ['baseline'] : []),
    ...(quiet ? ['curl', 'upload', 'curlShared', 'uploadShared', 'capped'] : []),
  ];
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
        await warmCache(name === 'plainDeliver' || name === 'pigz' ? plain.file : data.file);
        const result = await timed(`run ${run + 1}/${options.runs}: ${name}`, () =>
          UPLOAD_COMPARISON.has(name) ? bench.isolated(() => bench[name]()) : bench[name](),
        );
        runs[name].push(result);
        log(`  ${SUMMARY[name](result)}; others ${cores(result.others)}`);
      }
    }
    if (options.only) return { runs, others, retried };
    await warmCache(bigData.file);
    const bigDeliver = await timed(`bds deliver of ${sizeLabel(options.rssSize)} (fresh cache and state)`, () =>
      bench.deliver(bench.freshHome(), bigData),
    );
    log(`  ${seconds(bigDeliver.wall)}, peak RSS ${mb(bigDeliver.peakRss)}`);
    const bigCheck = await timed(`bds check of ${sizeLabel(options.rssSize)}`, () =>
      bench.check(bench.freshHome(), bigData),
    );
    log(`  ${seconds(bigCheck.wall)}, peak RSS ${mb(bigCheck.peakRss)}`);
    await warmCache(plain.file);
    const plainCheck = await timed('bds check of the plain .jsonl', () => bench.check(bench.freshHome(), plain));
    log(`  ${seconds(plainCheck.wall)}, peak RSS ${mb(plainCheck.peakRss)}`);
    log(`${loadName}: start-up, ${options.startupRuns} runs each`);
    const start = startup(options.startupRuns);
    return {
      runs,
      big: { bytes: bigData.bytes, deliver: bigDeliver, check: bigCheck },
      plainCheck,
      start,
      others,
      retried,
      loadAtStart,
      loadAtEnd: loadAverage(),
    };
  } finally {
    load.stop();
  }
}

/** With --only: each contender's runs and median, and bds's upload against curl -T when both ran. */
function onlyReport(loads, data) {
  const figure = {
    upload: (r) => r.upload,
    uploadOther: (r) => r.upload,
    uploadShared: (r) => r.upload,
    capped: (r) => r.upload,
    curlShared: (r) => r.wall,
    curl: (r) => r.wall,
    inflate: (r) => r.seconds,
    pigz: (r) => r.seconds,
    // The pre-flights, which the targets compare with the inflate and pigz.
    firstAndRerun: (r) => r.first.preflight,
    checkThenDeliver: (r) => r.check.preflight,
    plainDeliver: (r) => r.preflight,
  };
  const ratioOfMedians = (runs, over, under) =>
    ratio(median(runs[over].map(figure[over])) / median(runs[under].map(figure[under])));
  for (const [loadName, { runs, retried }] of Object.entries(loads)) {
    const lines = [`${loadName} (${retried} runs made again):`];
    for (const [name, results] of Object.entries(runs)) {
      const values = results.map(figure[name] ?? ((r) => r.wall));
      lines.push(
        `  ${name}: ${values.map(seconds).join(', ')}; median ${seconds(median(values))}, ${mbps(data.bytes, median(values))}`,
      );
      // CPU seconds of the whole command: what a busy machine disturbs least.
      const cpu = results.map((r) => r.cpu);
      if (cpu.some(Number.isFinite))
        lines.push(`    CPU ${cpu.map(seconds).join(', ')}; median ${seconds(median(cpu))}`);
    }
    if (runs.firstAndRerun && runs.inflate)
      lines.push(`  pre-flight / bare inflate, of the medians: ${ratioOfMedians(runs, 'firstAndRerun', 'inflate')}`);
    if (runs.plainDeliver && runs.pigz)
      lines.push(
        `  pre-flight of the plain .jsonl / pigz, of the medians: ${ratioOfMedians(runs, 'plainDeliver', 'pigz')}`,
      );
    const uploadShare = (r) => r.storageCpu / r.upload;
    const curlShare = (r) => r.storageCpu / r.wall;
    for (const [name, share] of Object.entries({
      upload: uploadShare,
      uploadShared: uploadShare,
      curl: curlShare,
      curlShared: curlShare,
    })) {
      if (runs[name])
        lines.push(`  the storage host's CPU / ${name}'s time: ${runs[name].map(share).map(ratio).join(', ')}`);
    }
    for (const [upload, curl] of [
      ['upload', 'curl'],
      ['uploadShared', 'curlShared'],
    ]) {
      if (!runs[upload] || !runs[curl]) continue;
      const ratios = runs[upload].map((r, k) => runs[curl][k].wall / r.upload);
      const ofMedians = median(runs[curl].map((r) => r.wall)) / median(runs[upload].map((r) => r.upload));
      lines.push(
        `  ${upload} / ${curl} (throughput), run by run: ${ratios.map(ratio).join(', ')}; of the medians ${ratio(ofMedians)}`,
      );
    }
    process.stdout.write(`${lines.join('\n')}\n`);
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
  const needsPlain = !options.only || options.only.some((name) => name === 'plainDeliver' || name === 'pigz');
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
  sandboxProcess = box;
  const bench = new Bench(box, data, plain);
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
      loads[loadName] = await runLoad(loadName, bench, options, { data, bigData, plain, pigzInstalled });
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
