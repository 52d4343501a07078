// A seeded soak: a backfill of a dozen months against the sandbox, with random faults (5xx, 429, resets, lost
// create and complete answers, a slow upload, a month whose retries run out) and random kills (an abort in
// process, and spawned bin/bds.js killed with SIGKILL or SIGTERM), then run again until it succeeds. Then every
// month has exactly one received batch holding its file's bytes, no lock and no temp file is left, and no
// output holds the key. Three scenarios by default (half a minute or so on a busy 2-core machine);
// BDS_SOAK_ITERATIONS=<n> runs n of them, each with a seed of its own from BDS_SOAK_SEED on. A failure names its
// seed and what each run did; BDS_SOAK_LOG=1 prints that for every scenario.

import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, renameSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InterruptedError } from '../src/core/errors.js';
import type { Fault, RecordedRequest, Sandbox } from '../src/sandbox/emulator.js';
import { makeFolder, newSource, run, sandbox, seededRandom, spawnCli, tempDir, until, type Folder } from './helpers.js';

const ITERATIONS = Number(process.env.BDS_SOAK_ITERATIONS ?? 3);
const FIRST_SEED = Number(process.env.BDS_SOAK_SEED ?? 20_230_101);
const MONTHS = Array.from({ length: 12 }, (_, i) => `2023-${String(i + 1).padStart(2, '0')}`);
/** What one run may wait for: a run with faults, or a spawned bds reaching its first request. */
const RUN_TIMEOUT_MS = 60_000;
/** Runs after the planned ones, each with a few faults, before the soak gives up. */
const MAX_RERUNS = 25;

type Month = Folder & { period: string; plain: boolean };

/** One scenario: its seed decides the data, the faults, the kills and their moments. */
class Soak {
  readonly log: string[] = [];
  private readonly random: () => number;
  private readonly outputs: string[] = [];
  /** Spawned bds processes known to have ended: their locks are stale, whoever has their pid now. */
  private readonly endedPids = new Set<number>();
  private box!: Sandbox;
  private source!: string;
  private months!: Month[];
  private dirs!: string[];
  private readonly home = tempDir('bds-soak-home-');
  private readonly tmp = tempDir('bds-soak-tmp-');

  constructor(readonly seed: number) {
    this.random = seededRandom(seed);
  }

  async run(): Promise<void> {
    this.box = await sandbox({ honourIdempotencyKey: this.random() < 0.7 });
    this.source = newSource(this.box);
    const root = tempDir('bds-soak-out-');
    // A plain .jsonl or two among the later months (see spawned: kill -9 holds off while one of them uploads).
    this.months = MONTHS.map((period, i) => this.month(root, period, i === 10 || (i > 6 && this.random() < 0.2)));
    // The shell's order is not the months' order.
    this.dirs = this.shuffled(this.months.map((month) => month.dir));

    // Kills first, while months are left to interrupt (an abort comes after a few requests, so each run gets a
    // few months further), a kill -9 before anything else; then runs that go on to the end, through faults,
    // until one succeeds.
    const plan: Array<'abort' | 'SIGKILL' | 'SIGTERM'> = [
      'SIGKILL',
      ...this.shuffled(['abort', 'abort', 'abort', 'abort', 'SIGKILL', 'SIGTERM'] as const),
    ];
    let killTries = 0;
    for (const step of plan) {
      if (step === 'abort') {
        await this.inProcess(1 + this.int(14), this.int(4));
        continue;
      }
      const sent = await this.spawned(step);
      // A kill -9 that had to be a SIGTERM (see spawned) is tried again later, a few times at most.
      if (step === 'SIGKILL' && sent !== 'SIGKILL' && ++killTries < 3) plan.push('SIGKILL');
    }
    for (let rerun = 0; ; rerun++) {
      if (rerun === MAX_RERUNS) throw new Error(`not delivered after ${MAX_RERUNS} re-runs`);
      if ((await this.inProcess(undefined, 1 + this.int(4))) === 0) break;
    }
    const last = await this.inProcess(undefined, 0);
    expect(last, 'a clean run once delivered').toBe(0);
    this.expectDelivered();
  }

  /** A month's folder, named for it, with data of its own. */
  private month(root: string, period: string, plain: boolean): Month {
    const lines = Array.from({ length: 1 + this.int(40) }, (_, i) =>
      JSON.stringify({ _object: 'orders', order_id: `${period}-${i}`, amount: this.int(1000) }),
    );
    const folder = makeFolder({ lines, plain });
    const dir = path.join(root, `records-${period}`);
    renameSync(folder.dir, dir);
    return { ...folder, dir, dataFile: path.join(dir, path.basename(folder.dataFile)), period, plain };
  }

