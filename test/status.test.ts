// bds status, --wait (status and deliver) and the library's status() and waitForReview(), against the sandbox and
// its review. A fake clock (Runtime.now, moved only by Runtime.sleep) makes "this month" 2024-08 and runs a
// 30-minute wait at once; the sandbox shares it, so its review decides when the wait says it has.

import { renameSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BatchStatus, Product } from '../src/core/api/types.js';
import { InterruptedError } from '../src/core/errors.js';
import { deliver, status, waitForReview, EXIT_CODES } from '../src/index.js';
import type { Sandbox, EmulatorOptions } from '../src/sandbox/emulator.js';
import {
  count,
  fakeClock,
  makeFolder,
  newSource,
  REPORT,
  run,
  sandbox,
  sandboxEnv,
  spawnCli,
  tempDir,
  until,
  type RunOptions,
} from './helpers.js';

/** "This month" is 2024-08: the last complete month is 2024-07. */
const START = '2024-08-10T12:00:00Z';

type Clock = ReturnType<typeof fakeClock>;

async function setup(options: EmulatorOptions = {}) {
  const clock = fakeClock(START);
  const box = await sandbox({ now: clock.ms, ...options });
  const source = newSource(box);
  const sleeps: number[] = [];
  /** The CLI on the fake clock, its settings pointed at the sandbox and the source. */
  const bds = (argv: string[], extra: RunOptions = {}) =>
    run(argv, {
      env: sandboxEnv(box, { BDS_SOURCE_ID: source }),
      now: clock.now,
      sleep: clock.sleep,
      sleeps,
      ...extra,
    });
  return { clock, box, source, sleeps, bds };
}

/** A batch as the service lists it, made a minute after the one before (so "newest" is never a tie). */
function seed(
  box: Sandbox,
  clock: Clock,
  source: string,
  period: string,
  product: Product,
  state: BatchStatus,
  records = 10,
): string {
  clock.advance(60_000);
  const batch = box.store.createBatch({
    source_id: source,
    product,
    period,
    record_count: records,
    schema: {},
    report: REPORT,
    client: null,
    key_id: 'key_test_sandbox',
    idempotency_key: null,
  });
  if (state !== 'awaiting_upload') box.store.setStatus(batch.id, state);
  return batch.id;
}

/** One month in each state: 2024-02 accepted ... 2024-07 unfinished, 2024-04 with no batch. */
function seedLedger(box: Sandbox, clock: Clock, source: string) {
  return {
    accepted: seed(box, clock, source, '2024-02', 'records', 'accepted', 100),
    rejected: seed(box, clock, source, '2024-03', 'records', 'rejected', 90),
    received: seed(box, clock, source, '2024-05', 'records', 'received', 120),
    inReview: seed(box, clock, source, '2024-06', 'records', 'in_review', 130),
    unfinished: seed(box, clock, source, '2024-07', 'records', 'awaiting_upload', 140),
  };
}

