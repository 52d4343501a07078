// The remembered pass (issue 11): check, deliver, a re-run and a resume of the same unchanged file do not read
// it again for the pre-flight; a changed file, or a corrupt or foreign entry, is never trusted.

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { check, deliver, type DeliveryEvent } from '../src/index.js';
import {
  count,
  expectOneReceived,
  makeFolder,
  newSource,
  sandbox,
  sandboxEnv,
  tempDir,
  type Folder,
} from './helpers.js';
import type { Sandbox } from '../src/sandbox/emulator.js';
import { PassCache, zlibFor } from '../src/core/datapass/cache.js';
import { stampOf } from '../src/core/datapass/file-stamp.js';

/** A library call's events: whether the pass read the file, and whether it was remembered. */
function recorder() {
  const events: DeliveryEvent[] = [];
  return {
    onEvent: (event: DeliveryEvent) => events.push(event),
    read: () => events.some((e) => e.type === 'reading'),
    fromCache: () => events.find((e) => e.type === 'step' && e.step === 'checked')?.['fromCache' as never] as unknown,
  };
}

function setup(box: Sandbox) {
  const home = tempDir();
  return {
    env: { ...sandboxEnv(box), BDS_SOURCE_ID: newSource(box), HOME: home },
    cacheDir: path.join(home, '.cache', 'bds', 'passes'),
  };
}

async function deliverWatched(folder: Folder, env: Record<string, string>) {
  const seen = recorder();
  const result = await deliver({ dir: folder.dir, period: '2024-05', env, onEvent: seen.onEvent });
  return { result, read: seen.read(), fromCache: seen.fromCache() };
}

