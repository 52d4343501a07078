// bds check: deliver's pre-flight alone, offline, with a preview of what reviewers will see; the period taken
// from the folder's name (check and deliver); the schema compared with the nearest earlier delivery's.

import { renameSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../src/sandbox/emulator.js';
import {
  makeFolder,
  newSource,
  run,
  sandbox,
  sandboxEnv,
  tempDir,
  type FolderOptions,
  type RunOptions,
  type RunResult,
} from './helpers.js';

const NOW = new Date('2024-06-15T12:00:00Z');
const at = { now: () => NOW };

/** A delivery folder whose own name is `name` (the period rules read it). */
function namedFolder(name: string, options: FolderOptions = {}): string {
  const dir = path.join(tempDir(), name);
  renameSync(makeFolder(options).dir, dir);
  return dir;
}

function errorLines(res: RunResult): string[] {
  return res.stderr.split('\n').filter((line) => line.startsWith('bds:') || line.startsWith('hint:'));
}

/** `bds check ...` at NOW, with no key, no base URL and no source. */
function check(args: string[], options: RunOptions = {}): Promise<RunResult> {
  return run(['check', ...args], { ...at, ...options });
}

/** `bds deliver ...` to the sandbox, at NOW. */
function deliver(box: Sandbox, args: string[], options: RunOptions & { source?: string } = {}): Promise<RunResult> {
  return run(['deliver', ...args, '--source', options.source ?? newSource(box)], { ...at, ...options, env: { ...sandboxEnv(box), ...options.env } });
}

describe('the period from the folder\'s name', () => {
  it.each(['2024-05', 'records-2024-05', 'orders_2024-05_v2'])('%s is 2024-05, for check and for deliver', async (name) => {
    const dir = namedFolder(name);
    const checked = await check([dir, '--json']);
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.json().period).toBe('2024-05');

    const box = await sandbox();
    const delivered = await deliver(box, [dir, '--json']);
    expect(delivered.code, delivered.stderr).toBe(0);
    expect(delivered.json().period).toBe('2024-05');
    expect(box.store.batches().map((b) => b.period)).toEqual(['2024-05']);
  });

  it('a --period that contradicts it is a usage error, for deliver and for check', async () => {
    const dir = namedFolder('records-2024-05');
    const box = await sandbox();
    for (const res of [await deliver(box, [dir, '--period', '2024-04']), await check([dir, '--period', '2024-04'])]) {
      expect(res.code).toBe(2);
      expect(errorLines(res)).toEqual([
        "bds: --period 2024-04 contradicts the folder's name records-2024-05 (2024-05)",
        'hint: deliver each month from its own folder; rename the folder if its name is wrong',
      ]);
    }
    expect(box.requests).toHaveLength(0);
    expect((await check([dir, '--period', '2024-05'])).code).toBe(0);
  });

  it('with no period anywhere, deliver names the fix and check says it did not check it', async () => {
    const dir = namedFolder('out');
    const box = await sandbox();
    const delivered = await deliver(box, [dir]);
    expect(delivered.code).toBe(2);
    expect(errorLines(delivered)).toEqual([
      "bds: missing --period YYYY-MM (the month the data covers), and the folder's name holds none",
      "hint: name it with --period, or put it in the folder's name (out/2024-05)",
    ]);
    expect(box.requests).toHaveLength(0);

    const checked = await check([dir]);
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.stdout).toContain("Period:    not checked (no --period, and none in the folder's name)");
    expect((await check([dir, '--json'])).json().period).toBeNull();
  });

  it('a name with two months needs --period, which must be one of them', async () => {
    const dir = namedFolder('orders-2024-04-to-2024-05');
    const res = await check([dir]);
    expect(res.code).toBe(2);
    expect(errorLines(res)).toEqual([
      "bds: the folder's name orders-2024-04-to-2024-05 holds more than one period (2024-04, 2024-05)",
      'hint: name the month with --period',
    ]);
    expect((await check([dir, '--period', '2024-05'])).code).toBe(0);
    expect((await check([dir, '--period', '2024-03'])).stderr).toContain('--period 2024-03 contradicts');
  });

  it("a period from the name is named as such in its errors", async () => {
    const res = await check([namedFolder('records-2024-07')]);
    expect(res.code).toBe(2);
    expect(errorLines(res)[0]).toBe("bds: the period 2024-07 in the folder's name records-2024-07 is in the future (this month is 2024-06, UTC)");
  });
});

