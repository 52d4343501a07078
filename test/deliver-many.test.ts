// `bds deliver <dir>...` (issue 10): the quick checks of every folder first, then the months oldest first, at
// most --jobs at a time, each a single delivery; a failed month does not stop the others; Ctrl-C stops all.
import { getEventListeners } from 'node:events';
import { cpSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { RunChecksums } from '../src/core/delivery/same-file.js';
import { InterruptedError } from '../src/core/errors.js';
import type { MonthFolder } from '../src/core/preflight/folder.js';
import { deliverMany, type DeliveryEvent } from '../src/index.js';
import type { Sandbox } from '../src/sandbox/emulator.js';
import {
  count,
  makeFolder,
  newSource,
  periods,
  RECORDS_SCHEMA,
  run,
  sandbox,
  sandboxEnv,
  tempDir,
  type Folder,
  type FolderOptions,
  until,
} from './helpers.js';

const ANSI_COLOUR = /\u001b\[[0-9;]*m/;
const MONTHS_OF_2023 = Array.from({ length: 12 }, (_, i) => `2023-${String(i + 1).padStart(2, '0')}`);
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ /;

/** A folder per month, each named for it (`<root>/records-2024-01`), with distinct data; in the order given. */
function months(periods: string[], options: FolderOptions & { name?: (period: string) => string } = {}): Folder[] {
  const root = tempDir('bds-backfill-');
  return periods.map((period, i) => {
    const folder = makeFolder({ ...options, records: (options.records ?? 3) + i });
    const dir = path.join(root, options.name?.(period) ?? `${options.product ?? 'records'}-${period}`);
    renameSync(folder.dir, dir);
    return { ...folder, dir, dataFile: path.join(dir, path.basename(folder.dataFile)) };
  });
}

/** The most uploads the storage host was serving at one moment. */
function mostUploadsAtOnce(box: Sandbox): number {
  const uploads = box.requests.filter((r) => r.route === 'upload');
  return Math.max(
    0,
    ...uploads.map(
      (u) => uploads.filter((o) => o.startedAt <= u.startedAt && (o.endedAt ?? Infinity) > u.startedAt).length,
    ),
  );
}

/** Batches by period: [period, status] pairs, sorted. */
function batchesByPeriod(box: Sandbox): string[][] {
  return box.store
    .batches()
    .map((b) => [b.period, b.status])
    .sort((a, b) => a[0]!.localeCompare(b[0]!) || a[1]!.localeCompare(b[1]!));
}

describe('bds deliver <dir>...', () => {
  it('delivers every month oldest first, byte for byte, and prints one row each; run again, it sends nothing', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const home = tempDir();
    const folders = months(['2024-03', '2024-01', '2024-02']);
    const args = ['deliver', ...folders.map((f) => f.dir), '--source', source, '--jobs', '1'];
    const res = await run(args, { env: sandboxEnv(box), home });
    expect(res.stderr).not.toContain('bds:');
    expect(res.code).toBe(0);

    const batches = box.store.batches();
    expect(batches.map((b) => b.period)).toEqual(['2024-01', '2024-02', '2024-03']); // created oldest first
    for (const batch of batches) {
      const folder = folders[['2024-03', '2024-01', '2024-02'].indexOf(batch.period)]!;
      expect(batch.status).toBe('received');
      expect(box.store.uploadedBytes(batch.id)!.equals(folder.uploaded)).toBe(true);
    }
    const rows = res.stdout.split('\n').filter((line) => /^2024-0\d /.test(line));
    const recordsOf = (period: string) => folders.find((f) => f.dir.endsWith(period))!.records;
    expect(rows).toEqual(
      batches.map((b) =>
        expect.stringMatching(new RegExp(`^${b.period} +records +delivered +${b.id} +${recordsOf(b.period)} `)),
      ),
    );
    expect(res.stdout).toContain('All 3 folders are delivered.');
    // Data of their own: a file delivered as another month is refused.
    const later = months(['2024-05', '2024-06'], { records: 10 });
    const two = await run(['deliver', ...later.map((f) => f.dir), '--source', source], {
      env: sandboxEnv(box),
      home,
      now: () => new Date('2024-07-15T00:00:00Z'),
    });
    expect(two.stdout).toContain('Both folders are delivered.');

    const requestsBefore = box.requests.length;
    const again = await run([...args, '--json'], { env: sandboxEnv(box), home });
    expect(again.code).toBe(0);
    expect(again.json()).toMatchObject({
      exit_code: 0,
      deliveries: batches.map((b) => ({
        period: b.period,
        product: 'records',
        batch: { id: b.id, status: 'received' },
        skipped: true,
        error: null,
      })),
    });
    const sent = box.requests.slice(requestsBefore).map((r) => r.route);
    expect(sent).not.toContain('create');
    expect(sent).not.toContain('upload');
    expect(sent).not.toContain('complete');
  });

  it("the runtime's observer sees each month's events once", async () => {
    const box = await sandbox();
    const folders = months(['2024-01', '2024-02']);
    const steps: string[] = [];
    const observe = (event: DeliveryEvent): void => {
      if (event.type === 'step') steps.push(`${event.period} ${event.step}`);
    };
    const args = ['deliver', ...folders.map((f) => f.dir), '--source', newSource(box), '--jobs', '1'];
    const res = await run(args, { env: sandboxEnv(box), observe });
    expect(res.code).toBe(0);
    const steps2024 = (period: string) => steps.filter((step) => step.startsWith(period));
    for (const period of ['2024-01', '2024-02']) {
      expect(steps2024(period)).toEqual(
        ['checking', 'checked', 'creating', 'uploading', 'completing', 'done'].map((step) => `${period} ${step}`),
      );
    }
  });

  it('--dry-run: every month checked and its verdict shown, nothing created', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const home = tempDir();
    const folders = months(['2024-01', '2024-02']);
    await run(['deliver', folders[0]!.dir, '--source', source], { env: sandboxEnv(box), home });
    const res = await run(['deliver', ...folders.map((f) => f.dir), '--source', source, '--dry-run'], {
      env: sandboxEnv(box),
      home,
    });
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^2024-01 +records +would skip +bat_\w+ +3 /m);
    expect(res.stdout).toMatch(/^2024-02 +records +would deliver +4 /m);
    expect(res.stdout).toContain('Dry run: nothing was created.\n');
    expect(count(box, 'create')).toBe(1);
  });

  it('each month compares its schema with the month before it in the run, however the deliveries interleave', async () => {
    const box = await sandbox();
    const withEmail = {
      ...RECORDS_SCHEMA,
      objects: { orders: [...RECORDS_SCHEMA.objects.orders, { name: 'email', role: 'identifier', kind: 'string' }] },
    };
    const [january] = months(['2024-01']);
    const [february] = months(['2024-02'], { schema: withEmail, records: 4 });
    const [march] = months(['2024-03'], { records: 5 });
    const args = [
      'deliver',
      january!.dir,
      february!.dir,
      march!.dir,
      '--source',
      newSource(box),
      '--jobs',
      '3',
      '--json',
    ];
    const home = tempDir();
    for (const attempt of ['first', 'again']) {
      const res = await run(args, { env: sandboxEnv(box), home });
      expect(res.code, attempt).toBe(0);
      const [jan, feb, mar] = res.json().deliveries;
      // January has no month before it: the first time nothing to compare with, then (README) the nearest after.
      if (attempt === 'first') expect(jan.schema_changes).toBeNull();
      expect(feb.schema_changes, attempt).toMatchObject({
        since: { period: '2024-01' },
        added: [{ name: 'email' }],
        removed: [],
      });
      expect(mar.schema_changes, attempt).toMatchObject({
        since: { period: '2024-02' },
        added: [],
        removed: [{ name: 'email' }],
      });
    }
  });

  it('a dozen months leave no listener on the interrupt signal they share (Node warns past ten)', async () => {
    const box = await sandbox();
    const folders = months(MONTHS_OF_2023);
    const signal = new AbortController().signal;
    for (const dryRun of [[], ['--dry-run']]) {
      const res = await run(['deliver', ...folders.map((f) => f.dir), '--source', newSource(box), ...dryRun], {
        env: sandboxEnv(box),
        signal,
      });
      expect(res.code, res.stderr).toBe(0);
      expect(getEventListeners(signal, 'abort')).toEqual([]);
    }
  });

  it("one month's records and episodes in one run", async () => {
    const box = await sandbox();
    const [records] = months(['2024-05']);
    const [episodes] = months(['2024-05'], { product: 'episodes', lines: ['{"t":1}', '{"t":2}'] });
    const res = await run(['deliver', records!.dir, episodes!.dir, '--source', newSource(box), '--json'], {
      env: sandboxEnv(box),
    });
    expect(res.code).toBe(0);
    expect(res.json().deliveries.map((d: any) => [d.period, d.product, d.batch.status])).toEqual([
      ['2024-05', 'records', 'received'],
      ['2024-05', 'episodes', 'received'],
    ]);
  });
});

