// Re-runs and concurrent runs: the same command run again never delivers a second batch, a delivered period
// from another file needs --force, a rejected batch does not block, and two runs at once do not both deliver.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Journal } from '../src/core/delivery/journal.js';
import { takeLock } from '../src/core/delivery/lock.js';
import { canonicalApi } from '../src/core/api/url-rules.js';
import { InterruptedError } from '../src/core/errors.js';
import { formatBytes } from '../src/cli/output/format.js';
import { stateDir } from '../src/core/settings/dirs.js';
import type { Sandbox } from '../src/sandbox/emulator.js';
import {
  count,
  deliverTo,
  expectOneReceived,
  makeFolder,
  newSource,
  REPORT,
  RECORDS_SCHEMA,
  run,
  sandbox,
  sandboxEnv,
  statuses,
  tempDir,
  type Folder,
  until,
} from './helpers.js';

const PERIOD = '2024-05';

/** The state folder of a run with this HOME (run() puts XDG_STATE_HOME under it). */
const stateIn = (home: string): string =>
  stateDir({ env: { XDG_STATE_HOME: path.join(home, '.local', 'state') }, homedir: home, platform: process.platform });

/** Routes of the requests made since `from`. */
function routesSince(box: Sandbox, from: number): string[] {
  return box.requests.slice(from).map((r) => r.route);
}

/** A delivery stopped by Ctrl-C while the storage host holds its upload: its record says `created`. */
async function interruptedDuringUpload(box: Sandbox, folder: Folder, home: string): Promise<void> {
  box.faults.add({ route: 'upload', hang: true });
  const controller = new AbortController();
  const running = deliverTo(box, folder, { home, signal: controller.signal });
  await until(() => count(box, 'upload') > 0, 'the upload request');
  controller.abort(new InterruptedError('SIGINT'));
  expect((await running).code).toBe(130);
}

