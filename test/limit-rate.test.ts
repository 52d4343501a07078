// deliver --limit-rate (BDS_LIMIT_RATE, limitRate): the upload's rate measured where it lands, in what the
// sandbox's storage host received per 50 ms, over every 5 s window after the first second. No test times the
// machine: a busy one only sends later, and the windows hold bytes, not durations.

import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { progressBar, progressLine } from '../src/cli/output/progress.js';
import { RateLimiter, throttled } from '../src/core/delivery/rate-limit.js';
import { InterruptedError } from '../src/core/errors.js';
import { sleep } from '../src/core/runtime.js';
import { parseRate, uploadRate } from '../src/core/settings/rate.js';
import { parseSize } from '../src/core/settings/size.js';
import { deliver, deliverMany, UsageError, type DeliveryEvent } from '../src/index.js';
import { RECEIVED_SLOT_MS, type Sandbox } from '../src/sandbox/emulator.js';
import {
  count,
  deliverTo,
  expectOneReceived,
  fakeClock,
  makeFolder,
  newSource,
  run,
  sandbox,
  sandboxEnv,
  seededRandom,
  tempDir,
  type Folder,
  until,
} from './helpers.js';

const WINDOW_MS = 5_000;
const SETTLING_MS = 1_000;
/** The contract's bound: any 5 s window after the first second within 10% of the cap. */
const TOLERANCE = 1.1;

/** A folder whose gzipped data file is about `bytes` long: random hex, which gzip halves and no more. */
function hexFolder(bytes: number, seed: number, period?: string): Folder {
  const random = seededRandom(seed);
  const hex = () =>
    Math.floor(random() * 2 ** 32)
      .toString(16)
      .padStart(8, '0');
  const lines = Array.from({ length: Math.ceil(bytes / 40) }, (_, i) =>
    JSON.stringify({ _object: 'orders', order_id: Array.from({ length: 8 }, hex).join(''), amount: i }),
  );
  const folder = makeFolder({ lines });
  if (!period) return folder;
  const dir = path.join(tempDir('bds-months-'), `records-${period}`);
  renameSync(folder.dir, dir);
  return { ...folder, dir, dataFile: path.join(dir, path.basename(folder.dataFile)) };
}

/** Bytes the storage host received per slot, all uploads together, from the first upload's arrival on. */
function receivedTimeline(box: Sandbox): number[] {
  const uploads = box.requests.filter((r) => r.route === 'upload');
  const first = Math.min(...uploads.map((u) => u.startedAt));
  const slots: number[] = [];
  for (const upload of uploads) {
    const offset = Math.round((upload.startedAt - first) / RECEIVED_SLOT_MS);
    upload.received.forEach((bytes, slot) => {
      slots[offset + slot] = (slots[offset + slot] ?? 0) + bytes;
    });
  }
  return Array.from(slots, (bytes) => bytes ?? 0);
}

/** The most bytes of any 5 s window after the first second, and how many windows there were. */
function busiestWindow(timeline: number[]): { bytes: number; windows: number } {
  const width = WINDOW_MS / RECEIVED_SLOT_MS;
  let bytes = 0;
  let windows = 0;
  for (let start = SETTLING_MS / RECEIVED_SLOT_MS; start + width <= timeline.length; start++, windows++) {
    bytes = Math.max(
      bytes,
      timeline.slice(start, start + width).reduce((sum, b) => sum + b, 0),
    );
  }
  return { bytes, windows };
}

function expectCapped(box: Sandbox, bytesPerSecond: number, total: number): void {
  const timeline = receivedTimeline(box);
  expect(timeline.reduce((sum, b) => sum + b, 0)).toBe(total);
  const { bytes, windows } = busiestWindow(timeline);
  // The upload lasts long enough to be judged (bytes over the cap, so no clock in it).
  expect(windows).toBeGreaterThan(0);
  expect(bytes / (WINDOW_MS / 1000), `busiest 5 s window, bytes/s (cap ${bytesPerSecond})`).toBeLessThanOrEqual(
    TOLERANCE * bytesPerSecond,
  );
  // And the cap is a cap, not a crawl: well over half of it on average after the first second.
  const after = timeline.slice(SETTLING_MS / RECEIVED_SLOT_MS);
  const mean = after.reduce((sum, b) => sum + b, 0) / ((after.length * RECEIVED_SLOT_MS) / 1000);
  expect(mean).toBeGreaterThan(0.5 * bytesPerSecond);
}