describe('bds status: the ledger', () => {
  it('one row per month from the earliest batch to the last complete month: accepted, rejected, missing, received, in_review, unfinished', async () => {
    const { box, clock, source, bds } = await setup();
    const ids = seedLedger(box, clock, source);
    const piped = await bds(['status']);
    expect(piped.code).toBe(0);
    const day = (id: string) => box.store.batch(id)!.created_at.slice(0, 10);
    expect(piped.stdout.split('\n').slice(0, -1)).toEqual([
      ['2024-02', 'records', 'accepted', ids.accepted, '100', day(ids.accepted)].join('\t'),
      ['2024-03', 'records', 'rejected', ids.rejected, '90', day(ids.rejected)].join('\t'),
      ['2024-04', 'records', 'missing', '', '', ''].join('\t'),
      ['2024-05', 'records', 'received', ids.received, '120', day(ids.received)].join('\t'),
      ['2024-06', 'records', 'in_review', ids.inReview, '130', day(ids.inReview)].join('\t'),
      ['2024-07', 'records', 'unfinished', ids.unfinished, '140', day(ids.unfinished)].join('\t'),
    ]);
    // In a pipe the counts and what to do go to stderr, timestamped like every line there.
    expect(piped.stderr).toContain(
      '2024-08-10T12:05:00Z 1 accepted, 1 in_review, 1 received, 1 rejected, 1 unfinished, 1 missing\n',
    );
    expect(count(box, 'list')).toBe(1);

    const json = (await bds(['status', '--json'])).json();
    expect(json).toEqual({
      source_id: source,
      since: '2024-02',
      until: '2024-07',
      months: [
        {
          period: '2024-02',
          product: 'records',
          state: 'accepted',
          batch_id: ids.accepted,
          record_count: 100,
          created_at: box.store.batch(ids.accepted)!.created_at,
        },
        {
          period: '2024-03',
          product: 'records',
          state: 'rejected',
          batch_id: ids.rejected,
          record_count: 90,
          created_at: box.store.batch(ids.rejected)!.created_at,
        },
        {
          period: '2024-04',
          product: 'records',
          state: 'missing',
          batch_id: null,
          record_count: null,
          created_at: null,
        },
        {
          period: '2024-05',
          product: 'records',
          state: 'received',
          batch_id: ids.received,
          record_count: 120,
          created_at: box.store.batch(ids.received)!.created_at,
        },
        {
          period: '2024-06',
          product: 'records',
          state: 'in_review',
          batch_id: ids.inReview,
          record_count: 130,
          created_at: box.store.batch(ids.inReview)!.created_at,
        },
        {
          period: '2024-07',
          product: 'records',
          state: 'unfinished',
          batch_id: ids.unfinished,
          record_count: 140,
          created_at: box.store.batch(ids.unfinished)!.created_at,
        },
      ],
      counts: { accepted: 1, in_review: 1, received: 1, rejected: 1, unfinished: 1, missing: 1, open: 0 },
      exit_code: 0,
    });
  });

  it('on a terminal: a table, the counts and what to do; the current month, asked for, is open', async () => {
    const { box, clock, source, bds } = await setup();
    seedLedger(box, clock, source);
    const res = await bds(['status', '--until', '2024-08', '--no-color'], { tty: true });
    expect(res.code).toBe(0);
    const lines = res.stdout.split('\n');
    expect(lines[0]).toMatch(/^PERIOD\s+PRODUCT\s+STATE\s+BATCH\s+RECORDS\s+DELIVERED$/);
    expect(lines[3]).toMatch(/^2024-04\s+records\s+missing$/);
    expect(lines[7]).toMatch(/^2024-08\s+records\s+open$/);
    expect(lines.slice(8).join('\n')).toBe(
      [
        '',
        '1 accepted, 1 in_review, 1 received, 1 rejected, 1 unfinished, 1 missing, 1 open',
        'To do:',
        '  deliver the missing month: bds deliver out/2024-04',
        '  deliver the rejected month again, once fixed: bds deliver out/2024-03',
        '  finish the unfinished delivery (2024-07 records): the same bds deliver command again resumes it',
        '  2 months received or in review: bds status --wait waits for the verdict',
        '',
      ].join('\n'),
    );
    expect(res.stderr).toBe('');
  });

  it('a month missing in two products: a folder to deliver for each product', async () => {
    const { box, clock, source, bds } = await setup();
    for (const product of ['records', 'episodes'] as const) {
      seed(box, clock, source, '2024-02', product, 'accepted');
      seed(box, clock, source, '2024-04', product, 'accepted');
    }
    const res = await bds(['status', '--until', '2024-04', '--no-color'], { tty: true });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(
      'To do:\n  deliver the missing month: bds deliver out/records-2024-03 out/episodes-2024-03\n',
    );
  });

  it('a rejected month delivered again shows its new batch', async () => {
    const { box, clock, bds } = await setup();
    const folder = makeFolder({ records: 7 });
    const home = tempDir();
    expect((await bds(['deliver', folder.dir, '--period', '2024-07'], { home })).code).toBe(0);
    const [first] = box.store.batches();
    box.review(first!.id, 'rejected');
    const rejected = (await bds(['status', '--json'], { home })).json();
    expect(rejected.months).toEqual([
      expect.objectContaining({ period: '2024-07', state: 'rejected', batch_id: first!.id }),
    ]);

    // A rejected batch does not block a new delivery, even of the same file (a day later).
    clock.advance(86_400_000);
    expect((await bds(['deliver', folder.dir, '--period', '2024-07'], { home })).code).toBe(0);
    const second = box.store.batches()[1]!;
    expect(second.id).not.toBe(first!.id);
    const again = await bds(['status', '--json'], { home });
    expect(again.json().months).toEqual([
      {
        period: '2024-07',
        product: 'records',
        state: 'received',
        batch_id: second.id,
        record_count: 7,
        created_at: second.created_at,
      },
    ]);
  });

  it('products: those the source has batches for, one with --product; --period is one month', async () => {
    const { box, clock, source, bds } = await setup();
    seed(box, clock, source, '2024-06', 'records', 'accepted');
    const episodes = seed(box, clock, source, '2024-07', 'episodes', 'received');
    const all = (await bds(['status', '--json'])).json();
    expect(all.months.map((m: any) => `${m.period} ${m.product} ${m.state}`)).toEqual([
      '2024-06 records accepted',
      '2024-06 episodes missing',
      '2024-07 records missing',
      '2024-07 episodes received',
    ]);
    const one = (await bds(['status', '--json', '--product', 'episodes', '--period', '2024-07'])).json();
    expect(one).toMatchObject({
      since: '2024-07',
      until: '2024-07',
      months: [{ product: 'episodes', state: 'received', batch_id: episodes }],
    });
  });

  it('a source without a batch needs --since (exit 2 naming it); with it, its months are missing (records)', async () => {
    const { box, source, bds } = await setup();
    const none = await bds(['status']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`bds: source ${source} has no batch yet, so its first month is not known`);
    expect(none.stderr).toContain('hint: name the first month it should have delivered with --since YYYY-MM');
    const since = await bds(['status', '--since', '2024-06', '--json']);
    expect(since.json().months.map((m: any) => `${m.period} ${m.product} ${m.state}`)).toEqual([
      '2024-06 records missing',
      '2024-07 records missing',
    ]);
    expect(count(box, 'list')).toBe(2);
  });

  it('usage errors, before any request: a month in the future, --since after --until, --period with a range, --timeout without --wait', async () => {
    const { box, bds } = await setup();
    const cases: Array<[string[], string]> = [
      [['--since', '2024-09'], 'bds: --since 2024-09 is in the future (this month is 2024-08, UTC)'],
      [['--until', '2025-01'], 'bds: --until 2025-01 is in the future'],
      [['--period', '2024-13'], 'bds: --period 2024-13: month 13 is not between 01 and 12'],
      [['--since', '2024-05', '--until', '2024-04'], 'bds: --since 2024-05 is after --until 2024-04'],
      [['--period', '2024-05', '--since', '2024-04'], 'bds: --period cannot be given with --since or --until'],
      [['--timeout', '10m'], 'bds: --timeout goes with --wait'],
      [['--wait', '--timeout', '10'], 'bds: --timeout 10 is not a duration'],
      [['--fail-on', 'missing,late'], 'bds: --fail-on missing,late: late is not a state it can name'],
    ];
    for (const [args, message] of cases) {
      const res = await bds(['status', ...args]);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr).toContain(message);
    }
    expect(count(box, 'list')).toBe(0);
  });

  it('reads a list of hundreds of batches in one request: newest delivered batch per month and product', async () => {
    const { box, clock, source, bds } = await setup();
    const products: Product[] = ['records', 'episodes', 'environment'];
    const expected: string[] = [];
    // Seven years of months, each product with its own history: some re-delivered after a rejection, some left
    // half-way after a delivered batch, some never delivered at all.
    for (let year = 2017; year <= 2023; year++) {
      for (let month = 1; month <= 12; month++) {
        const period = `${year}-${String(month).padStart(2, '0')}`;
        for (const [index, product] of products.entries()) {
          switch ((month + index) % 4) {
            case 0: {
              seed(box, clock, source, period, product, 'rejected');
              const id = seed(box, clock, source, period, product, 'accepted');
              expected.push(`${period} ${product} accepted ${id}`);
              break;
            }
            case 1: {
              const id = seed(box, clock, source, period, product, 'rejected');
              seed(box, clock, source, period, product, 'awaiting_upload');
              expected.push(`${period} ${product} rejected ${id}`);
              break;
            }
            case 2: {
              seed(box, clock, source, period, product, 'awaiting_upload');
              const id = seed(box, clock, source, period, product, 'awaiting_upload');
              expected.push(`${period} ${product} unfinished ${id}`);
              break;
            }
            default:
              expected.push(`${period} ${product} missing null`);
          }
        }
      }
    }
    expect(box.store.batches().length).toBe(378);
    const res = await bds(['status', '--until', '2023-12', '--json']);
    expect(res.code).toBe(0);
    const { months, counts } = res.json();
    expect(months.map((m: any) => `${m.period} ${m.product} ${m.state} ${m.batch_id}`)).toEqual(expected);
    expect(counts).toEqual({
      accepted: 63,
      in_review: 0,
      received: 0,
      rejected: 63,
      unfinished: 63,
      missing: 63,
      open: 0,
    });
    expect(count(box, 'list')).toBe(1);
  });
});

