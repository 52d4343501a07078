// Faults between bds and the service, injected into the sandbox: every run ends either with exactly one
// `received` batch holding the file's bytes and exit 0, or with a non-zero exit and a message saying what failed.
import { createServer } from 'node:net';
import {
  appendFileSync,
  closeSync,
  openSync,
  readdirSync,
  readFileSync,
  truncateSync,
  utimesSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { count, deliverTo, expectOneReceived, makeFolder, run, sandbox, statuses, tempDir, until } from './helpers.js';

const PERIOD = '2024-05';

/** The production retry policy (FAST_HTTP shortens it), so that the sleeps show the real delays. */
const PRODUCTION_DELAYS = { baseDelayMs: 1_000, maxDelayMs: 20_000, maxRetryAfterMs: 60_000, maxTotalMs: 120_000 };

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const STORAGE_DENIED =
  '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Request has expired</Message>' +
  '<RequestId>req_1</RequestId></Error>';

describe('1. retries', () => {
  it.each([408, 429, 500, 502, 503, 504])('retries %i and delivers once', async (status) => {
    const box = await sandbox();
    const folder = makeFolder();
    box.faults.add({ route: 'create', status, times: 2 });
    const sleeps: number[] = [];
    const res = await deliverTo(box, folder, { sleeps });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(`→ ${status}`);
    expect(res.stderr).toMatch(/retrying in .* \(attempt 2 of 6\)/);
    expect(sleeps).toHaveLength(2);
    expect(count(box, 'create')).toBe(3);
    expect(box.store.batches()).toHaveLength(1);
    expectOneReceived(box, folder);
  });

  it('uses exponential backoff with jitter, and a dead server ends in exit 5 within the budget', async () => {
    const port = await refusedPort();
    const folder = makeFolder();
    const sleeps: number[] = [];
    const res = await run(['deliver', folder.dir, '--period', PERIOD, '--source', 'src_x'], {
      env: { BDS_BASE_URL: `http://127.0.0.1:${port}`, BDS_API_KEY: 'svc_test_deadserver0000' },
      sleeps,
      http: PRODUCTION_DELAYS,
    });
    expect(res.code).toBe(5);
    expect(res.stderr).toMatch(/bds: GET .* failed: connection refused \(ECONNREFUSED\) \(gave up after 6 attempts/);
    // random() is 0.5 in tests: 3/4 of 1, 2, 4, 8, 16 s.
    expect(sleeps).toEqual([750, 1500, 3000, 6000, 12000]);
    expect(sum(sleeps)).toBeLessThanOrEqual(60_000);
  });

  it('honours Retry-After in seconds and as an HTTP date, capped', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    box.faults.add({ route: 'list', status: 429, retryAfter: '3' });
    box.faults.add({ route: 'create', status: 503, retryAfter: new Date(Date.now() + 30_000).toUTCString() });
    box.faults.add({ route: 'complete', status: 503, retryAfter: '86400' });
    const sleeps: number[] = [];
    const res = await deliverTo(box, folder, { sleeps, http: PRODUCTION_DELAYS });
    expect(res.code).toBe(0);
    expect(sleeps[0]).toBe(3000);
    // An HTTP date: what is left until then (whole seconds on the wire).
    expect(sleeps[1]).toBeGreaterThan(25_000);
    expect(sleeps[1]).toBeLessThanOrEqual(30_000);
    expect(sleeps[2]).toBe(60_000);
    expectOneReceived(box, folder);
  });

  it('stops retrying once the total time would pass maxTotalMs', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    box.faults.add({ route: 'list', status: 503, retryAfter: '3600', times: 10 });
    // A clock that moves with every requested sleep, as the real one would.
    let clock = Date.now();
    const sleeps: number[] = [];
    sleeps.push = (...ms: number[]) => {
      clock += sum(ms);
      return Array.prototype.push.apply(sleeps, ms);
    };
    const res = await deliverTo(box, folder, { sleeps, http: PRODUCTION_DELAYS, now: () => new Date(clock) });
    expect(res.code).toBe(5);
    expect([...sleeps]).toEqual([60_000, 60_000]);
    expect(res.stderr).toMatch(/gave up after 3 attempts in 120 s/);
    expect(box.store.batches()).toHaveLength(0);
  });

  it.each([
    [400, 4],
    [404, 4],
    [409, 4],
    [422, 4],
    [401, 3],
  ])('never retries %i (exit %i)', async (status, code) => {
    const box = await sandbox();
    const folder = makeFolder();
    box.faults.add({ route: 'create', status });
    const sleeps: number[] = [];
    const res = await deliverTo(box, folder, { sleeps });
    expect(res.code).toBe(code);
    expect(res.stderr).toContain(`POST ${box.baseUrl}/api/v1/batches → ${status}: injected fault`);
    expect(sleeps).toEqual([]);
    expect(count(box, 'create')).toBe(1);
    expect(box.store.batches()).toHaveLength(0);
  });
});

