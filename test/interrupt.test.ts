// Interruptions: SIGINT/SIGTERM (in process through the context's signal, and for real on bin/bds.js) and
// SIGKILL at any step, each followed by a re-run that ends with exactly one `received` batch.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { InterruptedError } from '../src/core/errors.js';
import type { Fault, Sandbox } from '../src/sandbox/emulator.js';
import {
  count,
  deliverTo,
  makeFolder,
  newSource,
  sandbox,
  sandboxEnv,
  spawnCli,
  statuses,
  tempDir,
  type Folder,
  until,
} from './helpers.js';

const PERIOD = '2024-05';

/** A delivery in process, interrupted with `signal` as soon as `when` holds. */
async function deliverInterrupted(
  box: Sandbox,
  folder: Folder,
  home: string,
  when: () => boolean,
  signal: 'SIGINT' | 'SIGTERM' = 'SIGINT',
) {
  const controller = new AbortController();
  const running = deliverTo(box, folder, { home, signal: controller.signal });
  await until(when, 'the step to interrupt');
  controller.abort(new InterruptedError(signal));
  return running;
}

/** The sandbox holds one batch, `received`, with the file's bytes. */
function expectOnlyBatchReceived(box: Sandbox, folder: Folder): void {
  const batches = box.store.batches();
  expect(batches.map((b) => b.status)).toEqual(['received']);
  expect(box.store.uploadedBytes(batches[0]!.id)!.equals(folder.uploaded)).toBe(true);
}

function readRecord(home: string): Record<string, any> {
  const dir = path.join(home, '.local', 'state', 'bds', 'deliveries');
  const file = readdirSync(dir).find((name) => name.endsWith('.json'))!;
  return JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
}

describe('6. killed at any step, then run again: exactly one received batch', () => {
  const steps: { name: string; faults: Omit<Fault, 'times'>[]; when: (box: Sandbox) => boolean }[] = [
    { name: 'during create', faults: [{ route: 'create', hang: true }], when: (box) => count(box, 'create') >= 1 },
    {
      name: 'after create, its answer lost',
      faults: [
        { route: 'create', loseResponse: true },
        { route: 'create', hang: true },
      ],
      when: (box) => count(box, 'create') >= 2,
    },
    { name: 'during upload', faults: [{ route: 'upload', hang: true }], when: (box) => count(box, 'upload') >= 1 },
    {
      name: 'after upload, its answer lost',
      faults: [
        { route: 'upload', loseResponse: true },
        { route: 'upload', hang: true },
      ],
      when: (box) => count(box, 'upload') >= 2,
    },
    {
      name: 'during complete',
      faults: [{ route: 'complete', hang: true }],
      when: (box) => count(box, 'complete') >= 1,
    },
    {
      name: 'during complete, after a lost answer',
      faults: [
        { route: 'complete', loseResponse: true },
        { route: 'complete', hang: true },
      ],
      when: (box) => count(box, 'complete') >= 2,
    },
  ];

  it.each(steps)('$name', async ({ faults, when }) => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    for (const fault of faults) box.faults.add(fault);
    const first = await deliverInterrupted(box, folder, home, () => when(box));
    expect(first.code).toBe(130);
    expect(first.stderr).toContain('bds: interrupted by SIGINT');
    expect(first.stderr).toContain('run the same command again to resume');

    const again = await deliverTo(box, folder, { home });
    expect(again.stderr).not.toContain('bds:');
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/(Delivered|Already delivered as) bat_\w+ \(received\)/);
    expectOnlyBatchReceived(box, folder);
  });

  it('an interrupted batch whose upload URL has expired gets one fresh batch on the re-run', async () => {
    let offsetMs = 0;
    const box = await sandbox({ now: () => Date.now() + offsetMs });
    const folder = makeFolder();
    const home = tempDir();
    box.faults.add({ route: 'upload', hang: true });
    const first = await deliverInterrupted(box, folder, home, () => count(box, 'upload') >= 1);
    expect(first.code).toBe(130);
    offsetMs = 2 * 3600_000;

    const again = await deliverTo(box, folder, { home });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('resuming the interrupted delivery');
    expect(again.stderr).toContain('AccessDenied: Request has expired');
    expect(count(box, 'create')).toBe(2);
    const received = box.store.batches().filter((b) => b.status === 'received');
    expect(statuses(box)).toEqual(['awaiting_upload', 'received']);
    expect(box.store.uploadedBytes(received[0]!.id)!.equals(folder.uploaded)).toBe(true);
  });
});

describe('7. SIGINT and SIGTERM in process', () => {
  it('SIGTERM during the upload exits 143 with the record saved, and the re-run resumes that batch', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    box.faults.add({ route: 'upload', hang: true });
    const first = await deliverInterrupted(box, folder, home, () => count(box, 'upload') >= 1, 'SIGTERM');
    expect(first.code).toBe(143);
    expect(first.stderr).toContain('bds: interrupted by SIGTERM');
    const [batch] = box.store.batches();
    const record = readRecord(home);
    expect(record).toMatchObject({ step: 'created', batchId: batch!.id, sha256: folder.sha256 });
    expect(JSON.stringify(record)).not.toContain(box.keys.test);
    // Written through a temp file and a rename: none is left behind.
    expect(
      readdirSync(path.join(home, '.local', 'state', 'bds', 'deliveries')).filter((f) => f.endsWith('.tmp')),
    ).toEqual([]);

    const again = await deliverTo(box, folder, { home });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(`resuming the interrupted delivery of ${batch!.id}`);
    expect(count(box, 'create')).toBe(1);
    expectOnlyBatchReceived(box, folder);
    expect(readRecord(home)).toMatchObject({ step: 'completed', status: 'received' });
  });
});