describe('bds status --fail-on', () => {
  it('exits 7 after the table when a month is in a state it names, naming the months; 0 otherwise', async () => {
    const { box, clock, source, bds } = await setup();
    seedLedger(box, clock, source);
    const cases: Array<[string, string[], number, string?]> = [
      [
        'missing,rejected',
        [],
        7,
        'bds: --fail-on missing,rejected: 2024-03 records is rejected, 2024-04 records is missing',
      ],
      ['unfinished', [], 7, 'bds: --fail-on unfinished: 2024-07 records is unfinished'],
      ['pending', [], 7, 'bds: --fail-on pending: 2024-05 records is received, 2024-06 records is in_review'],
      ['missing,rejected,unfinished,pending', ['--period', '2024-02'], 0],
      ['rejected', ['--since', '2024-04', '--until', '2024-06'], 0],
    ];
    for (const [failOn, args, code, message] of cases) {
      const res = await bds(['status', '--fail-on', failOn, ...args]);
      expect(res.code, failOn).toBe(code);
      expect(res.stdout).not.toBe('');
      if (message) expect(res.stderr).toContain(`${message}\n`);
      else expect(res.stderr).not.toContain('bds:');
      const json = await bds(['status', '--fail-on', failOn, '--json', ...args]);
      expect(json.code).toBe(code);
      expect(json.json().exit_code).toBe(code);
    }
  });
});

