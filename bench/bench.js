#!/usr/bin/env node
// npm run bench [-- --size 1GiB --runs 3 --rss-size 4GiB --no-baseline --update-readme]
//
// On one machine, in one run: makes (or reuses) a large gzipped JSON Lines folder under bench/data/, starts the
// sandbox (its storage host streams uploads to disk while hashing them), then times, alternating and several
// times each:
//   (a) bds deliver of the folder,
//   (b) bench/baseline.sh: the same checks and steps with sha256sum, zcat | wc -l, jq and curl,
//   (c) a plain curl -T of the same file to the storage port (the upload's limit on this machine),
// and reports medians, the ratios bds/baseline and bds-upload/curl-upload, the pre-flight throughput, bds's
// peak RSS, and the start-up time of bds --version and --help against node -e 0, as a table.
//
// Every delivered file is checked end to end: the sha256 the storage host computed while receiving it must
// equal the local file's. Uploaded objects are deleted after each run, so the disk holds one copy at most.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate, readMeta } from './generate.js';

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(BENCH);
const DATA = path.join(BENCH, 'data');
const BIN = path.join(ROOT, 'bin', 'bds.js');
/** bin/bds.js plus one line per delivery event with its time, for the phases. */
const TIMED_BIN = path.join(BENCH, 'bds-timed.js');
const PERIOD = '2024-05';
const TARGETS = { ratio: 0.5, upload: 0.8, rssMB: 150, startup: 2 };

const USAGE = `usage: npm run bench -- [options]

  --size <size>        compressed size of the data file (default 1GiB); e.g. 256MiB, 4GiB
  --runs <n>           timed runs of each contender (default 3)
  --rss-size <size>    also deliver a file of this size once, for peak RSS at two sizes (e.g. 4GiB)
  --no-baseline        skip the hand-written baseline (it is slow: jq parses every line)
  --startup-runs <n>   runs of node -e 0, bds --version and bds --help (default 15)
  --update-readme      write the results into bench/README.md
  -h, --help           this text

Data is kept in bench/data/<size>/ between runs (delete it to make it again).`;

// ---------------------------------------------------------------------------------------------- options

function parseSize(text) {
  const match = /^(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|KB|MB|GB|K|M|G)?$/i.exec(String(text).trim());
  if (!match) throw new Error(`not a size: ${text} (try 256MiB or 4GiB)`);
  const unit = (match[2] ?? 'B').toLowerCase();
  const factor = { b: 1, k: 1024, kib: 1024, kb: 1e3, m: 2 ** 20, mib: 2 ** 20, mb: 1e6, g: 2 ** 30, gib: 2 ** 30, gb: 1e9 }[unit];
  return Math.round(Number(match[1]) * factor);
}

function sizeLabel(bytes) {
  if (bytes % 2 ** 30 === 0) return `${bytes / 2 ** 30}GiB`;
  if (bytes % 2 ** 20 === 0) return `${bytes / 2 ** 20}MiB`;
  return `${bytes}B`;
}

function parseArgs(argv) {
  const options = { size: 2 ** 30, runs: 3, rssSize: undefined, baseline: true, startupRuns: 15, updateReadme: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--size') options.size = parseSize(value());
    else if (arg === '--runs') options.runs = positive(value(), arg);
    else if (arg === '--rss-size') options.rssSize = parseSize(value());
    else if (arg === '--no-baseline') options.baseline = false;
    else if (arg === '--startup-runs') options.startupRuns = positive(value(), arg);
    else if (arg === '--update-readme') options.updateReadme = true;
    else if (arg === '-h' || arg === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`unknown option ${arg}\n\n${USAGE}`);
  }
  return options;
}

