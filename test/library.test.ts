// The library as a Node pipeline uses it: import { deliver, ... } from '@batch-delivery/bds', against the sandbox.

import { spawnSync } from 'node:child_process';
import { renameSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  AuthError,
  BdsError,
  EXIT_CODES,
  NetworkError,
  UsageError,
  check,
  checkMany,
  deliver,
  deliverMany,
  listBatches,
  registerSource,
  status,
  whoami,
  type DeliveryEvent,
} from '../src/index.js';
import { startSandbox as startPublicSandbox } from '../src/sandbox/index.js';
import { count, makeFolder, newSource, ROOT, sandbox, tempDir } from './helpers.js';

/** Settings from an env object, as a pipeline passes them; never the test process's environment. */
function envFor(box: { baseUrl: string; keys: { test: string } }, sourceId: string, home = tempDir()) {
  return {
    HOME: home,
    XDG_STATE_HOME: path.join(home, 'state'),
    XDG_CONFIG_HOME: path.join(home, 'config'),
    BDS_BASE_URL: box.baseUrl,
    BDS_API_KEY: box.keys.test,
    BDS_SOURCE_ID: sourceId,
  };
}

describe('the library', () => {
  it('delivers with typed events in order, and returns what the CLI prints with --json', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder({ records: 4 });
    const events: DeliveryEvent[] = [];
    const result = await deliver({
      dir: folder.dir,
      period: '2024-05',
      env: envFor(box, source),
      cwd: tempDir(),
      onEvent: (e) => events.push(e),
    });
    const [batch] = box.store.batches();
    expect(result).toMatchObject({
      batch: { id: batch!.id, status: 'received' },
      source_id: source,
      product: 'records',
      period: '2024-05',
      record_count: 4,
      bytes: folder.uploaded.length,
      sha256: folder.sha256,
      skipped: false,
    });
    const steps = events.filter((e) => e.type === 'step').map((e) => e.step);
    // Each step once; the re-run check is a notice of its own, between checked and creating.
    expect(steps).toEqual(['checking', 'checked', 'creating', 'uploading', 'completing', 'done']);
    const listing = events.findIndex((e) => e.type === 'notice' && e.code === 'listing_batches');
    expect(events[listing]).toMatchObject({ sourceId: source, period: '2024-05', product: 'records' });
    expect(listing).toBeGreaterThan(events.findIndex((e) => e.type === 'step' && e.step === 'checked'));
    expect(listing).toBeLessThan(events.findIndex((e) => e.type === 'step' && e.step === 'creating'));
    const progress = events.filter((e) => e.type === 'progress');
    expect(progress.at(-1)).toMatchObject({
      sent: folder.uploaded.length,
      total: folder.uploaded.length,
      batchId: batch!.id,
    });
    for (const event of events.filter((e) => e.type !== 'notice'))
      expect(event).toMatchObject({ period: '2024-05', product: 'records' });
    expect(events).toContainEqual(expect.objectContaining({ type: 'notice', code: 'test_key' }));
    // Data, not sentences: no event carries a message but a warning's.
    expect(events.filter((e) => 'message' in e)).toEqual([]);
  });

  it("deliver is deliverMany's run of one folder: its month's result as is, without the run's events; a listener's own exception as thrown", async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder({ records: 4 });
    const dir = path.join(tempDir(), 'records-2024-05');
    renameSync(folder.dir, dir);
    const env = envFor(box, source);
    const aloneEvents: DeliveryEvent[] = [];
    const alone = await deliver({ dir, env, onEvent: (e) => aloneEvents.push(e) });
    const manyEvents: DeliveryEvent[] = [];
    const many = await deliverMany({ dirs: [dir], env, onEvent: (e) => manyEvents.push(e) });
    const { dir: manyDir, error, ...month } = many.deliveries[0]!;
    expect([manyDir, error, many.exit_code]).toEqual([dir, null, 0]);
    // The second run found the first's batch: all else is the same, in the same order.
    expect(Object.keys(alone)).toEqual(Object.keys(month));
    expect({ ...alone, batch: alone.batch.id, skipped: true }).toEqual({ ...month, batch: alone.batch.id });
    expect(aloneEvents.filter((e) => e.type === 'queued' || e.type === 'ended')).toEqual([]);
    expect(manyEvents.map((e) => e.type)).toEqual(expect.arrayContaining(['queued', 'ended']));

    class Mine extends Error {}
    const mine = new Mine('the pipeline stops here');
    const thrown = await deliver({
      dir,
      force: true,
      env,
      onEvent: (e) => {
        if (e.type === 'step' && e.step === 'creating') throw mine;
      },
    }).catch((e: unknown) => e);
    expect(thrown).toBe(mine);
  });

  it('an AbortSignal stops the upload (exit code 130, record saved); the same call again resumes to one batch', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder({ records: 50 });
    const env = envFor(box, source);
    box.faults.add({ route: 'upload', delayMs: 5_000 });
    const controller = new AbortController();
    const first = deliver({
      dir: folder.dir,
      period: '2024-05',
      env,
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type === 'step' && e.step === 'uploading') setTimeout(() => controller.abort(), 50);
      },
    });
    const error = await first.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BdsError);
    expect((error as BdsError).exitCode).toBe(EXIT_CODES.sigint);
    expect(box.store.batches().map((b) => b.status)).toEqual(['awaiting_upload']);
    box.faults.clear();
    const events: DeliveryEvent[] = [];
    const again = await deliver({ dir: folder.dir, period: '2024-05', env, onEvent: (e) => events.push(e) });
    expect(again).toMatchObject({ skipped: false, resumed: true, batch: { status: 'received' } });
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'notice', code: 'resuming', batchId: again.batch.id }),
    );
    expect(box.store.batches()).toHaveLength(1);
    expect(count(box, 'create')).toBe(1);
  });

  it('a refused key is an AuthError with exit code 3 and the request, and the key appears nowhere in it', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const error = await whoami({ env: { ...envFor(box, source), BDS_API_KEY: box.keys.revoked } }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AuthError);
    const auth = error as AuthError;
    expect(auth.exitCode).toBe(3);
    expect(auth.hint).toMatch(/key/);
    // A pipeline tells a 401 from a missing key by it.
    const me = { method: 'GET', url: `${box.baseUrl}/api/v1/me`, requestId: expect.stringMatching(/^req_/) };
    expect(auth.request).toEqual({ ...me, status: 403 });
    const unknown = await whoami({ env: { ...envFor(box, source), BDS_API_KEY: 'svc_live_unknown_0123456789' } }).catch(
      (e: unknown) => e,
    );
    expect(unknown).toBeInstanceOf(AuthError);
    expect((unknown as AuthError).request).toEqual({ ...me, status: 401 });
    await expect(whoami({ env: { ...envFor(box, source), BDS_API_KEY: '' } })).rejects.toMatchObject({
      exitCode: 3,
      request: undefined,
    });
    const everything = JSON.stringify({
      message: auth.message,
      hint: auth.hint,
      stack: auth.stack,
      cause: String(auth.cause),
    });
    expect(everything).not.toContain(box.keys.revoked);
    expect(everything).not.toContain(box.keys.revoked.slice('svc_live_'.length));
  });

  it('every failure is a BdsError with its exit code: a bad folder is 2, a missing key 3, an API refusal 4', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const env = envFor(box, source);
    const bad = makeFolder({ lines: ['{"a":1}', '{"a":'] });
    await expect(deliver({ dir: bad.dir, period: '2024-05', env })).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/line 2 is not valid JSON/),
    });
    await expect(whoami({ env: { ...env, BDS_API_KEY: '' } })).rejects.toMatchObject({
      exitCode: 3,
      name: 'AuthError',
    });
    await expect(listBatches({ env, sourceId: 'src_missing' })).rejects.toMatchObject({
      exitCode: 4,
      request: { method: 'GET', status: 404 },
    });
  });

  it('options of the wrong kind, or no folder at all, reject with a UsageError naming the option, never its value', async () => {
    const box = await sandbox();
    const env = envFor(box, newSource(box));
    const { dir } = makeFolder();
    const cases: Array<[string, () => Promise<unknown>, string]> = [
      ['deliverMany, no folder', () => deliverMany({ dirs: [], env }), 'no folder to deliver'],
      ['checkMany, no folder', () => checkMany({ dirs: [], env }), 'no folder to check'],
      [
        'deliver, a number for dir',
        () => deliver({ dir: 42 as never, env }),
        'deliver(): "dir" must be a string, not a number',
      ],
      ['deliver, no dir', () => deliver({ env } as never), 'deliver() needs the option "dir" (a string)'],
      [
        'deliver, no options',
        () => (deliver as (options?: unknown) => Promise<unknown>)(),
        'deliver() takes an object of options, not nothing',
      ],
      [
        'check, an array for dir',
        () => check({ dir: [dir] as never, env }),
        'check(): "dir" must be a string, not an array',
      ],
      [
        'deliverMany, a string for dirs',
        () => deliverMany({ dirs: dir as never, env }),
        'deliverMany(): "dirs" must be an array of folders (strings), not a string',
      ],
      [
        'checkMany, a number among dirs',
        () => checkMany({ dirs: [dir, 7] as never, env }),
        '"dirs" must be an array of folders (strings), not an array holding a number',
      ],
      [
        'deliver, an unknown product',
        () => deliver({ dir, product: 'orders' as never, env }),
        '"product" must be "records", "episodes" or "environment", not another string',
      ],
      [
        'deliver, a string for force',
        () => deliver({ dir, force: 'yes' as never, env }),
        'deliver(): "force" must be true or false, not a string',
      ],
      [
        'deliverMany, a string for jobs',
        () => deliverMany({ dirs: [dir], jobs: '2' as never, env }),
        'deliverMany(): "jobs" must be a number, not a string',
      ],
      [
        'deliver, an object for the key',
        () => deliver({ dir, apiKey: { key: box.keys.test } as never, env }),
        'deliver(): "apiKey" must be a string, not an object',
      ],
      [
        'check, a misspelt option',
        () => check({ dir, perod: '2024-06', env } as never),
        'check() takes no option "perod"',
      ],
      [
        'deliverMany, an option of one folder only',
        () => deliverMany({ dirs: [dir], period: '2024-06', env } as never),
        'deliverMany() takes no option "period"',
      ],
      ['registerSource, no name', () => registerSource({ env } as never), 'registerSource() needs the option "name"'],
      [
        'registerSource, a blank name',
        () => registerSource({ name: ' ', env }),
        'registerSource() needs the option "name"',
      ],
      [
        'deliver, a number for failOn',
        () => deliver({ dir, wait: true, failOn: 7 as never, env }),
        'deliver(): "failOn" must be a string or an array of strings, not a number',
      ],
      [
        'deliver, a string for the signal',
        () => deliver({ dir, signal: 'stop' as never, env }),
        '"signal" must be an AbortSignal, not a string',
      ],
    ];
    for (const [what, call, message] of cases) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, what).toBeInstanceOf(UsageError);
      expect((error as UsageError).message, what).toContain(message);
      expect((error as UsageError).exitCode, what).toBe(EXIT_CODES.usage);
      expect(JSON.stringify({ ...(error as object), message: (error as Error).message }), what).not.toContain(
        box.keys.test,
      );
    }
    expect(box.requests).toEqual([]);
  });

  it("a misspelt option's error names the option it was meant to be", async () => {
    const { dir } = makeFolder();
    await expect(check({ dir, perod: '2024-06' } as never)).rejects.toMatchObject({
      message: 'check() takes no option "perod"',
      hint: 'did you mean "period"?',
    });
  });

  it("errors about settings name the call's options, never the CLI's flags", async () => {
    const box = await sandbox();
    const { dir } = makeFolder();
    const home = tempDir();
    const env = { HOME: home, BDS_API_KEY: box.keys.test };
    const failures = await Promise.all(
      [
        deliver({ dir, period: '2024-05', env, sourceId: 'src_1', baseUrl: 'ftp://example.com' }),
        deliver({ dir, period: '2024-05', env, sourceId: 'src_1', baseUrl: 'http://example.com' }),
        deliver({ dir, period: '2024-05', env, sourceId: 'src_1' }),
        deliver({ dir, period: '2024-05', env, baseUrl: box.baseUrl }),
        whoami({ env, profile: 'nightly' }),
      ].map((call) =>
        call.then(
          () => undefined,
          (error: unknown) => error as UsageError,
        ),
      ),
    );
    expect(failures.map((error) => error?.message)).toEqual([
      'the base URL from the baseUrl option must start with https://',
      'the base URL from the baseUrl option uses http:// for a host that is not this machine',
      'no base URL',
      'no source id',
      'no profile "nightly": no config file was found',
    ]);
    expect(failures[2]!.hint).toBe('set the baseUrl option, BDS_BASE_URL or baseUrl in a config file');
    expect(failures[3]!.hint).toMatch(/^set the sourceId option, BDS_SOURCE_ID or sourceId in a config file/);
    for (const error of failures) expect(`${error!.message} ${error!.hint}`).not.toMatch(/--\w/);
    expect(box.requests).toEqual([]);
  });

  it("errors about a call's options name those options, and carry what they are about as data", async () => {
    const box = await sandbox();
    const { dir } = makeFolder();
    const env = { HOME: tempDir(), BDS_API_KEY: box.keys.test, BDS_BASE_URL: box.baseUrl, BDS_SOURCE_ID: 'src_1' };
    const failures = await Promise.all(
      [
        deliver({ dir, period: '2024-05', env, force: true, skipDelivered: true }),
        deliver({ dir, period: '2024-05', env, wait: true, dryRun: true }),
        deliver({ dir, period: '2024-05', env, timeout: 1000 }),
        deliver({ dir, period: '2024-13', env }),
        deliverMany({ dirs: [dir], env, jobs: 99 }),
        status({ env, period: '2024-05', since: '2024-04' }),
      ].map((call) =>
        call.then(
          () => undefined,
          (error: unknown) => error as UsageError,
        ),
      ),
    );
    expect(failures.map((error) => [error?.message, error?.about])).toEqual([
      [
        'force and skipDelivered cannot be given together',
        { code: 'options_conflict', option: 'force', with: ['skipDelivered'] },
      ],
      ['wait cannot be given with dryRun', { code: 'options_conflict', option: 'wait', with: ['dryRun'] }],
      ['timeout goes with wait', { code: 'goes_with', options: ['timeout'], needs: 'wait' }],
      ['period 2024-13: month 13 is not between 01 and 12', { code: 'option_value', option: 'period' }],
      ['jobs must be a whole number from 1 to 8, not 99', { code: 'option_value', option: 'jobs' }],
      [
        'period cannot be given with since or until',
        { code: 'options_conflict', option: 'period', with: ['since', 'until'] },
      ],
    ]);
    for (const error of failures) expect(`${error!.message} ${error!.hint}`).not.toMatch(/--\w|bds [a-z]/);
    expect(box.requests).toEqual([]);
  });

  it("require() loads it and its sandbox, which deliver as import's do", () => {
    const probe = `
      const { deliver } = require('@batch-delivery/bds');
      const { startSandbox } = require('@batch-delivery/bds/sandbox');
      (async () => {
        const box = await startSandbox({ port: 0 });
        try {
          const env = { HOME: process.argv[2], BDS_BASE_URL: box.baseUrl, BDS_API_KEY: box.keys.test, BDS_SOURCE_ID: box.sourceId };
          const result = await deliver({ dir: process.argv[1], period: '2024-05', env });
          console.log(JSON.stringify({ status: result.batch.status }));
        } finally {
          await box.close();
        }
      })();
    `;
    // From inside the package, as from a project that installed it: by its name, through package.json's exports.
    const res = spawnSync(process.execPath, ['-e', probe, makeFolder().dir, tempDir()], {
      encoding: 'utf8',
      cwd: ROOT,
    });
    expect(res.stderr).not.toMatch(/ERR_|Error/);
    expect(JSON.parse(res.stdout)).toEqual({ status: 'received' });
  });

  it('every error that comes from an HTTP answer carries the request, whatever its class', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const env = envFor(box, source);
    const me = { method: 'GET', url: `${box.baseUrl}/api/v1/me`, requestId: expect.stringMatching(/^req_/) };
    const rejection = (call: Promise<unknown>) =>
      call.then(
        () => undefined,
        (e: unknown) => e,
      );

    const refused = await rejection(listBatches({ env, sourceId: 'src_missing' }));
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({
      exitCode: 4,
      request: { method: 'GET', url: `${box.baseUrl}/api/v1/batches?source_id=src_missing`, status: 404 },
    });

    box.faults.add({ route: 'me', redirect: 'https://elsewhere.example/api/v1/me' });
    expect(await rejection(whoami({ env }))).toMatchObject({
      name: 'ApiError',
      exitCode: 4,
      request: { ...me, status: 307 },
    });

    box.faults.add({ route: 'me', status: 501 });
    expect(await rejection(whoami({ env }))).toMatchObject({
      name: 'NetworkError',
      exitCode: 5,
      request: { ...me, status: 501 },
    });

    // Retried, then given up: the last answer's request.
    box.faults.add({ route: 'me', status: 503, retryAfter: '0', times: 6 });
    const gaveUp = await rejection(whoami({ env }));
    expect(gaveUp).toBeInstanceOf(NetworkError);
    expect(gaveUp).toMatchObject({
      message: expect.stringMatching(/gave up after 6 attempts/),
      request: { ...me, status: 503 },
    });

    box.faults.add({ route: 'me', replaceJson: { organization: {} } });
    expect(await rejection(whoami({ env }))).toMatchObject({
      name: 'NetworkError',
      message: expect.stringMatching(/makes no sense/),
      request: { ...me, status: 200 },
    });

    box.faults.add({ route: 'complete', replaceJson: { batch: { id: 'bat_x', status: 'awaiting_upload' } } });
    const notReceived = await rejection(deliver({ dir: makeFolder().dir, period: '2024-05', env }));
    expect(notReceived).toMatchObject({
      name: 'NetworkError',
      message: expect.stringMatching(/with status awaiting_upload, not received/),
      request: { method: 'POST', url: expect.stringMatching(/\/api\/v1\/batches\/bat_\w+\/complete$/), status: 200 },
    });
  });

  it('resolves settings from the options and the env object given, never from the process', async () => {
    const box = await sandbox();
    const home = tempDir();
    const source = await registerSource({
      name: 'pipeline',
      apiKey: box.keys.live,
      baseUrl: box.baseUrl,
      env: { HOME: home },
    });
    expect(source.id).toMatch(/^src_/);
    const me = await whoami({ apiKey: box.keys.live, baseUrl: box.baseUrl, env: { HOME: home } });
    expect(me).toMatchObject({ baseUrl: box.baseUrl, keySource: 'the apiKey option', key: { mode: 'live' } });
    expect((await listBatches({ env: envFor(box, source.id) })).batches).toEqual([]);
  });

  it('check needs no key and no base URL', async () => {
    const folder = makeFolder({ records: 3 });
    const result = await check({ dir: folder.dir, period: '2024-05', env: { HOME: tempDir() } });
    expect(result).toMatchObject({ ok: true, product: 'records', record_count: 3, sha256: folder.sha256 });
  });

  it("startSandbox from '@batch-delivery/bds/sandbox' listens on a free port with a source ready", async () => {
    const box = await startPublicSandbox({ port: 0 });
    try {
      expect(box.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(Object.keys(box).sort()).toEqual(['baseUrl', 'close', 'keys', 'review', 'sourceId', 'storageUrl']);
      const folder = makeFolder();
      const result = await deliver({ dir: folder.dir, period: '2024-05', env: envFor(box, box.sourceId) });
      expect(result.batch.status).toBe('received');
    } finally {
      await box.close();
    }
  });

  it('importing it reads no file, sets no V8 flag, installs no signal handler and never exits', () => {
    const probe = `
      const fs = require('node:fs'), v8 = require('node:v8');
      const calls = [];
      for (const name of ['readFileSync', 'openSync', 'readFile', 'open', 'statSync', 'readdirSync'])
        { const real = fs[name]; fs[name] = (...a) => { calls.push(name + ' ' + a[0]); return real(...a); }; }
      for (const name of ['readFile', 'open']) { const real = fs.promises[name]; fs.promises[name] = (...a) => { calls.push(name + ' ' + a[0]); return real(...a); }; }
      v8.setFlagsFromString = (f) => calls.push('v8 ' + f);
      process.exit = () => calls.push('exit');
      const signals = () => ['SIGINT', 'SIGTERM', 'SIGHUP'].map((s) => process.listenerCount(s)).join(',');
      const before = signals();
      Promise.all([import(${JSON.stringify(path.join(ROOT, 'dist', 'index.js'))}), import(${JSON.stringify(path.join(ROOT, 'dist', 'sandbox', 'index.js'))})])
        .then(([lib, sb]) => console.log(JSON.stringify({ calls, before, after: signals(), exports: Object.keys(lib).sort(), sandbox: Object.keys(sb) })));
    `;
    const res = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8', cwd: tempDir() });
    expect(res.stderr).toBe('');
    const seen = JSON.parse(res.stdout);
    // Loading modules reads their code (CommonJS goes through fs): anything else would be a side effect.
    expect(seen.calls.filter((call: string) => !/\/node_modules\/|\/dist\/.*\.js$|package\.json$/.test(call))).toEqual(
      [],
    );
    expect(seen.after).toBe(seen.before);
    expect(seen.exports).toEqual(
      expect.arrayContaining(['check', 'deliver', 'whoami', 'listBatches', 'registerSource', 'BdsError', 'EXIT_CODES']),
    );
    expect(seen.sandbox).toEqual(['startSandbox']);
  });
});
