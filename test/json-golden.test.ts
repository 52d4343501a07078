// The --json document and the exit code of every command, byte for byte, on fixed inputs; and the stderr of
// deliver's, check's and status's failures (the one-line error and its hint), which are the words a person and a
// script's log read. The expected texts are test/golden/*.txt: a change of any byte there is a change of the
// contract's output, to be made on purpose (`npx vitest run test/json-golden.test.ts -u`) and reviewed.
//
// A fake clock (the CLI's and the sandbox's) fixes every date; `normalise` replaces only what differs from run
// to run. The texts are Linux's, where .ci/run keeps the suite green: on Windows and macOS paths and doctor's
// words differ, so the file runs on Linux only.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { takeLock } from '../src/core/delivery/lock.js';
import { Journal } from '../src/core/delivery/journal.js';
import { canonicalApi } from '../src/core/api/url-rules.js';
import { InterruptedError } from '../src/core/errors.js';
import { stateDir } from '../src/core/settings/dirs.js';
import type { Sandbox, EmulatorOptions } from '../src/sandbox/emulator.js';
import {
  fakeClock,
  newSource,
  RECORDS_SCHEMA,
  reportFor,
  ROOT,
  run,
  sandbox,
  sandboxEnv,
  tempDir,
  type RunOptions,
  type RunResult,
} from './helpers.js';

const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

const LINUX = process.platform === 'linux';

/** "This month" is 2024-08 on both clocks. */
const START = '2024-08-10T12:00:00Z';

/**
 * Replaces what varies per run with stable placeholders. Ids the sandbox draws (`bat_…`, `src_…`) are numbered in
 * the order they first appear, so which id is the same as which stays checked; request ids, the sandbox's
 * origins, temp folders, lock files' hashes (of the source and the API's port), bds's and Node's versions and the
 * platform (doctor), and free space become a fixed word; `replace` names further exact texts (replaced first).
 */
