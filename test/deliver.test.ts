import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { count, makeFolder, run, sandbox, sandboxEnv, newSource, tempDir, until } from './helpers.js';
import { packageVersion } from '../src/core/version.js';

describe('bds deliver, happy path', () => {
  it('creates, uploads byte for byte, completes, and prints one JSON object', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder({ records: 5 });
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', source, '--json'], {
      env: sandboxEnv(box),
    });
    expect(res.stderr).not.toContain('bds:');
    expect(res.code).toBe(0);
    const out = res.json();
    const [batch] = box.store.batches();
    expect(out).toEqual({
      batch: { id: batch!.id, status: 'received' },
      source_id: source,
      product: 'records',
      period: '2024-05',
      record_count: 5,
      bytes: folder.uploaded.length,
      sha256: folder.sha256,
      skipped: false,
      resumed: false,
      schema_changes: null,
    });
    expect(batch!.status).toBe('received');
    expect(batch!.record_count).toBe(5);
    expect(box.store.uploadedBytes(batch!.id)!.equals(folder.uploaded)).toBe(true);
    expect(batch!.client).toBe(`bds-cli/${packageVersion()} test-host`);
    const upload = box.requests.find((r) => r.route === 'upload')!;
    expect(upload.headers['content-length']).toBe(String(folder.uploaded.length));
    expect(upload.headers['transfer-encoding']).toBeUndefined();
    expect(upload.headers['content-type']).toBe('application/gzip');
    expect(upload.headers['x-bds-batch-id']).toBe(batch!.id);
    // A signed storage URL on another origin never sees the key or the client header.
    expect(upload.headers.authorization).toBeUndefined();
    expect(upload.headers['x-service-client']).toBeUndefined();
    for (const r of box.requests.filter((r) => r.server === 'api')) {
      expect(r.headers.authorization).toBe(`Bearer ${box.keys.test}`);
      expect(r.headers['x-service-client']).toBe(`bds-cli/${packageVersion()} test-host`);
    }
    expect(count(box, 'create')).toBe(1);
    expect(box.requests.find((r) => r.route === 'create')!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends the key to an upload URL on the API origin', async () => {
    const box = await sandbox({ uploadOrigin: 'api' });
    const source = newSource(box);
    const folder = makeFolder();
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', source], { env: sandboxEnv(box) });
    expect(res.code).toBe(0);
    const upload = box.requests.find((r) => r.route === 'upload')!;
    expect(upload.headers.authorization).toBe(`Bearer ${box.keys.test}`);
  });

  it('gzips a plain .jsonl and uploads the gzipped bytes', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder({ plain: true, records: 4 });
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', source, '--json'], {
      env: sandboxEnv(box),
    });
    expect(res.code).toBe(0);
    const [batch] = box.store.batches();
    expect(box.store.uploadedBytes(batch!.id)!.equals(folder.uploaded)).toBe(true);
    expect(res.json().sha256).toBe(folder.sha256);
    expect(res.json().record_count).toBe(4);
  });

  it('delivers episodes, product from schema.format', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder({ product: 'episodes', records: 2 });
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', source, '--json'], {
      env: sandboxEnv(box),
    });
    expect(res.code).toBe(0);
    expect(box.store.batches()[0]!.product).toBe('episodes');
  });

  it('delivers environment data named with --product environment', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder({ product: 'environment' });
    const res = await run(
      ['deliver', folder.dir, '--period', '2024-05', '--source', source, '--product', 'environment'],
      {
        env: sandboxEnv(box),
      },
    );
    expect(res.code).toBe(0);
    expect(box.store.batches()[0]!.product).toBe('environment');
  });

  it('prints a summary on stdout and steps on stderr, with the test-key notice first', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder();
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', source], { env: sandboxEnv(box) });
    expect(res.code).toBe(0);
    const id = box.store.batches()[0]!.id;
    expect(res.stdout).toContain(`Delivered ${id} (received)`);
    expect(res.stdout).toContain(folder.sha256);
    expect(res.stdout).toMatch(/Took: +\d/);
    const lines = res.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/never become billable/);
    for (const line of lines) expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ /);
    expect(res.stderr.indexOf('billable')).toBeLessThan(res.stderr.indexOf('creating'));
  });

  it('--dry-run creates nothing and shows what would be sent', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder({ records: 7 });
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', source, '--dry-run', '--json'], {
      env: sandboxEnv(box),
    });
    expect(res.code).toBe(0);
    expect(res.json()).toEqual({
      dry_run: true,
      source_id: source,
      product: 'records',
      period: '2024-05',
      record_count: 7,
      bytes: folder.uploaded.length,
      sha256: folder.sha256,
      schema_changes: null,
      existing_batch: null,
      would: { action: 'deliver', batch_id: null, status: null, error: null },
    });
    expect(box.store.batches()).toHaveLength(0);
    expect(count(box, 'create') + count(box, 'upload') + count(box, 'complete')).toBe(0);
    expect(res.stderr).toMatch(/never become billable/);
  });

  it('--dry-run names the existing batch for the period', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder();
    const env = sandboxEnv(box);
    const home = tempDir();
    expect((await run(['deliver', folder.dir, '--period', '2024-05', '--source', source], { env, home })).code).toBe(0);
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', source, '--dry-run', '--json'], {
      env,
      home,
    });
    expect(res.json().existing_batch).toMatchObject({ id: box.store.batches()[0]!.id, status: 'received' });
    const text = await run(['deliver', folder.dir, '--period', '2024-05', '--source', source, '--dry-run'], {
      env,
      home,
    });
    expect(text.stdout).toContain('Dry run: nothing was created');
  });

  it('--dry-run names a rejected or unfinished batch too, says what a run would do, and still lists with --force', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder();
    const home = tempDir();
    const env = sandboxEnv(box);
    const args = ['deliver', folder.dir, '--period', '2024-05', '--source', source, '--dry-run'];
    expect((await run(['deliver', folder.dir, '--period', '2024-05', '--source', source], { env, home })).code).toBe(0);
    const id = box.store.batches()[0]!.id;
    expect((await run(args, { env, home })).stdout).toMatch(new RegExp(`Would: +nothing: already delivered as ${id}`));
    expect((await run(args, { env })).stdout).toMatch(new RegExp(`Would: +stop with exit 4: ${id} \\(received\\)`));
    expect((await run([...args, '--force', '--json'], { env })).json().existing_batch).toMatchObject({ id });
    box.store.setStatus(id, 'rejected');
    const rejected = await run([...args, '--json'], { env, home });
    expect(rejected.json().existing_batch).toMatchObject({ id, status: 'rejected' });
    expect((await run(args, { env, home })).stdout).toMatch(/Would: +deliver a new batch/);
    expect(box.store.batches()).toHaveLength(1);
  });

  it('a state folder bds cannot write is exit 2 naming XDG_STATE_HOME, before anything is created', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder();
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', source], {
      env: { ...sandboxEnv(box), XDG_STATE_HOME: folder.dataFile },
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^bds: cannot write the delivery records in .* \(ENOTDIR\)$/m);
    expect(res.stderr).toContain('XDG_STATE_HOME');
    expect(box.store.batches()).toHaveLength(0);
  });

  it('a delivery record that cannot be saved once the batch exists: exit 5 saying so, no temp file left, and a re-run resumes', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    const env = sandboxEnv(box);
    const args = ['deliver', folder.dir, '--period', '2024-05', '--source', newSource(box)];
    const dir = path.join(home, '.local', 'state', 'bds', 'deliveries');
    // While the service takes its time over create, a folder takes the record's name, so that saving the
    // created batch fails as on a full disk (tests run as root, whom permissions do not stop). The record as
    // it was saved before the create is kept, as a full disk would keep it.
    box.faults.add({ route: 'create', delayMs: 1500 });
    const running = run(args, { env, home, http: { headersTimeoutMs: 10_000 } });
    await until(() => count(box, 'create') > 0, 'the create request');
    const file = path.join(
      dir,
      readdirSync(dir).find((name) => name.endsWith('.json'))!,
    );
    const saved = readFileSync(file);
    rmSync(file);
    mkdirSync(path.join(file, 'in-the-way'), { recursive: true });

    const res = await running;
    const [batch] = box.store.batches();
    expect(res.code).toBe(5);
    expect(res.stderr).toContain(
      `bds: ${batch!.id} was created, but bds could not write the delivery records in ${dir} (EISDIR)`,
    );
    expect(res.stderr).toContain(
      'hint: free the space or fix the folder, then run the same command again: it resumes this batch',
    );
    expect(res.stderr).not.toContain('nothing was sent');
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(count(box, 'upload')).toBe(0);

    rmSync(file, { recursive: true });
    writeFileSync(file, saved);
    const again = await run(args, { env, home });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('resuming an interrupted delivery');
    expect(box.store.batches().map((b) => [b.id, b.status])).toEqual([[batch!.id, 'received']]);
  });
});
