// bds doctor: every check of the contract in order, one line each, the exit code of the first failure's kind,
// --json for a support ticket; it changes nothing and never shows the key, a signature or a proxy's password.
// Against the sandbox: the API down, a key file others can read, an interrupted delivery, a lock left behind,
// a server clock 10 minutes off, and the sandbox behind a forward proxy and a TLS front (test/fixtures/tls).

import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import type { DoctorResult } from '../src/core/diagnostics/doctor.js';
import {
  deliverTo,
  listenUntilTestEnds,
  makeFolder,
  newSource,
  ROOT,
  run,
  type RunResult,
  sandbox,
  sandboxEnv,
  spawnCli,
  tempDir,
} from './helpers.js';

const ORDER = [
  'bds',
  'config file',
  'base URL',
  'key',
  'profile',
  'source id',
  'upload rate',
  'state folder',
  'cache folder',
  'temp folder',
  'free space',
  'deliveries',
  'locks',
  'temp copies',
  'proxy',
  'CA',
  'name lookup',
  'connect',
  'TLS',
  'API',
  'clock',
  'source',
];

function doctorJson(res: RunResult | { stdout: string }): DoctorResult {
  return JSON.parse(res.stdout) as DoctorResult;
}

function check(result: DoctorResult, name: string) {
  const found = result.checks.filter((c) => c.name === name);
  expect(found.length, `${name} in ${JSON.stringify(result.checks.map((c) => c.name))}`).toBeGreaterThan(0);
  return found[found.length - 1]!;
}

/** Each check's status, the machine's free space aside (a small /tmp may warn). */
function statuses(result: DoctorResult): Record<string, string> {
  return Object.fromEntries(result.checks.filter((c) => c.name !== 'free space').map((c) => [c.name, c.status]));
}