describe('5. re-runs', () => {
  it('the same folder again is "already delivered": exit 0, nothing created or uploaded', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    expect((await deliverTo(box, folder, { home })).code).toBe(0);
    const id = box.store.batches()[0]!.id;
    const before = box.requests.length;

    const text = await deliverTo(box, folder, { home });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`Already delivered as ${id} (received); nothing was sent.`);
    const json = await deliverTo(box, folder, { home, args: ['--json'] });
    expect(json.code).toBe(0);
    expect(json.json()).toMatchObject({ batch: { id, status: 'received' }, skipped: true });
    expect(routesSince(box, before)).toEqual(['list', 'list']);
    expect(statuses(box)).toEqual(['received']);
  });

  it('is still "already delivered" once the batch moved on to in_review', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    expect((await deliverTo(box, folder, { home })).code).toBe(0);
    box.store.setStatus(box.store.batches()[0]!.id, 'in_review');
    const res = await deliverTo(box, folder, { home });
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/Already delivered as bat_\w+ \(in_review\)/);
    expect(count(box, 'create')).toBe(1);
  });

  it('a delivered period from another file needs --force', async () => {
    const box = await sandbox();
    const home = tempDir();
    expect((await deliverTo(box, makeFolder({ records: 3 }), { home })).code).toBe(0);
    const id = box.store.batches()[0]!.id;
    const other = makeFolder({ records: 4 });

    const refused = await deliverTo(box, other, { home });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain(`was already delivered as ${id} (received)`);
    expect(refused.stderr).toContain('--force');
    expect(count(box, 'create')).toBe(1);

    const before = box.requests.length;
    const forced = await deliverTo(box, other, { home, args: ['--force'] });
    expect(forced.code).toBe(0);
    expect(routesSince(box, before)).toEqual(['create', 'upload', 'complete']);
    expect(statuses(box)).toEqual(['received', 'received']);
  });

  it('the same file delivered from another machine (no record here) needs --force', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    expect((await deliverTo(box, folder)).code).toBe(0);
    const res = await deliverTo(box, folder);
    expect(res.code).toBe(4);
    expect(res.stderr).toMatch(/already delivered as bat_\w+ \(received\), from another file or by another machine/);
    expect(statuses(box)).toEqual(['received']);
  });

  it("a month delivered by bds 0.1 (a version-1 record, keyed by the base URL as written) is already delivered, not another file's", async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    expect((await deliverTo(box, folder, { home })).code).toBe(0);
    const batch = box.store.batches()[0]!;
    // What bds 0.1 left instead of this version's record: its file name and fields.
    const records = path.join(stateIn(home), 'deliveries');
    for (const name of readdirSync(records)) rmSync(path.join(records, name));
    const digest = createHash('sha256')
      .update(JSON.stringify([`${box.baseUrl}/`, batch.source_id, PERIOD, 'records']))
      .digest('hex')
      .slice(0, 12);
    const version1 = {
      version: 1,
      baseUrl: `${box.baseUrl}/`,
      sourceId: batch.source_id,
      period: PERIOD,
      product: 'records',
      sha256: folder.sha256,
      step: 'completed',
      idempotencyKey: 'idem-0.1',
      dataFile: folder.dataFile,
      bytes: folder.uploaded.length,
      recordCount: 3,
      batchId: batch.id,
      status: 'received',
      updatedAt: '2024-06-01T03:15:00.000Z',
    };
    writeFileSync(
      path.join(records, `${batch.source_id}-${PERIOD}-records-${digest}-${folder.sha256.slice(0, 16)}.json`),
      JSON.stringify(version1),
    );

    const before = box.requests.length;
    const again = await deliverTo(box, folder, { home });
    expect(again.stderr).not.toContain('bds:');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Already delivered as ${batch.id} (received); nothing was sent.`);
    expect(routesSince(box, before)).toEqual(['list']);

    // The record it leaves holds this file's columns: the next month, with the same schema, changes none.
    const june = await run(
      ['deliver', makeFolder({ records: 4 }).dir, '--period', '2024-06', '--source', batch.source_id],
      { env: sandboxEnv(box), home },
    );
    expect(june.code).toBe(0);
    expect(june.stderr).not.toContain('warning');
  });

  it('a version-1 record where this version keeps its own is left for readVersion1, not set aside as corrupt', () => {
    const store = new Journal(tempDir(), process.platform);
    const key = {
      api: 'https://api.example.com/v1',
      sourceId: 'src_1',
      period: PERIOD,
      product: 'records',
      sha256: 'b'.repeat(64),
    };
    store.write({
      ...key,
      version: 2,
      step: 'completed',
      idempotencyKey: 'k',
      inputsDigest: 'd',
      dataFile: 'f',
      bytes: 1,
      recordCount: 1,
      columns: [],
      updatedAt: 'now',
    });
    const [name] = readdirSync(store.dir);
    writeFileSync(
      path.join(store.dir, name!),
      JSON.stringify({ version: 1, ...key, step: 'completed', batchId: 'bat_1', idempotencyKey: 'k' }),
    );
    const setAside: unknown[] = [];
    expect(store.read(key, 'live', (corrupt) => setAside.push(corrupt))).toEqual({ own: undefined, other: undefined });
    expect(setAside).toEqual([]);
    expect(readdirSync(store.dir)).toEqual([name]);
    expect(store.readVersion1(key, key.api)).toMatchObject({ batchId: 'bat_1', step: 'completed' });
  });

  it('a batch this machine delivered with a test key does not count for a live key, nor the other way round', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    const args = ['deliver', folder.dir, '--period', PERIOD, '--source', newSource(box)];
    const live = { ...sandboxEnv(box), BDS_API_KEY: box.keys.live };
    expect((await run(args, { env: sandboxEnv(box), home })).code).toBe(0);
    const [testBatch] = box.store.batches();

    const first = await run(args, { env: live, home });
    expect(first.code).toBe(0);
    expect(first.stderr).toContain(
      `warning: this file was delivered as ${testBatch!.id} with a test key, which does not count for this live key (test batches never become billable)\n`,
    );
    expect(first.stdout).toMatch(/^Delivered bat_\w+ \(received\)\./);
    const liveBatch = box.store.batches().find((b) => b.id !== testBatch!.id)!;
    expect(liveBatch.key_id).not.toBe(testBatch!.key_id);

    const again = await run(args, { env: live, home });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Already delivered as ${liveBatch.id} (received); nothing was sent.`);
    expect(statuses(box)).toEqual(['received', 'received']);
  });

  describe('a record per key mode', () => {
    async function setUp() {
      const box = await sandbox();
      const folder = makeFolder();
      const home = tempDir();
      const args = ['deliver', folder.dir, '--period', PERIOD, '--source', newSource(box), '--json'];
      const withKey = (key: string) => run(args, { env: { ...sandboxEnv(box), BDS_API_KEY: key }, home });
      const records = path.join(stateIn(home), 'deliveries');
      return { box, test: () => withKey(box.keys.test), live: () => withKey(box.keys.live), records };
    }

    it('test key, live key, test key again on one file: the third is already delivered as its own test batch, never exit 4', async () => {
      const { box, test, live, records } = await setUp();
      const first = await test();
      expect(first.code, first.stderr).toBe(0);
      const second = await live();
      expect(second.code, second.stderr).toBe(0);
      expect(second.json().batch.id).not.toBe(first.json().batch.id);

      const third = await test();
      expect(third.code, third.stderr).toBe(0);
      expect(third.json()).toMatchObject({ batch: { id: first.json().batch.id }, skipped: true });
      expect(third.stderr).not.toContain('warning');
      const fourth = await live();
      expect(fourth.json()).toMatchObject({ batch: { id: second.json().batch.id }, skipped: true });
      expect(statuses(box)).toEqual(['received', 'received']);
      const files = readdirSync(records).filter((name) => name.endsWith('.json'));
      expect(files.map((name) => JSON.parse(readFileSync(path.join(records, name), 'utf8')).keyMode).sort()).toEqual([
        'live',
        'test',
      ]);
    });

    it("a test record under the name every record had before is moved to its own, not replaced by the live delivery's", async () => {
      const { box, test, live, records } = await setUp();
      const first = await test();
      const [name] = readdirSync(records).filter((n) => n.endsWith('.json'));
      expect(name).toMatch(/-test\.json$/);
      renameSync(path.join(records, name!), path.join(records, name!.replace(/-test\.json$/, '.json')));

      expect((await live()).stderr).toContain(
        `warning: this file was delivered as ${first.json().batch.id} with a test key`,
      );
      const again = await test();
      expect(again.code, again.stderr).toBe(0);
      expect(again.json()).toMatchObject({ batch: { id: first.json().batch.id }, skipped: true });
      expect(statuses(box)).toEqual(['received', 'received']);
    });

    it('a record of an unknown mode (from before the mode was kept) counts for either key, as it did', async () => {
      const { box, test, live, records } = await setUp();
      const delivered = await live();
      const [name] = readdirSync(records).filter((n) => n.endsWith('.json'));
      const { keyMode: _, ...unknown } = JSON.parse(readFileSync(path.join(records, name!), 'utf8'));
      writeFileSync(path.join(records, name!), JSON.stringify(unknown));

      const again = await test();
      expect(again.code, again.stderr).toBe(0);
      expect(again.json()).toMatchObject({ batch: { id: delivered.json().batch.id }, skipped: true });
      expect(again.stderr).not.toContain('warning');
      expect(statuses(box)).toEqual(['received']);
    });
  });

  it('a rejected batch does not block a new delivery', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    expect((await deliverTo(box, folder, { home })).code).toBe(0);
    box.store.setStatus(box.store.batches()[0]!.id, 'rejected');
    const res = await deliverTo(box, folder, { home, args: ['--json'] });
    expect(res.code).toBe(0);
    expect(res.json()).toMatchObject({ batch: { status: 'received' }, skipped: false });
    expect(statuses(box)).toEqual(['received', 'rejected']);
    const received = box.store.batches().find((b) => b.status === 'received')!;
    expect(box.store.uploadedBytes(received.id)!.equals(folder.uploaded)).toBe(true);
  });
});