describe('the quick checks of every folder come first: any failure is exit 2 and nothing is sent', () => {
  const refusals: Array<[string, (folders: Folder[]) => string[], RegExp]> = [
    [
      'a folder without report.json',
      (folders) => {
        writeFileSync(path.join(folders[2]!.dir, 'report.json'), '{"tool": 1}');
        return folders.map((f) => f.dir);
      },
      /^bds: .*records-2024-03: .*report.*; nothing was sent$/m,
    ],
    [
      'a folder whose name holds no period',
      (folders) => {
        const unnamed = path.join(path.dirname(folders[1]!.dir), 'latest');
        renameSync(folders[1]!.dir, unnamed);
        return [folders[0]!.dir, unnamed, folders[2]!.dir];
      },
      /^bds: .*latest: the folder's name holds no period \(YYYY-MM\); nothing was sent\nhint: with several folders, each one's period is the YYYY-MM in its name/m,
    ],
    [
      'two folders for the same period and product',
      (folders) => {
        const twin = path.join(path.dirname(folders[1]!.dir), 'orders_2024-02_v2');
        renameSync(folders[2]!.dir, twin);
        return [folders[0]!.dir, folders[1]!.dir, twin];
      },
      /^bds: .*orders_2024-02_v2: the same period and product \(2024-02 records\) as .*records-2024-02; nothing was sent$/m,
    ],
    [
      'the same folder named twice',
      (folders) => [...folders.map((f) => f.dir), `${folders[1]!.dir}/`],
      /^bds: .*records-2024-02\/: the same folder is named twice; nothing was sent\nhint: name each folder once$/m,
    ],
    [
      'a month in the future',
      (folders) => {
        const future = path.join(path.dirname(folders[2]!.dir), 'records-2099-01');
        renameSync(folders[2]!.dir, future);
        return [folders[0]!.dir, folders[1]!.dir, future];
      },
      /^bds: .*records-2099-01: the period 2099-01 in the folder's name records-2099-01 is in the future/m,
    ],
    [
      'a product that contradicts a schema',
      (folders) => [...folders.map((f) => f.dir), '--product', 'episodes'],
      /^bds: 3 of 3 folders failed their checks; nothing was sent:\n {2}.*records-2024-01: .*\n {2}.*records-2024-02: .*\n {2}.*records-2024-03: /m,
    ],
  ];

  it.each(refusals)('%s', async (_name, arrange, message) => {
    const box = await sandbox();
    const args = arrange(months(['2024-01', '2024-02', '2024-03']));
    const res = await run(['deliver', ...args, '--source', newSource(box)], { env: sandboxEnv(box) });
    expect(res.stderr).toMatch(message);
    expect(res.code).toBe(2);
    expect(count(box, 'create') + count(box, 'upload') + count(box, 'list')).toBe(0);
  });

  it('every failing folder is named, and under --json the error is one document', async () => {
    const box = await sandbox();
    const folders = months(['2024-01', '2024-02', '2024-03']);
    writeFileSync(path.join(folders[0]!.dir, 'schema.json'), '{');
    writeFileSync(path.join(folders[2]!.dir, 'report.json'), '[]');
    const res = await run(['deliver', ...folders.map((f) => f.dir), '--source', newSource(box), '--json'], {
      env: sandboxEnv(box),
    });
    expect(res.code).toBe(2);
    const { error } = res.json();
    expect(error.exit_code).toBe(2);
    expect(error.message.split('\n')).toEqual([
      '2 of 3 folders failed their checks; nothing was sent:',
      expect.stringContaining(`${folders[0]!.dir}: `),
      expect.stringContaining(`${folders[2]!.dir}: `),
    ]);
    expect(box.requests.filter((r) => r.route !== 'me')).toEqual([]);
  });

  it.each([
    ['--period', '2024-01'],
    ['--file', 'records.jsonl.gz'],
    ['--schema', 'schema.json'],
    ['--report', 'report.json'],
  ])('%s is refused with several folders', async (flag, value) => {
    const box = await sandbox();
    const folders = months(['2024-01', '2024-02']);
    const res = await run(['deliver', ...folders.map((f) => f.dir), flag, value, '--source', newSource(box)], {
      env: sandboxEnv(box),
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`bds: ${flag} cannot be given with several folders\n`);
    expect(box.requests).toEqual([]);
  });

  it.each([
    ['0', 2],
    ['9', 2],
    ['two', 2],
    ['1.5', 2],
    // A typo should not wait for the day it matters.
    ['99', 1],
  ])('--jobs %s is refused (%i folders)', async (jobs, folders) => {
    const box = await sandbox();
    const dirs = months(['2024-01', '2024-02'].slice(0, folders)).map((f) => f.dir);
    const res = await run(['deliver', ...dirs, '--jobs', jobs, '--source', newSource(box)], { env: sandboxEnv(box) });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`bds: --jobs must be a whole number from 1 to 8, not ${jobs}\n`);
    expect(count(box, 'create')).toBe(0);
  });
});