describe('bds doctor', () => {
  it('all well: every check in the contract order, exit 0; it creates nothing and shows no key', async () => {
    const box = await sandbox();
    const home = tempDir();
    const env = sandboxEnv(box, { BDS_SOURCE_ID: newSource(box) });
    const res = await run(['doctor', '--json'], { home, env });
    expect(res.code, res.stderr).toBe(0);
    const result = doctorJson(res);
    expect(result.ok).toBe(true);
    expect(result.exit_code).toBe(0);
    expect(result.checks.map((c) => c.name)).toEqual(ORDER);
    expect(
      Object.values(statuses(result)).every((s) => s === 'ok'),
      JSON.stringify(result.checks, null, 1),
    ).toBe(true);
    for (const c of result.checks) expect(Object.keys(c)).toEqual(['name', 'status', 'message', 'hint']);
    expect(check(result, 'key').message).toBe('svc_test_… (test mode) from BDS_API_KEY');
    expect(check(result, 'API').message).toMatch(
      /^GET \/api\/v1\/me in \d+ ms: Sandbox Seller, key key_test_sandbox \(test mode\)$/,
    );
    expect(check(result, 'source').message).toMatch(/^src_\w+ exists for this key: 0 batches$/);
    expect(`${res.stdout}${res.stderr}`).not.toContain(box.keys.test);
    // It changes nothing: no folder made, only GET requests.
    expect(existsSync(path.join(home, '.local', 'state', 'bds'))).toBe(false);
    expect(existsSync(path.join(home, '.cache', 'bds'))).toBe(false);
    expect(box.requests.map((r) => r.method)).toEqual(['GET', 'GET']);

    const text = await run(['doctor'], { home, env });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^ok {4}bds +bds \d+\.\d+\.\d+ on Node\.js \d+\.\d+\.\d+, \w+-\w+, /m);
    expect(text.stdout).toMatch(/^ok {4}clock +within \d+ s of the API's$/m);
    expect(text.stdout).toMatch(/\nThis machine can deliver(, with 1 warning)?\.\n$/);
  });

  it('no source set: a warning naming where to set one, and no "This machine can deliver." alone', async () => {
    const box = await sandbox();
    const res = await run(['doctor', '--json'], { env: sandboxEnv(box) });
    expect(res.code, res.stderr).toBe(0);
    expect(check(doctorJson(res), 'source id')).toEqual({
      name: 'source id',
      status: 'warn',
      message: 'none set: deliver and list need one',
      hint: 'set --source, BDS_SOURCE_ID or sourceId in a config file (bds register-source creates one)',
    });
    const text = await run(['doctor'], { env: sandboxEnv(box) });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/\nThis machine can deliver once a source id is set, with \d+ warnings?\.\n$/);
  });

  it('the API down: connect fails, exit 5, and nothing is asked of it', async () => {
    const box = await sandbox();
    const baseUrl = box.baseUrl;
    await box.close();
    const res = await run(['doctor', '--json'], { env: { BDS_BASE_URL: baseUrl, BDS_API_KEY: box.keys.live } });
    expect(res.code).toBe(5);
    const result = doctorJson(res);
    expect(result).toMatchObject({ ok: false, exit_code: 5 });
    expect(check(result, 'connect')).toMatchObject({
      status: 'fail',
      message: expect.stringMatching(/: connection refused$/),
    });
    expect(check(result, 'connect').hint).toMatch(/is the service running there/);
    expect(result.checks.map((c) => c.name)).not.toContain('API');
    const text = await run(['doctor'], { env: { BDS_BASE_URL: baseUrl, BDS_API_KEY: box.keys.live } });
    expect(text.stdout).toMatch(/^fail {2}connect +127\.0\.0\.1:\d+: connection refused\n +hint: /m);
    expect(text.stdout).toMatch(/\n1 check failed, with 1 warning; the first one decides the exit code \(5\)\.\n$/);
    expect(`${text.stdout}${text.stderr}`).not.toContain(box.keys.live);
  });

  it("a host no lookup finds: exit 5, the hint naming where the base URL is set, in the CLI's words", async () => {
    const res = await run(['doctor', '--json'], {
      env: { BDS_BASE_URL: 'https://no-such-host.invalid', BDS_API_KEY: 'svc_test_0000000000000000' },
    });
    expect(res.code).toBe(5);
    expect(check(doctorJson(res), 'name lookup')).toMatchObject({
      status: 'fail',
      message: expect.stringMatching(/^no-such-host\.invalid: (no such host|lookup failed)/),
      hint: 'check the base URL for a typo (--base-url, BDS_BASE_URL or baseUrl)',
    });
  });

  it('no key: exit 3, the way to the API still checked', async () => {
    const box = await sandbox();
    const res = await run(['doctor', '--json'], { env: { BDS_BASE_URL: box.baseUrl } });
    expect(res.code).toBe(3);
    const result = doctorJson(res);
    expect(check(result, 'key')).toMatchObject({ status: 'fail', message: 'no API key' });
    expect(check(result, 'connect').status).toBe('ok');
    expect(result.checks.map((c) => c.name)).not.toContain('API');
    expect(box.requests).toHaveLength(0);
  });

  it('a key file others can read: a warning with chmod 600; exit 0', async () => {
    const box = await sandbox();
    const keyFile = path.join(tempDir(), 'bds.key');
    writeFileSync(keyFile, `${box.keys.live}\n`, { mode: 0o644 });
    const res = await run(['doctor', '--json'], { env: { BDS_BASE_URL: box.baseUrl, BDS_API_KEY_FILE: keyFile } });
    expect(res.code, res.stderr).toBe(0);
    const result = doctorJson(res);
    expect(check(result, 'settings')).toEqual({
      name: 'settings',
      status: 'warn',
      message: `the key file ${keyFile} can be read by other users`,
      hint: `fix with: chmod 600 ${keyFile}`,
    });
    expect(check(result, 'key').message).toBe(`svc_live_… (live mode) from key file ${keyFile} (BDS_API_KEY_FILE)`);
    expect(`${res.stdout}${res.stderr}`).not.toContain(box.keys.live);
  });

  it('an interrupted delivery and a lock left by a process that is gone: warnings naming them', async () => {
    const box = await sandbox();
    const home = tempDir();
    const folder = makeFolder();
    box.faults.add({ route: 'complete', status: 422 });
    const failed = await deliverTo(box, folder, { home });
    expect(failed.code).toBe(4);
    const batch = box.store.batches()[0]!.id;
    const deliveries = path.join(home, '.local', 'state', 'bds', 'deliveries');
    const lock = path.join(deliveries, 'src_gone-2024-06-records-000000000000.lock');
    writeFileSync(
      lock,
      JSON.stringify({ pid: 4_000_000, hostname: 'test-host', startedAt: '2024-06-01T00:00:00.000Z' }),
    );
    const res = await run(['doctor', '--json'], { home, env: sandboxEnv(box) });
    expect(res.code, res.stderr).toBe(0);
    const result = doctorJson(res);
    expect(check(result, 'deliveries')).toMatchObject({
      status: 'warn',
      message: expect.stringMatching(
        new RegExp(
          `^unfinished: 2024-05 records of src_\\w+, step uploaded, batch ${batch} \\(${box.baseUrl.replace(/\./g, '\\.')}\\)$`,
        ),
      ),
      hint: 'run the same bds deliver again: it resumes this delivery',
    });
    expect(check(result, 'locks')).toMatchObject({
      status: 'warn',
      message: `${lock} was left by pid 4000000 (since 2024-06-01T00:00:00.000Z), which is gone`,
    });
    // Nothing was touched.
    expect(existsSync(lock)).toBe(true);

    // A record of before the base URL was kept: its canonical form's "loopback" is shown as a host one can type.
    const [recordFile] = readdirSync(deliveries).filter((name) => name.endsWith('.json'));
    const recordPath = path.join(deliveries, recordFile!);
    const { baseUrl: _typed, ...older } = JSON.parse(readFileSync(recordPath, 'utf8')) as Record<string, unknown>;
    expect(_typed).toBe(box.baseUrl);
    writeFileSync(recordPath, JSON.stringify(older));
    const again = doctorJson(await run(['doctor', '--json'], { home, env: sandboxEnv(box) }));
    expect(check(again, 'deliveries').message).toMatch(/ \(http:\/\/localhost:\d+\)$/);
    expect(JSON.stringify(again)).not.toContain('loopback');
  });

  it('a temp folder not there yet: free space of the folder it would be made in; one that cannot be made: none', async () => {
    const parent = tempDir();
    const missing = path.join(parent, 'not-yet', 'tmp');
    const res = await run(['doctor', '--json'], { env: { TMPDIR: missing } });
    const result = doctorJson(res);
    expect(check(result, 'temp folder')).toMatchObject({
      status: 'ok',
      message: `${missing}, not there yet; bds can make it`,
    });
    expect(check(result, 'free space').message).toMatch(
      new RegExp(`^\\d+\\.\\d GB free in ${parent}, where bds would make ${missing}$`),
    );

    const notAFolder = path.join(parent, 'file');
    writeFileSync(notAFolder, '');
    const failed = doctorJson(await run(['doctor', '--json'], { env: { TMPDIR: path.join(notAFolder, 'tmp') } }));
    expect(check(failed, 'temp folder').status).toBe('fail');
    expect(failed.checks.map((c) => c.name)).not.toContain('free space');
  });

  it('a server clock 10 minutes off: a warning about signed URLs; exit 0', async () => {
    const box = await sandbox({ clockSkewMs: 10 * 60_000 });
    const res = await run(['doctor', '--json'], { env: sandboxEnv(box) });
    expect(res.code, res.stderr).toBe(0);
    expect(check(doctorJson(res), 'clock')).toMatchObject({
      status: 'warn',
      message: "this machine's clock is 10 min behind the API's (its Date header)",
      hint: expect.stringContaining('signed upload URLs expire'),
    });
  });

  it('a source the API does not know: exit 4 naming it', async () => {
    const box = await sandbox();
    const res = await run(['doctor', '--json'], { env: sandboxEnv(box, { BDS_SOURCE_ID: 'src_nobody' }) });
    expect(res.code).toBe(4);
    expect(check(doctorJson(res), 'source')).toMatchObject({
      status: 'fail',
      message: expect.stringMatching(/^the API knows no source src_nobody for this key/),
      hint: expect.stringContaining('bds register-source'),
    });
  });

  it('a broken config file: one failed settings line (exit 2), the rest of the machine still checked', async () => {
    const home = tempDir();
    writeFileSync(path.join(home, '.bdsrc.json'), '{"apiKey": "svc_live_broken_secret_0000",');
    const res = await run(['doctor', '--json'], { home });
    expect(res.code).toBe(2);
    const result = doctorJson(res);
    expect(check(result, 'settings')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('not valid JSON or YAML'),
    });
    expect(check(result, 'state folder').status).toBe('ok');
    expect(res.stdout).not.toContain('broken_secret');
  });
});