describe('the same data file as another month', () => {
  it('a file this machine delivered for another period is refused before anything is created: exit 2 naming it; --force delivers it', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    const source = newSource(box);
    // Delivered as October with a test key, then the same ./out as September with a live one (a stale folder).
    const october = await run(['deliver', folder.dir, '--period', '2024-10', '--source', source, '--json'], {
      env: sandboxEnv(box),
      home,
    });
    expect(october.code, october.stderr).toBe(0);
    const batch = october.json().batch.id;
    const september = ['deliver', folder.dir, '--period', '2024-09', '--source', source];
    const live = { ...sandboxEnv(box), BDS_API_KEY: box.keys.live };

    const refused = await run(september, { env: live, home });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `bds: ${folder.dataFile} is the same file as the one delivered for 2024-10 from ${folder.dir} as ${batch} (sha256 ${folder.sha256}); nothing was sent for 2024-09\n` +
        `hint: each month has data of its own: check what ${folder.dir} holds (a copied folder? a stale one?); if it really is 2024-09's, run again with --force\n`,
    );
    expect(count(box, 'create')).toBe(1);

    const dryRun = await run([...september, '--dry-run', '--json'], { env: live, home });
    expect(dryRun.code).toBe(0);
    expect(dryRun.json().would).toEqual({
      action: 'stop',
      batch_id: batch,
      status: null,
      error: {
        message: expect.stringContaining('nothing was sent for 2024-09'),
        hint: expect.any(String),
        exit_code: 2,
      },
    });
    expect((await run([...september, '--dry-run'], { env: live, home })).stdout).toContain(
      `Would:     stop with exit 2: ${folder.dataFile} is the same file as the one delivered for 2024-10`,
    );
    // Another source's month is its own.
    expect(
      (await run(['deliver', folder.dir, '--period', '2024-09', '--source', newSource(box)], { env: live, home })).code,
    ).toBe(0);

    const forced = await run([...september, '--force'], { env: live, home });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toContain(
      `warning: this data file is also 2024-10's (${folder.dir}, delivered as ${batch}); delivering it anyway (--force)\n`,
    );
    // The forced month, run again, is already delivered: the refusal is for files about to be sent.
    const again = await run(september, { env: live, home });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^Already delivered as bat_\w+ \(received\)/);
    expect(count(box, 'create')).toBe(3);
  });

  it('names the data file from the working folder, as every other message does', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const cwd = path.dirname(folder.dir);
    const given = path.basename(folder.dir);
    const home = tempDir();
    const env = sandboxEnv(box, { BDS_SOURCE_ID: newSource(box) });
    expect((await run(['deliver', given, '--period', '2024-10'], { env, home, cwd })).code).toBe(0);
    const refused = await run(['deliver', given, '--period', '2024-09'], { env, home, cwd });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      new RegExp(
        `^bds: ${given}/${path.basename(folder.dataFile)} is the same file as the one delivered for 2024-10 `,
        'm',
      ),
    );
  });
});

