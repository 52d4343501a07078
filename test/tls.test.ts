// TLS failures: one line that a person can read, and a hint at the likely cause, instead of OpenSSL's
// two-line message with its source file names.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT, run, sandbox, sandboxEnv } from './helpers.js';

const servers: https.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

function bdsLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line !== '');
}

describe('TLS', () => {
  it('https:// against an http:// server: exit 5 at once, one line and a hint', async () => {
    const box = await sandbox();
    const sleeps: number[] = [];
    const res = await run(['whoami'], {
      env: sandboxEnv(box, { BDS_BASE_URL: box.baseUrl.replace('http://', 'https://') }),
      sleeps,
    });
    expect(res.code).toBe(5);
    expect(bdsLines(res.stderr)).toEqual([
      expect.stringMatching(
        /^bds: GET https:\/\/127\.0\.0\.1:\d+\/api\/v1\/me failed: the server did not answer in TLS \(ERR_SSL_WRONG_VERSION_NUMBER\)$/,
      ),
      'hint: is this an https:// URL for an http:// server? (the sandbox speaks http://)',
    ]);
    // Not retried: the next attempt would fail the same way.
    expect(sleeps).toEqual([]);
  });

  it('a certificate that no trusted authority signed: exit 5, one line, and a hint at NODE_EXTRA_CA_CERTS', async () => {
    const tls = path.join(ROOT, 'test', 'fixtures', 'tls');
    const server = https.createServer(
      { key: readFileSync(path.join(tls, 'bds-test.key')), cert: readFileSync(path.join(tls, 'bds-test.crt')) },
      (_req, res) => res.end('{}'),
    );
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const baseUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const res = await run(['whoami'], { env: { BDS_BASE_URL: baseUrl, BDS_API_KEY: 'svc_test_0123456789' } });
    expect(res.code).toBe(5);
    const lines = bdsLines(res.stderr);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/failed: self-signed certificate \(DEPTH_ZERO_SELF_SIGNED_CERT\)$/);
    expect(lines[1]).toMatch(/^hint: .*NODE_EXTRA_CA_CERTS/);
  });
});