describe('what stops a month, and what it says', () => {
  it('a month delivered from another file: exit 4, and the hint names its folder alone with --force', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folders = months(['2024-01', '2024-02']);
    // January delivered from another machine (another HOME, so no record here).
    expect((await run(['deliver', folders[0]!.dir, '--source', source], { env: sandboxEnv(box) })).code).toBe(0);
    const res = await run(['deliver', ...folders.map((f) => f.dir), '--source', source], { env: sandboxEnv(box) });
    expect(res.code).toBe(4);
    expect(res.stderr).toContain(
      `hint: to deliver this file as well, deliver its folder alone with --force (bds deliver ${folders[0]!.dir} --force); with several folders, --force delivers every one of them again\n`,
    );
    expect(batchesByPeriod(box)).toEqual([
      ['2024-01', 'received'],
      ['2024-02', 'received'],
    ]);
  });

  it('the same data file in two folders (cp -r): the later month is refused with exit 2 naming the earlier, the others go on', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const home = tempDir();
    const [january, march] = months(['2010-01', '2010-03']);
    const february = path.join(path.dirname(january!.dir), 'records-2010-02');
    cpSync(january!.dir, february, { recursive: true });
    const args = ['deliver', march!.dir, february, january!.dir, '--source', source, '--jobs', '3'];
    const refusal =
      `${path.join(february, 'records.jsonl.gz')} is the same file as the one for 2010-01 in ${january!.dir} (sha256 ${january!.sha256}); ` +
      'nothing was sent for 2010-02';

    for (const attempt of ['first', 'again']) {
      const res = await run([...args, '--json'], { env: sandboxEnv(box), home });
      expect(res.code, attempt).toBe(2);
      const [jan, feb, mar] = res.json().deliveries;
      expect([jan.error, mar.error], attempt).toEqual([null, null]);
      expect(feb.error, attempt).toEqual({
        message: refusal,
        hint: `each month has data of its own: check what ${february} holds (a copied folder? a stale one?); if it really is 2010-02's, deliver that folder alone with --force (bds deliver ${february} --force)`,
        exit_code: 2,
      });
      expect(feb.batch, attempt).toBeNull();
    }
    expect(batchesByPeriod(box)).toEqual([
      ['2010-01', 'received'],
      ['2010-03', 'received'],
    ]);

    const dryRun = await run([...args, '--dry-run'], { env: sandboxEnv(box), home });
    expect(dryRun.code).toBe(0);
    expect(dryRun.stdout).toMatch(
      /^2010-02 +records +would stop +3 +\d+ B +\S+records-2010-02\/records\.jsonl\.gz is the same file as the one for 2010-01 .*\(exit 2\)$/m,
    );

    // Alone and with --force, as the hint says: delivered, with a warning naming the other month.
    const forced = await run(['deliver', february, '--source', source, '--force'], { env: sandboxEnv(box), home });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toMatch(
      /warning: this data file is also 2010-01's \(.*records-2010-01, delivered as bat_\w+\); delivering it anyway \(--force\)/,
    );
    expect(batchesByPeriod(box)).toEqual([
      ['2010-01', 'received'],
      ['2010-02', 'received'],
      ['2010-03', 'received'],
    ]);
  });

  it('the later month waits for the earlier months of the run to find their checksums, whichever pass ends first', async () => {
    const [january, february] = months(['2010-01', '2010-02']);
    const folders = [january!, february!].map(
      (f, i) => ({ dir: f.dir, absDir: f.dir, period: `2010-0${i + 1}`, product: 'records' }) as MonthFolder,
    );
    const checksums = new RunChecksums(folders);
    const later = checksums.sameFileBefore(1, 'same');
    expect(await checksums.sameFileBefore(0, 'same')).toBeUndefined();
    expect(await later).toEqual({ period: '2010-01', dir: january!.dir, batchId: undefined, inRun: true });
    // An earlier month whose pass failed (no checksum) does not hold the later ones.
    const failing = new RunChecksums(folders);
    const waiting = failing.sameFileBefore(1, 'same');
    failing.found(0, undefined);
    expect(await waiting).toBeUndefined();
  });

  it('files without records are refused as such, never as the same file as another month', async () => {
    const box = await sandbox();
    const folders = months(['2010-01', '2010-02'], { lines: ['', ''] });
    const res = await run(['deliver', ...folders.map((f) => f.dir), '--source', newSource(box), '--json'], {
      env: sandboxEnv(box),
    });
    expect(res.code).toBe(2);
    expect(res.json().deliveries.map((d: any) => d.error.message)).toEqual(
      folders.map((f) => `${f.dataFile}: no records (the file holds no non-empty line)`),
    );
  });

  it('a refused key: the months not started are not tried', async () => {
    const box = await sandbox();
    const folders = months(['2024-01', '2024-02', '2024-03']);
    const res = await run(
      ['deliver', ...folders.map((f) => f.dir), '--source', newSource(box), '--jobs', '1', '--json'],
      {
        env: { ...sandboxEnv(box), BDS_API_KEY: 'svc_test_wrongkey123' },
      },
    );
    expect(res.code).toBe(3);
    expect(res.json().deliveries.map((d: any) => d.error.message)).toEqual([
      expect.any(String),
      'not started: the key was refused for 2024-01 records',
      'not started: the key was refused for 2024-01 records',
    ]);
    expect(box.requests.filter((r) => r.server === 'api').length).toBe(1);
  });

  it("the library: a month not started says what kept it in its failure's about", async () => {
    const box = await sandbox();
    const folders = months(['2024-01', '2024-02']);
    const result = await deliverMany({
      dirs: folders.map((f) => f.dir),
      jobs: 1,
      env: { HOME: tempDir(), ...sandboxEnv(box), BDS_API_KEY: 'svc_test_wrongkey123', BDS_SOURCE_ID: newSource(box) },
    });
    expect(result.exit_code).toBe(3);
    expect(result.deliveries[1]!.error).toEqual({
      message: 'not started: the key was refused for 2024-01 records',
      hint: null,
      exit_code: 3,
      about: {
        code: 'not_started',
        error: { message: 'the key was refused for 2024-01 records', hint: undefined, about: undefined },
      },
    });
  });

  it('--force with --skip-delivered is refused, for one folder and for several', async () => {
    const box = await sandbox();
    const folders = months(['2024-01', '2024-02']);
    for (const dirs of [[folders[0]!.dir], folders.map((f) => f.dir)]) {
      const res = await run(['deliver', ...dirs, '--force', '--skip-delivered', '--source', newSource(box)], {
        env: sandboxEnv(box),
      });
      expect(res.code).toBe(2);
      expect(res.stderr).toContain('bds: --force and --skip-delivered cannot be given together\n');
    }
    expect(box.requests).toEqual([]);
  });

  it('a folder that does not exist, or a file among the folders, is named as such', async () => {
    const box = await sandbox();
    const folders = months(['2024-01']);
    const missing = path.join(path.dirname(folders[0]!.dir), 'records-2024-02');
    const single = await run(['deliver', path.join(path.dirname(missing), 'nothing'), '--source', newSource(box)], {
      env: sandboxEnv(box),
    });
    expect(single.stderr).toMatch(/^bds: no such folder: .*nothing$/m);
    const file = path.join(path.dirname(missing), 'README.md');
    writeFileSync(file, 'notes');
    const several = await run(['deliver', folders[0]!.dir, missing, file, '--source', newSource(box)], {
      env: sandboxEnv(box),
    });
    expect(several.code).toBe(2);
    expect(several.stderr).toMatch(/^ {2}.*records-2024-02: no such folder: /m);
    expect(several.stderr).toMatch(/^ {2}.*README\.md: not a folder: /m);
  });

  it('--verbose: each HTTP line names its month', async () => {
    const box = await sandbox();
    const folders = months(['2024-01', '2024-02']);
    const res = await run(['deliver', ...folders.map((f) => f.dir), '--source', newSource(box), '--verbose'], {
      env: sandboxEnv(box),
    });
    expect(res.code).toBe(0);
    const http = res.stderr.split('\n').filter((line) => / (GET|POST|PUT) /.test(line));
    expect(http.length).toBeGreaterThanOrEqual(6);
    for (const line of http) expect(line).toMatch(/Z 2024-0[12] records: (GET|POST|PUT) /);
  });
});