function normalise(text: string, replace: Array<[string, string]>): string {
  const ids = new Map<string, string>();
  let out = text;
  for (const [from, to] of replace) out = out.split(from).join(to);
  return out
    .replace(/\b(bat|src)_[0-9a-f]{16}\b/g, (id, kind: string) => {
      if (!ids.has(id)) ids.set(id, `${kind}_${[...ids.keys()].filter((k) => k.startsWith(kind)).length + 1}`);
      return ids.get(id)!;
    })
    .replace(/\breq_[0-9a-f]{16}\b/g, 'req_<id>')
    .replace(new RegExp(`${escapeRegExp(os.tmpdir())}/bds-[a-z-]+-[A-Za-z0-9]{6}`, 'g'), '<tmp>')
    .replace(/\b127\.0\.0\.1:\d+/g, '127.0.0.1:<port>')
    .replace(/-[0-9a-f]{12}\.lock\b/g, '-<hash>.lock')
    .split(`bds ${VERSION} on Node.js ${process.versions.node}, ${process.platform}-${process.arch}`)
    .join('bds <version> on Node.js <node>, <platform>')
    .replace(/\d+(\.\d+)? [kMGT]?B free/g, '<n> free');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** What a golden file holds: the exit code, stdout, and stderr when asked. */
function golden(res: RunResult, replace: Array<[string, string]>, withStderr: boolean): string {
  const parts = [`exit ${res.code}`, '--- stdout', res.stdout];
  if (withStderr) parts.push('--- stderr', res.stderr);
  return normalise(parts.join('\n'), replace);
}

async function setup(options: EmulatorOptions = {}) {
  const clock = fakeClock(START);
  const box = await sandbox({ now: clock.ms, ...options });
  const source = newSource(box);
  const out = tempDir('bds-out-');
  const replace: Array<[string, string]> = [
    [box.baseUrl, '<api>'],
    [box.storageUrl, '<storage>'],
    [out, '<out>'],
  ];
  const bds = (argv: string[], extra: RunOptions = {}) =>
    run(argv, {
      ...extra,
      env: sandboxEnv(box, { BDS_SOURCE_ID: source, ...extra.env }),
      now: clock.now,
      sleep: clock.sleep,
    });
  /** A delivery folder named `name` in <out>, with `records` orders (or these raw lines). */
  const folder = (name: string, records = 3, lines?: string[]): string => {
    const dir = path.join(out, name);
    mkdirSync(dir, { recursive: true });
    const data =
      lines ??
      Array.from({ length: records }, (_, i) => JSON.stringify({ _object: 'orders', order_id: `o${i}`, amount: i }));
    writeFileSync(path.join(dir, 'schema.json'), JSON.stringify(RECORDS_SCHEMA, null, 2));
    writeFileSync(path.join(dir, 'report.json'), JSON.stringify(reportFor('records.jsonl.gz', records), null, 2));
    writeFileSync(path.join(dir, 'records.jsonl.gz'), gzipSync(data.map((line) => `${line}\n`).join('')));
    return dir;
  };
  /** Runs bds and compares the result with test/golden/<name>.txt. */
  const expectGolden = async (name: string, argv: string[], extra: RunOptions & { stderr?: boolean } = {}) => {
    const res = await bds(argv, extra);
    await expect(golden(res, replace, extra.stderr ?? false)).toMatchFileSnapshot(`golden/${name}.txt`);
    return res;
  };
  return { clock, box, source, out, bds, folder, expectGolden, replace };
}

describe.runIf(LINUX)('deliver --json', () => {
  it('one folder: --dry-run, delivered, then the same again (already delivered)', async () => {
    const { folder, expectGolden } = await setup();
    const dir = folder('2024-05');
    const home = tempDir('bds-home-');
    await expectGolden('deliver-dry-run', ['deliver', dir, '--dry-run', '--json'], { home });
    await expectGolden('deliver-one', ['deliver', dir, '--json'], { home });
    await expectGolden('deliver-again', ['deliver', dir, '--json'], { home });
    await expectGolden('deliver-again-dry-run', ['deliver', dir, '--json', '--dry-run'], { home });
  });

  it('several folders, one of them failing', async () => {
    const { folder, expectGolden } = await setup();
    const dirs = [folder('2024-03'), folder('2024-04', 5), folder('2024-05', 2, ['{"_object": "orders"}', 'not json'])];
    await expectGolden('deliver-many-failing', ['deliver', ...dirs, '--json', '--jobs', '1'], { stderr: true });
    await expectGolden('deliver-many-dry-run', ['deliver', ...dirs.slice(0, 2), '--json', '--dry-run']);
  });

  it('--skip-delivered: a batch from another machine counts as delivered', async () => {
    const { box, folder, expectGolden } = await setup();
    const dir = folder('2024-05');
    await expectGolden('deliver-skip-first', ['deliver', dir, '--json']);
    await expectGolden('deliver-skip-delivered', ['deliver', dir, '--json', '--skip-delivered']);
    await expectGolden('deliver-skip-delivered-live', ['deliver', dir, '--json', '--skip-delivered'], {
      env: { BDS_API_KEY: box.keys.live },
    });
  });

  it('--wait: the review of the months delivered', async () => {
    const { folder, expectGolden } = await setup({ review: 'accept', reviewAfter: 60_000 });
    await expectGolden('deliver-wait', ['deliver', folder('2024-05'), '--json', '--wait']);
  });

  it('--wait: a month rejected is exit 7', async () => {
    const { folder, expectGolden } = await setup({ review: 'reject', reviewAfter: 60_000 });
    await expectGolden('deliver-wait-rejected', ['deliver', folder('2024-05'), '--json', '--wait'], { stderr: true });
  });

  it('failures: usage, invalid data, refused, auth, network, locked', async () => {
    const { box, source, folder, expectGolden } = await setup();
    const dir = folder('2024-05');
    const bad = folder('2024-06', 2, ['{"_object": "orders"}', '[1]']);
    const noPeriod = folder('no-period');
    for (const json of [true, false]) {
      const flag = json ? ['--json'] : [];
      const suffix = json ? '' : '-text';
      await expectGolden(`deliver-usage-empty${suffix}`, ['deliver', tempDir('bds-out-'), ...flag], { stderr: true });
      await expectGolden(`deliver-usage-no-period${suffix}`, ['deliver', noPeriod, ...flag], { stderr: true });
      await expectGolden(`deliver-usage-other-period${suffix}`, ['deliver', dir, '--period', '2024-04', ...flag], {
        stderr: true,
      });
      await expectGolden(
        `deliver-usage-several-period${suffix}`,
        ['deliver', dir, bad, '--period', '2024-05', ...flag],
        {
          stderr: true,
        },
      );
      await expectGolden(`deliver-usage-unknown-option${suffix}`, ['deliver', dir, '--no-such', ...flag], {
        stderr: true,
      });
      await expectGolden(`deliver-invalid-line${suffix}`, ['deliver', bad, ...flag], { stderr: true });
      await expectGolden(`deliver-auth-no-key${suffix}`, ['deliver', dir, ...flag], {
        stderr: true,
        env: { BDS_API_KEY: undefined },
      });
      await expectGolden(`deliver-auth-revoked${suffix}`, ['deliver', dir, ...flag], {
        stderr: true,
        env: { BDS_API_KEY: box.keys.revoked },
      });
      await expectGolden(`deliver-network${suffix}`, ['deliver', dir, ...flag], {
        stderr: true,
        env: { BDS_BASE_URL: 'http://127.0.0.1:1' },
      });
      const home = tempDir('bds-home-');
      holdLock(box, home, source, 4242);
      await expectGolden(`deliver-locked${suffix}`, ['deliver', dir, ...flag], {
        stderr: true,
        home,
        pid: 5000,
        isProcessAlive: (pid) => pid === 4242,
      });
    }
    // Delivered from another machine (another home): a batch with no record here is refused, exit 4.
    await expectGolden('deliver-first', ['deliver', dir, '--json']);
    await expectGolden('deliver-refused', ['deliver', dir, '--json'], { stderr: true });
    await expectGolden('deliver-refused-text', ['deliver', dir], { stderr: true });
  });
});

/** A lock on 2024-05's records held by the live process `pid`, as a delivery in progress leaves it. */
function holdLock(box: Sandbox, home: string, source: string, pid: number): void {
  const place = {
    env: { HOME: home, XDG_STATE_HOME: path.join(home, '.local', 'state') },
    homedir: home,
    platform: process.platform,
  };
  const records = new Journal(stateDir(place), process.platform);
  takeLock({
    file: records.lockFile({
      api: canonicalApi(new URL(box.baseUrl)),
      sourceId: source,
      period: '2024-05',
      product: 'records',
    }),
    subject: `${source} 2024-05 records`,
    owner: { pid, hostname: 'test-host', startedAt: '2024-08-01T00:00:00.000Z' },
    platform: process.platform,
    isProcessAlive: () => false,
  });
}

describe.runIf(LINUX)('check --json', () => {
  it('one folder, several, and an invalid file', async () => {
    const { folder, expectGolden } = await setup();
    const good = folder('2024-05');
    const other = folder('2024-04', 4);
    const bad = folder('2024-06', 2, ['{"_object": "orders"}', 'oops']);
    await expectGolden('check-one', ['check', good, '--json']);
    await expectGolden('check-many', ['check', good, other, '--json']);
    await expectGolden('check-invalid', ['check', bad, '--json'], { stderr: true });
    await expectGolden('check-invalid-text', ['check', bad], { stderr: true });
    await expectGolden('check-many-invalid', ['check', good, bad, '--json'], { stderr: true });
    await expectGolden('check-usage', ['check', tempDir('bds-out-'), '--json'], { stderr: true });
    await expectGolden('check-usage-text', ['check', tempDir('bds-out-')], { stderr: true });
  });
});

describe.runIf(LINUX)('status, list, whoami, register-source --json', () => {
  it('after deliveries: a month delivered, one missing', async () => {
    const { box, folder, expectGolden } = await setup();
    await expectGolden('status-no-batch', ['status', '--json'], { stderr: true });
    await expectGolden('status-no-batch-text', ['status'], { stderr: true });
    await expectGolden('status-usage', ['status', '--since', '2024-09', '--json'], { stderr: true });
    await expectGolden('status-usage-text', ['status', '--since', '2024-09'], { stderr: true });
    await expectGolden('status-auth', ['status', '--json'], { stderr: true, env: { BDS_API_KEY: box.keys.revoked } });
    await expectGolden('deliver-for-status', ['deliver', folder('2024-05'), '--json']);
    await expectGolden('status', ['status', '--since', '2024-04', '--json']);
    await expectGolden('status-fail-on', ['status', '--since', '2024-04', '--json', '--fail-on', 'missing'], {
      stderr: true,
    });
    await expectGolden('status-wait-timeout', ['status', '--json', '--wait', '--timeout', '90s'], { stderr: true });
    await expectGolden('list', ['list', '--json']);
    await expectGolden('whoami', ['whoami', '--json']);
    await expectGolden('whoami-live', ['whoami', '--json'], { env: { BDS_API_KEY: box.keys.live } });
    await expectGolden('whoami-auth', ['whoami', '--json'], { env: { BDS_API_KEY: box.keys.revoked } });
    await expectGolden('register-source', ['register-source', '--name', 'second', '--description', 'd', '--json']);
    await expectGolden('register-source-usage', ['register-source', '--json']);
    // Last: its retries' sleeps move the clock.
    await expectGolden('status-network', ['status', '--json'], {
      stderr: true,
      env: { BDS_BASE_URL: 'http://127.0.0.1:1' },
    });
  });
});

describe.runIf(LINUX)('login, logout, doctor, sandbox --json', () => {
  it('login --with-key, doctor, logout', async () => {
    // A Date header from the fake clock (the sandbox sets one of its own only when skewed), so doctor's clock is ok.
    const { box, expectGolden, replace } = await setup({ clockSkewMs: 1 });
    const home = tempDir('bds-home-');
    replace.push([home, '<home>']);
    const config = { XDG_CONFIG_HOME: path.join(home, '.config') };
    const noKey = { ...config, BDS_API_KEY: undefined, BDS_SOURCE_ID: undefined };
    await expectGolden('login-no-terminal', ['login', '--json'], { home, env: noKey });
    await expectGolden('login', ['login', '--with-key', '--json'], { home, env: noKey, stdin: `${box.keys.test}\n` });
    await expectGolden('login-refused', ['login', '--with-key', '--json'], {
      home,
      env: noKey,
      stdin: `${box.keys.revoked}\n`,
    });
    await expectGolden('doctor', ['doctor', '--json'], { home, env: { ...config, BDS_API_KEY: undefined } });
    await expectGolden('doctor-auth', ['doctor', '--json'], {
      home,
      env: { ...config, BDS_API_KEY: box.keys.revoked },
    });
    await expectGolden('logout', ['logout', '--json'], { home, env: noKey });
    await expectGolden('logout-nothing', ['logout', '--json'], { home, env: noKey });
  });

  it("login and logout where the file's default profile has a key of its own; a key with a space", async () => {
    const { box, expectGolden, replace } = await setup();
    const home = tempDir('bds-home-');
    replace.push([home, '<home>']);
    const noKey = { XDG_CONFIG_HOME: path.join(home, '.config'), BDS_API_KEY: undefined, BDS_SOURCE_ID: undefined };
    const key = { home, env: noKey, stdin: `${box.keys.test}\n` };
    // The first profile of a file with no key becomes its default, whose key then wins over the top level's.
    await expectGolden('login-profile', ['login', '--with-key', '--profile', 'live', '--json'], key);
    await expectGolden('login-overridden', ['login', '--with-key', '--json'], key);
    await expectGolden('logout-remaining', ['logout', '--json'], { home, env: noKey });
    const spaced = { home, env: noKey, stdin: 'svc_test_copied with more\n' };
    await expectGolden('login-key-character', ['login', '--with-key', '--json'], spaced);
    await expectGolden('login-key-character-text', ['login', '--with-key'], { ...spaced, stderr: true });
  });

  it('sandbox prints its banner, then stops at Ctrl-C', async () => {
    const { expectGolden } = await setup();
    const controller = new AbortController();
    controller.abort(new InterruptedError('SIGINT'));
    await expectGolden('sandbox', ['sandbox', '--port', '0', '--json'], { signal: controller.signal });
  });
});

it('normalise numbers ids in order of appearance and keeps everything else', () => {
  const a = 'bat_0123456789abcdef';
  const b = 'bat_fedcba9876543210';
  expect(normalise(`${b} ${a} ${b} src_00000000000000aa x`, [['x', '<x>']])).toBe('bat_1 bat_2 bat_1 src_1 <x>');
});
