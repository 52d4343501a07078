// Re-runs and concurrent runs: the same command run again never delivers a second batch, a delivered period
// from another file needs --force, a rejected batch does not block, and two runs at once do not both deliver.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RecordStore } from '../src/core/delivery/record-store.js';
import { takeLock } from '../src/core/delivery/lock.js';
import { canonicalApi } from '../src/core/api/url-rules.js';
import { stateDir } from '../src/core/settings/dirs.js';
import type { Sandbox } from '../src/sandbox/emulator.js';
import { count, deliverTo, makeFolder, newSource, sandbox, statuses, tempDir } from './helpers.js';

const PERIOD = '2024-05';

/** Routes of the requests made since `from`. */
function routesSince(box: Sandbox, from: number): string[] {
  return box.requests.slice(from).map((r) => r.route);
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

describe('8. two bds processes at once', () => {
  function holdLock(box: Sandbox, home: string, source: string, pid: number): void {
    const records = new RecordStore(stateDir({ XDG_STATE_HOME: path.join(home, '.local', 'state') }, home));
    takeLock({
      file: records.lockFile({ api: canonicalApi(new URL(box.baseUrl)), sourceId: source, period: PERIOD, product: 'records' }),
      subject: `${source} ${PERIOD} records`,
      owner: { pid, hostname: 'test-host', startedAt: '2024-06-01T00:00:00.000Z' },
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
    expect(res.stderr).toMatch(/bds: another bds process \(pid 4242 on test-host, since 2024-06-01T00:00:00.000Z\) is delivering/);
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

  it('two runs of the same delivery at once: one delivers, the other stops with exit 6', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    newSource(box);
    // The first holds the lock while the storage host takes its time; the second starts meanwhile.
    box.faults.add({ route: 'upload', delayMs: 1500 });
    const first = deliverTo(box, folder, { home, pid: 1001, http: { idleTimeoutMs: 5_000, headersTimeoutMs: 5_000 } });
    while (count(box, 'upload') === 0) await new Promise((r) => setTimeout(r, 10));
    const second = await deliverTo(box, folder, { home, pid: 1002, isProcessAlive: (pid) => pid === 1001 });
    expect(second.code).toBe(6);
    expect(second.stderr).toContain('pid 1001');
    expect((await first).code).toBe(0);
    expect(count(box, 'create')).toBe(1);
    expect(statuses(box)).toEqual(['received']);
  });
});
