// Proxies: a real forward proxy on 127.0.0.1 that counts what passes through it. Loopback always goes direct,
// so the proxied API has a name only the test proxy knows, https://api.bds.test (bds never resolves a proxied
// host itself): the proxy pipes its CONNECT tunnels to TLS fronts of the sandbox, whose upload URLs name
// https://storage.bds.test. The certificate is test/fixtures/tls (see its README); a spawned CLI trusts it
// through NODE_EXTRA_CA_CERTS. A refused CONNECT needs no TLS, so those cases run in process.

import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { describe, expect, it, vi } from 'vitest';
import { parseProxyUrl } from '../src/core/api/proxy.js';
import { hostPort } from '../src/core/api/url-rules.js';
import type { Sandbox } from '../src/sandbox/emulator.js';
import { listenUntilTestEnds, makeFolder, newSource, ROOT, run, sandbox, sandboxEnv, spawnCli } from './helpers.js';

const API_URL = 'https://api.bds.test';
const STORAGE_URL = 'https://storage.bds.test';
const API_TUNNEL = 'api.bds.test:443';
const STORAGE_TUNNEL = 'storage.bds.test:443';
const TLS_DIR = path.join(ROOT, 'test', 'fixtures', 'tls');
const CERT = path.join(TLS_DIR, 'bds-test.crt');

type ProxyMode = 'forward' | 'refuse-407' | 'fail-502' | 'drop';

interface TestProxy {
  url: string;
  /** host:port of every CONNECT tunnel asked for, in order. */
  tunnels: string[];
  /** Absolute URIs of every plain (not tunnelled) request. */
  forwarded: string[];
  /** Proxy-Authorization of every request or CONNECT, '' when absent. */
  authorizations: string[];
}

/**
 * A forward proxy. 'forward' pipes a CONNECT to one of `routes` ("host:port" → a local port) there, and
 * answers 502 to any other; the refusing modes answer every CONNECT with 407 or 502. A plain request (an
 * absolute URI, which bds should never send) is recorded and answered 502.
 */