describe('7. real signals on bin/bds.js (needs npm run build)', () => {
  function spawnDeliver(box: Sandbox, folder: Folder, home: string, onSpawn?: (child: ChildProcess) => void) {
    const source = box.store.sources()[0]!.id;
    return spawnCli(['deliver', folder.dir, '--period', PERIOD, '--source', source], {
      env: { ...sandboxEnv(box), HOME: home },
      ...(onSpawn ? { onSpawn } : {}),
    });
  }

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s while the storage host holds the upload exits %i; the re-run resumes', async (signal, code) => {
    const box = await sandbox();
    newSource(box);
    const folder = makeFolder();
    const home = tempDir();
    box.faults.add({ route: 'upload', hang: true });
    const first = await spawnDeliver(box, folder, home, (child) => {
      void until(() => count(box, 'upload') >= 1, 'the upload').then(() => child.kill(signal));
    });
    expect(first.code).toBe(code);
    expect(first.stderr).toContain(`bds: interrupted by ${signal}`);

    const again = await spawnDeliver(box, folder, home);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('resuming the interrupted delivery');
    expect(count(box, 'create')).toBe(1);
    expectOnlyBatchReceived(box, folder);
  });

  it('a second signal exits at once and still leaves no lock file; the re-run resumes', async () => {
    const box = await sandbox();
    newSource(box);
    const folder = makeFolder();
    const home = tempDir();
    box.faults.add({ route: 'upload', hang: true });
    // As `timeout -s INT` (the child and its group) or Ctrl-C pressed twice: a second signal before the first stop
    // is over. Two SIGINTs sent at once may merge into one; a SIGINT and a SIGTERM never do. Either may be handled
    // first: the line and the exit code are the second one's.
    const first = await spawnDeliver(box, folder, home, (child) => {
      void until(() => count(box, 'upload') >= 1, 'the upload').then(() => {
        child.kill('SIGINT');
        child.kill('SIGTERM');
      });
    });
    const second = /^bds: interrupted again by (SIGINT|SIGTERM): stopped at once$/m.exec(first.stderr)?.[1];
    expect(second, first.stderr).toBeDefined();
    expect(first.code).toBe(second === 'SIGINT' ? 130 : 143);
    const dir = path.join(home, '.local', 'state', 'bds', 'deliveries');
    expect(readdirSync(dir).filter((name) => name.endsWith('.lock'))).toEqual([]);

    const again = await spawnDeliver(box, folder, home);
    expect(again.stderr).not.toContain('bds:');
    expect(again.code).toBe(0);
    expect(count(box, 'create')).toBe(1);
    expectOnlyBatchReceived(box, folder);
  });

  it('SIGKILL during the upload, then a re-run: the stale lock is taken over and the batch finished', async () => {
    const box = await sandbox();
    newSource(box);
    const folder = makeFolder();
    const home = tempDir();
    box.faults.add({ route: 'upload', hang: true });
    const first = await spawnDeliver(box, folder, home, (child) => {
      void until(() => count(box, 'upload') >= 1, 'the upload').then(() => child.kill('SIGKILL'));
    });
    expect(first.signal).toBe('SIGKILL');
    const dir = path.join(home, '.local', 'state', 'bds', 'deliveries');
    expect(readdirSync(dir).filter((name) => name.endsWith('.lock'))).toHaveLength(1);

    const again = await spawnDeliver(box, folder, home);
    expect(again.stderr).not.toContain('bds:');
    expect(again.code).toBe(0);
    expect(count(box, 'create')).toBe(1);
    expectOnlyBatchReceived(box, folder);
    expect(readdirSync(dir).filter((name) => name.endsWith('.lock'))).toHaveLength(0);
  });

  it('SIGHUP (a closed terminal or ssh session) cleans up like SIGTERM: exit 129, lock and temp copy gone, record saved', async () => {
    const box = await sandbox();
    const source = newSource(box);
    // A plain .jsonl: bds gzips it into a temp copy under TMPDIR, which must not outlive the run.
    const folder = makeFolder({ plain: true });
    const home = tempDir();
    const tmp = tempDir('bds-tmp-');
    const env = { ...sandboxEnv(box), HOME: home, TMPDIR: tmp };
    const argv = ['deliver', folder.dir, '--period', PERIOD, '--source', source];
    box.faults.add({ route: 'upload', hang: true });
    let duringUpload: string[] = [];
    const first = await spawnCli(argv, {
      env,
      onSpawn: (child) =>
        void until(() => count(box, 'upload') >= 1, 'the upload').then(() => {
          duringUpload = readdirSync(tmp);
          child.kill('SIGHUP');
        }),
    });
    expect(duringUpload).toHaveLength(1);
    expect(first.signal).toBeNull();
    expect(first.code).toBe(129);
    expect(first.stderr).toContain('bds: interrupted by SIGHUP');
    expect(first.stderr).toContain('hint: run the same command again to resume this delivery');
    const dir = path.join(home, '.local', 'state', 'bds', 'deliveries');
    expect(readdirSync(dir).filter((name) => name.endsWith('.lock'))).toEqual([]);
    expect(readdirSync(tmp)).toEqual([]);
    expect(readRecord(home)).toMatchObject({ step: 'created', batchId: box.store.batches()[0]!.id });

    const again = await spawnCli(argv, { env });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('resuming the interrupted delivery');
    expect(count(box, 'create')).toBe(1);
    expectOnlyBatchReceived(box, folder);
  });
});