describe('--skip-delivered: CI runners and other machines that keep no records', () => {
  it('a period delivered from another file counts as delivered: exit 0, skipped, nothing sent, a warning for the count', async () => {
    const box = await sandbox();
    expect((await deliverTo(box, makeFolder({ records: 3 }))).code).toBe(0);
    const [delivered] = box.store.batches();
    const other = makeFolder({ records: 4 });

    // A fresh HOME each run: no delivery record on this machine.
    expect((await deliverTo(box, other)).code).toBe(4);
    const before = box.requests.length;
    const json = await deliverTo(box, other, { args: ['--skip-delivered', '--json'] });
    expect(json.code, json.stderr).toBe(0);
    expect(json.json()).toMatchObject({
      batch: { id: delivered!.id, status: 'received', record_count: 3 },
      record_count: 4,
      skipped: true,
    });
    expect(json.stderr).toContain(
      `warning: ${delivered!.id} counts 3 records, this file 4: it came from another file (--skip-delivered counts it as delivered)`,
    );
    const text = await deliverTo(box, other, { args: ['--skip-delivered'] });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(`^Already delivered as ${delivered!.id} \\(received\\); nothing was sent\\.`),
    );
    // The batch as the service counts it, and this file apart: its numbers are not the batch's.
    expect(text.stdout).toContain(
      `Batch:     ${delivered!.id} holds 3 records (the service's count), from a file no record here names\n` +
        `This file: 4 records, ${formatBytes(other.uploaded.length)}, sha256 ${other.sha256}; not sent\n`,
    );
    expect(text.stdout).not.toMatch(/^(Records|SHA-256):/m);
    const dryRun = await deliverTo(box, other, { args: ['--skip-delivered', '--dry-run'] });
    expect(dryRun.stdout).toContain(`Would:     nothing: already delivered as ${delivered!.id} (received)`);
    expect(routesSince(box, before)).toEqual(['list', 'list', 'list']);
    expect(statuses(box)).toEqual(['received']);
    // Several folders: the table's records are the batch's, and its bytes are not known.
    const may = path.join(tempDir(), 'records-2024-05');
    const june = path.join(path.dirname(may), 'records-2024-06');
    renameSync(other.dir, may);
    renameSync(makeFolder({ records: 2 }).dir, june);
    const source = box.store.sources()[0]!.id;
    const many = await run(['deliver', may, june, '--skip-delivered', '--source', source], { env: sandboxEnv(box) });
    expect(many.code, many.stderr).toBe(0);
    expect(many.stdout).toMatch(new RegExp(`^2024-05 +records +already delivered +${delivered!.id} +3 *$`, 'm'));
    expect(many.stdout).toMatch(/^2024-06 +records +delivered +bat_\w+ +2 +\d+ B *$/m);
  });

  it('with a live key, every skip that rests on the service alone warns that a test-mode batch would look the same', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const source = newSource(box);
    // A test key delivered the month from another machine (another HOME): the list does not say so.
    expect((await deliverTo(box, folder)).code).toBe(0);
    const [testBatch] = box.store.batches();
    const live = { BDS_API_KEY: box.keys.live };
    const warning =
      `warning: ${testBatch!.id} (received) counts as delivered on the service's word alone (--skip-delivered, no record of it here): ` +
      `a batch made with a test key, never billable, would look the same; bds status --source ${source} --period ${PERIOD} shows the month\n`;

    const home = tempDir();
    for (const args of [['--skip-delivered'], ['--skip-delivered', '--quiet'], ['--skip-delivered', '--dry-run']]) {
      const res = await deliverTo(box, folder, { home, env: live, args });
      expect(res.code, res.stderr).toBe(0);
      expect(res.stderr).toContain(warning);
    }
    expect(statuses(box)).toEqual(['received']);

    // With a test key, or with a record here of the batch itself, nothing rests on the service's word alone.
    expect((await deliverTo(box, folder, { args: ['--skip-delivered'] })).stderr).not.toContain('warning');
    const ownHome = tempDir();
    expect((await deliverTo(box, folder, { home: ownHome, env: live, args: ['--force'] })).code).toBe(0);
    const own = await deliverTo(box, folder, { home: ownHome, env: live, args: ['--skip-delivered'] });
    expect(own.code, own.stderr).toBe(0);
    expect(own.stderr).not.toContain('warning');
  });

  it('the same file: no warning; a rejected or unfinished batch does not count', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    expect((await deliverTo(box, folder)).code).toBe(0);
    const same = await deliverTo(box, folder, { args: ['--skip-delivered'] });
    expect(same.code).toBe(0);
    expect(same.stderr).not.toContain('warning:');
    expect(same.stdout).toMatch(/^Already delivered as bat_\w+ \(received\)/);

    box.store.setStatus(box.store.batches()[0]!.id, 'rejected');
    box.faults.add({ route: 'upload', status: 400 });
    expect((await deliverTo(box, folder, { args: ['--skip-delivered'] })).code).toBe(4);
    expect(statuses(box)).toEqual(['awaiting_upload', 'rejected']);
    const delivered = await deliverTo(box, folder, { args: ['--skip-delivered', '--json'] });
    expect(delivered.code, delivered.stderr).toBe(0);
    expect(delivered.json().skipped).toBe(false);
    expect(statuses(box)).toEqual(['awaiting_upload', 'received', 'rejected']);
  });
});