describe('2. timeouts', () => {
  it('gives up on a server that accepts and never answers', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    box.faults.add({ route: 'list', hang: true, times: 10 });
    const res = await deliverTo(box, folder, { http: { headersTimeoutMs: 200, maxAttempts: 3 } });
    expect(res.code).toBe(5);
    expect(res.stderr).toMatch(/timed out waiting for the response .*gave up after 3 attempts/);
    expect(count(box, 'list')).toBe(3);
  });

  it.each([
    ['an answer whose headers never come', 'complete'],
    ['an upload the storage host never answers', 'upload'],
  ] as const)('retries %s, then delivers', async (_what, route) => {
    const box = await sandbox();
    const folder = makeFolder();
    box.faults.add({ route, hang: true });
    const res = await deliverTo(box, folder);
    expect(res.code).toBe(0);
    expect(count(box, route)).toBe(2);
    expectOneReceived(box, folder);
  });

  it('retries an answer whose body stalls, then delivers', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    box.faults.add({ route: 'list', stallAfterBytes: 5 });
    box.faults.add({ route: 'create', stallAfterBytes: 10 });
    const res = await deliverTo(box, folder);
    expect(res.stderr).toContain('timed out reading the response');
    expect(res.code).toBe(0);
    // The stalled create was applied; the retry carried its idempotency key and got the same batch.
    expect(box.store.batches()).toHaveLength(1);
    expectOneReceived(box, folder);
  });

  it('ends an upload that hangs every time with exit 5', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    box.faults.add({ route: 'upload', hang: true, times: 10 });
    const res = await deliverTo(box, folder, {
      http: { idleTimeoutMs: 200, headersTimeoutMs: 200, uploadMaxAttempts: 2 },
    });
    expect(res.code).toBe(5);
    expect(res.stderr).toMatch(/bds: PUT .* failed: .*gave up after 2 attempts/);
    expect(box.store.batches().map((b) => b.status)).toEqual(['awaiting_upload']);
  });
});

