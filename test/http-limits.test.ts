// What bds reads from an API that misbehaves on purpose or by accident: an answer is capped (4 MiB) and each
// attempt of a request has a deadline, so that neither a huge body nor one trickling a byte at a time can exhaust
// the memory or hold bds (and a delivery's lock) for ever.
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { listenUntilTestEnds, run } from './helpers.js';

const KEY = 'svc_test_0123456789abcdef';

/** A fake API on 127.0.0.1 whose every answer is `answer`'s; counts the requests. */
async function fakeApi(
  answer: (res: http.ServerResponse) => void,
): Promise<{ env: Record<string, string>; requests: () => number }> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    req.resume();
    answer(res);
  });
  const port = await listenUntilTestEnds(server);
  return { env: { BDS_BASE_URL: `http://127.0.0.1:${port}`, BDS_API_KEY: KEY }, requests: () => requests };
}

function errorLine(stderr: string): string {
  return stderr.split('\n').find((line) => line.startsWith('bds:')) ?? '';
}

/** Writes chunks of `size` bytes of a JSON string until `total`, as fast as the client takes them. */
function streamJson(res: http.ServerResponse, total: number, headers: http.OutgoingHttpHeaders = {}): void {
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let sent = 0;
  res.write('{"organization":{"name":"');
  const more = (): void => {
    while (sent < total && !res.destroyed) {
      sent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', more);
    }
    if (!res.destroyed) res.end('"},"key":{"id":"key_x","mode":"test"}}');
  };
  more();
}

describe('HTTP limits', () => {
  it('an answer larger than 4 MiB is exit 5 naming the request and the cap, read no further and not retried', async () => {
    const api = await fakeApi((res) => streamJson(res, 4 * 1024 * 1024 + 256 * 1024));
    const res = await run(['whoami'], { env: api.env });
    expect(res.code).toBe(5);
    expect(errorLine(res.stderr)).toMatch(
      /^bds: GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/me → 200 with an answer larger than 4 MiB, the most bds reads from the API$/,
    );
    expect(api.requests()).toBe(1);
  });

  it('an answer that declares 600 MB is refused before a byte of it is read', async () => {
    const api = await fakeApi((res) =>
      streamJson(res, 8 * 1024 * 1024, { 'content-length': String(600 * 1000 * 1000) }),
    );
    const res = await run(['whoami', '--json'], { env: api.env });
    expect(res.code).toBe(5);
    expect(res.json().error.message).toMatch(/→ 200 with an answer larger than 4 MiB/);
    expect(api.requests()).toBe(1);
  });

  it('an answer just under the cap is read as usual', async () => {
    const api = await fakeApi((res) => streamJson(res, 3 * 1024 * 1024));
    const res = await run(['whoami', '--json'], { env: api.env });
    expect(res.code).toBe(0);
    expect(res.json().organization.name).toMatch(/^x{300}…$/);
  });

  it('an answer trickling a byte at a time ends at the deadline with exit 5, whatever the idle timeout', async () => {
    const api = await fakeApi((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Never longer than the idle timeout (1 s in tests) between two bytes: only a deadline ends this.
      const timer = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(timer));
    });
    const started = Date.now();
    const res = await run(['whoami'], { env: api.env, http: { deadlineMs: 400, maxAttempts: 2 } });
    expect(res.code).toBe(5);
    expect(errorLine(res.stderr)).toMatch(
      /^bds: GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/me failed: no complete answer within 0\.4 s \(BDS_DEADLINE\) \(gave up after 2 attempts in \d+ s\)$/,
    );
    expect(api.requests()).toBe(2);
    // Two attempts of 0.4 s; loose, for a busy machine.
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('an error answer is summarised from its first 64 KiB, the rest left unread', async () => {
    const api = await fakeApi((res) => {
      res.writeHead(400, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('y'.repeat(64 * 1024)), 5);
      res.on('close', () => clearInterval(timer));
    });
    const res = await run(['whoami'], { env: api.env });
    expect(res.code).toBe(4);
    expect(errorLine(res.stderr)).toMatch(/→ 400: "y+…" \(text\/plain, 65536 bytes\)$/);
  });
});