describe('on GitHub Actions', () => {
  it('the step summary is a table with a row per month', async () => {
    const box = await sandbox();
    const folders = months(['2024-01', '2024-02']);
    writeFileSync(folders[1]!.dataFile, gzipSync('oops\n'));
    const summary = path.join(tempDir(), 'summary.md');
    const res = await run(['deliver', ...folders.map((f) => f.dir), '--source', newSource(box)], {
      env: { ...sandboxEnv(box), GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary },
    });
    expect(res.code).toBe(2);
    const [january] = box.store.batches();
    expect(readFileSync(summary, 'utf8').split('\n')).toEqual([
      '### bds deliver',
      '',
      '| Period | Product | Outcome | Batch | Records | Error |',
      '|---|---|---|---|---|---|',
      `| 2024-01 | records | delivered | \`${january!.id}\` | 3 |  |`,
      expect.stringMatching(/^\| 2024-02 \| records \| failed \| {2}\| {2}\| .*line 1.* \(exit 2\) \|$/),
      '',
      '',
    ]);
  });
});

describe('at most --jobs months at once, seen from the server', () => {
  it.each([
    [1, 3],
    [2, 4],
    [3, 5],
  ])('--jobs %i: never more uploads at once, and that many when the months allow', async (jobs, monthCount) => {
    const box = await sandbox();
    // Each upload is held a while, so that months running together are caught at it together.
    box.faults.add({ route: 'upload', delayMs: 400, times: monthCount });
    const folders = months(Array.from({ length: monthCount }, (_, i) => `2023-0${i + 1}`));
    const res = await run(
      ['deliver', ...folders.map((f) => f.dir), '--jobs', String(jobs), '--source', newSource(box)],
      { env: sandboxEnv(box) },
    );
    expect(res.code).toBe(0);
    expect(count(box, 'upload')).toBe(monthCount);
    expect(mostUploadsAtOnce(box)).toBe(jobs);
  });
});