describe('3. upload', () => {
  it('re-sends the file from its start after a reset mid-body', async () => {
    const box = await sandbox();
    const folder = makeFolder({ records: 3000 });
    expect(folder.uploaded.length).toBeGreaterThan(4096);
    box.faults.add({ route: 'upload', resetAfterBytes: 2048 });
    const res = await deliverTo(box, folder);
    expect(res.code).toBe(0);
    const uploads = box.requests.filter((r) => r.route === 'upload');
    expect(uploads).toHaveLength(2);
    expect(uploads[1]!.bodyBytes).toBe(folder.uploaded.length);
    expectOneReceived(box, folder);
  });

  it('retries a 5xx from the storage host', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    box.faults.add({ route: 'upload', status: 503, body: '<html><title>Service Unavailable</title></html>', times: 2 });
    const res = await deliverTo(box, folder);
    expect(res.code).toBe(0);
    expect(count(box, 'upload')).toBe(3);
    expectOneReceived(box, folder);
  });

  it('creates one fresh batch when the storage host refuses the signed URL', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    box.faults.add({ route: 'upload', status: 403, body: STORAGE_DENIED, contentType: 'application/xml' });
    const sleeps: number[] = [];
    const res = await deliverTo(box, folder, { sleeps });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('AccessDenied: Request has expired');
    expect(sleeps).toEqual([]);
    expect(count(box, 'create')).toBe(2);
    expect(statuses(box)).toEqual(['awaiting_upload', 'received']);
    expectOneReceived(box, folder);
  });

  it('stops with exit 4 and the storage message when the fresh URL is refused as well', async () => {
    // Every signed URL is expired the moment it is made.
    const box = await sandbox({ uploadTtlSeconds: -60 });
    const folder = makeFolder();
    const res = await deliverTo(box, folder);
    expect(res.code).toBe(4);
    expect(res.stderr).toMatch(
      /bds: PUT http:\/\/127\.0\.0\.1:\d+\/objects\/bat_\w+\?expires=\d+&signature=REDACTED → 403: AccessDenied: Request has expired/,
    );
    expect(res.stderr).not.toContain('<Error>');
    expect(res.stderr).not.toMatch(/signature=[0-9a-f]{16}/);
    expect(res.stderr).not.toMatch(/Z uploaded /);
    expect(count(box, 'create')).toBe(2);
    expect(count(box, 'upload')).toBe(2);
    expect(box.store.batches().filter((b) => b.status === 'received')).toHaveLength(0);
  });
});

describe('4. lost responses', () => {
  it('a create whose answer is lost is repeated with the same Idempotency-Key: one batch', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    box.faults.add({ route: 'create', loseResponse: true });
    const res = await deliverTo(box, folder);
    expect(res.code).toBe(0);
    const keys = box.requests.filter((r) => r.route === 'create').map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(box.store.batches()).toHaveLength(1);
    expectOneReceived(box, folder);
  });

  it('without a server honouring the key, a lost create leaves one unused batch, never a second received', async () => {
    const box = await sandbox({ honourIdempotencyKey: false });
    const folder = makeFolder();
    box.faults.add({ route: 'create', resetAfterBytes: 0 });
    const res = await deliverTo(box, folder);
    expect(res.code).toBe(0);
    expect(statuses(box)).toEqual(['awaiting_upload', 'received']);
    expectOneReceived(box, folder);
  });

  it('a complete whose answer is lost is confirmed with the list and reported as success', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    box.faults.add({ route: 'complete', loseResponse: true });
    const res = await deliverTo(box, folder, { args: ['--json'] });
    expect(res.code).toBe(0);
    expect(res.json()).toMatchObject({ batch: { status: 'received' }, skipped: false });
    expect(count(box, 'complete')).toBe(2);
    expect(box.requests.filter((r) => r.route === 'complete').map((r) => r.status)).toEqual([0, 409]);
    expect(box.store.batches()).toHaveLength(1);
    expectOneReceived(box, folder);
  });

  it('a repeated 200 to complete is success too', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    box.faults.add({ route: 'complete', resetAfterBytes: 0 });
    const res = await deliverTo(box, folder);
    expect(res.code).toBe(0);
    expect(box.store.batches()).toHaveLength(1);
    expectOneReceived(box, folder);
  });
});