describe('re-runs after the report or schema changed', () => {
  /** The Idempotency-Key of each create the sandbox received, in order. */
  function createKeys(box: Sandbox): string[] {
    return box.requests.filter((r) => r.route === 'create').map((r) => String(r.headers['idempotency-key']));
  }

  /** A delivery that gave up (exit 5) after losing every answer to its create: its record has no batch id. */
  async function everyCreateAnswerLost(box: Sandbox, folder: Folder, home: string): Promise<void> {
    box.faults.add({ route: 'create', loseResponse: true, times: 6 });
    expect((await deliverTo(box, folder, { home })).code).toBe(5);
    expect(statuses(box)).toEqual(['awaiting_upload']);
  }

  it('interrupted mid-upload, then report.json fixed: a fresh batch, and the old one is never confirmed', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    await interruptedDuringUpload(box, folder, home);
    const [old] = box.store.batches();

    const fixed = { ...REPORT, totals: { rows_out: 3, reidentified: 0 } };
    writeFileSync(path.join(folder.dir, 'report.json'), JSON.stringify(fixed));
    const again = await deliverTo(box, folder, { home, args: ['--json'] });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(
      `warning: the report or schema changed since the interrupted delivery of ${old!.id}; ` +
        `delivering a fresh batch (${old!.id} stays awaiting_upload and is never confirmed)`,
    );
    const delivered = again.json().batch.id;
    expect(delivered).not.toBe(old!.id);
    expect(box.store.batch(old!.id)!.status).toBe('awaiting_upload');
    expect(box.store.batch(delivered)!.report).toEqual(fixed);
    expectOneReceived(box, folder);
    const keys = createKeys(box);
    expect(keys).toHaveLength(2);
    expect(keys[1]).not.toBe(keys[0]);
  });

  it('every create answer lost, then report.json regenerated: the re-run delivers instead of an Idempotency-Key refusal', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    await everyCreateAnswerLost(box, folder, home);

    writeFileSync(path.join(folder.dir, 'report.json'), JSON.stringify({ ...REPORT, tool: 'scrubkit 3.4.2' }));
    const again = await deliverTo(box, folder, { home });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(
      'warning: the report or schema changed since the interrupted delivery; delivering a fresh batch',
    );
    expect(statuses(box)).toEqual(['awaiting_upload', 'received']);
    expectOneReceived(box, folder);
    expect(new Set(createKeys(box)).size).toBe(2);
  });

  it('every create answer lost, then schema.json regenerated: --force delivers too', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    await everyCreateAnswerLost(box, folder, home);

    const [orders] = Object.values(RECORDS_SCHEMA.objects);
    const schema = {
      ...RECORDS_SCHEMA,
      objects: { orders: [...orders!, { name: 'currency', role: 'attribute', kind: 'string' }] },
    };
    writeFileSync(path.join(folder.dir, 'schema.json'), JSON.stringify(schema));
    const forced = await deliverTo(box, folder, { home, args: ['--force'] });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toContain('the report or schema changed since the interrupted delivery');
    const received = box.store.batches().filter((b) => b.status === 'received');
    expect(received.map((b) => b.schema)).toEqual([schema]);
    expectOneReceived(box, folder);
  });

  it('a create refused with 401 made no batch: the dry run says it would deliver, and the run delivers, resuming nothing', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    box.faults.add({ route: 'create', status: 401 });
    expect((await deliverTo(box, folder, { home })).code).toBe(3);
    expect(box.store.batches()).toEqual([]);

    const dryRun = await deliverTo(box, folder, { home, args: ['--dry-run', '--json'] });
    expect(dryRun.code, dryRun.stderr).toBe(0);
    expect(dryRun.json().would).toMatchObject({ action: 'deliver', batch_id: null, status: null });
    expect((await deliverTo(box, folder, { home, args: ['--dry-run'] })).stdout).toMatch(/Would: +deliver a new batch/);

    const again = await deliverTo(box, folder, { home, args: ['--json'] });
    expect(again.code, again.stderr).toBe(0);
    expect(again.json()).toMatchObject({ skipped: false, resumed: false });
    expect(again.stderr).not.toContain('resuming');
    expectOneReceived(box, folder);
  });

  it('an unchanged report and schema, key order aside, resume the interrupted batch', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    await everyCreateAnswerLost(box, folder, home);

    // The same report, its keys written in another order (another JSON writer, say): the same meaning.
    const { tool, files, totals } = JSON.parse(readFileSync(path.join(folder.dir, 'report.json'), 'utf8'));
    writeFileSync(path.join(folder.dir, 'report.json'), JSON.stringify({ totals, files, tool }, null, 4));
    const again = await deliverTo(box, folder, { home });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('resuming an interrupted delivery');
    expect(again.stderr).not.toContain('warning:');
    expect(statuses(box)).toEqual(['received']);
    expect(new Set(createKeys(box)).size).toBe(1);
  });
});

