// The shape issue 17 asks for: the CLI prints the library's objects (never JSON of its own), and importing the
// package in any thread starts nothing and listens to nothing.

import { renameSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { check, checkMany, deliver, deliverMany, listBatches, whoami } from '../src/index.js';
import { makeFolder, newSource, ROOT, run, sandbox, sandboxEnv, tempDir } from './helpers.js';

/** A folder named for its month, as several folders need. */
function monthFolder(period: string, records: number): string {
  const { dir } = makeFolder({ records });
  const named = path.join(tempDir(), `records-${period}`);
  renameSync(dir, named);
  return named;
}

describe('the CLI prints what the library returns', () => {
  it('bds check --json is check(), deep-equal', async () => {
    const home = tempDir();
    const { dir } = makeFolder({ records: 6 });
    const env = { HOME: home, XDG_STATE_HOME: path.join(home, '.local', 'state') };
    const fromLibrary = await check({ dir, period: '2024-05', env, cwd: home });
    const res = await run(['check', dir, '--period', '2024-05', '--json'], { home });
    expect(res.code, res.stderr).toBe(0);
    expect(res.json()).toEqual(fromLibrary);
  });

  it('bds check a b --json is checkMany({dirs}), failures included', async () => {
    const home = tempDir();
    const env = { HOME: home, XDG_STATE_HOME: path.join(home, '.local', 'state') };
    const dirs = [monthFolder('2024-04', 3), monthFolder('2024-05', 4), path.join(home, 'missing-2024-06')];
    const fromLibrary = await checkMany({ dirs, env, cwd: home });
    expect(fromLibrary.checks.map((c) => c.ok)).toEqual([true, true, false]);
    const res = await run(['check', ...dirs, '--json'], { home });
    expect(res.code).toBe(2);
    expect(res.json()).toEqual(fromLibrary);
  });

  it("bds deliver --json has every field of deliver()'s result, resumed included, and a dry run's `would`", async () => {
    const box = await sandbox();
    const { dir } = makeFolder({ records: 5 });
    const env = (home: string) => ({
      HOME: home,
      XDG_STATE_HOME: path.join(home, '.local', 'state'),
      ...sandboxEnv(box, { BDS_SOURCE_ID: newSource(box) }),
    });
    const libraryHome = tempDir();
    const fromLibrary = await deliver({ dir, period: '2024-05', env: env(libraryHome), cwd: libraryHome });
    const dryFromLibrary = await deliver({ dir, period: '2024-05', env: env(tempDir()), dryRun: true });

    const res = await run(['deliver', dir, '--period', '2024-05', '--json'], { env: env(tempDir()) });
    expect(res.code, res.stderr).toBe(0);
    const printed = res.json();
    expect(Object.keys(printed)).toEqual(Object.keys(fromLibrary));
    expect({ ...printed, batch: null, source_id: null }).toEqual({ ...fromLibrary, batch: null, source_id: null });
    expect(printed.resumed).toBe(false);

    const dry = await run(['deliver', dir, '--period', '2024-05', '--dry-run', '--json'], { env: env(tempDir()) });
    expect(Object.keys(dry.json())).toEqual(Object.keys(dryFromLibrary));
    expect(dry.json().would).toEqual({ action: 'deliver', batch_id: null, status: null, error: null });
  });

  it('bds whoami, list and deliver a b --json are whoami(), listBatches() and deliverMany({dirs})', async () => {
    const box = await sandbox();
    const home = tempDir();
    const env = {
      HOME: home,
      XDG_STATE_HOME: path.join(home, '.local', 'state'),
      ...sandboxEnv(box, { BDS_SOURCE_ID: newSource(box) }),
    };
    const cli = async (argv: string[]) => {
      const res = await run([...argv, '--json'], { env, home });
      expect(res.code, res.stderr).toBe(0);
      return res.json();
    };
    expect(await cli(['whoami'])).toEqual(await whoami({ env, cwd: home }));

    const dirs = [monthFolder('2024-04', 3), monthFolder('2024-05', 4)];
    const fromLibrary = await deliverMany({ dirs, env, cwd: home });
    expect(fromLibrary.exit_code).toBe(0);
    // The same folders again: both already delivered, from the same records, so the results are equal.
    const again = await deliverMany({ dirs, env, cwd: home });
    expect(await cli(['deliver', ...dirs])).toEqual(again);
    expect(Object.keys(again.deliveries[0]!)).toEqual(Object.keys(fromLibrary.deliveries[0]!));
    expect(await cli(['list'])).toEqual(await listBatches({ env, cwd: home }));
  });
});

describe('importing the package', () => {
  it("in a worker thread of the caller's starts nothing: the thread exits by itself", async () => {
    const entry = path.join(ROOT, 'dist', 'index.js');
    const worker = new Worker(
      `import(${JSON.stringify(entry)}).then((bds) => { if (typeof bds.deliver !== 'function') throw new Error('no deliver'); });`,
      {
        eval: true,
        workerData: { source: 'throw new Error("evaluated")' },
      },
    );
    const exitCode = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        void worker.terminate();
        reject(new Error('the worker that imported the package did not exit within 10 s'));
      }, 10_000);
      worker.on('error', reject);
      worker.on('exit', (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
    expect(exitCode).toBe(0);
  });
});