describe('9. nonsense from the server', () => {
  it.each([
    {
      what: 'a 200 with an HTML page',
      fault: {
        route: 'list',
        status: 200,
        body: '<html><head><title>Login | Corp Proxy</title></head><body>…</body></html>',
      },
      said: 'with a body that is not a JSON object: an HTML page titled "Login | Corp Proxy"',
      batches: 0,
    },
    {
      what: 'a 502 HTML error page, every time,',
      fault: { route: 'list', status: 502, body: '<html><title>502 Bad Gateway</title></html>', times: 10 },
      said: '→ 502: an HTML page titled "502 Bad Gateway"',
      batches: 0,
    },
    {
      what: 'a 200 whose body is not JSON',
      fault: { route: 'complete', status: 200, body: 'OK', contentType: 'text/plain' },
      said: 'not a JSON object: "OK" (text/plain, 2 bytes)',
      batches: 1,
    },
    {
      what: 'a complete answer without a batch',
      fault: { route: 'complete', replaceJson: { ok: true } },
      said: 'lacks batch.id and batch.status',
      batches: 1,
    },
  ] as const)('$what is exit 5 with a summary, never the page itself', async ({ fault, said, batches }) => {
    const box = await sandbox();
    const folder = makeFolder();
    box.faults.add(fault);
    const res = await deliverTo(box, folder);
    expect(res.code).toBe(5);
    expect(res.stderr).toContain(said);
    expect(res.stderr).not.toContain('<html');
    expect(box.store.batches()).toHaveLength(batches);
  });

  it('a create answer without upload.url is exit 5, and the re-run finishes the same batch', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    box.faults.add({
      route: 'create',
      replaceJson: { batch: { id: 'bat_x', status: 'awaiting_upload' }, upload: { method: 'PUT' } },
    });
    const res = await deliverTo(box, folder, { home });
    expect(res.code).toBe(5);
    expect(res.stderr).toMatch(
      /bds: the API's answer to POST \/batches \(200\) makes no sense: it lacks a usable upload/,
    );
    const again = await deliverTo(box, folder, { home });
    expect(again.code).toBe(0);
    expect(box.store.batches()).toHaveLength(1);
    expectOneReceived(box, folder);
  });

  it('an upload URL with http:// to another machine is refused: the data never travels in clear', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const upload = { url: 'http://storage.example.com/objects/bat_x?signature=abc', method: 'PUT', headers: {} };
    box.faults.add({ route: 'create', replaceJson: { batch: { id: 'bat_x', status: 'awaiting_upload' }, upload } });
    const res = await deliverTo(box, folder);
    expect(res.code).toBe(5);
    expect(res.stderr).toMatch(
      /bds: the API's answer to POST \/batches \(200\) makes no sense: .*http:\/\/ only to this machine/,
    );
    expect(count(box, 'upload')).toBe(0);
  });
});

