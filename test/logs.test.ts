// Output for cron mail and log files: one timestamped line per step, throttled upload progress, --quiet; and
// spinners only on a terminal. Time is an injected clock, so nothing here depends on the machine's speed.

import { randomBytes } from 'node:crypto';
import diagnostics from 'node:diagnostics_channel';
import { statSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatBytes } from '../src/cli/output/format.js';
import { makeFolder, newSource, ROOT, run, sandbox, sandboxEnv, tempDir, type Folder } from './helpers.js';

const TIMESTAMPED = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ /;
const ANSI = /\u001b\[/;
const PROGRESS = / uploaded [\d.]+ \w*B of [\d.]+ \w*B \(\d+%\)/;

/** A clock starting at `start` that moves `stepMs` on every reading. */
function steppingClock(start: string, stepMs: number): () => Date {
  let time = Date.parse(start);
  return () => {
    const now = new Date(time);
    time += stepMs;
    return now;
  };
}

/** About 8 MB of gzip that barely compresses, so that the upload emits many progress events. */
function bigFolder(): Folder {
  const lines = Array.from({ length: 40_000 }, (_, i) =>
    JSON.stringify({ _object: 'orders', order_id: `o${i}`, amount: i, note: randomBytes(192).toString('base64') }),
  );
  return makeFolder({ lines });
}

const secondsOf = (line: string): number => Date.parse(line.slice(0, 20)) / 1000;

describe('output without a terminal', () => {
  it('writes one UTC-timestamped line per step and upload progress at most every 10 s of the clock', async () => {
    const box = await sandbox();
    const folder = bigFolder();
    expect(folder.uploaded.length).toBeGreaterThan(7_000_000);
    // Counted independently of bds: every chunk of a request body undici sends.
    let chunksSent = 0;
    const countChunk = (): void => void chunksSent++;
    diagnostics.subscribe('undici:request:bodyChunkSent', countChunk);
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', newSource(box)], {
      env: sandboxEnv(box),
      now: steppingClock('2024-06-15T12:00:00Z', 3_000),
    }).finally(() => diagnostics.unsubscribe('undici:request:bodyChunkSent', countChunk));
    expect(res.stderr).not.toContain('bds:');
    expect(res.code).toBe(0);
    expect(res.stderr + res.stdout).not.toMatch(ANSI);
    const lines = res.stderr.trimEnd().split('\n');
    for (const line of lines) expect(line).toMatch(TIMESTAMPED);
    expect(lines[0]).toMatch(/^2024-06-15T12:\d\d:\d\dZ /);
    const steps = [
      /Z checking \//,
      /Z checked /,
      /Z checking src_\w+ for an earlier/,
      /Z creating /,
      /Z uploading /,
      /Z confirming /,
    ];
    for (const step of steps) expect(lines.filter((l) => step.test(l))).toHaveLength(1);

    const progress = lines.filter((l) => PROGRESS.test(l));
    const uploadStarted = secondsOf(lines.find((l) => l.includes(' uploading '))!);
    const uploadEnded = secondsOf(lines.find((l) => l.includes(' confirming '))!);
    // Each chunk read the 3-second clock, yet a line came only every 10 s or more.
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(chunksSent).toBeGreaterThan(2 * progress.length);
    expect(progress.length).toBeLessThanOrEqual((uploadEnded - uploadStarted) / 10);
    const times = progress.map(secondsOf);
    expect(times[0]! - uploadStarted).toBeGreaterThanOrEqual(10);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(10);
    expect(box.store.uploadedBytes(box.store.batches()[0]!.id)!.equals(folder.uploaded)).toBe(true);
  });

  it('prints no progress line at all while less than 10 s pass, however many chunks go out', async () => {
    const box = await sandbox();
    const folder = bigFolder();
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', newSource(box)], {
      env: sandboxEnv(box),
      now: steppingClock('2024-06-15T12:00:00Z', 1),
    });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(' uploading ');
    expect(res.stderr).not.toMatch(PROGRESS);
  });

  it('the pass over the data file tells its bytes read, at most every 10 s of the clock, between checking and checked', async () => {
    const box = await sandbox();
    const folder = makeFolder({ records: 500 });
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', newSource(box)], {
      env: sandboxEnv(box),
      // 11 s pass between any two readings of the clock: every reading of the file may say how far it got.
      now: steppingClock('2024-06-15T12:00:00Z', 11_000),
    });
    expect(res.code).toBe(0);
    const lines = res.stderr.trimEnd().split('\n');
    const checking = lines.findIndex((l) => / checking \//.test(l));
    const checked = lines.findIndex((l) => / checked /.test(l));
    const reading = lines.slice(checking + 1, checked);
    expect(reading.length).toBeGreaterThanOrEqual(1);
    for (const line of reading) expect(line).toMatch(/Z read [\d.]+ \w*B of [\d.]+ \w*B \(\d+%\)/);
    expect(reading.at(-1)).toContain(`of ${formatBytes(statSync(folder.dataFile).size)} (100%)`);
    expect(lines.filter((l) => / read /.test(l))).toEqual(reading);
  });

  it('--quiet leaves only the result on success: one line per delivery', async () => {
    const box = await sandbox();
    const home = tempDir();
    const args = ['deliver', path.join(ROOT, 'examples', 'records-2024-05'), '--source', newSource(box), '--quiet'];
    const res = await run(args, { env: sandboxEnv(box), home });
    expect(res.code).toBe(0);
    expect(res.stderr).toBe('');
    const [batch] = box.store.batches();
    expect(res.stdout).toBe(`delivered ${batch!.id} (received): 2024-05 records, 200 records, 6.69 kB\n`);

    const again = await run(args, { env: sandboxEnv(box), home });
    expect(again.code).toBe(0);
    expect(again.stderr).toBe('');
    expect(again.stdout).toBe(`already delivered as ${batch!.id} (received): 2024-05 records\n`);
  });

  it('--quiet still shows warnings and errors', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const warned = await run(['deliver', folder.dir, '--period', '2024-06', '--source', newSource(box), '--quiet'], {
      env: sandboxEnv(box),
      now: () => new Date('2024-06-15T12:00:00Z'),
    });
    expect(warned.code).toBe(0);
    expect(warned.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^warning: .*2024-06/)]);

    const failed = await run(['deliver', folder.dir, '--period', '2024-05', '--source', 'src_unknown', '--quiet'], {
      env: sandboxEnv(box),
    });
    expect(failed.code).toBe(4);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toMatch(/^bds: .*404.*src_unknown/);
    expect(
      failed.stderr
        .trimEnd()
        .split('\n')
        .every((l) => /^(bds|hint): /.test(l)),
    ).toBe(true);
  });
});