describe('a delivery record that cannot be read', () => {
  it("is set aside as <file>.corrupt with a warning, and the delivery goes on from the server's list", async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    await interruptedDuringUpload(box, folder, home);

    const dir = path.join(home, '.local', 'state', 'bds', 'deliveries');
    const [name] = readdirSync(dir).filter((f) => f.endsWith('.json'));
    const file = path.join(dir, name!);
    const corrupt = readFileSync(file, 'utf8').slice(0, 40);
    writeFileSync(file, corrupt);

    const again = await deliverTo(box, folder, { home });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(
      `warning: the delivery record ${file} could not be read; it was set aside as ${file}.corrupt and this delivery starts from the server's list`,
    );
    expect(readFileSync(`${file}.corrupt`, 'utf8')).toBe(corrupt);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ step: 'completed', status: 'received' });
    expect(statuses(box)).toEqual(['awaiting_upload', 'received']);
    expectOneReceived(box, folder);
  });
});

describe('one API, several spellings', () => {
  it('canonicalApi: scheme, lower-case host, every loopback name as one, no default port, no trailing slash', () => {
    const canonical = (url: string) => canonicalApi(new URL(url));
    const loopback = [
      'http://127.0.0.1:8787',
      'http://localhost:8787/',
      'http://LocalHost:8787',
      'http://[::1]:8787/',
      'http://127.0.0.2:8787',
    ];
    expect(new Set(loopback.map(canonical))).toEqual(new Set(['http://loopback:8787']));
    const remote = [
      'https://api.example.com',
      'https://API.Example.COM/',
      'https://api.example.com:443',
      'https://api.example.com//',
    ];
    expect(new Set(remote.map(canonical))).toEqual(new Set(['https://api.example.com']));
    expect(canonical('https://api.example.com/bds/')).toBe('https://api.example.com/bds');
    // Different APIs stay apart: scheme, port, path.
    const apart = [
      'http://api.example.com',
      'https://api.example.com',
      'https://api.example.com:8443',
      'https://api.example.com/v2',
      'http://127.0.0.1:8788',
    ];
    expect(new Set(apart.map(canonical)).size).toBe(apart.length);
  });

  it('delivered via http://127.0.0.1:PORT, run again via http://localhost:PORT/: already delivered, nothing sent', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    expect((await deliverTo(box, folder, { home })).code).toBe(0);
    const before = box.requests.length;
    const localhost = `${box.baseUrl.replace('127.0.0.1', 'localhost')}/`;
    const again = await deliverTo(box, folder, { home, env: { BDS_BASE_URL: localhost } });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^Already delivered as bat_\w+ \(received\); nothing was sent\./);
    expect(routesSince(box, before)).toEqual(['list']);
    expect(statuses(box)).toEqual(['received']);
  });
});