  /** The CLI in this process; aborted (as by a signal) once the sandbox has seen `abortAfter` of its requests. */
  private async inProcess(abortAfter: number | undefined, faultCount: number): Promise<number> {
    const faults = Array.from({ length: faultCount }, () => this.fault());
    for (const fault of faults) this.box.faults.add(fault);
    const jobs = 1 + this.int(3);
    const verbose = this.random() < 0.3;
    const reason = this.pick(['SIGINT', 'SIGTERM', 'SIGHUP'] as const);
    const args = [
      'deliver',
      ...this.dirs,
      '--source',
      this.source,
      '--jobs',
      String(jobs),
      '--json',
      ...(verbose ? ['--verbose'] : []),
    ];
    const controller = new AbortController();
    const from = this.box.requests.length;
    let ended = false;
    const running = run(args, {
      home: this.home,
      env: this.env(),
      signal: controller.signal,
      hostname: os.hostname(),
      isProcessAlive: (pid) => !this.endedPids.has(pid) && isAlive(pid),
    }).finally(() => (ended = true));
    let aborted = false;
    if (abortAfter !== undefined) {
      await until(
        () => ended || this.box.requests.length - from >= abortAfter,
        'the run to end or make its requests',
        RUN_TIMEOUT_MS,
      );
      if (!ended) {
        controller.abort(new InterruptedError(reason));
        aborted = true;
      }
    }
    const res = await running;
    this.box.faults.clear();
    this.outputs.push(res.stdout, res.stderr);
    this.log.push(
      `in process, --jobs ${jobs}${verbose ? ' --verbose' : ''}, faults ${JSON.stringify(faults)}` +
        `${aborted ? `, aborted (${reason}) after ${abortAfter} requests` : ''}: exit ${res.code}`,
    );
    const expected = aborted ? new InterruptedError(reason).exitCode : undefined;
    // 5: a month whose retries ran out; nothing else may fail (4 would be a lost answer taken for a refusal).
    expect([0, 5, expected], res.stderr.slice(-2_000)).toContain(res.code);
    if (res.code === 0) {
      const { deliveries } = res.json();
      expect(deliveries.map((d: { period: string; error: unknown }) => [d.period, d.error])).toEqual(
        MONTHS.map((period) => [period, null]),
      );
    }
    return res.code;
  }

  /**
   * bin/bds.js, one month at a time, stopped by `signal` at its first create or upload (which hangs). kill -9
   * comes while a .jsonl.gz month's upload hangs, when bds holds no temp file; during a plain .jsonl's the
   * gzipped copy would be left in TMPDIR (nothing can remove it after kill -9), so SIGTERM is sent instead.
   */
  private async spawned(signal: 'SIGKILL' | 'SIGTERM'): Promise<NodeJS.Signals | undefined> {
    const route = signal === 'SIGKILL' ? 'upload' : this.pick(['create', 'upload'] as const);
    this.box.faults.add({ route, hang: true, times: MONTHS.length });
    const from = this.box.requests.length;
    let child: ChildProcess | undefined;
    let ended = false;
    const running = spawnCli(['deliver', ...this.dirs, '--source', this.source, '--jobs', '1'], {
      env: { HOME: this.home, XDG_STATE_HOME: path.join(this.home, '.local', 'state'), ...this.env() },
      onSpawn: (spawned) => (child = spawned),
    }).finally(() => (ended = true));
    const hung = (): RecordedRequest | undefined =>
      this.box.requests.slice(from).find((r) => r.route === route && r.status === 0);
    await until(
      () => ended || hung() !== undefined,
      'the spawned bds to reach its hung request or end',
      RUN_TIMEOUT_MS,
    );
    let sent: NodeJS.Signals | undefined;
    if (!ended) {
      sent = signal === 'SIGKILL' && this.plainUpload(hung()!) ? 'SIGTERM' : signal;
      child!.kill(sent);
    }
    const res = await running;
    this.endedPids.add(child!.pid!);
    this.box.faults.clear();
    this.outputs.push(res.stdout, res.stderr);
    this.log.push(
      `spawned, its ${route} hanging, ${sent ? `sent ${sent}` : 'ended by itself'}: exit ${res.code ?? res.signal}`,
    );
    if (sent === 'SIGKILL') expect(res.signal).toBe('SIGKILL');
    else expect(res.code, res.stderr.slice(-2_000)).toBe(sent === 'SIGTERM' ? 143 : 0);
    return sent;
  }

