// What every case runs its contenders with (bench/cases/): a fresh HOME per first run, bds under GNU time with
// its events, each delivery checked end to end against the storage host's copy, which is then removed.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { log, measure } from './measure.js';

export const BENCH = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.dirname(BENCH);
/** The data files, kept between runs, and the results of the last run. */
export const DATA = path.join(BENCH, 'data');
/** bin/bds.js plus one line per delivery event with its time, for the phases. */
export const TIMED_BIN = path.join(BENCH, 'bds-timed.js');
export const PERIOD = '2024-05';
/** The cores bds gzips a plain .jsonl on (src/core/datapass/gzip.ts: at most 8), and so pigz's -p. */
export const CORES = Math.min(os.availableParallelism?.() ?? os.cpus().length, 8);
/** libuv's thread pool as bin/bds.js sizes it; bench/bds-timed.js, an ES module, gets it from its environment. */
const THREADPOOL = String(Math.max(4, CORES + 1));

/**
 * The bench's side of a run: the sandbox, the data (`data`, the .jsonl.gz; `bigData`, the second size;
 * `plain`, the plain .jsonl), and the commands every case needs. Each contender (bench/cases/) is one run of
 * something timed, taken with `this`; a pair (a first run and the one that should be served from the pass cache)
 * runs together with the same HOME. Each returns its measures and `others`, the most cores' worth of CPU other
 * processes took during any of its commands.
 */
export class Bench {
  constructor(box, { data, bigData, plain }) {
    this.box = box;
    this.data = data;
    this.bigData = bigData;
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