describe('output on a terminal', () => {
  it('shows spinners, without timestamps', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', newSource(box)], {
      env: sandboxEnv(box),
      tty: true,
    });
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(ANSI);
    expect(res.stderr).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
    expect(res.stderr).toContain('✔');
    expect(res.stderr).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/);
  });

  it('the pass over the data file shows a bar with its bytes read', async () => {
    const box = await sandbox();
    const folder = makeFolder({ records: 500 });
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', newSource(box)], {
      env: sandboxEnv(box),
      tty: true,
    });
    expect(res.code).toBe(0);
    const size = formatBytes(statSync(folder.dataFile).size);
    expect(res.stderr).toContain(`checking ${folder.dir} [${'█'.repeat(24)}] 100% ${size}/${size}`);
  });

  it('never writes the key, spinner text included', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    // A folder named like the key puts it into the spinner's step text, which ora writes itself.
    const named = path.join(tempDir(), box.keys.test);
    symlinkSync(folder.dir, named);
    const res = await run(['deliver', named, '--period', '2024-05', '--source', newSource(box)], {
      env: sandboxEnv(box),
      tty: true,
    });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('⠋ checking');
    expect(res.stderr).toContain('(redacted)');
    expect(res.stderr + res.stdout).not.toContain(box.keys.test);
  });

  it('--quiet on a terminal has no spinner', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', newSource(box), '--quiet'], {
      env: sandboxEnv(box),
      tty: true,
    });
    expect(res.code).toBe(0);
    expect(res.stderr).toBe('');
    expect(res.stdout).toMatch(/^delivered bat_\w+ \(received\): 2024-05 records, 3 records, \d+ B\n$/);
  });
});
