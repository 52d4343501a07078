// deliver's monitoring (issue 20): pings in healthchecks.io's protocol to a test server that records them (paths,
// order, bodies, headers), and the Prometheus metrics file, written, parsed back and merged across runs. A ping
// never changes the outcome: a ping host that is down, hangs or answers 500 costs one warning.

import { randomUUID } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalApi } from '../src/core/api/url-rules.js';
import { Journal } from '../src/core/delivery/journal.js';
import { takeLock } from '../src/core/delivery/lock.js';
import { InterruptedError } from '../src/core/errors.js';
import { LogTail, LOG_TAIL_BYTES } from '../src/core/monitoring/log-tail.js';
import { mergeRuns, parseMetrics, renderMetrics, type MonthMetrics } from '../src/core/monitoring/metrics.js';
import { stateDir } from '../src/core/settings/dirs.js';
import type { Sandbox } from '../src/sandbox/emulator.js';
import {
  count,
  deliverTo,
  expectOneReceived,
  type Folder,
  type FolderOptions,
  listenUntilTestEnds,
  makeFolder,
  newSource,
  run,
  sandbox,
  sandboxEnv,
  spawnCli,
  tempDir,
  until,
} from './helpers.js';

interface Ping {
  method: string;
  path: string;
  body: string;
  headers: http.IncomingHttpHeaders;
}

interface PingServer {
  /** The ping URL: this server, and a path that is the check's secret. */
  url: string;
  secret: string;
  port: number;
  pings: Ping[];
}

/** A ping service: records each ping once its body is in, and answers 200 "OK", a status, or never. */
async function pingServer(answer: 'ok' | 'hang' | number = 'ok'): Promise<PingServer> {
  const pings: Ping[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      pings.push({ method: req.method!, path: req.url!, body, headers: req.headers });
      if (answer === 'hang') return;
      res.writeHead(answer === 'ok' ? 200 : answer, { 'content-type': 'text/plain' }).end('OK');
    });
  });
  const port = await listenUntilTestEnds(server);
  const secret = randomUUID();
  return { url: `http://127.0.0.1:${port}/${secret}`, secret, port, pings };
}