describe('a month that fails does not stop the others', () => {
  it('exit code of the first failed month in period order; run again, it delivers only what is missing', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const home = tempDir();
    const folders = months(['2024-01', '2024-02', '2024-03', '2024-04']);
    // 2024-03: a bad line, found in its pass (exit 2).
    const good = readFileSync(folders[2]!.dataFile);
    writeFileSync(folders[2]!.dataFile, gzipSync('{"_object":"orders","order_id":"x"}\nnot json\n'));
    const env = { HOME: home, XDG_STATE_HOME: path.join(home, 'state'), ...sandboxEnv(box), BDS_SOURCE_ID: source };
    const events: DeliveryEvent[] = [];
    const result = await deliverMany({
      dirs: folders.map((f) => f.dir),
      jobs: 1,
      env,
      onEvent: (event) => {
        events.push(event);
        // 2024-02: the API refuses to confirm its batch (exit 4).
        if (event.type === 'step' && event.step === 'completing' && event.period === '2024-02') {
          box.faults.add({ route: 'complete', status: 422 });
        }
      },
    });
    expect(result.exit_code).toBe(4);
    expect(result.deliveries.map((d) => [d.period, d.error?.exit_code ?? 0])).toEqual([
      ['2024-01', 0],
      ['2024-02', 4],
      ['2024-03', 2],
      ['2024-04', 0],
    ]);
    const february = result.deliveries[1]!;
    expect(february).toMatchObject({
      record_count: 4,
      batch: { id: expect.stringMatching(/^bat_/) },
      error: { message: expect.stringContaining('422') },
    });
    expect(result.deliveries[2]!.error!.message).toMatch(/line 2/);
    expect(
      events
        .filter((e) => e.type === 'ended')
        .map((e) => [(e as { period: string }).period, (e as { error: unknown }).error !== null]),
    ).toEqual([
      ['2024-01', false],
      ['2024-02', true],
      ['2024-03', true],
      ['2024-04', false],
    ]);
    // The event's error is the result's, data alike: {message, hint, exit_code}.
    expect(events.filter((e) => e.type === 'ended').map((e) => (e as { error: unknown }).error)).toEqual(
      result.deliveries.map((d) => d.error),
    );
    expect(batchesByPeriod(box)).toEqual([
      ['2024-01', 'received'],
      ['2024-02', 'awaiting_upload'],
      ['2024-04', 'received'],
    ]);

    // Fixed: the same command again finishes February's batch and delivers March; January and April send nothing.
    writeFileSync(folders[2]!.dataFile, good);
    const before = box.requests.length;
    const again = await run(['deliver', ...folders.map((f) => f.dir), '--json'], { env, home });
    expect(again.code).toBe(0);
    expect(again.json().deliveries.map((d: any) => [d.period, d.skipped, d.error])).toEqual([
      ['2024-01', true, null],
      ['2024-02', false, null],
      ['2024-03', false, null],
      ['2024-04', true, null],
    ]);
    expect(again.json().deliveries[1].batch.id).toBe((february as { batch: { id: string } }).batch.id);
    expect(batchesByPeriod(box)).toEqual([
      ['2024-01', 'received'],
      ['2024-02', 'received'],
      ['2024-03', 'received'],
      ['2024-04', 'received'],
    ]);
    expect(box.requests.slice(before).filter((r) => r.route === 'create').length).toBe(1);
  });

  it('the exit code is the first failed month in period order, not the first to fail', async () => {
    const box = await sandbox();
    const folders = months(['2024-01', '2024-02']);
    // February fails at once, in its pass (exit 2); January later, when the API refuses to confirm it (exit 4).
    writeFileSync(folders[1]!.dataFile, gzipSync('not json\n'));
    const order: string[] = [];
    const result = await deliverMany({
      dirs: folders.map((f) => f.dir),
      jobs: 2,
      env: { HOME: tempDir(), ...sandboxEnv(box), BDS_SOURCE_ID: newSource(box) },
      onEvent: (event) => {
        if (event.type === 'ended') order.push(event.period!);
        if (event.type === 'step' && event.step === 'completing') box.faults.add({ route: 'complete', status: 422 });
      },
    });
    expect(order).toEqual(['2024-02', '2024-01']);
    expect(result.deliveries.map((d) => d.error?.exit_code)).toEqual([4, 2]);
    expect(result.exit_code).toBe(4);
  });

  it('the network giving up on one month: exit 5, the other months delivered', async () => {
    const box = await sandbox();
    const folders = months(['2024-01', '2024-02', '2024-03']);
    // --jobs 1: the first uploads are January's; every one of its attempts fails.
    box.faults.add({ route: 'upload', status: 503, times: 5 });
    const res = await run(['deliver', ...folders.map((f) => f.dir), '--jobs', '1', '--source', newSource(box)], {
      env: sandboxEnv(box),
    });
    expect(res.code).toBe(5);
    expect(res.stderr).toMatch(/^bds: 2024-01 records: .*503/m);
    expect(batchesByPeriod(box)).toEqual([
      ['2024-01', 'awaiting_upload'],
      ['2024-02', 'received'],
      ['2024-03', 'received'],
    ]);
  });

  it('the CLI names the failed month as it fails, and its table row and --quiet line say why', async () => {
    const box = await sandbox();
    const folders = months(['2024-01', '2024-02']);
    writeFileSync(folders[0]!.dataFile, gzipSync('oops\n'));
    const home = tempDir();
    const args = ['deliver', ...folders.map((f) => f.dir), '--source', newSource(box)];
    const res = await run(args, { env: sandboxEnv(box), home });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^bds: 2024-01 records: .*line 1/m);
    const json = await run([...args, '--json'], { env: sandboxEnv(box), home });
    const [january] = json.json().deliveries;
    expect(Object.keys(january)).toEqual([
      'batch',
      'source_id',
      'product',
      'period',
      'record_count',
      'bytes',
      'sha256',
      'skipped',
      'resumed',
      'schema_changes',
      'dir',
      'error',
    ]);
    expect(january).toMatchObject({
      batch: null,
      period: '2024-01',
      record_count: null,
      skipped: false,
      error: { exit_code: 2 },
    });
    expect(res.stdout).toMatch(/^2024-01 +records +failed +.*line 1.*\(exit 2\)$/m);
    expect(res.stdout).toMatch(/^2024-02 +records +delivered +bat_/m);
    expect(res.stdout).toContain('1 of 2 folders delivered; 1 failed.');

    const quiet = await run([...args, '--quiet'], { env: sandboxEnv(box), home });
    expect(quiet.code).toBe(2);
    expect(quiet.stdout.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(/^failed 2024-01 records: .*line 1/),
      expect.stringMatching(/^already delivered as bat_\w+ \(received\): 2024-02 records$/),
    ]);
  });
});