async function startProxy(mode: ProxyMode, routes: Record<string, number> = {}): Promise<TestProxy> {
  const seen: TestProxy = { url: '', tunnels: [], forwarded: [], authorizations: [] };
  const server = http.createServer((req, res) => {
    seen.authorizations.push(req.headers['proxy-authorization'] ?? '');
    seen.forwarded.push(req.url ?? '');
    res.writeHead(502, { 'content-type': 'text/html' }).end('<html><title>Proxy says no</title></html>');
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    seen.authorizations.push(req.headers['proxy-authorization'] ?? '');
    seen.tunnels.push(req.url ?? '');
    client.on('error', () => client.destroy());
    const port = routes[req.url ?? ''];
    if (mode === 'drop') {
      client.destroy();
      return;
    }
    if (mode !== 'forward' || port === undefined) {
      const status = mode === 'refuse-407' ? 407 : 502;
      const authenticate = status === 407 ? 'proxy-authenticate: Basic realm="corp"\r\n' : '';
      client.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n${authenticate}content-length: 0\r\n\r\n`);
      return;
    }
    const upstream = net.connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  seen.url = `http://127.0.0.1:${await listenUntilTestEnds(server)}`;
  return seen;
}

/** TLS for *.bds.test in front of a plain local port: what the proxy's tunnel reaches. */
async function startTlsFront(target: string): Promise<number> {
  const options = { key: readFileSync(path.join(TLS_DIR, 'bds-test.key')), cert: readFileSync(CERT) };
  const server = tls.createServer(options, (socket) => {
    const upstream = net.connect(Number(new URL(target).port), '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  return listenUntilTestEnds(server);
}

/** The sandbox as https://api.bds.test and https://storage.bds.test, reachable only through the proxy. */
async function sandboxBehindProxy(): Promise<{ box: Sandbox; proxy: TestProxy }> {
  const box = await sandbox({ publicUrls: { api: API_URL, storage: STORAGE_URL } });
  const routes = {
    [API_TUNNEL]: await startTlsFront(box.baseUrl),
    [STORAGE_TUNNEL]: await startTlsFront(box.storageUrl),
  };
  return { box, proxy: await startProxy('forward', routes) };
}

/** A spawned CLI's environment for the proxied API: its key, the base URL and trust in the test certificate. */
function proxiedEnv(box: Sandbox, extra: Record<string, string>): Record<string, string> {
  return { BDS_BASE_URL: API_URL, BDS_API_KEY: box.keys.test, NODE_EXTRA_CA_CERTS: CERT, ...extra };
}

const withCredentials = (url: string): string => url.replace('http://', 'http://proxyuser:s3cr3t-pass@');

describe('proxies', () => {
  it('sends the API requests and the upload through HTTPS_PROXY/HTTP_PROXY', async () => {
    const { box, proxy } = await sandboxBehindProxy();
    const folder = makeFolder();
    const res = await spawnCli(['deliver', folder.dir, '--period', '2024-05', '--source', newSource(box)], {
      env: proxiedEnv(box, { HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url }),
    });
    expect(res.stderr).not.toContain('bds:');
    expect(res.code).toBe(0);
    // Tunnels only, to the API and to the storage host; nothing went around the proxy.
    expect(proxy.tunnels).toContain(API_TUNNEL);
    expect(proxy.tunnels).toContain(STORAGE_TUNNEL);
    expect(new Set(proxy.tunnels)).toEqual(new Set([API_TUNNEL, STORAGE_TUNNEL]));
    expect(proxy.forwarded).toEqual([]);
    expect(box.store.batches()[0]!.status).toBe('received');
    expect(box.requests.filter((r) => r.server === 'storage' && r.route === 'upload')).toHaveLength(1);
  });

  it.each([
    ['https_proxy', 'HTTPS_PROXY'],
    ['http_proxy', 'HTTP_PROXY'],
  ])('honours lower-case %s over %s', async (lower, upper) => {
    const { box, proxy } = await sandboxBehindProxy();
    const ignored = await startProxy('refuse-407');
    const res = await spawnCli(['whoami'], { env: proxiedEnv(box, { [lower]: proxy.url, [upper]: ignored.url }) });
    expect(res.stderr).not.toContain('bds:');
    expect(res.code).toBe(0);
    expect(proxy.tunnels).toEqual([API_TUNNEL]);
    expect(ignored.tunnels).toEqual([]);
  });

  it('NO_PROXY sends a host direct', async () => {
    const proxy = await startProxy('forward');
    // Direct, bds looks the name up itself: only the proxy knows it, so "no such host" shows the way it went.
    const res = await run(['whoami'], {
      env: {
        BDS_BASE_URL: API_URL,
        BDS_API_KEY: 'svc_test_0123456789',
        HTTPS_PROXY: proxy.url,
        NO_PROXY: 'api.bds.test',
      },
    });
    expect(res.code).toBe(5);
    expect(res.stderr).toMatch(
      /^bds: GET https:\/\/api\.bds\.test\/api\/v1\/me failed: (no such host|name lookup failed)/m,
    );
    expect(proxy.tunnels).toEqual([]);
    expect(proxy.forwarded).toEqual([]);
  });

  it('reads proxy variables from its own environment only, never from process.env behind its back', async () => {
    const proxy = await startProxy('forward');
    // undici's EnvHttpProxyAgent falls back to process.env for a setting it is not given.
    const names = ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy'];
    const saved = names.map((name) => process.env[name]);
    for (const name of names) process.env[name] = proxy.url;
    try {
      const res = await run(['whoami'], { env: { BDS_BASE_URL: API_URL, BDS_API_KEY: 'svc_test_0123456789' } });
      expect(res.code).toBe(5);
      expect(res.stderr).toMatch(/no such host|name lookup failed/);
    } finally {
      names.forEach((name, i) => {
        if (saved[i] === undefined) delete process.env[name];
        else process.env[name] = saved[i];
      });
    }
    expect(proxy.tunnels).toEqual([]);
  });

  it('a proxy asking for credentials (407) ends with exit 5, naming the proxy without its credentials', async () => {
    const proxy = await startProxy('refuse-407');
    const proxyUrl = withCredentials(proxy.url);
    const env = { BDS_BASE_URL: API_URL, BDS_API_KEY: 'svc_test_0123456789' };
    const res = await run(['whoami', '--verbose'], { env: { ...env, HTTPS_PROXY: proxyUrl, HTTP_PROXY: proxyUrl } });
    expect(res.code).toBe(5);
    expect(res.stderr).toContain(`the proxy http://REDACTED@127.0.0.1:${new URL(proxy.url).port}/`);
    expect(res.stderr).toMatch(/407/);
    expect(res.stderr).toMatch(/hint: .*proxy/);
    // The credentials went to the proxy, and nowhere else.
    expect(proxy.authorizations[0]).toBe(`Basic ${Buffer.from('proxyuser:s3cr3t-pass').toString('base64')}`);
    for (const secret of ['s3cr3t-pass', 'proxyuser', proxy.authorizations[0]!.slice(6)]) {
      expect(res.stderr).not.toContain(secret);
      expect(res.stdout).not.toContain(secret);
    }
    // Not retried: another attempt would be refused the same way.
    expect(proxy.tunnels).toEqual([API_TUNNEL]);

    const without = await run(['whoami'], { env: { ...env, HTTP_PROXY: proxy.url } });
    expect(without.code).toBe(5);
    expect(without.stderr).toContain(`the proxy ${proxy.url}/ (HTTP_PROXY) answered 407`);
    expect(without.stderr).toContain('hint: put the proxy user and password in HTTP_PROXY');
  });

  it('a failing proxy (502) is retried, then ends with exit 5 naming the proxy', async () => {
    const proxy = await startProxy('fail-502');
    const proxyUrl = withCredentials(proxy.url);
    const folder = makeFolder();
    const res = await run(
      ['deliver', folder.dir, '--period', '2024-05', '--source', 'src_0123456789abcdef', '--json'],
      {
        env: { BDS_BASE_URL: API_URL, BDS_API_KEY: 'svc_test_0123456789', HTTP_PROXY: proxyUrl },
      },
    );
    expect(res.code).toBe(5);
    expect(res.stderr).toContain(`the proxy http://REDACTED@127.0.0.1:${new URL(proxy.url).port}/`);
    expect(res.stderr).toMatch(/502/);
    expect(res.stderr + res.stdout).not.toContain('s3cr3t-pass');
    expect(res.json().error.exit_code).toBe(5);
    expect(proxy.tunnels.length).toBeGreaterThan(1);
    expect(new Set(proxy.tunnels)).toEqual(new Set([API_TUNNEL]));
  });

  it('loopback always goes direct: with HTTPS_PROXY/HTTP_PROXY and no NO_PROXY, the sandbox works and the proxy sees nothing', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const proxy = await startProxy('refuse-407');
    const proxies = { HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url, https_proxy: proxy.url, http_proxy: proxy.url };
    for (const [host, period] of [
      ['127.0.0.1', '2024-05'],
      ['localhost', '2024-06'],
    ] as const) {
      const folder = makeFolder();
      const baseUrl = box.baseUrl.replace('127.0.0.1', host);
      const res = await run(['deliver', folder.dir, '--period', period, '--source', source], {
        env: sandboxEnv(box, { ...proxies, BDS_BASE_URL: baseUrl }),
      });
      expect(res.stderr).not.toContain('bds:');
      expect(res.code).toBe(0);
    }
    expect(box.store.batches().map((b) => b.status)).toEqual(['received', 'received']);
    // Neither the key (API requests) nor the file (upload to 127.0.0.1) went through the proxy.
    expect(proxy.tunnels).toEqual([]);
    expect(proxy.forwarded).toEqual([]);
    expect(proxy.authorizations).toEqual([]);
  });
  it('a proxy written without a scheme (host:port, as curl takes it) is http://', async () => {
    const { box, proxy } = await sandboxBehindProxy();
    const res = await spawnCli(['whoami'], { env: proxiedEnv(box, { https_proxy: proxy.url.replace('http://', '') }) });
    expect(res.stderr).not.toContain('bds:');
    expect(res.code).toBe(0);
    expect(proxy.tunnels).toEqual([API_TUNNEL]);
  });

  it.each([
    [
      'HTTPS_PROXY',
      'socks5://proxyuser:s3cr3t-pass@proxy.corp:1080',
      /socks5:\/\/REDACTED@proxy\.corp:1080 is a socks5 proxy/,
    ],
    ['https_proxy', 'http://proxyuser:s3cr3t-pass@[proxy.corp', /"http:\/\/REDACTED@\[proxy\.corp" is not a URL/],
    ['HTTP_PROXY', 'http://:3128', /"http:\/\/:3128" is not a URL/],
  ])(
    'an unusable %s is one line naming it, exit 2, and nothing is sent; a loopback API is not concerned',
    async (variable, value, why) => {
      const env = { BDS_BASE_URL: API_URL, BDS_API_KEY: 'svc_test_0123456789', [variable]: value };
      const res = await run(['whoami'], { env });
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(new RegExp(`^bds: ${variable} is not a proxy bds can use: `));
      expect(res.stderr).toMatch(why);
      expect(res.stderr).toMatch(new RegExp(`^hint: .*unset ${variable}$`, 'm'));
      expect(res.stderr.trimEnd().split('\n')).toHaveLength(2);
      expect(res.stderr).not.toContain('s3cr3t-pass');

      const box = await sandbox();
      const direct = await run(['whoami'], { env: sandboxEnv(box, { [variable]: value }) });
      expect(direct.stderr).not.toContain('bds:');
      expect(direct.code).toBe(0);
    },
  );

  it('a proxy that refuses connections is named with its address (not its password), not blamed on the API', async () => {
    const closed = net.createServer();
    const port = await listenUntilTestEnds(closed);
    await new Promise((resolve) => closed.close(resolve));
    const res = await run(['whoami'], {
      env: {
        BDS_BASE_URL: API_URL,
        BDS_API_KEY: 'svc_test_0123456789',
        HTTPS_PROXY: `http://proxyuser:s3cr3t-pass@127.0.0.1:${port}`,
      },
    });
    expect(res.code).toBe(5);
    expect(res.stderr).toMatch(
      new RegExp(
        `^bds: GET ${API_URL}/api/v1/me failed: the proxy http://REDACTED@127\\.0\\.0\\.1:${port}/ \\(HTTPS_PROXY\\) failed to open a tunnel: connection refused \\(ECONNREFUSED\\) \\(gave up after 6 attempts`,
        'm',
      ),
    );
    expect(res.stderr).toMatch(/^hint: is the proxy running, .*check HTTPS_PROXY/m);
    expect(res.stderr).not.toContain('s3cr3t-pass');
    expect(res.stderr).not.toContain('the service or the network is failing');
  });

  it('a proxy that drops the connection on CONNECT is named, and each attempt is one connection (no reconnect loop)', async () => {
    const proxy = await startProxy('drop');
    const res = await run(['whoami'], {
      env: { BDS_BASE_URL: API_URL, BDS_API_KEY: 'svc_test_0123456789', HTTPS_PROXY: proxy.url },
    });
    expect(res.code).toBe(5);
    expect(res.stderr).toMatch(
      new RegExp(
        `^bds: GET ${API_URL}/api/v1/me failed: the proxy ${proxy.url}/ \\(HTTPS_PROXY\\) failed to open a tunnel: `,
        'm',
      ),
    );
    expect(res.stderr).toMatch(/^hint: is the proxy running/m);
    // undici alone connects again at once, for ever, when a proxy closes on CONNECT.
    expect(proxy.tunnels).toHaveLength(6);
  });
});

describe('one reading of a proxy and of where a URL connects, for requests and doctor alike', () => {
  it('parseProxyUrl: a value without a scheme is http://; one that is no URL is undefined', () => {
    expect(parseProxyUrl('proxy.corp:3128')?.href).toBe('http://proxy.corp:3128/');
    expect(parseProxyUrl('https://user:pw@proxy.corp')?.href).toBe('https://user:pw@proxy.corp/');
    expect(parseProxyUrl('socks5://proxy.corp:1080')?.protocol).toBe('socks5:');
    expect(parseProxyUrl('http://:3128')).toBeUndefined();
  });

  it.each([
    ['http://[::1]:3128', { host: '::1', port: 3128 }],
    ['https://[2001:db8::1]/v1', { host: '2001:db8::1', port: 443 }],
    ['http://proxy.corp', { host: 'proxy.corp', port: 80 }],
    ['https://api.bds.test:8443', { host: 'api.bds.test', port: 8443 }],
  ])('hostPort(%s): the host without IPv6 brackets, the port or the scheme default', (url, expected) => {
    expect(hostPort(new URL(url))).toEqual(expected);
  });
});

describe('TCP keep-alive', () => {
  type KeepAliveCall = { enable: boolean | undefined; delay: number | undefined; connecting: boolean };

  /** Every setKeepAlive call made while `work` runs, with whether its socket was still connecting. */
  async function keepAliveCalls(work: () => Promise<void>): Promise<KeepAliveCall[]> {
    const calls: KeepAliveCall[] = [];
    const original = net.Socket.prototype.setKeepAlive;
    const spy = vi.spyOn(net.Socket.prototype, 'setKeepAlive').mockImplementation(function (
      this: net.Socket,
      enable,
      delay,
    ) {
      calls.push({ enable, delay, connecting: this.connecting });
      return original.call(this, enable, delay);
    });
    try {
      await work();
    } finally {
      spy.mockRestore();
    }
    return calls;
  }

  it('is turned on once a connection is made, not while it connects (Wine fails the connection then)', async () => {
    const box = await sandbox();
    const calls = await keepAliveCalls(async () => {
      const res = await run(['whoami'], { env: sandboxEnv(box) });
      expect(res.code).toBe(0);
    });
    expect(calls).toContainEqual({ enable: true, delay: 60_000, connecting: false });
    expect(calls.filter((call) => call.connecting)).toEqual([]);
  });

  it('is turned on once the connection to a proxy is made, not while it connects', async () => {
    const box = await sandbox();
    // A refused CONNECT needs no TLS, so it runs in process; the connection to the proxy is made all the same.
    const proxy = await startProxy('refuse-407');
    const calls = await keepAliveCalls(async () => {
      const res = await run(['whoami'], { env: proxiedEnv(box, { HTTPS_PROXY: proxy.url }) });
      expect(res.stderr).toContain('answered 407 Proxy Authentication Required');
    });
    expect(proxy.tunnels).toEqual([API_TUNNEL]);
    expect(calls).toContainEqual({ enable: true, delay: 60_000, connecting: false });
    expect(calls.filter((call) => call.connecting)).toEqual([]);
  });
});