function positive(text, name) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} needs a whole number >= 1`);
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
const mb = (bytes) => (Number.isFinite(bytes) ? `${(bytes / 1e6).toFixed(0)} MB` : 'n/a');
const ratio = (r) => (Number.isFinite(r) ? r.toFixed(2) : 'n/a');
const verdict = (ok) => (ok === undefined ? '' : ok ? 'met' : 'MISSED');

function which(tool) {
  return spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).status === 0;
}

function checkTools(options) {
  const needed = ['curl', 'bash'];
  if (options.baseline) needed.push('jq', 'sha256sum', 'zcat', 'wc', 'awk', 'date', 'cut');
  const missing = needed.filter((tool) => !which(tool));
  if (missing.length) {
    throw new Error(
      `missing tool${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}` +
        (missing.includes('jq') ? ' (Debian/Ubuntu: apt-get install -y jq)' : '') +
        (options.baseline ? '; or run with --no-baseline' : ''),
    );
  }
  if (!fs.existsSync(path.join(ROOT, 'dist', 'cli', 'main.js'))) throw new Error('dist/ is missing: run npm run build (npm ci does it)');
}

function machine() {
  const cpus = os.cpus();
  let disk = '';
  try {
    disk = execFileSync('df', ['-h', DATA], { encoding: 'utf8' }).trim().split('\n').pop().split(/\s+/)[0];
  } catch {
    // not important
  }
  return {
    cpu: `${cpus[0]?.model ?? 'unknown'}`.trim(),
    cores: os.availableParallelism?.() ?? cpus.length,
    memory: `${Math.round(os.totalmem() / 2 ** 30)} GiB`,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    disk,
    load: os.loadavg().map((l) => l.toFixed(2)).join(' '),
  };
}

async function fileSha256(file) {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) hash.update(chunk);
  return hash.digest('hex');
}

/** The delivery folder of this size, made if it is missing or incomplete. */
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
    log(`made ${(meta.bytes / 2 ** 20).toFixed(0)} MiB (${(meta.rawBytes / meta.bytes).toFixed(2)}:1, ${meta.records} records) in ${meta.seconds.toFixed(0)} s`);
  }
  const file = path.join(dir, 'records.jsonl.gz');
  if (!meta.sha256) {
    meta.sha256 = await fileSha256(file);
    fs.writeFileSync(path.join(dir, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`);
  }
  return { dir, file, ...meta };
}

/** Reads the file once so that every contender starts with it in the page cache. */
async function warmCache(file) {
  for await (const _ of fs.createReadStream(file, { highWaterMark: 4 << 20 })) {
    // nothing
  }
}

/**
 * Runs a command; returns its wall time, output, exit code, peak RSS (GNU time -v when available, else
 * /proc/<pid>/status VmHWM polled), and when each stderr line arrived (for phase times).
 */
function measure(command, args, { env, rss = false } = {}) {
  const useTime = rss && fs.existsSync('/usr/bin/time');
  const timeFile = useTime ? path.join(os.tmpdir(), `bds-bench-time-${process.pid}-${Date.now()}`) : undefined;
  const [cmd, argv] = useTime ? ['/usr/bin/time', ['-v', '-o', timeFile, command, ...args]] : [command, args];
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let partial = '';
    const lines = [];
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
    child.stderr.setEncoding('utf8').on('data', (text) => {
      const at = (performance.now() - started) / 1000;
      stderr += text;
      partial += text;
      let newline;
      while ((newline = partial.indexOf('\n')) !== -1) {
        lines.push({ at, text: partial.slice(0, newline) });
        partial = partial.slice(newline + 1);
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const wall = (performance.now() - started) / 1000;
      clearInterval(poll);
      let peakRss = hwmKiB ? hwmKiB * 1024 : NaN;
      if (timeFile) {
        try {
          const text = fs.readFileSync(timeFile, 'utf8');
          peakRss = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(text)?.[1]) * 1024;
          // GNU time puts the child's exit status in the report; ours is time's own (the same).
        } catch {
          // keep NaN
        }
        fs.rmSync(timeFile, { force: true });
      }
      resolve({ code, wall, stdout, stderr, lines, peakRss });
    });
  });
}

// ---------------------------------------------------------------------------------------------- contenders

class Bench {
  constructor(box, data, options) {
    this.box = box;
    this.data = data;
    this.options = options;
    this.home = fs.mkdtempSync(path.join(os.tmpdir(), 'bds-bench-home-'));
  }

  env(extra = {}) {
    const env = {
      PATH: process.env.PATH,
      HOME: this.home,
      XDG_STATE_HOME: path.join(this.home, 'state'),
      XDG_CONFIG_HOME: path.join(this.home, 'config'),
      TMPDIR: process.env.TMPDIR || os.tmpdir(),
      LANG: process.env.LANG || 'C.UTF-8',
      BDS_BASE_URL: this.box.baseUrl,
      BDS_API_KEY: this.box.keys.live,
      ...extra,
    };
    return env;
  }

  /** A fresh source per run, so that no run is "already delivered". */
  source() {
    return this.box.store.createSource({ name: `bench ${Date.now()}` }).id;
  }