describe('bds status --wait', () => {
  it('polls until the review is over: accepted, exit 0, three requests in 30 s, a line per change of state', async () => {
    const { box, clock, source, sleeps, bds } = await setup({ review: 'accept', reviewAfter: 20_000 });
    const id = seed(box, clock, source, '2024-07', 'records', 'received');
    const res = await bds(['status', '--wait']);
    expect(res.code).toBe(0);
    expect(sleeps).toEqual([15_000, 15_000]);
    expect(count(box, 'list')).toBe(3);
    expect(res.stdout).toBe(['2024-07', 'records', 'accepted', id, '10', '2024-08-10'].join('\t') + '\n');
    expect(res.stderr).toContain(
      '2024-08-10T12:01:00Z waiting for the review of 2024-07 records (in_review); checking every 15 s to 60 s, at most until 2024-08-10T12:31:00Z\n',
    );
    expect(res.stderr).toContain(`2024-08-10T12:01:30Z 2024-07 records: in_review → accepted (${id})\n`);
  });

  it('a rejection ends it with exit 7, naming the month', async () => {
    const { box, clock, source, bds } = await setup({ review: 'reject', reviewAfter: 20_000 });
    seed(box, clock, source, '2024-07', 'records', 'received');
    const res = await bds(['status', '--wait', '--json']);
    expect(res.code).toBe(7);
    expect(res.json()).toMatchObject({ months: [{ state: 'rejected' }], counts: { rejected: 1 }, exit_code: 7 });
    expect(res.stderr).toContain('bds: --fail-on rejected: 2024-07 records is rejected\n');
    expect(count(box, 'list')).toBe(3);
  });

  it('nothing pending: no wait at all', async () => {
    const { box, clock, source, sleeps, bds } = await setup();
    seed(box, clock, source, '2024-07', 'records', 'accepted');
    const res = await bds(['status', '--wait']);
    expect(res.code).toBe(0);
    expect(sleeps).toEqual([]);
    expect(count(box, 'list')).toBe(1);
  });

  it('--timeout: exit 7 naming the months still pending; polite polling (15 s, then 30 s, then 60 s)', async () => {
    const { box, clock, source, sleeps, bds } = await setup();
    seed(box, clock, source, '2024-06', 'records', 'accepted');
    seed(box, clock, source, '2024-07', 'records', 'received');
    const res = await bds(['status', '--wait', '--timeout', '90s']);
    expect(res.code).toBe(7);
    expect(sleeps).toEqual([15_000, 15_000, 15_000, 15_000, 30_000]);
    expect(count(box, 'list')).toBe(6);
    expect(res.stdout).toMatch(/^2024-07\trecords\treceived\t/m);
    expect(res.stderr).toContain('bds: still pending when --timeout 90s ran out: 2024-07 records (received)\n');
    expect(res.stderr).toContain('hint: the review takes longer than the wait: bds status --wait waits again\n');

    // The default 30 minutes: 36 requests in all, the last at the deadline.
    sleeps.length = 0;
    const long = await bds(['status', '--wait', '--json']);
    expect(long.code).toBe(7);
    expect(long.json().exit_code).toBe(7);
    expect(count(box, 'list') - 6).toBe(36);
    expect(sleeps.reduce((a, b) => a + b, 0)).toBe(30 * 60_000);
    expect(Math.max(...sleeps)).toBe(60_000);
  });

  it('--fail-on replaces the default (rejected): a rejected month with --fail-on missing exits 0', async () => {
    const { box, clock, source, bds } = await setup();
    seed(box, clock, source, '2024-07', 'records', 'rejected');
    expect((await bds(['status', '--wait'])).code).toBe(7);
    expect((await bds(['status', '--wait', '--fail-on', 'missing'])).code).toBe(0);
  });

  it('a 503 and a 429 with Retry-After while waiting: each honoured, and the wait goes on', async () => {
    const { box, clock, source, sleeps, bds } = await setup({ review: 'accept', reviewAfter: 20_000 });
    seed(box, clock, source, '2024-07', 'records', 'received');
    let first = true;
    const res = await bds(['status', '--wait'], {
      http: { maxRetryAfterMs: 60_000 },
      sleep: async (ms) => {
        // Once the wait has begun, the service starts to push back.
        if (first) {
          box.faults.add({ route: 'list', status: 503, retryAfter: '7' });
          box.faults.add({ route: 'list', status: 429, retryAfter: '3' });
          first = false;
        }
        await clock.sleep(ms);
      },
    });
    expect(res.code).toBe(0);
    expect(sleeps).toEqual([15_000, 7_000, 3_000]);
    expect(count(box, 'list')).toBe(4);
    expect(res.stderr).toMatch(/→ 503: .*; retrying in 7\.0 s \(attempt 2 of 6\)/);
    expect(res.stderr).toMatch(/→ 429: .*; retrying in 3\.0 s \(attempt 3 of 6\)/);
    expect(res.stdout).toMatch(/\taccepted\t/);
  });

  it('Ctrl-C while waiting exits 130 at once, with no further request', async () => {
    const { box, clock, source, bds } = await setup();
    seed(box, clock, source, '2024-07', 'records', 'received');
    const controller = new AbortController();
    const res = await bds(['status', '--wait'], {
      signal: controller.signal,
      sleep: async (ms) => {
        controller.abort(new InterruptedError('SIGINT'));
        await clock.sleep(ms);
      },
    });
    expect(res.code).toBe(130);
    expect(res.stderr).toContain('bds: interrupted by SIGINT\n');
    expect(res.stderr).not.toContain('resume');
    expect(count(box, 'list')).toBe(1);
  });

  it('a real SIGINT during the 15 s between polls ends bin/bds.js with 130 before the next poll', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const id = box.store.createBatch({
      source_id: source,
      product: 'records',
      period: '2024-05',
      record_count: 1,
      schema: {},
      report: REPORT,
      client: null,
      key_id: 'k',
      idempotency_key: null,
    }).id;
    box.store.setStatus(id, 'received');
    let stderr = '';
    const child = spawnCli(['status', '--wait', '--source', source], {
      env: sandboxEnv(box),
      onSpawn: (spawned) => {
        spawned.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        void until(() => stderr.includes('waiting for the review'), 'the wait', 20_000).then(() =>
          spawned.kill('SIGINT'),
        );
      },
    });
    const done = await child;
    expect(done.code).toBe(130);
    expect(done.stderr).toContain('bds: interrupted by SIGINT');
    expect(count(box, 'list')).toBe(1);
  });
});