describe('bds doctor through a proxy', () => {
  const TLS_DIR = path.join(ROOT, 'test', 'fixtures', 'tls');
  const CERT = path.join(TLS_DIR, 'bds-test.crt');
  const API_URL = 'https://api.bds.test';
  /** The sandbox as https://api.bds.test behind a TLS front that only the proxy's tunnel reaches. */
  async function proxiedSandbox(): Promise<{
    box: Awaited<ReturnType<typeof sandbox>>;
    proxyUrl: string;
    tunnels: string[];
    auth: string[];
  }> {
    const box = await sandbox({ publicUrls: { api: API_URL } });
    const front = await listenUntilTestEnds(
      tls.createServer(
        { key: readFileSync(path.join(TLS_DIR, 'bds-test.key')), cert: readFileSync(CERT) },
        (socket) => {
          const upstream = net.connect(Number(new URL(box.baseUrl).port), '127.0.0.1');
          socket.pipe(upstream).pipe(socket);
          socket.on('error', () => upstream.destroy());
          upstream.on('error', () => socket.destroy());
        },
      ),
    );
    const tunnels: string[] = [];
    const auth: string[] = [];
    const proxy = http.createServer((_req, res) => res.writeHead(502).end());
    proxy.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      tunnels.push(req.url ?? '');
      auth.push(req.headers['proxy-authorization'] ?? '');
      client.on('error', () => client.destroy());
      if (req.url !== 'api.bds.test:443') return client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n');
      const upstream = net.connect(front, '127.0.0.1', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
    });
    return {
      box,
      proxyUrl: `http://doctor:pr0xy-passw0rd@127.0.0.1:${await listenUntilTestEnds(proxy)}`,
      tunnels,
      auth,
    };
  }

  it('names the proxy without its password, checks TLS through its tunnel and asks the API', async () => {
    const { box, proxyUrl, tunnels, auth } = await proxiedSandbox();
    const home = tempDir();
    mkdirSync(home, { recursive: true });
    const res = await spawnCli(['doctor', '--json'], {
      env: {
        HOME: home,
        BDS_BASE_URL: API_URL,
        BDS_API_KEY: box.keys.live,
        HTTPS_PROXY: proxyUrl,
        NODE_EXTRA_CA_CERTS: CERT,
      },
    });
    expect(res.code, res.stderr).toBe(0);
    const result = doctorJson(res);
    expect(check(result, 'proxy').message).toMatch(
      /^http:\/\/REDACTED@127\.0\.0\.1:\d+ \(from HTTPS_PROXY\) for api\.bds\.test$/,
    );
    expect(check(result, 'CA').message).toBe(`1 extra certificate from ${CERT} (NODE_EXTRA_CA_CERTS)`);
    expect(check(result, 'name lookup').message).toBe('the proxy 127.0.0.1 is 127.0.0.1');
    expect(check(result, 'TLS')).toMatchObject({
      status: 'ok',
      message: expect.stringMatching(/^TLSv1\.[23] with api\.bds\.test: certificate for /),
    });
    expect(check(result, 'API').status).toBe('ok');
    expect(tunnels.every((t) => t === 'api.bds.test:443')).toBe(true);
    expect(auth[0]).toBe(`Basic ${Buffer.from('doctor:pr0xy-passw0rd').toString('base64')}`);
    for (const secret of ['pr0xy-passw0rd', box.keys.live]) expect(`${res.stdout}${res.stderr}`).not.toContain(secret);
  });

  it('a proxy that accepts the connection and closes it on CONNECT: the proxy is named, not TLS with the API', async () => {
    const proxy = net.createServer((socket) => socket.destroy());
    const proxyUrl = `http://127.0.0.1:${await listenUntilTestEnds(proxy)}`;
    const res = await run(['doctor', '--json'], {
      env: { BDS_BASE_URL: API_URL, BDS_API_KEY: 'svc_test_0123456789', HTTPS_PROXY: proxyUrl },
    });
    expect(res.code).toBe(5);
    const result = doctorJson(res);
    expect(check(result, 'connect').status).toBe('ok');
    expect(check(result, 'TLS')).toMatchObject({
      status: 'fail',
      message: `the proxy ${proxyUrl} (HTTPS_PROXY) failed to open a tunnel to api.bds.test:443: connection reset (ECONNRESET)`,
      hint: expect.stringMatching(/^is the proxy running, and can it reach the host\? check HTTPS_PROXY/),
    });
  });

  it('a proxy that re-signs TLS with an authority Node does not trust: a TLS failure (exit 5), not a refused key', async () => {
    const { box, proxyUrl } = await proxiedSandbox();
    const res = await run(['doctor', '--json'], {
      env: { BDS_BASE_URL: API_URL, BDS_API_KEY: box.keys.live, HTTPS_PROXY: proxyUrl },
    });
    expect(res.code).toBe(5);
    const result = doctorJson(res);
    expect(check(result, 'TLS')).toMatchObject({
      status: 'fail',
      message: expect.stringMatching(
        /^the certificate api\.bds\.test presents is signed by .+, which Node does not trust \(\w+\)$/,
      ),
      hint: expect.stringMatching(/re-signs TLS .*NODE_EXTRA_CA_CERTS.*not about the key/),
    });
    expect(result.checks.map((c) => c.name)).not.toContain('API');
    expect(box.requests).toHaveLength(0);
    expect(`${res.stdout}${res.stderr}`).not.toContain('pr0xy-passw0rd');
  });
});