  /** Checks what the storage host received and frees its disk. */
  verifyAndClean(batchId, what, file = this.data.file, sha256 = this.data.sha256) {
    const batch = this.box.store.batch(batchId);
    if (!batch?.upload) throw new Error(`${what}: the storage host has no upload for ${batchId}`);
    if (batch.upload.sha256 !== sha256) {
      throw new Error(`${what}: the storage host stored sha256 ${batch.upload.sha256}, the local file is ${sha256}`);
    }
    if (batch.upload.bytes !== fs.statSync(file).size) throw new Error(`${what}: stored ${batch.upload.bytes} bytes`);
    const stored = this.box.store.uploadPath(batchId);
    if (stored) fs.rmSync(stored, { force: true });
    return batch;
  }

  async bds(data = this.data) {
    const source = this.source();
    const res = await measure(
      process.execPath,
      [TIMED_BIN, 'deliver', data.dir, '--period', PERIOD, '--source', source, '--json'],
      { env: this.env(), rss: true },
    );
    if (res.code !== 0) throw new Error(`bds deliver exited ${res.code}:\n${res.stderr}`);
    const out = JSON.parse(res.stdout);
    if (out.sha256 !== data.sha256) throw new Error(`bds reported sha256 ${out.sha256}, the file's is ${data.sha256}`);
    if (out.record_count !== data.records) throw new Error(`bds counted ${out.record_count} records, the file has ${data.records}`);
    this.verifyAndClean(out.batch.id, 'bds', data.file, data.sha256);
    // Phases from the delivery's own events (bench/bds-timed.js), not from the wording of its progress lines.
    const events = res.lines
      .filter((line) => line.text.startsWith('event '))
      .map((line) => JSON.parse(line.text.slice('event '.length)));
    const at = (step, subject) => events.find((e) => e.step === step && (subject === undefined || e.subject === subject))?.at;
    return {
      wall: res.wall,
      preflight: (at('checked') - at('checking', 'file')) / 1000,
      upload: (at('completing') - at('uploading')) / 1000,
      peakRss: res.peakRss,
    };
  }

  async baseline() {
    const source = this.source();
    const res = await measure('bash', [path.join(BENCH, 'baseline.sh'), this.data.dir, PERIOD], {
      env: this.env({ BDS_SOURCE_ID: source }),
    });
    if (res.code !== 0) throw new Error(`baseline.sh exited ${res.code}:\n${res.stderr.slice(-2000)}`);
    const id = res.stdout.trim().split('\n').pop();
    const batch = this.verifyAndClean(id, 'baseline');
    if (batch.status !== 'received') throw new Error(`baseline: batch ${id} is ${batch.status}`);
    const phases = Object.fromEntries(
      [...(/phases (.*)/.exec(res.stderr)?.[1] ?? '').matchAll(/(\w+)=([\d.]+)/g)].map((m) => [m[1], Number(m[2])]),
    );
    return { wall: res.wall, phases };
  }

