// Proxies: a real forward proxy on 127.0.0.1 that counts what passes through it. undici's EnvHttpProxyAgent
// tunnels even http:// targets with CONNECT; the proxy also forwards absolute-URI requests, so that the test
// shows which of the two bds really uses.

import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { makeFolder, newSource, run, sandbox, sandboxEnv } from './helpers.js';

type ProxyMode = 'forward' | 'refuse-407' | 'fail-502';

interface TestProxy {
  url: string;
  /** host:port of every CONNECT tunnel opened, in order. */
  tunnels: string[];
  /** Absolute URIs of every plain forwarded request. */
  forwarded: string[];
  /** Proxy-Authorization of every request or CONNECT, '' when absent. */
  authorizations: string[];
}

const proxies: http.Server[] = [];
afterEach(async () => {
  for (const server of proxies.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function startProxy(mode: ProxyMode): Promise<TestProxy> {
  const seen: TestProxy = { url: '', tunnels: [], forwarded: [], authorizations: [] };
  const refusal = (): { status: number; headers: Record<string, string> } =>
    mode === 'refuse-407'
      ? { status: 407, headers: { 'proxy-authenticate': 'Basic realm="corp"' } }
      : { status: 502, headers: {} };
  const server = http.createServer((req, res) => {
    seen.authorizations.push(req.headers['proxy-authorization'] ?? '');
    seen.forwarded.push(req.url ?? '');
    if (mode !== 'forward') {
      const { status, headers } = refusal();
      res.writeHead(status, { ...headers, 'content-type': 'text/html' }).end('<html><title>Proxy says no</title></html>');
      return;
    }
    const target = new URL(req.url ?? '');
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const upstream = http.request(target, { method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    seen.authorizations.push(req.headers['proxy-authorization'] ?? '');
    seen.tunnels.push(req.url ?? '');
    client.on('error', () => client.destroy());
    if (mode !== 'forward') {
      const { status, headers } = refusal();
      const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
      client.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n${lines.join('')}content-length: 0\r\n\r\n`);
      return;
    }
    const [host, port] = (req.url ?? '').split(':');
    const upstream = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  proxies.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  seen.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return seen;
}

const withCredentials = (url: string): string => url.replace('http://', 'http://proxyuser:s3cr3t-pass@');

describe('proxies', () => {
  it('sends the API requests and the upload through HTTPS_PROXY/HTTP_PROXY', async () => {
    const box = await sandbox();
    const proxy = await startProxy('forward');
    const folder = makeFolder();
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', newSource(box)], {
      env: sandboxEnv(box, { HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url }),
    });
    expect(res.stderr).not.toContain('bds:');
    expect(res.code).toBe(0);
    const api = new URL(box.baseUrl).host;
    const storage = new URL(box.storageUrl).host;
    // EnvHttpProxyAgent tunnels http:// targets too; nothing went around the proxy.
    expect(proxy.tunnels).toContain(api);
    expect(proxy.tunnels).toContain(storage);
    expect(proxy.forwarded).toEqual([]);
    expect(box.store.batches()[0]!.status).toBe('received');
  });

  it('honours lower-case http_proxy, and NO_PROXY sends a host direct', async () => {
    const box = await sandbox();
    const proxy = await startProxy('forward');
    const folder = makeFolder();
    // The API by the name localhost (excluded by NO_PROXY); the upload URL the sandbox signs is 127.0.0.1.
    const baseUrl = box.baseUrl.replace('127.0.0.1', 'localhost');
    expect(new URL(box.storageUrl).hostname).toBe('127.0.0.1');
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', newSource(box)], {
      env: sandboxEnv(box, { BDS_BASE_URL: baseUrl, http_proxy: proxy.url, NO_PROXY: 'localhost' }),
    });
    expect(res.stderr).not.toContain('bds:');
    expect(res.code).toBe(0);
    expect(proxy.tunnels).toEqual([new URL(box.storageUrl).host]);
    expect(box.requests.filter((r) => r.server === 'api').length).toBeGreaterThanOrEqual(3);
  });

  it('reads proxy variables from its own environment only, never from process.env behind its back', async () => {
    const box = await sandbox();
    const proxy = await startProxy('forward');
    // undici's EnvHttpProxyAgent falls back to process.env for a setting it is not given.
    const saved = process.env.HTTP_PROXY;
    process.env.HTTP_PROXY = proxy.url;
    try {
      const res = await run(['whoami'], { env: sandboxEnv(box) });
      expect(res.code).toBe(0);
    } finally {
      if (saved === undefined) delete process.env.HTTP_PROXY;
      else process.env.HTTP_PROXY = saved;
    }
    expect(proxy.tunnels).toEqual([]);
  });

  it('a proxy asking for credentials (407) ends with exit 5, naming the proxy without its credentials', async () => {
    const box = await sandbox();
    const proxy = await startProxy('refuse-407');
    const proxyUrl = withCredentials(proxy.url);
    const res = await run(['whoami', '--verbose'], { env: sandboxEnv(box, { HTTPS_PROXY: proxyUrl, HTTP_PROXY: proxyUrl }) });
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
    expect(proxy.tunnels.length).toBe(1);
    expect(box.requests.length).toBe(0);

    const without = await run(['whoami'], { env: sandboxEnv(box, { HTTP_PROXY: proxy.url }) });
    expect(without.code).toBe(5);
    expect(without.stderr).toContain(`the proxy ${proxy.url}/ answered 407`);
    expect(without.stderr).toContain('hint: put the proxy user and password in HTTPS_PROXY/HTTP_PROXY');
  });

  it('a failing proxy (502) is retried, then ends with exit 5 naming the proxy', async () => {
    const box = await sandbox();
    const proxy = await startProxy('fail-502');
    const proxyUrl = withCredentials(proxy.url);
    const folder = makeFolder();
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', newSource(box), '--json'], {
      env: sandboxEnv(box, { HTTP_PROXY: proxyUrl }),
    });
    expect(res.code).toBe(5);
    expect(res.stderr).toContain(`the proxy http://REDACTED@127.0.0.1:${new URL(proxy.url).port}/`);
    expect(res.stderr).toMatch(/502/);
    expect(res.stderr + res.stdout).not.toContain('s3cr3t-pass');
    expect(res.json().error.exit_code).toBe(5);
    expect(proxy.tunnels.length).toBeGreaterThan(1);
    expect(box.requests.length).toBe(0);
  });
});