describe('10. the key', () => {
  it('a 3xx from the API is exit 4 naming where it pointed, never followed', async () => {
    const box = await sandbox();
    const elsewhere = await sandbox();
    const folder = makeFolder();
    box.faults.add({ route: 'list', redirect: `${elsewhere.baseUrl}/api/v1/batches?token=s3cr3t` });
    const res = await deliverTo(box, folder);
    expect(res.code).toBe(4);
    expect(res.stderr).toContain(
      `→ 307: redirected to ${elsewhere.baseUrl}/api/v1/batches?token=REDACTED; bds never follows redirects`,
    );
    expect(res.stderr).toContain(
      'hint: check the base URL (--base-url, BDS_BASE_URL or baseUrl): it should be the API address itself',
    );
    expect(res.stderr).not.toContain('s3cr3t');
    expect(elsewhere.requests).toHaveLength(0);
    expect(box.store.batches()).toHaveLength(0);
  });

  it("hides a token in the path of a URL it names (a redirect, a signed upload URL), not the API's ids", async () => {
    const box = await sandbox();
    const elsewhere = await sandbox();
    const folder = makeFolder();
    const hook = '3f9a1c7e5b2d4e6f8a0b1c2d3e4f5a6b';
    box.faults.add({ route: 'list', redirect: `${elsewhere.baseUrl}/hooks/T0A1B2C3/${hook}/batches` });
    const redirected = await deliverTo(box, folder);
    expect(redirected.code).toBe(4);
    expect(redirected.stderr).toContain(
      `→ 307: redirected to ${elsewhere.baseUrl}/hooks/T0A1B2C3/REDACTED/batches; bds never follows redirects`,
    );
    expect(redirected.stderr).not.toContain(hook);

    // A storage host whose upload URLs carry their token in the path: it knows no such object (404).
    const token = '5bf66975-d4c7-4bf5-bcc8-b8d8a82ea278';
    const upload = { url: `${box.storageUrl}/t/${token}/records-2024-05.jsonl.gz`, method: 'PUT', headers: {} };
    box.faults.add({
      route: 'create',
      replaceJson: { batch: { id: 'bat_6625990b0513ec2d', status: 'awaiting_upload' }, upload },
    });
    const res = await deliverTo(box, folder, { args: ['--verbose'] });
    expect(res.code).toBe(4);
    expect(res.stderr).toMatch(
      /bds: PUT http:\/\/127\.0\.0\.1:\d+\/t\/REDACTED\/records-2024-05\.jsonl\.gz → 404: NoSuchKey/,
    );
    expect(res.stderr).toMatch(/POST http:\/\/127\.0\.0\.1:\d+\/api\/v1\/batches → 200/);
    expect(res.stderr).not.toContain(token);
    expect(box.requests.find((r) => r.route === 'unknown' && r.server === 'storage')?.path).toContain(token);
  });

  it('never shows the key or the URL signature, under --verbose and on failures, nor writes them to the record', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    box.faults.add({ route: 'upload', status: 500 });
    box.faults.add({ route: 'complete', status: 401 });
    const res = await deliverTo(box, folder, { home, args: ['--verbose'] });
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(/PUT http:\/\/127\.0\.0\.1:\d+\/objects\/bat_\w+\?expires=\d+&signature=REDACTED → 500/);
    expect(res.stderr).toContain('at '); // the stack trace --verbose adds
    const signed = box.requests.find((r) => r.route === 'upload')!.path;
    const value = new URLSearchParams(signed.split('?')[1]).get('signature')!;
    expect(value).toMatch(/^[0-9a-f]{64}$/);
    const files = readdirSync(path.join(home, '.local', 'state', 'bds', 'deliveries'));
    const record = readFileSync(
      path.join(
        home,
        '.local',
        'state',
        'bds',
        'deliveries',
        files.find((f) => f.endsWith('.json'))!,
      ),
      'utf8',
    );
    for (const text of [res.stdout, res.stderr, record]) {
      expect(text).not.toContain(box.keys.test);
      expect(text).not.toContain(box.keys.test.slice('svc_test_'.length));
    }
    expect(res.stderr).not.toContain(value);
  });

  it('keeps the signed upload URL in the record while the delivery is unfinished, and drops it once completed', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const home = tempDir();
    const deliveries = path.join(home, '.local', 'state', 'bds', 'deliveries');
    const record = () =>
      readFileSync(
        path.join(
          deliveries,
          readdirSync(deliveries).find((f) => f.endsWith('.json'))!,
        ),
        'utf8',
      );
    box.faults.add({ route: 'complete', status: 401 });
    expect((await deliverTo(box, folder, { home })).code).toBe(3);
    const unfinished = JSON.parse(record());
    expect(unfinished.step).toBe('uploaded');
    expect(unfinished.upload.url).toMatch(/\?expires=\d+&signature=[0-9a-f]{64}$/);

    const res = await deliverTo(box, folder, { home });
    expect(res.code, res.stderr).toBe(0);
    const completed = JSON.parse(record());
    expect(completed).toMatchObject({ step: 'completed', status: 'received', batchId: unfinished.batchId });
    expect(completed).not.toHaveProperty('upload');
    expect(record()).not.toContain(new URL(unfinished.upload.url).searchParams.get('signature'));
  });
});