describe('--limit-rate', () => {
  it('reads rates as curl writes them: K, M, G are 1024-based, in either case; 0 is no cap', () => {
    expect(parseRate('500K')).toBe(512_000);
    expect(parseRate('10M')).toBe(10 * 1024 ** 2);
    expect(parseRate('1g')).toBe(1024 ** 3);
    expect(parseRate('1.5k')).toBe(1536);
    expect(parseRate('123456')).toBe(123_456);
    expect(parseRate('0')).toBe(0);
    for (const bad of ['', 'fast', '-1K', '10MB', '10 M', '1e6', 'K', '9'.repeat(20)]) {
      expect(parseRate(bad), bad).toBeUndefined();
    }
  });

  it("reads rates and the sandbox's --max-upload-size in one grammar: fractions (bytes rounded) and T in both", () => {
    for (const [text, bytes] of [
      ['1.5M', 1_572_864],
      ['1T', 1024 ** 4],
      ['6t', 6 * 1024 ** 4],
      ['0.3K', 307],
      ['2.5', 3],
    ] as const) {
      expect(parseSize(text), text).toBe(bytes);
      expect(parseRate(text), text).toBe(bytes);
    }
  });

  it.each([
    ['1.5', '1.5K or 1.5M'],
    ['0.5', '0.5K or 0.5M'],
    ['500', '500K or 500M'],
  ])('a cap under 1K (%s) is a usage error that asks whether a unit is missing', (written, meant) => {
    const refusal = () => uploadRate({ limitRate: { value: written, from: '--limit-rate' } });
    expect(refusal).toThrow(UsageError);
    expect(refusal).toThrow(`the upload rate cap from --limit-rate, ${written}, is under 1K (1024 bytes/s)`);
    try {
      refusal();
    } catch (error) {
      expect((error as UsageError).hint).toBe(`rates are bytes per second: did you mean ${meant}? 0 for no cap`);
    }
  });

  it('1K is the lowest cap; 0 (with a unit or not) lifts one', () => {
    const rate = (value: string) => uploadRate({ limitRate: { value, from: '--limit-rate' } });
    expect(() => rate('0.5K')).toThrow('is under 1K');
    expect(rate('1K')?.bytesPerSecond).toBe(1024);
    for (const none of ['0', '0K', '0.0M']) expect(rate(none)?.bytesPerSecond, none).toBeNull();
  });

  it("the first second's rate is never shown above the cap (its burst goes ahead of it)", () => {
    // 0.1 s of the cap and a piece already handed over after 60 ms: 2.6 MB/s by the clock, 1.05 MB/s capped.
    const sample = { sent: 157_286, total: 10_000_000, elapsedMs: 60, rateCap: 1_048_576 };
    expect(progressLine(sample, 'uploaded')).toBe('uploaded 157.3 kB of 10.0 MB (1%), 1.05 MB/s (capped at 1.05 MB/s)');
    expect(progressBar(sample, 'uploaded')).toContain(' 1.05 MB/s ');
    expect(progressLine({ ...sample, rateCap: null }, 'uploaded')).toContain(', 2.62 MB/s');
  });

  it('the token bucket, on a clock only its waits move: any 5 s window within the cap and its burst', async () => {
    const clock = fakeClock('2024-06-01T00:00:00Z');
    const rate = 100_000;
    const limiter = new RateLimiter(rate, { now: clock.ms, sleep: clock.sleep });
    const start = clock.ms();
    const arrivals: Array<{ at: number; bytes: number }> = [];
    const chunks = Array.from({ length: 40 }, () => Buffer.alloc(65_536));
    const stream = throttled(Readable.from(chunks), limiter, new AbortController().signal);
    // As undici reads a body: by 'data' events, each piece as it was pushed.
    stream.on('data', (piece: Buffer) => {
      arrivals.push({ at: clock.ms() - start, bytes: piece.length });
      expect(piece.length).toBeLessThanOrEqual(limiter.pieceBytes);
    });
    await finished(stream);
    const total = 40 * 65_536;
    expect(arrivals.reduce((sum, a) => sum + a.bytes, 0)).toBe(total);
    // All of it in the time the cap allows, less the burst.
    expect(arrivals.at(-1)!.at).toBeGreaterThanOrEqual((total / rate) * 1000 - 200);
    for (let from = 0; from + WINDOW_MS <= arrivals.at(-1)!.at; from += 10) {
      const inWindow = arrivals.filter((a) => a.at >= from && a.at < from + WINDOW_MS).reduce((s, a) => s + a.bytes, 0);
      expect(inWindow).toBeLessThanOrEqual(rate * 5.2);
    }
  });

  it('caps what the storage host receives, over every 5 s window; no idle or headers timer trips', async () => {
    const box = await sandbox();
    // About 7 s at 100K; the test's idle and headers timeouts are 1 s.
    const folder = hexFolder(700_000, 1);
    const res = await deliverTo(box, folder, { args: ['--limit-rate', '100K', '--verbose'], sleep });
    expect(res.code, res.stderr).toBe(0);
    expectOneReceived(box, folder);
    expect(count(box, 'upload')).toBe(1);
    expectCapped(box, 102_400, folder.uploaded.length);
    expect(res.stderr).toContain('upload rate capped at 102.4 kB/s (100K = 102400 bytes/s, from --limit-rate)');
    expect(res.stderr).toContain(`bytes to ${box.store.batches()[0]!.id}, capped at 102.4 kB/s`);
    // Off a terminal, the progress lines (every 10 s) say the cap beside the rate.
    expect(progressLine({ sent: 500_000, total: 705_548, elapsedMs: 5_000, rateCap: 102_400 }, 'uploaded')).toBe(
      'uploaded 500.0 kB of 705.5 kB (70%), 100.0 kB/s (capped at 102.4 kB/s)',
    );
  });

  it('with --jobs 2, the months share one cap', async () => {
    const box = await sandbox();
    const folders = [hexFolder(350_000, 2, '2024-04'), hexFolder(350_000, 3, '2024-05')];
    const res = await run(
      ['deliver', ...folders.map((f) => f.dir), '--jobs', '2', '--limit-rate', '100K', '--source', newSource(box)],
      { env: sandboxEnv(box), sleep },
    );
    expect(res.code, res.stderr).toBe(0);
    const uploads = box.requests.filter((r) => r.route === 'upload');
    expect(uploads).toHaveLength(2);
    // They ran at once: the second began before the first was over.
    const [a, b] = [...uploads].sort((x, y) => x.startedAt - y.startedAt);
    expect(b!.startedAt).toBeLessThan(a!.endedAt!);
    expectCapped(box, 102_400, folders[0]!.uploaded.length + folders[1]!.uploaded.length);
  });

  it('Ctrl-C stops a throttled upload at once (exit 130); nothing more arrives', async () => {
    const box = await sandbox();
    // Minutes at 1K: only an abort that stops the wait ends it within the test's time.
    const folder = hexFolder(200_000, 4);
    const controller = new AbortController();
    const running = deliverTo(box, folder, { args: ['--limit-rate', '1K'], sleep, signal: controller.signal });
    await until(() => box.requests.some((r) => r.route === 'upload' && r.bodyBytes > 0), 'the upload');
    controller.abort(new InterruptedError('SIGINT'));
    const res = await running;
    expect(res.code).toBe(130);
    const upload = box.requests.find((r) => r.route === 'upload')!;
    await until(() => upload.endedAt !== undefined, 'the upload to end');
    expect(upload.bodyBytes).toBeLessThan(folder.uploaded.length);
    expect(box.store.batches().map((batch) => batch.status)).toEqual(['awaiting_upload']);
  });

  it.each([
    [
      '--limit-rate',
      { args: ['--limit-rate', '10X'] },
      'bds: the upload rate cap from --limit-rate is not a rate: 10X',
    ],
    ['BDS_LIMIT_RATE', { env: { BDS_LIMIT_RATE: 'fast' } }, 'from BDS_LIMIT_RATE is not a rate: fast'],
    ['an empty --limit-rate', { args: ['--limit-rate', ''] }, 'bds: the upload rate cap from --limit-rate is empty'],
    [
      'an empty BDS_LIMIT_RATE',
      { env: { BDS_LIMIT_RATE: ' ' } },
      'bds: the upload rate cap from BDS_LIMIT_RATE is empty',
    ],
  ])('an invalid rate from %s is a usage error (exit 2), before anything is created', async (_from, given, message) => {
    const box = await sandbox();
    // A cap lower down (the config file's) never stands in for one written wrong above it.
    const home = tempDir();
    writeFileSync(path.join(home, '.bdsrc.json'), JSON.stringify({ limitRate: '10M' }));
    const res = await deliverTo(box, makeFolder(), { ...given, home });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(message);
    expect(res.stderr).toContain('give bytes per second as curl does: 500K, 10M, 1G (K = 1024 bytes)');
    expect(count(box, 'create')).toBe(0);
  });

  it("a config file's limitRate that is neither a string nor a number says what it may be", async () => {
    const box = await sandbox();
    const home = tempDir();
    const config = path.join(home, '.bdsrc.json');
    writeFileSync(config, JSON.stringify({ limitRate: true }));
    const res = await deliverTo(box, makeFolder(), { home });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      `bds: in the config file ${config}: limitRate must be bytes per second: a number, or a string such as "10M"`,
    );
  });

  it('comes from BDS_LIMIT_RATE, or a profile of the config file; the flag wins, and 0 lifts a cap', async () => {
    const box = await sandbox();
    const home = tempDir();
    const config = path.join(home, '.bdsrc.json');
    // A number in the file is bytes per second.
    const profiles = { day: { limitRate: '10M' }, bytes: { limitRate: 1_000_000 }, bad: { limitRate: 'slow' } };
    writeFileSync(config, JSON.stringify({ profiles }));
    // One folder: delivered by the first run, found delivered by the others, which say the cap all the same.
    const folder = makeFolder();
    const verbose = async (args: string[], env: Record<string, string> = {}) => {
      const res = await deliverTo(box, folder, {
        home,
        args: ['--verbose', ...args],
        env,
      });
      expect(res.code, res.stderr).toBe(res.stderr.includes('not a rate') ? 2 : 0);
      return res.stderr;
    };
    expect(await verbose([], { BDS_LIMIT_RATE: '500K' })).toContain(
      'upload rate capped at 512.0 kB/s (500K = 512000 bytes/s, from BDS_LIMIT_RATE)',
    );
    expect(await verbose(['--profile', 'day'])).toContain(
      `upload rate capped at 10.5 MB/s (10M = 10485760 bytes/s, from config file ${config} (profile: day))`,
    );
    expect(await verbose(['--profile', 'day', '--limit-rate', '1M'], { BDS_LIMIT_RATE: '2M' })).toContain(
      '(1M = 1048576 bytes/s, from --limit-rate)',
    );
    expect(await verbose(['--profile', 'bytes'])).toContain('upload rate capped at 1.00 MB/s (1000000 = 1000000');
    const lifted = await verbose(['--profile', 'day'], { BDS_LIMIT_RATE: '0' });
    expect(lifted).toContain('upload rate: not capped (0 from BDS_LIMIT_RATE)');
    expect(lifted).not.toContain('capped at');
    expect(await verbose(['--profile', 'bad'])).toContain(
      `bds: the upload rate cap from config file ${config} (profile: bad) is not a rate: slow`,
    );
    // Without one, nothing is said of it.
    expect(await verbose([])).not.toContain('upload rate');
  });

  it('bds doctor lists it with where it came from; an invalid one fails (exit 2)', async () => {
    const box = await sandbox();
    const env = sandboxEnv(box, { BDS_SOURCE_ID: newSource(box) });
    const ok = await run(['doctor', '--json'], { env: { ...env, BDS_LIMIT_RATE: '10M' } });
    expect(JSON.parse(ok.stdout).checks).toContainEqual({
      name: 'upload rate',
      status: 'ok',
      message: 'capped at 10485760 bytes/s (10M, from BDS_LIMIT_RATE)',
      hint: null,
    });
    const bad = await run(['doctor', '--json'], { env: { ...env, BDS_LIMIT_RATE: '10 MB' } });
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout).checks).toContainEqual(
      expect.objectContaining({ name: 'upload rate', status: 'fail' }),
    );
  });

  it('the library takes limitRate (a number or a string), and names it when it is not a rate', async () => {
    const box = await sandbox();
    const home = tempDir();
    const env = { ...sandboxEnv(box, { BDS_SOURCE_ID: newSource(box) }), HOME: home };
    const events: DeliveryEvent[] = [];
    await deliver({
      dir: makeFolder().dir,
      period: '2024-05',
      env,
      cwd: home,
      limitRate: 50_000,
      onEvent: (e) => events.push(e),
    });
    expect(events).toContainEqual({
      type: 'notice',
      code: 'upload_rate',
      bytesPerSecond: 50_000,
      written: '50000',
      from: 'the limitRate option',
    });
    expect(events).toContainEqual(expect.objectContaining({ type: 'step', step: 'uploading', rateCap: 50_000 }));
    // A folder that passes its quick checks (its name holds its period): they come before the settings'.
    const refused = deliverMany({ dirs: [hexFolder(1000, 5, '2024-05').dir], env, cwd: home, limitRate: '1 gigabit' });
    await expect(refused).rejects.toThrow(UsageError);
    await expect(refused).rejects.toThrow('the upload rate cap from the limitRate option is not a rate: 1 gigabit');
    await expect(deliver({ dir: makeFolder().dir, env, limitRate: true as never })).rejects.toThrow(
      'deliver(): "limitRate" must be bytes per second: a number, or a string such as "10M", not a boolean',
    );
  });
});