describe('the remembered pass', () => {
  it('deliver after check, and a re-run after deliver, do not read the file again', async () => {
    const box = await sandbox();
    const { env } = setup(box);
    const folder = makeFolder({ records: 5 });
    const checked = recorder();
    const result = await check({ dir: folder.dir, period: '2024-05', env, onEvent: checked.onEvent });
    expect(checked.read()).toBe(true);
    expect(checked.fromCache()).toBe(false);
    const first = await deliverWatched(folder, env);
    expect(first).toMatchObject({
      read: false,
      fromCache: true,
      result: { record_count: 5, sha256: result.sha256, skipped: false },
    });
    expectOneReceived(box, folder);
    const again = await deliverWatched(folder, env);
    expect(again).toMatchObject({ read: false, fromCache: true, result: { skipped: true } });
  });

  it('a plain .jsonl checked before is gzipped on the way into the upload: the same bytes, no temp copy', async () => {
    const box = await sandbox();
    const { env } = setup(box);
    const folder = makeFolder({ plain: true, records: 7 });
    const tmp = tempDir();
    const checked = await check({ dir: folder.dir, period: '2024-05', env: { ...env, TMPDIR: tmp } });
    expect(checked.sha256).toBe(folder.sha256);
    expect(readdirSync(tmp)).toEqual([]);
    const delivered = await deliverWatched(folder, { ...env, TMPDIR: tmp });
    expect(delivered).toMatchObject({
      read: false,
      fromCache: true,
      result: { sha256: folder.sha256, bytes: folder.uploaded.length },
    });
    expectOneReceived(box, folder);
  });

  it('a file rewritten in place with the same size and modification time is read again (its ctime changed)', async () => {
    const box = await sandbox();
    const { env } = setup(box);
    const lines = Array.from({ length: 4 }, (_, i) => JSON.stringify({ id: `a${i}` }));
    const folder = makeFolder({ lines, plain: true });
    const checked = await check({ dir: folder.dir, period: '2024-05', env });
    const before = statSync(folder.dataFile, { bigint: true });
    const rewritten = Buffer.from(lines.map((l) => `${l.replace('"a', '"b')}\n`).join(''));
    expect(BigInt(rewritten.length)).toBe(before.size);
    await new Promise((resolve) => setTimeout(resolve, 20));
    writeFileSync(folder.dataFile, rewritten);
    // utimes() takes seconds as a float, which cannot always restore the nanoseconds: touch can.
    const ns = before.mtimeNs;
    execFileSync('touch', [
      '-m',
      '-d',
      `@${ns / 1_000_000_000n}.${String(ns % 1_000_000_000n).padStart(9, '0')}`,
      folder.dataFile,
    ]);
    const after = statSync(folder.dataFile, { bigint: true });
    expect({ size: after.size, mtimeNs: after.mtimeNs }).toEqual({ size: before.size, mtimeNs: before.mtimeNs });
    expect(after.ctimeNs).not.toBe(before.ctimeNs);
    const delivered = await deliverWatched(folder, env);
    expect(delivered.read).toBe(true);
    expect(delivered.fromCache).toBe(false);
    expect(delivered.result.sha256).not.toBe(checked.sha256);
    const [batch] = box.store.batches();
    expect(box.store.uploadedSha256(batch!.id)).toBe(delivered.result.sha256);
  });

  it('a corrupt or foreign cache entry is ignored, never trusted', async () => {
    const box = await sandbox();
    const { env, cacheDir } = setup(box);
    const folder = makeFolder({ records: 3 });
    const other = makeFolder({ records: 9 });
    await check({ dir: folder.dir, period: '2024-05', env });
    await check({ dir: other.dir, period: '2024-05', env });
    const entries = readdirSync(cacheDir).map((name) => path.join(cacheDir, name));
    const entryOf = (f: Folder) => entries.find((file) => JSON.parse(readFileSync(file, 'utf8')).path === f.dataFile)!;
    const mine = entryOf(folder);
    // Tampered: a record count changed without the entry's checksum.
    const tampered = JSON.parse(readFileSync(mine, 'utf8'));
    writeFileSync(mine, JSON.stringify({ ...tampered, recordCount: 1000 }));
    const tamperedRead = recorder();
    const afterTamper = await check({ dir: folder.dir, period: '2024-05', env, onEvent: tamperedRead.onEvent });
    expect(tamperedRead.read()).toBe(true);
    expect(afterTamper.record_count).toBe(3);
    // Foreign: another file's entry, whole and valid, put where this file's entry goes.
    writeFileSync(mine, readFileSync(entryOf(other)));
    const watched = recorder();
    const afterForeign = await check({ dir: folder.dir, period: '2024-05', env, onEvent: watched.onEvent });
    expect(watched.read()).toBe(true);
    expect(afterForeign.record_count).toBe(3);
    // Not JSON at all.
    writeFileSync(mine, '{"truncated');
    expect((await check({ dir: folder.dir, period: '2024-05', env })).record_count).toBe(3);
    expect(count(box, 'create')).toBe(0);
  });

  it("a plain .jsonl's entry holds only for the zlib that gzipped it; a .gz's for any (another Node, the binary)", async () => {
    const cache = new PassCache(tempDir(), process.platform);
    const pass = { recordCount: 3, sha256: 'a'.repeat(64), size: 77 };
    const folder = makeFolder({ plain: true });
    const plain = stampOf(folder.dataFile, statSync(folder.dataFile));
    expect(zlibFor(true)).toBe(process.versions.zlib);
    await cache.remember(plain, zlibFor(true), pass);
    expect(await cache.recall(plain, zlibFor(true))).toEqual(pass);
    expect(await cache.recall(plain, '1.2.0-other')).toBeUndefined();

    const gz = makeFolder();
    const asIs = stampOf(gz.dataFile, statSync(gz.dataFile));
    expect(zlibFor(false)).toBeNull();
    await cache.remember(asIs, zlibFor(false), pass);
    expect(await cache.recall(asIs, zlibFor(false))).toEqual(pass);
    // What a check of each remembers: zlib's version for the plain .jsonl only.
    const home = tempDir();
    const env = { HOME: home };
    await check({ dir: gz.dir, period: '2024-05', env });
    await check({ dir: folder.dir, period: '2024-05', env });
    const entries = readdirSync(path.join(home, '.cache', 'bds', 'passes')).map((name) =>
      JSON.parse(readFileSync(path.join(home, '.cache', 'bds', 'passes', name), 'utf8')),
    );
    expect(Object.fromEntries(entries.map((e) => [e.path, e.zlib]))).toEqual({
      [gz.dataFile]: null,
      [folder.dataFile]: process.versions.zlib,
    });
  });
});