describe('bds deliver --wait', () => {
  it('a review still pending when the wait runs out: exit 7 naming the --timeout as written, or the default 30m', async () => {
    const { sleeps, bds } = await setup();
    const folder = makeFolder();
    const home = tempDir();
    const res = await bds(['deliver', folder.dir, '--period', '2024-07', '--wait'], { home });
    expect(res.code).toBe(7);
    expect(sleeps.reduce((a, b) => a + b, 0)).toBe(30 * 60_000);
    expect(res.stderr).toContain('bds: still pending when --timeout 30m ran out: 2024-07 records (received)\n');
    const written = await bds(['deliver', folder.dir, '--period', '2024-07', '--wait', '--timeout', '90s'], { home });
    expect(written.code).toBe(7);
    expect(written.stderr).toContain('bds: still pending when --timeout 90s ran out: 2024-07 records (received)\n');
  });

  it("delivers, then waits for the month's review: --json adds review, the status object of that month", async () => {
    const { box, sleeps, bds } = await setup({ review: 'accept', reviewAfter: 20_000 });
    const folder = makeFolder({ records: 5 });
    const res = await bds(['deliver', folder.dir, '--period', '2024-07', '--wait', '--json']);
    expect(res.code).toBe(0);
    const [batch] = box.store.batches();
    const json = res.json();
    expect(json).toMatchObject({ batch: { id: batch!.id, status: 'received' }, period: '2024-07', skipped: false });
    expect(json.review).toEqual({
      source_id: json.source_id,
      since: '2024-07',
      until: '2024-07',
      months: [
        {
          period: '2024-07',
          product: 'records',
          state: 'accepted',
          batch_id: batch!.id,
          record_count: 5,
          created_at: batch!.created_at,
        },
      ],
      counts: { accepted: 1, in_review: 0, received: 0, rejected: 0, unfinished: 0, missing: 0, open: 0 },
      exit_code: 0,
    });
    expect(sleeps).toEqual([15_000, 15_000]);
    // The re-run check, then the first poll and two more.
    expect(count(box, 'list')).toBe(4);
  });

  it('on a narrow terminal the live line keeps the next check and the deadline; the months are what is cut', async () => {
    const { box, clock, source, bds } = await setup({ review: 'accept', reviewAfter: 20_000 });
    for (const product of ['records', 'episodes', 'environment'] as const)
      seed(box, clock, source, '2024-07', product, 'received');
    const res = await bds(['status', '--wait', '--no-color'], { tty: true, columns: 60 });
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(/… waiting, next check \d\d:\d\d:\d\d, gives up \d\d:\d\d:\d\d UTC, for\S*…\n/);
  });

  it('a rejection is exit 7 after the delivery, and the text shows the delivery, then the review', async () => {
    const { box, bds } = await setup({ review: 'reject', reviewAfter: 0 });
    const res = await bds(['deliver', makeFolder().dir, '--period', '2024-07', '--wait', '--no-color'], {
      tty: true,
      stdoutTty: true,
      columns: 0,
    });
    expect(res.code).toBe(7);
    const [batch] = box.store.batches();
    expect(res.stdout).toMatch(new RegExp(`^Delivered ${batch!.id} \\(received\\)\\.`));
    expect(res.stdout).toMatch(
      new RegExp(
        `\\n\\nPERIOD +PRODUCT +STATE +BATCH +RECORDS +DELIVERED\\n2024-07 +records +rejected +${batch!.id} +3 +2024-08-10\\n\\n1 rejected\\nTo do:\\n  deliver the rejected month again`,
      ),
    );
    expect(res.stderr).toContain('bds: --fail-on rejected: 2024-07 records is rejected');
  });

  it('--wait with --dry-run, or --timeout and --fail-on without --wait, are usage errors before anything is sent', async () => {
    const { box, bds } = await setup();
    const folder = makeFolder();
    const dry = await bds(['deliver', folder.dir, '--period', '2024-07', '--wait', '--dry-run']);
    expect(dry.code).toBe(2);
    expect(dry.stderr).toContain('bds: --wait cannot be given with --dry-run');
    const alone = await bds(['deliver', folder.dir, '--period', '2024-07', '--timeout', '5m', '--fail-on', 'rejected']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('bds: --timeout and --fail-on go with --wait');
    expect(box.requests).toEqual([]);
  });

  it('several folders: waits for every month delivered; a month that fails means no wait (review null)', async () => {
    const { box, bds } = await setup({ review: 'accept', reviewAfter: 0 });
    const parent = tempDir();
    // Each month its own data: one file delivered as two months is refused.
    const dirs = ['2024-06', '2024-07'].map((period, i) => {
      const dir = path.join(parent, period);
      renameSync(makeFolder({ records: 3 + i }).dir, dir);
      return dir;
    });
    const res = await bds(['deliver', ...dirs, '--wait', '--json']);
    expect(res.code).toBe(0);
    const json = res.json();
    expect(json.exit_code).toBe(0);
    expect(json.review).toMatchObject({ since: '2024-06', until: '2024-07', exit_code: 0, counts: { accepted: 2 } });
    expect(json.review.months.map((m: any) => `${m.period} ${m.state}`)).toEqual([
      '2024-06 accepted',
      '2024-07 accepted',
    ]);
    // The re-run checks of the two months, then one poll: the sandbox decided at once.
    expect(count(box, 'list')).toBe(3);

    const failing = await setup({ review: 'accept', reviewAfter: 0 });
    failing.box.faults.add({ route: 'create', status: 422 });
    const failed = await failing.bds(['deliver', ...dirs, '--wait', '--json', '--jobs', '1']);
    expect(failed.code).toBe(4);
    expect(failed.json()).toMatchObject({ exit_code: 4, review: null });
    // The re-run checks of the two months; no poll.
    expect(count(failing.box, 'list')).toBe(2);
  });

  it('several folders, Ctrl-C during the wait: every month shown delivered, the exit code the signal\'s, no "resume"', async () => {
    const { box, source, bds } = await setup();
    const parent = tempDir();
    const dirs = ['2024-06', '2024-07'].map((period, i) => {
      const dir = path.join(parent, period);
      renameSync(makeFolder({ records: 3 + i }).dir, dir);
      return dir;
    });
    const home = tempDir();
    const stopping = () => {
      const controller = new AbortController();
      // The batches stay received: the wait's first sleep is where Ctrl-C comes. The second run finds them delivered.
      const sleep = async () => void controller.abort(new InterruptedError('SIGINT'));
      return { signal: controller.signal, sleep, home };
    };
    const res = await bds(['deliver', ...dirs, '--wait', '--json'], stopping());
    expect(res.code).toBe(130);
    const json = res.json();
    expect(json).toMatchObject({ exit_code: 130, review: null });
    expect(json.deliveries.map((d: any) => [d.period, d.batch.status, d.error])).toEqual([
      ['2024-06', 'received', null],
      ['2024-07', 'received', null],
    ]);
    expect(res.stderr).toContain(
      `bds: interrupted by SIGINT\nhint: every month was delivered; bds status --source ${source} --since 2024-06 --until 2024-07 --wait waits for the review\n`,
    );
    expect(res.stderr).not.toMatch(/resume/);
    const text = await bds(['deliver', ...dirs, '--wait'], stopping());
    expect(text.code).toBe(130);
    expect(text.stdout).toContain('Interrupted while waiting for the review: every folder is delivered.');
    expect(box.store.batches()).toHaveLength(2);
  });
});

describe('the library', () => {
  it('status() and waitForReview() return exactly what bds status --json prints, exit_code included', async () => {
    const box = await sandbox({ review: 'accept', reviewAfter: 0 });
    const source = newSource(box);
    const clock = fakeClock('2024-08-01T00:00:00Z');
    seedLedger(box, clock, source);
    const home = tempDir();
    const env = {
      ...sandboxEnv(box, { BDS_SOURCE_ID: source }),
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, 'config'),
    };
    const range = ['--since', '2024-02', '--until', '2024-07'];
    const printed = await run(['status', ...range, '--fail-on', 'missing', '--json'], { env, home });
    expect(printed.code).toBe(7);
    const returned = await status({ since: '2024-02', until: '2024-07', failOn: ['missing'], env, cwd: home });
    expect(returned).toEqual(printed.json());
    expect(returned.exit_code).toBe(EXIT_CODES.status);

    // The sandbox's review decides at once: nothing is left to wait for, so the real clock never sleeps.
    const waited = await waitForReview({ since: '2024-02', until: '2024-07', env, cwd: home });
    expect(waited).toEqual((await run(['status', ...range, '--wait', '--json'], { env, home })).json());
    expect(waited.months.map((m) => m.state)).toEqual([
      'accepted',
      'rejected',
      'missing',
      'accepted',
      'accepted',
      'unfinished',
    ]);
    expect(waited.exit_code).toBe(7); // rejected, by default
  });

  it('waitForReview() resolves with exit_code 7 at its timeout, and deliver({wait}) returns the review', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const clock = fakeClock('2024-08-01T00:00:00Z');
    seed(box, clock, source, '2024-05', 'records', 'received');
    const home = tempDir();
    const env = {
      ...sandboxEnv(box, { BDS_SOURCE_ID: source }),
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, 'config'),
      XDG_STATE_HOME: path.join(home, 'state'),
    };
    const timedOut = await waitForReview({ period: '2024-05', timeout: 0, env, cwd: home });
    expect(timedOut).toMatchObject({ months: [{ state: 'received' }], exit_code: 7 });
    await expect(waitForReview({ period: '2024-05', failOn: 'late', env, cwd: home })).rejects.toMatchObject({
      exitCode: 2,
    });

    // Nothing decides the new batch: with a timeout of 0 the review is what stands right after the delivery.
    const waited = await deliver({
      dir: makeFolder({ records: 4 }).dir,
      period: '2024-04',
      wait: true,
      timeout: 0,
      env,
      cwd: home,
    });
    expect(waited.review).toMatchObject({
      since: '2024-04',
      until: '2024-04',
      months: [{ period: '2024-04', state: 'received' }],
      exit_code: 7,
    });
  });
});