describe('a long backfill', () => {
  it("leaves no listener on the run's signal per month: a dozen months and more raise no MaxListenersExceededWarning", async () => {
    const box = await sandbox();
    const folders = months([
      ...Array.from({ length: 12 }, (_, i) => `2023-${String(i + 1).padStart(2, '0')}`),
      '2024-01',
    ]);
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const result = await deliverMany({
        dirs: folders.map((f) => f.dir),
        env: { HOME: tempDir(), ...sandboxEnv(box), BDS_SOURCE_ID: newSource(box) },
        signal: new AbortController().signal,
      });
      expect(result.exit_code).toBe(0);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});

describe('Ctrl-C stops every month', () => {
  it('exit 130, records saved, months not started stay untouched; the same command again finishes with one received batch each', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const home = tempDir();
    const folders = months(['2024-01', '2024-02', '2024-03', '2024-04']);
    box.faults.add({ route: 'upload', hang: true, times: 2 });
    const controller = new AbortController();
    const args = ['deliver', ...folders.map((f) => f.dir), '--source', source, '--jobs', '2', '--json'];
    const running = run(args, { env: sandboxEnv(box), home, signal: controller.signal });
    await until(() => count(box, 'upload') === 2, 'two uploads under way');
    controller.abort(new InterruptedError('SIGINT'));
    const res = await running;
    expect(res.code).toBe(130);
    expect(res.stderr).toMatch(/^bds: interrupted by SIGINT\nhint: run the same command again to finish/m);
    const { deliveries, exit_code } = res.json();
    expect(exit_code).toBe(130);
    expect(deliveries.map((d: any) => [d.period, d.error.exit_code, d.error.message])).toEqual([
      ['2024-01', 130, 'interrupted by SIGINT'],
      ['2024-02', 130, 'interrupted by SIGINT'],
      ['2024-03', 130, 'not started: interrupted by SIGINT'],
      ['2024-04', 130, 'not started: interrupted by SIGINT'],
    ]);
    expect(periods(box)).toEqual(['2024-01', '2024-02']);

    box.faults.clear();
    const again = await run(args, { env: sandboxEnv(box), home });
    expect(again.code).toBe(0);
    expect(batchesByPeriod(box)).toEqual([
      ['2024-01', 'received'],
      ['2024-02', 'received'],
      ['2024-03', 'received'],
      ['2024-04', 'received'],
    ]);
  });

  it('the table says which months were interrupted, and the run is not called a failure', async () => {
    const box = await sandbox();
    const folders = months(['2024-01', '2024-02']);
    box.faults.add({ route: 'upload', hang: true });
    const controller = new AbortController();
    const running = run(['deliver', ...folders.map((f) => f.dir), '--source', newSource(box), '--jobs', '1'], {
      env: sandboxEnv(box),
      signal: controller.signal,
    });
    await until(() => count(box, 'upload') === 1, 'the upload under way');
    controller.abort(new InterruptedError('SIGTERM'));
    const res = await running;
    expect(res.code).toBe(143);
    expect(res.stdout).toMatch(/^2024-01 +records +interrupted +bat_\w+ .*interrupted by SIGTERM \(exit 143\)$/m);
    expect(res.stdout).toMatch(/^2024-02 +records +interrupted +not started: interrupted by SIGTERM \(exit 143\)$/m);
    expect(res.stdout).toContain(
      'Interrupted: 0 of 2 folders delivered. Run the same command again to finish the others.',
    );
  });

  it('--quiet: an interrupted month is "interrupted", not "failed"', async () => {
    const box = await sandbox();
    const folders = months(['2024-01', '2024-02']);
    box.faults.add({ route: 'upload', hang: true });
    const controller = new AbortController();
    const args = ['deliver', ...folders.map((f) => f.dir), '--source', newSource(box), '--jobs', '1', '--quiet'];
    const running = run(args, { env: sandboxEnv(box), signal: controller.signal });
    await until(() => count(box, 'upload') === 1, 'the upload under way');
    controller.abort(new InterruptedError('SIGINT'));
    const res = await running;
    expect(res.code).toBe(130);
    expect(res.stdout.split('\n').filter(Boolean)).toEqual([
      'interrupted 2024-01 records',
      'interrupted 2024-02 records: not started',
    ]);
  });

  it('the library: the signal rejects deliverMany with exit code 130', async () => {
    const box = await sandbox();
    const folders = months(['2024-01', '2024-02']);
    box.faults.add({ route: 'upload', hang: true, times: 2 });
    const controller = new AbortController();
    const home = tempDir();
    const running = deliverMany({
      dirs: folders.map((f) => f.dir),
      env: { HOME: home, ...sandboxEnv(box), BDS_SOURCE_ID: newSource(box) },
      signal: controller.signal,
    });
    await until(() => count(box, 'upload') === 2, 'two uploads under way');
    controller.abort();
    await expect(running).rejects.toMatchObject({ exitCode: 130 });
  });
});

describe('data file names', () => {
  it('one form everywhere, from the working folder: line errors, gzip errors, --json and ::error:: annotations', async () => {
    const box = await sandbox();
    const folders = [
      ...months(['2024-01'], { lines: ['{"a":1}', 'oops'] }),
      ...months(['2024-02'], { dataBytes: gzipSync('{"a":1}\n').subarray(0, 12) }),
    ];
    // Both in one working folder, as `cd /srv/scrub && bds deliver out/*` has them: the same file name in each.
    const cwd = path.dirname(folders[0]!.dir);
    renameSync(folders[1]!.dir, path.join(cwd, 'records-2024-02'));
    const names = ['records-2024-01/records.jsonl.gz', 'records-2024-02/records.jsonl.gz'];
    const expected = [
      `${names[0]} line 2 is not a JSON object`,
      `${names[1]}: the gzip data ends early (the file is truncated)`,
    ];
    const args = ['deliver', 'records-2024-01', 'records-2024-02', '--source', newSource(box), '--jobs', '1'];
    const res = await run(args, { env: { ...sandboxEnv(box), GITHUB_ACTIONS: 'true' }, cwd });
    expect(res.code).toBe(2);
    for (const message of expected) {
      expect(res.stderr).toMatch(new RegExp(`^bds: 2024-0\\d records: ${message.replace(/[.()]/g, '\\$&')}$`, 'm'));
      expect(res.stderr).toMatch(
        new RegExp(`^::error title=bds::2024-0\\d records: ${message.replace(/[.()]/g, '\\$&')}$`, 'm'),
      );
    }
    const json = await run([...args, '--json'], { env: sandboxEnv(box), cwd });
    expect(json.json().deliveries.map((d: { error: { message: string } }) => d.error.message)).toEqual(expected);
    const checked = await run(['check', 'records-2024-01', 'records-2024-02', '--json'], { cwd });
    expect(checked.json().checks.map((c: { error: { message: string } }) => c.error.message)).toEqual(expected);
  });
});

describe('what a person sees', () => {
  it('without a terminal: timestamped lines, each naming its period and product', async () => {
    const box = await sandbox();
    const folders = months(['2024-01', '2024-02']);
    const res = await run(['deliver', ...folders.map((f) => f.dir), '--source', newSource(box)], {
      env: sandboxEnv(box),
    });
    expect(res.code).toBe(0);
    const lines = res.stderr.trimEnd().split('\n');
    for (const line of lines) expect(line).toMatch(TIMESTAMP);
    const about = lines.filter((line) => !/ test key | delivering 2 folders/.test(line));
    expect(about.length).toBeGreaterThanOrEqual(10);
    for (const line of about) expect(line).toMatch(/^\S+ 2024-0[12] records: /);
    expect(lines).toContainEqual(expect.stringMatching(/ 2024-01 records: delivered bat_\w+ \(received\)$/));
    expect(res.stderr).not.toMatch(/\u001b/);
  });

  it('on a terminal: a live line per running month and an overall line, redrawn in place; then the table', async () => {
    const box = await sandbox();
    box.faults.add({ route: 'upload', delayMs: 300, times: 3 });
    const folders = months(['2024-01', '2024-02', '2024-03']);
    const writes: string[] = [];
    const res = await run(['deliver', ...folders.map((f) => f.dir), '--source', newSource(box)], {
      env: sandboxEnv(box),
      tty: true,
      onStderrWrite: (chunk) => writes.push(chunk),
    });
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(/\u001b\[\d+A\r/); // back to the block's first line
    // A month that ends: its line, and the block without it, in one write.
    const ended = writes.filter((chunk) => / 2024-0\d records {2}delivered /.test(chunk));
    expect(ended).toHaveLength(3);
    for (const chunk of ended) {
      const period = / (2024-0\d) records {2}delivered /.exec(chunk)![1];
      expect(chunk).toMatch(/\u001b\[2K\d of 3 done/);
      expect(chunk).not.toContain(`${period} records  confirming`);
    }
    expect(res.stderr).toMatch(/\u001b\[2K\S+ 2024-01 records +uploading \[/);
    expect(res.stderr).toMatch(/\u001b\[2K0 of 3 done, 0 B sent/);
    expect(res.stderr).toMatch(/\u001b\[2K3 of 3 done, [\d.]+ \w?B sent/);
    expect(res.stderr).toMatch(/✔.* 2024-03 records {2}delivered bat_\w+ \(received\)/);
    expect(res.stderr).not.toMatch(TIMESTAMP);
    expect(res.stdout).toMatch(/^PERIOD +PRODUCT +OUTCOME +BATCH +RECORDS +BYTES +ERROR$/m);
  });

  it('on a terminal, --dry-run: every month ends, and the block with it', async () => {
    const box = await sandbox();
    const folders = months(['2024-01', '2024-02', '2024-03']);
    const res = await run(['deliver', ...folders.map((f) => f.dir), '--source', newSource(box), '--dry-run'], {
      env: sandboxEnv(box),
      tty: true,
    });
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(/2024-03 records {2}checked; nothing was created \(dry run\)/);
    expect(res.stderr).toMatch(/\u001b\[2K3 of 3 done/);
  });

  it('on a terminal, a notice goes above the live block in one write: cleared, the line, the block again', async () => {
    const box = await sandbox();
    box.faults.add({ route: 'upload', status: 503 });
    const folders = months(['2024-01', '2024-02']);
    const writes: string[] = [];
    const res = await run(['deliver', ...folders.map((f) => f.dir), '--source', newSource(box), '--jobs', '1'], {
      env: sandboxEnv(box),
      tty: true,
      onStderrWrite: (chunk) => writes.push(chunk),
    });
    expect(res.code).toBe(0);
    const retry = writes.find((chunk) => chunk.includes('2024-01 records: ') && chunk.includes('503'));
    expect(retry).toMatch(
      /^\u001b\[\d+A\r\u001b\[J2024-01 records: [^\n]*503[^\n]*\n\u001b\[2K.* 2024-01 records .*\n\u001b\[2K\d of 2 done.*\n\u001b\[J$/s,
    );
  });

  it('a narrow terminal: no live line is wider than the terminal; NO_COLOR: no colour', async () => {
    const box = await sandbox();
    box.faults.add({ route: 'upload', delayMs: 200, times: 2 });
    const folders = months(['2024-01', '2024-02']);
    const res = await run(['deliver', ...folders.map((f) => f.dir), '--source', newSource(box)], {
      env: { ...sandboxEnv(box), NO_COLOR: '1' },
      tty: true,
      columns: 30,
    });
    expect(res.code).toBe(0);
    expect(res.stderr).not.toMatch(ANSI_COLOUR);
    const drawn = res.stderr
      .split('\u001b[2K')
      .slice(1)
      .map((part) => part.split('\n')[0]!);
    expect(drawn.length).toBeGreaterThan(2);
    for (const line of drawn) expect([...line].length).toBeLessThanOrEqual(29);
  });

  it('a terminal shorter than the block: each frame fits its rows (the first months, a count of the rest, the overall line)', async () => {
    const box = await sandbox();
    box.faults.add({ route: 'upload', delayMs: 200, times: 12 });
    const folders = months(Array.from({ length: 12 }, (_, i) => `2023-${String(i + 1).padStart(2, '0')}`));
    const writes: string[] = [];
    const res = await run(['deliver', ...folders.map((f) => f.dir), '--source', newSource(box), '--jobs', '8'], {
      env: sandboxEnv(box),
      tty: true,
      columns: 30,
      rows: 6,
      onStderrWrite: (chunk) => writes.push(chunk),
    });
    expect(res.code).toBe(0);
    // A frame: the cursor back up over the last one, then its lines; at most rows - 1 = 5 of them, or the
    // terminal scrolls and the cursor cannot go back over what left the screen.
    const frames = writes.filter((chunk) => chunk.includes('\u001b[2K'));
    expect(frames.length).toBeGreaterThan(5);
    for (const frame of frames) {
      expect(frame.split('\u001b[2K').length - 1).toBeLessThanOrEqual(5);
      for (const [, up] of frame.matchAll(/\u001b\[(\d+)A/g)) expect(Number(up)).toBeLessThanOrEqual(5);
    }
    expect(res.stderr).toMatch(/\u001b\[2K… and \d+ more\n\u001b\[2K\d+ of 12 done/);
  });

  it('a slow storage host: a month whose bytes are all handed over waits for it, and so does the overall line', async () => {
    const box = await sandbox();
    box.faults.add({ route: 'upload', delayMs: 600, times: 2 });
    const folders = months(['2024-01', '2024-02']);
    // A clock 1 s on at each look, so that the overall line would estimate a time left.
    let clock = Date.parse('2024-07-01T00:00:00Z');
    const res = await run(['deliver', ...folders.map((f) => f.dir), '--source', newSource(box)], {
      env: sandboxEnv(box),
      tty: true,
      now: () => new Date((clock += 1_000)),
    });
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(
      /\u001b\[2K\S+ 2024-0\d records +uploading \[█+\] 100% \d+ B\/\d+ B, waiting for the storage host\n/,
    );
    expect(res.stderr).toMatch(/\u001b\[2K\d of 2 done, \d+ B sent[^\n]*, waiting for the storage host\n/);
    expect(res.stderr).not.toMatch(/waiting for the storage host[^\n]*left/);
  });

  it('TERM=dumb: plain timestamped lines, no cursor movement', async () => {
    const box = await sandbox();
    const folders = months(['2024-01', '2024-02']);
    const res = await run(['deliver', ...folders.map((f) => f.dir), '--source', newSource(box)], {
      env: { ...sandboxEnv(box), TERM: 'dumb' },
      tty: true,
    });
    expect(res.code).toBe(0);
    expect(res.stderr).not.toMatch(/\u001b/);
    expect(res.stderr).toMatch(/Z 2024-02 records: delivered bat_/);
  });
});
