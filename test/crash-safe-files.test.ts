// Every file bds keeps for itself (delivery records, remembered passes, locks, the user's config file, the
// metrics file) is written to a temp file in the same folder, flushed, renamed (a lock: linked) into place, and
// the folder flushed. A process killed with SIGKILL after each of those steps leaves the old file or the new
// one, whole: never a torn or empty one. test/fixtures/crash-write.mjs does the writing, with the built modules.

import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PassCache } from '../src/core/datapass/cache.js';
import { parseMetrics } from '../src/core/monitoring/metrics.js';
import { updateMetricsFile } from '../src/core/monitoring/metrics-file.js';
import { processRuntime } from '../src/process-runtime.js';
import { collectOutput, ROOT, tempDir } from './helpers.js';

const STEPS = ['written', 'flushed', 'renamed', 'folder-flushed'] as const;
const STAMP = (dir: string) => ({
  path: path.join(dir, 'data.jsonl.gz'),
  size: 10,
  mtimeMs: 1,
  ctimeMs: 1,
  ino: 1,
  dev: 1,
});

async function crashWrite(
  writer: string,
  crashAfter: string,
  dir: string,
): Promise<{ steps: string[]; signal: string | null; code: number | null; stderr: string }> {
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'test', 'fixtures', 'crash-write.mjs'), writer, crashAfter, dir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const { stdout, stderr, signal, code } = await collectOutput(child);
  return { steps: stdout.split('\n').filter(Boolean), signal, code, stderr };
}

/** What each writer's file holds after the run: 'old', 'new' or 'none', or the test fails on a torn file. */
const READERS: Record<string, (dir: string) => Promise<'old' | 'new' | 'none'>> = {
  async record(dir) {
    const folder = path.join(dir, 'deliveries');
    const files = readdirSync(folder).filter((name) => name.endsWith('.json'));
    expect(files).toHaveLength(1);
    const { step } = JSON.parse(readFileSync(path.join(folder, files[0]!), 'utf8'));
    return step === 'created' ? 'old' : step === 'uploaded' ? 'new' : expect.fail(`a record at step ${step}`);
  },
  async cache(dir) {
    // recall() trusts only a whole entry whose checksum holds.
    const findings = await new PassCache(dir, process.platform).recall(STAMP(dir), null);
    return findings?.recordCount === 1
      ? 'old'
      : findings?.recordCount === 2
        ? 'new'
        : expect.fail('no usable pass entry');
  },
  async lock(dir) {
    const names = readdirSync(dir).filter((name) => name.endsWith('.lock'));
    if (names.length === 0) return 'none';
    expect(JSON.parse(readFileSync(path.join(dir, names[0]!), 'utf8'))).toMatchObject({ hostname: 'crash-host' });
    return 'new';
  },
  async metrics(dir) {
    const file = path.join(dir, 'bds.prom');
    const [month] = parseMetrics(readFileSync(file, 'utf8'));
    // A kill during the write leaves the lock, which names its holder: the next run sees that it is gone and
    // takes it over at once, without waiting.
    const lock = `${file}.lock`;
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toMatchObject({ pid: expect.any(Number), hostname: 'crash-host' });
    await updateMetricsFile({
      file,
      runs: [],
      at: new Date(),
      sleep: () => expect.fail('waited for the lock of a process that is gone'),
      self: {
        pid: process.pid,
        hostname: 'crash-host',
        platform: process.platform,
        isProcessAlive: processRuntime().isProcessAlive,
      },
    });
    expect(existsSync(lock)).toBe(false);
    return month?.records === 1
      ? 'old'
      : month?.records === 2
        ? 'new'
        : expect.fail(`a month ${JSON.stringify(month)}`);
  },
  async config(dir) {
    const { apiKey } = JSON.parse(readFileSync(path.join(dir, 'bds', 'config.json'), 'utf8'));
    return apiKey === 'svc_test_old_0000000000'
      ? 'old'
      : apiKey === 'svc_test_new_0000000000'
        ? 'new'
        : expect.fail(`a key ${apiKey}`);
  },
};

describe('crash-safe files', () => {
  for (const writer of Object.keys(READERS)) {
    it(`${writer}: written, flushed, renamed into place, folder flushed; a kill after any step leaves the old file or the new one`, async () => {
      const whole = await crashWrite(writer, 'none', tempDir());
      expect(whole.stderr).toBe('');
      expect(whole.steps).toEqual(STEPS);
      for (const [index, step] of STEPS.entries()) {
        const dir = tempDir();
        const run = await crashWrite(writer, step, dir);
        expect(run.signal, run.stderr).toBe('SIGKILL');
        expect(run.steps).toEqual(STEPS.slice(0, index + 1));
        const renamed = index >= STEPS.indexOf('renamed');
        expect(await READERS[writer]!(dir)).toBe(renamed ? 'new' : writer === 'lock' ? 'none' : 'old');
      }
    });
  }
});