  async curl() {
    const source = this.source();
    const created = await this.api('POST', '/api/v1/batches', {
      source_id: source,
      product: 'records',
      period: PERIOD,
      record_count: this.data.records,
      schema: JSON.parse(fs.readFileSync(path.join(this.data.dir, 'schema.json'), 'utf8')),
      report: JSON.parse(fs.readFileSync(path.join(this.data.dir, 'report.json'), 'utf8')),
    });
    const headers = Object.entries(created.upload.headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
    const res = await measure('curl', ['-sS', '--fail-with-body', '-X', created.upload.method, '-T', this.data.file, ...headers, created.upload.url, '-o', '/dev/null'], {
      env: this.env(),
    });
    if (res.code !== 0) throw new Error(`curl -T exited ${res.code}: ${res.stderr}`);
    this.verifyAndClean(created.batch.id, 'curl -T');
    return { wall: res.wall };
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
    fs.rmSync(this.home, { recursive: true, force: true });
  }
}

/** Wall time of node -e 0, bds --version and bds --help, interleaved; medians in seconds. */
function startup(runs) {
  const cases = {
    node: [process.execPath, ['-e', '0']],
    version: [process.execPath, [BIN, '--version']],
    help: [process.execPath, [BIN, '--help']],
  };
  const times = { node: [], version: [], help: [] };
  for (let i = 0; i < runs + 1; i++) {
    for (const [name, [cmd, args]] of Object.entries(cases)) {
      const started = performance.now();
      const res = spawnSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      const wall = (performance.now() - started) / 1000;
      if (res.status !== 0) throw new Error(`${name} exited ${res.status}: ${res.stderr}`);
      if (i > 0) times[name].push(wall); // the first round warms the disk cache
    }
  }
  return Object.fromEntries(Object.entries(times).map(([name, values]) => [name, median(values)]));
}

// ---------------------------------------------------------------------------------------------- report

function table(rows) {
  rows = rows.map((row) => row.map((cell) => String(cell ?? '').replace(/\|/g, '\\|')));
  const widths = [0, 1, 2].map((col) => Math.max(...rows.map((row) => String(row[col] ?? '').length)));
  const line = (row) => `| ${row.map((cell, col) => cell.padEnd(widths[col])).join(' | ')} |`;
  return [line(rows[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

function report(results) {
  const { options, data, machine: m, runs, start, big } = results;
  const bds = {
    wall: median(runs.bds.map((r) => r.wall)),
    preflight: median(runs.bds.map((r) => r.preflight)),
    upload: median(runs.bds.map((r) => r.upload)),
    rss: Math.max(...runs.bds.map((r) => r.peakRss)),
  };
  const baseline = runs.baseline.length
    ? {
        wall: median(runs.baseline.map((r) => r.wall)),
        noCheck: median(runs.baseline.map((r) => r.wall - (r.phases.check ?? NaN))),
        phases: Object.fromEntries(['hash', 'count', 'check', 'create', 'upload', 'complete'].map((p) => [p, median(runs.baseline.map((r) => r.phases[p]))])),
      }
    : undefined;
  const curl = median(runs.curl.map((r) => r.wall));
  const vsBaseline = baseline ? bds.wall / baseline.wall : NaN;
  const uploadRatio = curl / bds.upload; // throughput ratio = time ratio inverted
  const bytes = data.bytes;
  const rows = [
    ['measure', 'result', 'target'],
    [`bds deliver (a), median of ${runs.bds.length}`, seconds(bds.wall), ''],
    [
      `baseline.sh (b), median of ${runs.baseline.length}`,
      baseline
        ? `${seconds(baseline.wall)} (sha256sum ${seconds(baseline.phases.hash)}, zcat|wc -l ${seconds(baseline.phases.count)}, zcat|jq ${seconds(baseline.phases.check)}, curl -T ${seconds(baseline.phases.upload)})`
        : 'skipped',
      '',
    ],
    ['**bds / baseline**', ratio(vsBaseline), `≤ ${TARGETS.ratio}: ${verdict(baseline ? vsBaseline <= TARGETS.ratio : undefined)}`],
    ['bds / baseline without its jq check (b minus zcat|jq)', baseline ? ratio(bds.wall / baseline.noCheck) : 'n/a', 'information'],
    ['bds pre-flight (hash, inflate, count, check)', `${seconds(bds.preflight)}, **${mbps(bytes, bds.preflight)}** of compressed input (${mbps(data.rawBytes, bds.preflight)} inflated)`, ''],
    ['bds upload phase', `${seconds(bds.upload)}, ${mbps(bytes, bds.upload)}`, ''],
    [`curl -T to the storage port (c), median of ${runs.curl.length}`, `${seconds(curl)}, ${mbps(bytes, curl)}`, ''],
    ['**bds upload / curl -T** (throughput)', ratio(uploadRatio), `≥ ${TARGETS.upload}: ${verdict(uploadRatio >= TARGETS.upload)}`],
    [`**bds peak RSS** at ${sizeLabel(options.size)}`, mb(bds.rss), `≤ ${TARGETS.rssMB} MB: ${verdict(bds.rss <= TARGETS.rssMB * 1e6)}`],
  ];
  if (big) {
    const same = Math.abs(big.peakRss - bds.rss) <= 0.1 * bds.rss;
    rows.push([
      `**bds peak RSS** at ${sizeLabel(big.size)} (one run: ${seconds(big.wall)}, pre-flight ${mbps(big.bytes, big.preflight)})`,
      mb(big.peakRss),
      `≤ ${TARGETS.rssMB} MB and within 10% of ${sizeLabel(options.size)}: ${verdict(big.peakRss <= TARGETS.rssMB * 1e6 && same)}`,
    ]);
  }
  rows.push(
    ['node -e 0', ms(start.node), ''],
    ['**bds --version / node -e 0**', `${ratio(start.version / start.node)} (${ms(start.version)})`, `≤ ${TARGETS.startup}: ${verdict(start.version / start.node <= TARGETS.startup)}`],
    ['**bds --help / node -e 0**', `${ratio(start.help / start.node)} (${ms(start.help)})`, `≤ ${TARGETS.startup}: ${verdict(start.help / start.node <= TARGETS.startup)}`],
    ['bench process peak RSS (the sandbox; data generation too, when it ran)', mb(results.sandboxRss), 'uploads stream to disk'],
  );
  const header = [
    `Data: ${sizeLabel(options.size)} target, ${(bytes / 2 ** 20).toFixed(0)} MiB compressed, ${(data.rawBytes / 2 ** 20).toFixed(0)} MiB inflated (${(data.rawBytes / bytes).toFixed(2)}:1), ${data.records} records.`,
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memory} RAM, ${m.os}, Node ${m.node}; load average at start ${m.load}.`,
    `Run: ${new Date(results.finishedAt).toISOString()}, ${options.runs} runs of each contender, alternating; file in the page cache.`,
  ].join('\n');
  return `${header}\n\n${table(rows)}\n`;
}

function updateReadme(markdown) {
  const readme = path.join(BENCH, 'README.md');
  const start = '<!-- results:start -->';
  const end = '<!-- results:end -->';
  const text = fs.existsSync(readme) ? fs.readFileSync(readme, 'utf8') : `# Benchmark\n\n${start}\n${end}\n`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from === -1 || to === -1) throw new Error(`${readme} lacks the ${start} and ${end} markers`);
  fs.writeFileSync(readme, `${text.slice(0, from + start.length)}\n${markdown}${text.slice(to)}`);
  log(`wrote the results into ${readme}`);
}

// ---------------------------------------------------------------------------------------------- main

async function main() {
  const options = parseArgs(process.argv.slice(2));
  checkTools(options);
  fs.mkdirSync(DATA, { recursive: true });
  const info = machine();
  const data = await dataFolder(options.size);
  const bigData = options.rssSize ? await dataFolder(options.rssSize) : undefined;

  const { startSandbox } = await import('../dist/sandbox/emulator.js');
  const sandboxDir = path.join(DATA, `sandbox-${process.pid}`);
  const box = await startSandbox({ dataDir: sandboxDir });
  const bench = new Bench(box, data, options);
  const stop = async () => {
    await box.close();
    fs.rmSync(sandboxDir, { recursive: true, force: true });
    bench.close();
  };
  process.once('SIGINT', () => void stop().then(() => process.exit(130)));

  try {
    log(`sandbox at ${box.baseUrl}, storage at ${box.storageUrl}`);
    log(`start-up: ${options.startupRuns} runs each of node -e 0, bds --version, bds --help`);
    const start = startup(options.startupRuns);

    await warmCache(data.file);
    const runs = { bds: [], baseline: [], curl: [] };
    const contenders = ['bds', ...(options.baseline ? ['baseline'] : []), 'curl'];
    for (let run = 0; run < options.runs; run++) {
      // Rotate the order each run, so that no contender always goes first (or after the slow one).
      const order = contenders.map((_, k) => contenders[(k + run) % contenders.length]);
      for (const name of order) {
        log(`run ${run + 1}/${options.runs}: ${name}`);
        const result = await bench[name]();
        runs[name].push(result);
        log(
          `  ${seconds(result.wall)}` +
            (name === 'bds' ? `, pre-flight ${seconds(result.preflight)}, upload ${seconds(result.upload)}, peak RSS ${mb(result.peakRss)}` : '') +
            (name === 'baseline' ? `, ${Object.entries(result.phases).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}` : ''),
        );
      }
    }

    let big;
    if (bigData) {
      log(`one bds deliver of ${sizeLabel(options.rssSize)} for peak RSS`);
      await warmCache(bigData.file);
      const result = await bench.bds(bigData);
      big = { ...result, size: options.rssSize, bytes: bigData.bytes };
      log(`  ${seconds(result.wall)}, peak RSS ${mb(result.peakRss)}`);
    }

    const results = {
      options,
      data: { bytes: data.bytes, rawBytes: data.rawBytes, records: data.records, sha256: data.sha256 },
      machine: info,
      runs,
      start,
      big,
      sandboxRss: process.resourceUsage().maxRSS * 1024,
      finishedAt: Date.now(),
    };
    const markdown = report(results);
    process.stdout.write(`\n${markdown}`);
    fs.writeFileSync(path.join(DATA, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
    fs.writeFileSync(path.join(DATA, 'latest.md'), markdown);
    if (options.updateReadme) updateReadme(markdown);
  } finally {
    await stop();
  }
}

main().catch((error) => {
  process.stderr.write(`bench: ${error.message}\n`);
  process.exit(1);
});