/** The pings as "METHOD path", the secret written as <uuid>. */
function paths(server: PingServer): string[] {
  return server.pings.map((ping) => `${ping.method} ${ping.path.replace(server.secret, '<uuid>')}`);
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The one body a run's end ping carried. */
function endBody(server: PingServer): string {
  const ends = server.pings.filter((ping) => ping.method === 'POST');
  expect(ends).toHaveLength(1);
  return ends[0]!.body;
}

/**
 * Nothing secret reached the ping host: no header of bds's API, the key in no header and no body, no signature of
 * an upload URL, and not the ping URL's own path either.
 */
function expectNoSecrets(server: PingServer, key: string): void {
  for (const ping of server.pings) {
    expect(ping.headers.authorization).toBeUndefined();
    expect(ping.headers['x-service-client']).toBeUndefined();
    expect(JSON.stringify(ping.headers)).not.toContain(key);
    expect(ping.body).not.toContain(key);
    expect(ping.body).not.toMatch(/signature=(?!REDACTED)/);
    expect(ping.body).not.toContain(server.secret);
  }
}

/** A folder per month, each named for it (`<root>/records-2024-01`), in the order given. */
function months(periods: string[], options: (period: string) => FolderOptions = () => ({})): Folder[] {
  const root = tempDir('bds-monitoring-');
  return periods.map((period, i) => {
    const folder = makeFolder({ records: 3 + i, ...options(period) });
    const dir = path.join(root, `records-${period}`);
    renameSync(folder.dir, dir);
    return { ...folder, dir, dataFile: path.join(dir, path.basename(folder.dataFile)) };
  });
}

const BAD_LINES = ['{"_object":"orders","order_id":"o1","amount":1}', '{not json'];
const TIMESTAMPED = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ /;

describe('--ping-url: GET <url>/start, then POST <url> or <url>/<exit code>, the log as the body', () => {
  it('a delivery: start, then success, with the log (timestamped, no secret) as the body', async () => {
    const box = await sandbox();
    const ping = await pingServer();
    const folder = makeFolder();
    const res = await deliverTo(box, folder, { args: ['--ping-url', ping.url] });
    expect(res.stderr).not.toContain('warning');
    expect(res.code).toBe(0);
    expectOneReceived(box, folder);
    expect(paths(ping)).toEqual(['GET /<uuid>/start', 'POST /<uuid>']);
    const body = endBody(ping);
    expect(body).toMatch(/creating the records batch for 2024-05/);
    expect(body).toMatch(/Delivered bat_\w+ \(received\)/);
    for (const line of body.trimEnd().split('\n')) expect(line).toMatch(TIMESTAMPED);
    expect(ping.pings[1]!.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(ping.pings[0]!.headers['user-agent']).toMatch(/^bds-cli\//);
    expectNoSecrets(ping, box.keys.test);
  });

  it('--quiet keeps cron silent, and the body still has the whole log', async () => {
    const box = await sandbox();
    const ping = await pingServer();
    const res = await deliverTo(box, makeFolder(), { args: ['--ping-url', ping.url, '--quiet'] });
    expect(res.code).toBe(0);
    expect(res.stderr).toBe('');
    const body = endBody(ping);
    expect(body).toMatch(/uploading \d+ bytes to bat_/);
    expect(body).toMatch(/Z test key \(svc_test_\): test-mode batches never become billable\n/);
    expect(body).toMatch(/Z delivered bat_\w+ \(received\): 2024-05 records, 3 records/);
  });

  it('on a terminal, and with --json, the body is still the plain log: timestamped lines, no escape codes', async () => {
    const box = await sandbox();
    const ping = await pingServer();
    const terminal = await deliverTo(box, makeFolder(), { args: ['--ping-url', ping.url], tty: true, columns: 80 });
    expect(terminal.code).toBe(0);
    const json = await deliverTo(box, makeFolder(), { args: ['--ping-url', ping.url, '--json', '--force'] });
    expect(json.code).toBe(0);
    expect(json.json().batch.status).toBe('received');
    const bodies = ping.pings.filter((p) => p.method === 'POST').map((p) => p.body);
    expect(bodies).toHaveLength(2);
    for (const body of bodies) {
      expect(body).not.toContain('\u001b');
      for (const line of body.trimEnd().split('\n')) expect(line).toMatch(TIMESTAMPED);
      expect(body).toMatch(/Z uploading \d+ bytes to bat_\w+\n/);
      expect(body).toMatch(/Z Delivered bat_\w+ \(received\)\.\n/);
    }
  });

  it('a bad data file: POST <url>/2, the error in the body; nothing created', async () => {
    const box = await sandbox();
    const ping = await pingServer();
    const res = await deliverTo(box, makeFolder({ lines: BAD_LINES }), { args: ['--ping-url', ping.url] });
    expect(res.code).toBe(2);
    expect(count(box, 'create')).toBe(0);
    expect(paths(ping)).toEqual(['GET /<uuid>/start', 'POST /<uuid>/2']);
    expect(endBody(ping)).toMatch(/bds: .*line 2 is not valid JSON/);
  });

  it('a refused key: POST <url>/3; the key is in no ping', async () => {
    const box = await sandbox();
    const ping = await pingServer();
    const key = 'svc_test_not_a_key_the_service_knows_0123456789';
    const res = await deliverTo(box, makeFolder(), {
      args: ['--ping-url', ping.url, '--verbose'],
      env: { BDS_API_KEY: key },
    });
    expect(res.code).toBe(3);
    expect(paths(ping)).toEqual(['GET /<uuid>/start', 'POST /<uuid>/3']);
    expect(endBody(ping)).toMatch(/bds: .*401/);
    expectNoSecrets(ping, key);
  });

  it("a backfill with a failed month: one ping for the whole run, POST <url>/<the failed month's exit code>", async () => {
    const box = await sandbox();
    const ping = await pingServer();
    const folders = months(['2024-03', '2024-04'], (period) => (period === '2024-04' ? { lines: BAD_LINES } : {}));
    const res = await run(
      ['deliver', ...folders.map((f) => f.dir), '--source', newSource(box), '--ping-url', ping.url],
      { env: sandboxEnv(box) },
    );
    expect(res.code).toBe(2);
    expect(box.store.batches().map((b) => [b.period, b.status])).toEqual([['2024-03', 'received']]);
    expect(paths(ping)).toEqual(['GET /<uuid>/start', 'POST /<uuid>/2']);
    const body = endBody(ping);
    expect(body).toMatch(/2024-03 records: delivered bat_/);
    expect(body).toMatch(/2024-04 records: .*line 2 is not valid JSON/);
  });

  it('Ctrl-C: POST <url>/130 with "interrupted" in the body', async () => {
    const box = await sandbox();
    const ping = await pingServer();
    box.faults.add({ route: 'upload', hang: true });
    const controller = new AbortController();
    const running = deliverTo(box, makeFolder(), { args: ['--ping-url', ping.url], signal: controller.signal });
    await until(() => count(box, 'upload') >= 1, 'the upload');
    controller.abort(new InterruptedError('SIGINT'));
    const res = await running;
    expect(res.code).toBe(130);
    expect(paths(ping)).toEqual(['GET /<uuid>/start', 'POST /<uuid>/130']);
    expect(endBody(ping)).toMatch(/bds: interrupted by SIGINT/);
  });

  it('a usage error once the ping URL is known is pinged (exit 2); an unknown flag, before it is, is not', async () => {
    const box = await sandbox();
    const ping = await pingServer();
    const jobs = await deliverTo(box, makeFolder(), { args: ['--ping-url', ping.url, '--jobs', 'many'] });
    expect(jobs.code).toBe(2);
    expect(paths(ping)).toEqual(['GET /<uuid>/start', 'POST /<uuid>/2']);

    const home = tempDir();
    writeFileSync(path.join(home, '.bdsrc.json'), '{ "baseUrl": ');
    const badConfig = await deliverTo(box, makeFolder(), { home, env: { BDS_PING_URL: ping.url } });
    expect(badConfig.code).toBe(2);
    expect(badConfig.stderr).toMatch(/bds: cannot read the config file .*bdsrc\.json/);
    expect(paths(ping).slice(2)).toEqual(['GET /<uuid>/start', 'POST /<uuid>/2']);

    const unknown = await deliverTo(box, makeFolder(), { args: ['--ping-url', ping.url, '--no-such-flag'] });
    expect(unknown.code).toBe(2);
    expect(ping.pings).toHaveLength(4);
  });

  it('a ping URL that is not an http(s) URL is a usage error that does not echo it', async () => {
    const box = await sandbox();
    const res = await deliverTo(box, makeFolder(), { args: ['--ping-url', 'hc-ping.com/secret-uuid-1234'] });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('bds: the ping URL from --ping-url is not an http:// or https:// URL');
    expect(res.stderr).not.toContain('secret-uuid-1234');
    expect(count(box, 'create')).toBe(0);
  });

  it("--verbose shows each ping with the URL's path, its secret, left out", async () => {
    const box = await sandbox();
    const ping = await pingServer();
    const res = await deliverTo(box, makeFolder(), { args: ['--ping-url', ping.url, '--verbose'] });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(`GET http://127.0.0.1:${ping.port}/…/start → 200`);
    expect(res.stderr).toContain(`POST http://127.0.0.1:${ping.port}/… → 200`);
    expect(res.stderr + res.stdout).not.toContain(ping.secret);
    expect(endBody(ping)).not.toContain(ping.secret);
  });

  it('BDS_PING_URL, and pingUrl per profile of the config file', async () => {
    const box = await sandbox();
    const [fromEnv, live, top] = await Promise.all([pingServer(), pingServer(), pingServer()]);
    expect((await deliverTo(box, makeFolder(), { env: { BDS_PING_URL: fromEnv.url } })).code).toBe(0);
    expect(paths(fromEnv)).toEqual(['GET /<uuid>/start', 'POST /<uuid>']);

    const home = tempDir();
    writeFileSync(
      path.join(home, '.bdsrc.json'),
      JSON.stringify({ pingUrl: top.url, profiles: { live: { pingUrl: live.url } } }),
    );
    expect((await deliverTo(box, makeFolder(), { home, args: ['--profile', 'live', '--force'] })).code).toBe(0);
    expect(paths(live)).toEqual(['GET /<uuid>/start', 'POST /<uuid>']);
    expect(top.pings).toEqual([]);
  });

  it('a ping goes through HTTPS_PROXY/HTTP_PROXY as the API would, and the proxy sees no key', async () => {
    const box = await sandbox();
    const ping = await pingServer();
    const tunnels: string[] = [];
    const connectHeaders: string[] = [];
    const proxy = http.createServer((_req, res) => res.writeHead(502).end());
    proxy.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      tunnels.push(req.url!);
      connectHeaders.push(JSON.stringify(req.headers));
      const upstream = net.connect(ping.port, '127.0.0.1', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
    const proxyPort = await listenUntilTestEnds(proxy);
    const url = `http://ping.bds.test/${ping.secret}`;
    const res = await deliverTo(box, makeFolder(), {
      args: ['--ping-url', url],
      env: { HTTP_PROXY: `http://127.0.0.1:${proxyPort}` },
    });
    expect(res.stderr).not.toContain('warning');
    expect(res.code).toBe(0);
    expect(tunnels.length).toBeGreaterThan(0);
    expect(new Set(tunnels)).toEqual(new Set(['ping.bds.test:80']));
    for (const headers of connectHeaders) expect(headers).not.toContain(box.keys.test);
    expect(paths(ping)).toEqual(['GET /<uuid>/start', 'POST /<uuid>']);
    expectNoSecrets(ping, box.keys.test);
  });
});

describe('a ping never changes the outcome', () => {
  it('a ping host that is down: delivered, exit 0, one warning', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const res = await deliverTo(box, folder, {
      args: ['--ping-url', `http://127.0.0.1:${await closedPort()}/${randomUUID()}`],
    });
    expect(res.code).toBe(0);
    expectOneReceived(box, folder);
    const warnings = res.stderr.split('\n').filter((line) => line.includes('warning'));
    expect(warnings).toEqual([
      expect.stringMatching(
        /^warning: the monitoring ping failed \(the exit code stands\): GET .*\/…\/start failed: connection refused .*; POST .*\/… failed: connection refused/,
      ),
    ]);
  });

  it('a ping host that hangs: each ping gives up within its bound after two tries; the exit code stands', async () => {
    const box = await sandbox();
    const ping = await pingServer('hang');
    const res = await deliverTo(box, makeFolder({ lines: BAD_LINES }), {
      args: ['--ping-url', ping.url],
      http: { pingTimeoutMs: 400 },
    });
    expect(res.code).toBe(2);
    expect(paths(ping)).toEqual(['GET /<uuid>/start', 'GET /<uuid>/start', 'POST /<uuid>/2', 'POST /<uuid>/2']);
    expect(res.stderr.match(/warning/g)).toHaveLength(1);
    expect(res.stderr).toMatch(
      /warning: the monitoring ping failed .*start failed: no answer within [\d.]+ s; POST .* failed: no answer within [\d.]+ s/,
    );
  });

  it('a ping host that answers 500: two tries each, one warning, delivered', async () => {
    const box = await sandbox();
    const ping = await pingServer(500);
    const folder = makeFolder();
    const res = await deliverTo(box, folder, { args: ['--ping-url', ping.url] });
    expect(res.code).toBe(0);
    expectOneReceived(box, folder);
    expect(paths(ping)).toEqual(['GET /<uuid>/start', 'GET /<uuid>/start', 'POST /<uuid>', 'POST /<uuid>']);
    expect(res.stderr.match(/warning/g)).toHaveLength(1);
    expect(res.stderr).toContain(`http://127.0.0.1:${ping.port}/…/start answered 500`);
  });

  it('a ping host that answers 404 (a wrong URL) gets one try', async () => {
    const box = await sandbox();
    const ping = await pingServer(404);
    const res = await deliverTo(box, makeFolder(), { args: ['--ping-url', ping.url] });
    expect(res.code).toBe(0);
    expect(paths(ping)).toEqual(['GET /<uuid>/start', 'POST /<uuid>']);
    expect(res.stderr).toMatch(/warning: .*answered 404/);
  });
});

/** The metrics file's months, by "period product". */
/** The lock of `period`'s records held by a bds on another machine sharing this home folder: never taken over. */
function lockHeldElsewhere(box: Sandbox, home: string, source: string, period: string): void {
  const journal = new Journal(stateDir({ env: {}, homedir: home, platform: process.platform }), process.platform);
  takeLock({
    file: journal.lockFile({ api: canonicalApi(new URL(box.baseUrl)), sourceId: source, period, product: 'records' }),
    subject: `${source} ${period} records`,
    owner: { pid: 4242, hostname: 'elsewhere', startedAt: new Date().toISOString() },
    platform: process.platform,
    isProcessAlive: () => true,
  });
}

function metricsOf(file: string): Record<string, MonthMetrics> {
  return Object.fromEntries(
    parseMetrics(readFileSync(file, 'utf8')).map((month) => [`${month.period} ${month.product}`, month]),
  );
}

describe('--metrics-file: the Prometheus textfile, replaced after each run, months of earlier runs kept', () => {
  it('two runs: the second merges its month into the file the first wrote; a failed month keeps its last success', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const home = tempDir();
    const file = path.join(tempDir(), 'bds.prom');
    let now = new Date('2024-06-01T03:15:00Z');
    const [april, may] = months(['2024-04', '2024-05']);
    const deliver = (folder: Folder) =>
      run(['deliver', folder.dir, '--source', source, '--metrics-file', file], {
        env: sandboxEnv(box),
        home,
        now: () => now,
      });

    expect((await deliver(april!)).code).toBe(0);
    const first = metricsOf(file);
    const at = Date.parse('2024-06-01T03:15:00Z') / 1000;
    expect(first).toEqual({
      '2024-04 records': {
        source,
        period: '2024-04',
        product: 'records',
        lastRun: at,
        lastSuccess: at,
        exitCode: 0,
        bytes: april!.uploaded.length,
        records: 3,
      },
    });
    const text = readFileSync(file, 'utf8');
    for (const name of [
      'last_run_timestamp_seconds',
      'last_success_timestamp_seconds',
      'last_exit_code',
      'bytes',
      'records',
    ]) {
      expect(text).toContain(`# HELP bds_delivery_${name} `);
      expect(text).toContain(
        `# TYPE bds_delivery_${name} gauge\nbds_delivery_${name}{source="${source}",period="2024-04",product="records"} `,
      );
    }

    now = new Date('2024-06-02T03:15:00Z');
    expect((await deliver(may!)).code).toBe(0);
    box.faults.add({ route: 'list', status: 503, times: 20 });
    now = new Date('2024-06-03T03:15:00Z');
    expect((await deliver(april!)).code).toBe(5);
    const later = Date.parse('2024-06-03T03:15:00Z') / 1000;
    expect(metricsOf(file)).toEqual({
      '2024-04 records': { ...first['2024-04 records'], lastRun: later, exitCode: 5 },
      '2024-05 records': {
        source,
        period: '2024-05',
        product: 'records',
        lastRun: at + 86400,
        lastSuccess: at + 86400,
        exitCode: 0,
        bytes: may!.uploaded.length,
        records: 4,
      },
    });
  });

  it('a backfill: a sample per month, the failed one with its exit code; BDS_METRICS_FILE', async () => {
    const box = await sandbox();
    const file = path.join(tempDir(), 'bds.prom');
    const folders = months(['2024-03', '2024-04'], (period) => (period === '2024-04' ? { lines: BAD_LINES } : {}));
    const res = await run(['deliver', ...folders.map((f) => f.dir), '--source', newSource(box)], {
      env: sandboxEnv(box, { BDS_METRICS_FILE: file }),
    });
    expect(res.code).toBe(2);
    const metrics = metricsOf(file);
    expect(metrics['2024-03 records']).toMatchObject({ exitCode: 0, records: 3 });
    expect(metrics['2024-04 records']).toEqual({
      source: expect.any(String),
      period: '2024-04',
      product: 'records',
      lastRun: expect.any(Number),
      exitCode: 2,
    });
  });

  it('a month stopped before its lock (another bds holds it; not started) is left out, for one folder and several', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const home = tempDir();
    const file = path.join(tempDir(), 'bds.prom');
    const deliver = (folders: Folder[], env: Record<string, string> = {}) =>
      run(['deliver', ...folders.map((f) => f.dir), '--source', source, '--metrics-file', file, '--jobs', '1'], {
        env: sandboxEnv(box, env),
        home,
      });
    const [march, april, may] = months(['2024-03', '2024-04', '2024-05']);
    lockHeldElsewhere(box, home, source, '2024-05');
    expect((await deliver([april!, may!])).code).toBe(6);
    expect(Object.keys(metricsOf(file))).toEqual(['2024-04 records']);
    expect((await deliver([may!])).code).toBe(6);
    expect(Object.keys(metricsOf(file))).toEqual(['2024-04 records']);
    // A refused key: the first month meets it (after its lock), the others are not started.
    const refused = await deliver([march!, april!, may!], { BDS_API_KEY: 'svc_test_wrongkey123' });
    expect(refused.code).toBe(3);
    const metrics = metricsOf(file);
    expect(Object.keys(metrics)).toEqual(['2024-03 records', '2024-04 records']);
    expect(metrics['2024-03 records']!.exitCode).toBe(3);
    expect(metrics['2024-04 records']!.exitCode).toBe(0);
  });

  it('metricsFile in a config file is relative to that file; a dry run leaves the file alone', async () => {
    const box = await sandbox();
    const home = tempDir();
    const cwd = path.join(home, 'work');
    writeFileSync(path.join(home, '.bdsrc.json'), JSON.stringify({ metricsFile: 'metrics/bds.prom' }));
    mkdirSync(path.join(home, 'metrics'));
    mkdirSync(cwd);
    const file = path.join(home, 'metrics', 'bds.prom');
    const folder = makeFolder();
    expect((await deliverTo(box, folder, { home, cwd, args: ['--dry-run'] })).code).toBe(0);
    expect(() => readFileSync(file)).toThrow(/ENOENT/);
    expect((await deliverTo(box, folder, { home, cwd })).code).toBe(0);
    expect(Object.keys(metricsOf(file))).toEqual(['2024-05 records']);
  });

  it('a metrics file that cannot be written is a warning, not a failure', async () => {
    const box = await sandbox();
    const notAFolder = path.join(tempDir(), 'file');
    writeFileSync(notAFolder, '');
    const folder = makeFolder();
    const res = await deliverTo(box, folder, { args: ['--metrics-file', path.join(notAFolder, 'bds.prom')] });
    expect(res.code).toBe(0);
    expectOneReceived(box, folder);
    expect(res.stderr).toMatch(
      /warning: could not write the metrics file .*bds\.prom: a part of its path is not a folder \(ENOTDIR\)/,
    );
  });

  it.skipIf(process.getuid?.() === 0)(
    'a metrics folder without write permission is a warning, not a failure',
    async () => {
      const box = await sandbox();
      const dir = tempDir();
      chmodSync(dir, 0o500);
      try {
        const res = await deliverTo(box, makeFolder(), { args: ['--metrics-file', path.join(dir, 'bds.prom')] });
        expect(res.code).toBe(0);
        expect(res.stderr).toMatch(/warning: could not write the metrics file .*: permission denied \(EACCES\)/);
      } finally {
        chmodSync(dir, 0o700);
      }
    },
  );

  it('a file that holds lines bds did not write is left alone, with a warning', async () => {
    const box = await sandbox();
    const file = path.join(tempDir(), 'passwd.prom');
    writeFileSync(file, 'root:x:0:0:root:/root:/bin/bash\n');
    const res = await deliverTo(box, makeFolder(), { args: ['--metrics-file', file] });
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(
      /warning: could not write the metrics file .*: it holds lines bds did not write \(line 1 is not one bds writes\)/,
    );
    expect(readFileSync(file, 'utf8')).toBe('root:x:0:0:root:/root:/bin/bash\n');
  });

  it('a lock left by a run killed during the write (its pid gone) is taken over at once; a live one is waited for', async () => {
    const box = await sandbox();
    const file = path.join(tempDir(), 'bds.prom');
    const lock = (pid: number) =>
      writeFileSync(
        `${file}.lock`,
        JSON.stringify({ pid, hostname: 'test-host', startedAt: new Date().toISOString() }),
      );
    const folder = makeFolder();
    const home = tempDir();
    lock(4_000_000);
    const taken = await deliverTo(box, folder, {
      home,
      args: ['--metrics-file', file],
    });
    expect(taken.code).toBe(0);
    expect(taken.stderr).not.toContain('metrics');
    expect(Object.keys(metricsOf(file))).toEqual(['2024-05 records']);
    expect(existsSync(`${file}.lock`)).toBe(false);

    lock(4_000_001);
    const sleeps: number[] = [];
    const held = await deliverTo(box, folder, {
      home,
      args: ['--metrics-file', file],
      isProcessAlive: (pid) => pid === 4_000_001,
      sleeps,
    });
    expect(held.code).toBe(0);
    expect(held.stderr).toContain(
      `warning: could not write the metrics file ${file}: another bds process (pid 4000001 on test-host) is writing it (${file}.lock exists)`,
    );
    expect(sleeps.length).toBeGreaterThan(1);
  });

  it('the metrics file is in the body of the end ping when it could not be written', async () => {
    const box = await sandbox();
    const ping = await pingServer();
    const res = await deliverTo(box, makeFolder(), {
      args: ['--ping-url', ping.url, '--metrics-file', path.join(tempDir(), 'missing', 'bds.prom')],
    });
    expect(res.code).toBe(0);
    expect(endBody(ping)).toMatch(/warning: could not write the metrics file .*no such folder \(ENOENT\)/);
  });
});

describe('the metrics text format and the log tail', () => {
  it('label values are escaped, and read back as written', () => {
    const source = 'src "quoted" \\ back\nslash';
    const months = mergeRuns(
      [],
      [{ source, period: '2024-05', product: 'records', exitCode: 0, bytes: 10, records: 2 }],
      1717210500,
    );
    const text = renderMetrics(months);
    expect(text).toContain(
      'bds_delivery_records{source="src \\"quoted\\" \\\\ back\\nslash",period="2024-05",product="records"} 2\n',
    );
    expect(parseMetrics(text)).toEqual(months);
  });

  it('a month that never succeeded has no last-success, bytes or records sample', () => {
    const text = renderMetrics(
      mergeRuns([], [{ source: 's', period: '2024-05', product: 'records', exitCode: 4, bytes: 10, records: 2 }], 100),
    );
    expect(text).toContain('bds_delivery_last_exit_code{source="s",period="2024-05",product="records"} 4');
    expect(text).not.toMatch(/^bds_delivery_(last_success_timestamp_seconds|bytes|records)\{/m);
  });

  it('the tail keeps the newest lines within 10 kB, and says that earlier ones were left out', () => {
    const tail = new LogTail();
    for (let i = 0; i < 1000; i++) tail.add(`line ${i} ${'x'.repeat(40)}`);
    const text = tail.text();
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(LOG_TAIL_BYTES);
    expect(text).toMatch(/^\[earlier lines left out\]\n/);
    expect(text.trimEnd().split('\n').at(-1)).toMatch(/^line 999 /);
    const long = new LogTail();
    long.add('é'.repeat(20_000));
    expect(Buffer.byteLength(long.text())).toBeLessThanOrEqual(LOG_TAIL_BYTES);
  });

  it("a long run's body is at most 10 kB, the newest lines kept", async () => {
    const box = await sandbox();
    const ping = await pingServer();
    const folders = months(['2023-01', '2023-02', '2023-03', '2023-04', '2023-05', '2023-06', '2023-07', '2023-08']);
    const args = [
      'deliver',
      ...folders.map((f) => f.dir),
      '--source',
      newSource(box),
      '--ping-url',
      ping.url,
      '--verbose',
    ];
    const res = await run(args, { env: sandboxEnv(box) });
    expect(res.code).toBe(0);
    expect(Buffer.byteLength(res.stderr + res.stdout)).toBeGreaterThan(LOG_TAIL_BYTES);
    const body = endBody(ping);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(LOG_TAIL_BYTES);
    expect(body).toMatch(/^\[earlier lines left out\]\n/);
    expect(body).toMatch(/All 8 folders are delivered\.\n.*Took: /);
  });
});

describe('bds deliver --ping-url as a user runs it', () => {
  it('SIGTERM to the process: POST <url>/143 before it exits', async () => {
    const box = await sandbox();
    const ping = await pingServer();
    box.faults.add({ route: 'upload', hang: true });
    const folder = makeFolder();
    const res = await spawnCli(['deliver', folder.dir, '--period', '2024-05', '--ping-url', ping.url], {
      env: sandboxEnv(box, { BDS_SOURCE_ID: newSource(box) }),
      onSpawn: (child) => void until(() => count(box, 'upload') >= 1, 'the upload').then(() => child.kill('SIGTERM')),
    });
    expect(res.code).toBe(143);
    expect(paths(ping)).toEqual(['GET /<uuid>/start', 'POST /<uuid>/143']);
    expect(endBody(ping)).toMatch(/bds: interrupted by SIGTERM/);
  });
});

describe('deliver --wait: the ping and the metrics report the delivery, the review is a sample of its own', () => {
  const reviewSample = (source: string, state: string) =>
    `bds_delivery_review_state{source="${source}",period="2024-07",product="records",state="${state}"} 1\n`;

  it('Ctrl-C during the wait: the delivered batch in --json with the interruption, no "resume"; a success in the metrics', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const ping = await pingServer();
    const file = path.join(tempDir(), 'bds.prom');
    const folder = makeFolder({ records: 5 });
    const controller = new AbortController();
    const res = await run(
      ['deliver', folder.dir, '--period', '2024-07', '--source', source, '--wait', '--json'].concat([
        '--ping-url',
        ping.url,
        '--metrics-file',
        file,
      ]),
      {
        env: sandboxEnv(box),
        signal: controller.signal,
        now: () => new Date('2024-08-10T12:00:00Z'),
        // The batch stays received: the wait's first sleep is where Ctrl-C comes.
        sleep: async () => void controller.abort(new InterruptedError('SIGINT')),
      },
    );
    expect(res.code).toBe(130);
    const [batch] = box.store.batches();
    const json = res.json();
    expect(json).toMatchObject({
      batch: { id: batch!.id, status: 'received' },
      period: '2024-07',
      record_count: 5,
      skipped: false,
      review: null,
      error: {
        message: 'interrupted by SIGINT while waiting for the review of 2024-07 records',
        hint: `${batch!.id} is delivered; bds status --source ${source} --period 2024-07 --wait waits for its review`,
        exit_code: 130,
      },
    });
    expect(res.stderr).toContain('bds: interrupted by SIGINT while waiting for the review of 2024-07 records\n');
    expect(res.stderr).not.toMatch(/resume/);
    // The month was delivered: a success, whatever stopped the wait after it; no verdict is known.
    const at = Date.parse('2024-08-10T12:00:00Z') / 1000;
    expect(metricsOf(file)['2024-07 records']).toEqual({
      source,
      period: '2024-07',
      product: 'records',
      lastRun: at,
      lastSuccess: at,
      exitCode: 0,
      bytes: folder.uploaded.length,
      records: 5,
    });
    // The ping says the process's exit code, and its body has the delivered batch.
    expect(paths(ping)).toEqual(['GET /<uuid>/start', 'POST /<uuid>/130']);
    expect(endBody(ping)).toContain(`Delivered ${batch!.id} (received).`);
  });

  it('a rejected review: exit 7 and so the ping; the metrics say delivered (exit code 0) and the review rejected', async () => {
    const box = await sandbox({ review: 'reject', reviewAfter: 0 });
    const source = newSource(box);
    const ping = await pingServer();
    const file = path.join(tempDir(), 'bds.prom');
    const folder = makeFolder({ records: 5 });
    const deliver = (...args: string[]) =>
      run(['deliver', folder.dir, '--period', '2024-07', '--source', source, '--metrics-file', file, ...args], {
        env: sandboxEnv(box),
      });
    const res = await deliver('--wait', '--json', '--ping-url', ping.url);
    expect(res.code).toBe(7);
    expect(res.json().review.exit_code).toBe(7);
    expect(metricsOf(file)['2024-07 records']).toMatchObject({
      exitCode: 0,
      lastSuccess: expect.any(Number),
      bytes: folder.uploaded.length,
      records: 5,
      review: 'rejected',
    });
    expect(readFileSync(file, 'utf8')).toContain(
      `# TYPE bds_delivery_review_state gauge\n${reviewSample(source, 'rejected')}`,
    );
    expect(paths(ping)).toEqual(['GET /<uuid>/start', 'POST /<uuid>/7']);
    // The month delivered again (a rejected batch does not block it), without a wait: no verdict is known yet.
    expect((await deliver()).code).toBe(0);
    expect(box.store.batches()).toHaveLength(2);
    expect(readFileSync(file, 'utf8')).not.toContain('bds_delivery_review_state{');
  });

  it.skipIf(!existsSync('/dev/full'))(
    'a result that cannot be written (a full disk): the end ping says exit 2, with the reason in its body',
    async () => {
      const box = await sandbox();
      const ping = await pingServer();
      const full = openSync('/dev/full', 'w');
      try {
        const res = await spawnCli(['deliver', makeFolder().dir, '--period', '2024-05', '--ping-url', ping.url], {
          env: sandboxEnv(box, { BDS_SOURCE_ID: newSource(box) }),
          stdoutFd: full,
        });
        expect(res.code).toBe(2);
        expect(res.stderr).toContain(
          'bds: cannot write the result to stdout: ENOSPC: no space left on device, write\n',
        );
        expect(paths(ping)).toEqual(['GET /<uuid>/start', 'POST /<uuid>/2']);
        expect(endBody(ping)).toContain('bds: cannot write the result to stdout: ENOSPC');
      } finally {
        closeSync(full);
      }
    },
  );
});