  /** Whether a hung upload is a plain .jsonl month's. */
  private plainUpload(request: RecordedRequest): boolean {
    const batchId = /\/(bat_\w+)/.exec(request.path)?.[1];
    const period = batchId && this.box.store.batch(batchId)?.period;
    return this.months.find((month) => month.period === period)?.plain ?? true;
  }

  /** A fault of the kinds a real service and network give, on a random route. */
  private fault(): Fault {
    const api = this.pick(['list', 'create', 'complete'] as const);
    switch (this.int(9)) {
      case 0:
        return { route: api, status: this.pick([500, 502, 503, 504]), times: 1 + this.int(3) };
      case 1:
        return { route: api, status: 429, retryAfter: String(this.int(2)), times: 1 + this.int(2) };
      case 2:
        return { route: 'upload', status: this.pick([500, 503]), times: 1 + this.int(2) };
      case 3:
        return { route: 'upload', resetAfterBytes: this.int(60), times: 1 + this.int(2) };
      case 4:
        // The request is applied, then the connection drops mid-answer.
        return { route: api, resetAfterBytes: this.int(20) };
      case 5:
        return { route: 'create', loseResponse: true, times: 1 + this.int(2) };
      case 6:
        return { route: 'complete', loseResponse: true, times: 1 + this.int(2) };
      case 7:
        return { route: 'upload', delayMs: 100 + this.int(400) };
      default:
        // More failures than retries: that month fails (exit 5), the others go on.
        return { route: this.pick(['create', 'complete', 'upload'] as const), status: 503, times: 7 };
    }
  }

  private env(): Record<string, string> {
    return { TMPDIR: this.tmp, BDS_BASE_URL: this.box.baseUrl, BDS_API_KEY: this.box.keys.live };
  }

  private expectDelivered(): void {
    const batches = this.box.store.batches();
    for (const month of this.months) {
      const received = batches.filter(
        (b) => b.source_id === this.source && b.period === month.period && b.status === 'received',
      );
      expect(
        received.map((b) => b.id),
        `${month.period}: one received batch`,
      ).toHaveLength(1);
      const bytes = this.box.store.uploadedBytes(received[0]!.id)!;
      expect(createHash('sha256').update(bytes).digest('hex'), `${month.period}: its file's bytes`).toBe(month.sha256);
    }
    // Whatever a lost answer or a kill left half-way stays awaiting_upload, never billed.
    expect(batches.filter((b) => b.status !== 'received' && b.status !== 'awaiting_upload')).toEqual([]);

    const state = path.join(this.home, '.local', 'state', 'bds', 'deliveries');
    expect(
      readdirSync(state).filter((name) => !name.endsWith('.json')),
      'locks and temp files in the state folder',
    ).toEqual([]);
    expect(
      readdirSync(this.tmp).filter((name) => name.startsWith('bds-')),
      'temp files in TMPDIR',
    ).toEqual([]);
    expect(
      filesUnder(path.join(this.home, '.cache')).filter((file) => file.endsWith('.tmp')),
      'temp files in the cache',
    ).toEqual([]);

    const key = this.box.keys.live;
    const secret = key.slice('svc_live_'.length);
    const written = filesUnder(this.home).map((file) => readFileSync(file, 'utf8'));
    for (const text of [...this.outputs, ...written]) {
      expect(text.includes(key) || text.includes(secret), 'the key in an output or a file bds wrote').toBe(false);
    }
  }

  private int(below: number): number {
    return Math.floor(this.random() * below);
  }

  private pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  private shuffled<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function filesUnder(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.join(entry.parentPath, entry.name));
  } catch {
    return [];
  }
}

describe('soak', () => {
  it(
    `a backfill of ${MONTHS.length} months through faults and kills ends with one received batch each (${ITERATIONS} scenario${ITERATIONS === 1 ? '' : 's'} from seed ${FIRST_SEED})`,
    async () => {
      for (let seed = FIRST_SEED; seed < FIRST_SEED + ITERATIONS; seed++) {
        const soak = new Soak(seed);
        try {
          await soak.run();
          if (process.env.BDS_SOAK_LOG) console.log(`soak seed ${seed}:\n${soak.log.join('\n')}`);
        } catch (error) {
          const replay = `BDS_SOAK_SEED=${seed} npx vitest run test/soak.test.ts`;
          if (error instanceof Error)
            error.message = `soak seed ${seed} (replay: ${replay}): ${error.message}\n${soak.log.join('\n')}`;
          throw error;
        }
      }
    },
    ITERATIONS * 180_000,
  );
});