describe('11. integrity', () => {
  it('uploads once more when the stored bytes differ, then completes', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    box.faults.add({ route: 'upload', corruptUpload: true });
    const res = await deliverTo(box, folder);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(`the stored file does not match sha256 ${folder.sha256}; uploading again`);
    expect(count(box, 'upload')).toBe(2);
    expect(count(box, 'complete')).toBe(2);
    expect(box.store.batches()).toHaveLength(1);
    expectOneReceived(box, folder);
  });

  it('stops with exit 4 naming both checksums when the second upload differs too', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    box.faults.add({ route: 'upload', corruptUpload: true, times: 2 });
    const res = await deliverTo(box, folder);
    expect(res.code).toBe(4);
    const [batch] = box.store.batches();
    expect(batch!.status).toBe('awaiting_upload');
    const stored = box.store.uploadedSha256(batch!.id)!;
    expect(stored).not.toBe(folder.sha256);
    expect(res.stderr).toContain(folder.sha256);
    expect(res.stderr).toContain(stored);
    expect(res.stdout).toBe('');
  });

  it('stops before complete when the data file changes after the pre-flight', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    box.faults.add({ route: 'create', delayMs: 600 });
    const running = deliverTo(box, folder);
    await until(() => count(box, 'create') > 0, 'the create request');
    appendFileSync(folder.dataFile, 'more');
    const res = await running;
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/bds: .*records\.jsonl\.gz changed during the delivery/);
    expect(count(box, 'complete')).toBe(0);
    expect(box.store.batches().filter((b) => b.status === 'received')).toHaveLength(0);
  });

  it.each([
    ['shrinks', (file: string) => truncateSync(file, 1 << 20)],
    ['grows', (file: string) => appendFileSync(file, Buffer.alloc(1 << 20))],
  ])(
    'a data file that %s during the upload is exit 2 "changed during the delivery", not a network error',
    async (_, change) => {
      const box = await sandbox();
      // Larger than what the socket buffers hold, so that bds is still reading the file when it changes: stored
      // (gzip level 0), so that it is quick to make and to check.
      const line = JSON.stringify({ _object: 'orders', order_id: 'o', note: 'x'.repeat(1000) });
      const folder = makeFolder({ dataBytes: gzipSync(Buffer.from(`${line}\n`.repeat(32 << 10)), { level: 0 }) });
      // The storage host holds the upload before reading it; bds waits rather than calling it a stall.
      box.faults.add({ route: 'upload', delayMs: 1_000 });
      const running = deliverTo(box, folder, { http: { idleTimeoutMs: 10_000, headersTimeoutMs: 10_000 } });
      await until(() => count(box, 'upload') > 0, 'the upload request');
      change(folder.dataFile);
      const res = await running;
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toMatch(
        /^bds: .*records\.jsonl\.gz changed during the delivery \(its size or modification time\); nothing was confirmed$/m,
      );
      expect(res.stderr).not.toMatch(/content-length|run again later/i);
      expect(count(box, 'upload')).toBe(1);
      expect(count(box, 'complete')).toBe(0);
      expect(box.store.batches().map((b) => b.status)).toEqual(['awaiting_upload']);
    },
  );

  it('notices a rewrite in place that keeps the size and the modification time, by its change time', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    // A whole second, so that setting it back restores it exactly.
    const mtime = new Date('2024-06-01T00:00:00Z');
    utimesSync(folder.dataFile, mtime, mtime);
    box.faults.add({ route: 'create', delayMs: 600 });
    const running = deliverTo(box, folder);
    await until(() => count(box, 'create') > 0, 'the create request');
    const fd = openSync(folder.dataFile, 'r+');
    writeSync(fd, Buffer.from([folder.uploaded[20]! ^ 0xff]), 0, 1, 20);
    closeSync(fd);
    utimesSync(folder.dataFile, mtime, mtime);
    const res = await running;
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toContain(
      'changed during the delivery (its change time: it was rewritten in place); nothing was confirmed',
    );
    expect(count(box, 'upload') + count(box, 'complete')).toBe(0);
    expect(box.store.batches().map((b) => b.status)).toEqual(['awaiting_upload']);
  });

  it('notices a rewrite of the same size by its modification time', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    box.faults.add({ route: 'create', delayMs: 600 });
    const running = deliverTo(box, folder);
    await until(() => count(box, 'create') > 0, 'the create request');
    utimesSync(folder.dataFile, new Date(), new Date(Date.now() + 5_000));
    const res = await running;
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('changed during the delivery (its size or modification time); nothing was confirmed');
    expect(count(box, 'upload') + count(box, 'complete')).toBe(0);
  });
});