describe('8. two bds processes at once', () => {
  function holdLock(box: Sandbox, home: string, source: string, pid: number): void {
    const records = new Journal(stateIn(home), process.platform);
    takeLock({
      file: records.lockFile({
        api: canonicalApi(new URL(box.baseUrl)),
        sourceId: source,
        period: PERIOD,
        product: 'records',
      }),
      subject: `${source} ${PERIOD} records`,
      owner: { pid, hostname: 'test-host', startedAt: '2024-06-01T00:00:00.000Z' },
      platform: process.platform,
      isProcessAlive: () => false,
    });
  }

  it('the second one stops at once with exit 6 naming the first', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    const source = newSource(box);
    holdLock(box, home, source, 4242);
    const res = await deliverTo(box, folder, { home, pid: 5000, isProcessAlive: (pid) => pid === 4242 });
    expect(res.code).toBe(6);
    expect(res.stderr).toMatch(
      /bds: another bds process \(pid 4242 on test-host, since 2024-06-01T00:00:00.000Z\) is delivering/,
    );
    expect(count(box, 'create')).toBe(0);
  });

  it('stops before reading the data file: the lock comes before the long scan', async () => {
    const box = await sandbox();
    // A data file the scan would reject with exit 2: exit 6 shows it was never read.
    const folder = makeFolder({ dataBytes: Buffer.from('not gzip at all') });
    const home = tempDir();
    const source = newSource(box);
    holdLock(box, home, source, 4242);
    const res = await deliverTo(box, folder, { home, pid: 5000, isProcessAlive: (pid) => pid === 4242 });
    expect(res.code).toBe(6);
  });

  it('a lock left by a dead process is taken over', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    const source = newSource(box);
    holdLock(box, home, source, 4242);
    const res = await deliverTo(box, folder, { home, pid: 5000, isProcessAlive: () => false });
    expect(res.code).toBe(0);
    expect(statuses(box)).toEqual(['received']);
    const dir = path.join(home, '.local', 'state', 'bds', 'deliveries');
    expect(existsSync(dir)).toBe(true);
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(dir).filter((f) => f.endsWith('.lock'))).toEqual([]);
  });

  it.each([
    ['two runs of the same delivery at once', (url: string) => url],
    // One API, two spellings: one lock (the lock is keyed by canonicalApi).
    [
      'two runs at once via http://127.0.0.1:PORT and http://LOCALHOST:PORT/',
      (url: string) => `${url.replace('127.0.0.1', 'LOCALHOST')}/`,
    ],
  ])('%s: one delivers, the other stops with exit 6', async (_, spelling) => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    newSource(box);
    // The first holds the lock while the storage host takes its time; the second starts meanwhile.
    box.faults.add({ route: 'upload', delayMs: 1500 });
    const first = deliverTo(box, folder, { home, pid: 1001, http: { idleTimeoutMs: 5_000, headersTimeoutMs: 5_000 } });
    await until(() => count(box, 'upload') > 0, 'the upload request');
    const second = await deliverTo(box, folder, {
      home,
      pid: 1002,
      isProcessAlive: (pid) => pid === 1001,
      env: { BDS_BASE_URL: spelling(box.baseUrl) },
    });
    expect(second.code).toBe(6);
    expect(second.stderr).toContain('pid 1001');
    expect((await first).code).toBe(0);
    expect(count(box, 'create')).toBe(1);
    expect(statuses(box)).toEqual(['received']);
  });
});
