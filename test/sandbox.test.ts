import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SANDBOX_KEYS, startSandbox, type Sandbox, type EmulatorOptions } from '../src/sandbox/emulator.js';

const JUNE_2025 = Date.parse('2025-06-15T12:00:00Z');

const open: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((sandbox) => sandbox.close()));
});

async function sandboxWith(options: EmulatorOptions = {}): Promise<Sandbox> {
  const sandbox = await startSandbox({ now: () => JUNE_2025, ...options });
  open.push(sandbox);
  return sandbox;
}

interface CallOptions {
  key?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

async function call(sandbox: Sandbox, method: string, urlPath: string, options: CallOptions = {}) {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? sandbox.keys.live : options.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${sandbox.baseUrl}${urlPath}`, {
    method,
    headers,
    body,
    signal: options.signal,
    redirect: 'manual',
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

function createBody(sourceId: string, overrides: Record<string, unknown> = {}) {
  return {
    source_id: sourceId,
    product: 'records',
    period: '2025-05',
    record_count: 2,
    schema: { format: 'jsonl', objects: { patient: [{ name: 'id', role: 'key', kind: 'string' }] } },
    report: { tool: 'scrub/1.0', files: [], totals: { rows: 2 } },
    ...overrides,
  };
}

async function newSource(sandbox: Sandbox): Promise<string> {
  const created = await call(sandbox, 'POST', '/api/v1/sources', { body: { name: 'warehouse' } });
  expect(created.status).toBe(201);
  return created.json.source.id;
}

async function newBatch(sandbox: Sandbox, headers: Record<string, string> = {}) {
  const sourceId = await newSource(sandbox);
  const created = await call(sandbox, 'POST', '/api/v1/batches', { body: createBody(sourceId), headers });
  expect(created.status).toBe(201);
  return {
    sourceId,
    id: created.json.batch.id as string,
    upload: created.json.upload as { url: string; method: string; headers: Record<string, string> },
  };
}

function put(url: string, body: Buffer, headers: Record<string, string>) {
  return fetch(url, { method: 'PUT', headers, body });
}

const FILE = Buffer.from('{"id":1}\n{"id":2}\n');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('auth', () => {
  it('answers 401 without a key or with an unknown one, 403 for the revoked key, never echoing it', async () => {
    const sandbox = await sandboxWith();
    expect((await call(sandbox, 'GET', '/api/v1/me', { key: null })).status).toBe(401);
    const unknown = await call(sandbox, 'GET', '/api/v1/me', { key: 'svc_live_nope' });
    expect(unknown.status).toBe(401);
    expect(unknown.json.error.code).toBe('unauthorized');
    expect(unknown.text).not.toContain('svc_live_nope');
    const revoked = await call(sandbox, 'GET', '/api/v1/me', { key: sandbox.keys.revoked });
    expect(revoked.status).toBe(403);
    expect(revoked.json.error.code).toBe('forbidden');
    expect(revoked.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]+$/);
  });

  it('reports the key id and mode from /me', async () => {
    const sandbox = await sandboxWith();
    expect(sandbox.keys).toEqual(SANDBOX_KEYS);
    expect(sandbox.keys.live.startsWith('svc_live_')).toBe(true);
    const live = await call(sandbox, 'GET', '/api/v1/me');
    expect(live.status).toBe(200);
    expect(live.headers.get('content-type')).toBe('application/json');
    expect(live.json).toEqual({
      organization: { name: 'Sandbox Seller' },
      key: { id: 'key_live_sandbox', mode: 'live' },
    });
    const test = await call(sandbox, 'GET', '/api/v1/me', { key: sandbox.keys.test });
    expect(test.json.key).toEqual({ id: 'key_test_sandbox', mode: 'test' });
    expect(live.text + test.text).not.toContain('svc_');
  });
});

describe('routing and validation', () => {
  it('answers 404 for unknown paths and 405 for wrong methods', async () => {
    const sandbox = await sandboxWith();
    expect((await call(sandbox, 'GET', '/api/v1/nothing')).status).toBe(404);
    const wrong = await call(sandbox, 'DELETE', '/api/v1/batches');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST, GET');
    expect((await call(sandbox, 'PUT', '/api/v1/batches/bat_x/upload')).status).toBe(404); // storage origin by default
  });

  it('validates sources', async () => {
    const sandbox = await sandboxWith();
    expect((await call(sandbox, 'POST', '/api/v1/sources', { body: '{not json' })).status).toBe(400);
    expect((await call(sandbox, 'POST', '/api/v1/sources', { body: { name: '' } })).status).toBe(422);
    expect((await call(sandbox, 'POST', '/api/v1/sources', { body: { name: 'x'.repeat(201) } })).status).toBe(422);
    expect(
      (await call(sandbox, 'POST', '/api/v1/sources', { body: { name: 'a', description: 3 } })).json.error.code,
    ).toBe('invalid_request');
    const created = await call(sandbox, 'POST', '/api/v1/sources', { body: { name: 'a', description: 'b' } });
    expect(created.status).toBe(201);
    expect(created.json.source).toMatchObject({
      id: expect.stringMatching(/^src_[0-9a-f]+$/),
      name: 'a',
      description: 'b',
    });
    expect(sandbox.store.sources()).toHaveLength(1);
  });

  it('validates creates', async () => {
    const sandbox = await sandboxWith();
    const sourceId = await newSource(sandbox);
    const create = (body: unknown) => call(sandbox, 'POST', '/api/v1/batches', { body });
    expect((await create('[')).status).toBe(400);
    const unknownSource = await create(createBody('src_missing'));
    expect(unknownSource.status).toBe(404);
    expect(unknownSource.json.error).toMatchObject({
      code: 'source_not_found',
      message: expect.stringContaining('src_missing'),
    });
    const invalid: Record<string, unknown>[] = [
      { product: 'films' },
      { period: '2025-13' },
      { period: '2025-5' },
      { period: '2025-07' }, // after June 2025 by the sandbox clock
      { record_count: -1 },
      { record_count: 1.5 },
      { schema: [] },
      { report: { tool: 'x', files: {}, totals: {} } },
      { report: { files: [], totals: {} } },
      { report: { tool: 'x', files: [], totals: [] } },
    ];
    for (const override of invalid) {
      const answer = await create(createBody(sourceId, override));
      expect(answer.status, JSON.stringify(override)).toBe(422);
      expect(answer.json.error.code).toBe('invalid_request');
    }
    expect((await create(createBody(sourceId, { period: '2025-06', record_count: 0 }))).status).toBe(201);
    expect(sandbox.store.batches()).toHaveLength(1);
  });

  it('lists batches of a source in creation order', async () => {
    const sandbox = await sandboxWith();
    expect((await call(sandbox, 'GET', '/api/v1/batches')).status).toBe(400);
    expect((await call(sandbox, 'GET', '/api/v1/batches?source_id=src_nope')).json.error.code).toBe('source_not_found');
    const sourceId = await newSource(sandbox);
    const other = await newSource(sandbox);
    for (const period of ['2025-03', '2025-01'])
      await call(sandbox, 'POST', '/api/v1/batches', { body: createBody(sourceId, { period }) });
    await call(sandbox, 'POST', '/api/v1/batches', { body: createBody(other) });
    const listed = await call(sandbox, 'GET', `/api/v1/batches?source_id=${sourceId}`);
    expect(listed.status).toBe(200);
    expect(listed.json.batches.map((batch: { period: string }) => batch.period)).toEqual(['2025-03', '2025-01']);
    expect(Object.keys(listed.json.batches[0]).sort()).toEqual([
      'created_at',
      'id',
      'period',
      'product',
      'record_count',
      'status',
    ]);
    expect(listed.json.batches[0].created_at).toBe('2025-06-15T12:00:00.000Z');
  });
});

describe('delivery flow', () => {
  it('creates, uploads to the signed URL and completes, storing the bytes and what was sent', async () => {
    const sandbox = await sandboxWith();
    const { id, upload } = await newBatch(sandbox, {
      'x-service-client': 'bds-cli/0.1.0 host',
      'idempotency-key': 'k1',
    });
    expect(upload.method).toBe('PUT');
    expect(upload.headers).toEqual({ 'Content-Type': 'application/gzip', 'x-bds-batch-id': id });
    expect(upload.url).toMatch(
      new RegExp(`^${sandbox.storageUrl}/objects/${id}\\?expires=\\d+&signature=[0-9a-f]{64}$`),
    );

    const uploaded = await put(upload.url, FILE, upload.headers);
    expect(uploaded.status).toBe(200);
    expect(uploaded.headers.get('etag')).toBe(`"${sha256(FILE)}"`);
    expect(sandbox.store.uploadedBytes(id)).toEqual(FILE);
    expect(sandbox.store.uploadedSha256(id)).toBe(sha256(FILE));

    const early = sandbox.store.batch(id)!;
    expect(early).toMatchObject({
      status: 'awaiting_upload',
      client: 'bds-cli/0.1.0 host',
      key_id: 'key_live_sandbox',
      idempotency_key: 'k1',
    });
    expect(early.upload).toEqual({ bytes: FILE.length, sha256: sha256(FILE) });
    expect(early.upload_headers).toMatchObject({ 'content-type': 'application/gzip', 'x-bds-batch-id': id });
    expect(early.upload_headers).not.toHaveProperty('authorization');

    const completed = await call(sandbox, 'POST', `/api/v1/batches/${id}/complete`, { body: { sha256: sha256(FILE) } });
    expect(completed.status).toBe(200);
    expect(completed.json).toEqual({ batch: { id, status: 'received' } });
    expect(sandbox.store.batch(id)!.status).toBe('received');

    const again = await call(sandbox, 'POST', `/api/v1/batches/${id}/complete`, { body: { sha256: sha256(FILE) } });
    expect(again.status).toBe(409);
    expect(again.json.error).toEqual({ code: 'already_completed', message: `batch ${id} is already received` });
    expect((await put(upload.url, FILE, upload.headers)).status).toBe(409);

    expect(sandbox.requests.map((request) => `${request.server}:${request.route}:${request.status}`)).toEqual([
      'api:sources:201',
      'api:create:201',
      'storage:upload:200',
      'api:complete:200',
      'api:complete:409',
      'storage:upload:409',
    ]);
    expect(sandbox.requests[2]!.bodyBytes).toBe(FILE.length);
  });

  it('refuses complete without an upload, with a bad sha256, for an unknown batch, or with another checksum', async () => {
    const sandbox = await sandboxWith();
    const { id, upload } = await newBatch(sandbox);
    const complete = (batchId: string, sum: unknown) =>
      call(sandbox, 'POST', `/api/v1/batches/${batchId}/complete`, { body: { sha256: sum } });
    expect((await complete('bat_nope', sha256(FILE))).json.error.code).toBe('batch_not_found');
    expect((await complete(id, sha256(FILE).toUpperCase())).status).toBe(422);
    const missing = await complete(id, sha256(FILE));
    expect(missing.status).toBe(409);
    expect(missing.json.error.code).toBe('upload_missing');
    await put(upload.url, FILE, upload.headers);
    const other = sha256(Buffer.from('other'));
    const mismatch = await complete(id, other);
    expect(mismatch.status).toBe(422);
    expect(mismatch.json.error).toEqual({
      code: 'checksum_mismatch',
      message: `sha256 ${other} does not match the uploaded object (${sha256(FILE)})`,
    });
    expect(sandbox.store.batch(id)!.status).toBe('awaiting_upload');
  });

  it('replaces the file when re-uploaded before completion', async () => {
    const sandbox = await sandboxWith();
    const { id, upload } = await newBatch(sandbox);
    await put(upload.url, Buffer.from('first'), upload.headers);
    await put(upload.url, FILE, upload.headers);
    expect(sandbox.store.uploadedBytes(id)).toEqual(FILE);
    expect(fs.readdirSync(path.dirname(sandbox.store.uploadPath(id)!))).toEqual([id]);
  });

  it('can put the upload URL on the API origin, behind the key', async () => {
    const sandbox = await sandboxWith({ uploadOrigin: 'api' });
    const { id, upload } = await newBatch(sandbox);
    expect(upload.url).toBe(`${sandbox.baseUrl}/api/v1/batches/${id}/upload`);
    expect((await put(upload.url, FILE, upload.headers)).status).toBe(401);
    const withKey = await put(upload.url, FILE, { ...upload.headers, authorization: `Bearer ${sandbox.keys.live}` });
    expect(withKey.status).toBe(200);
    expect(sandbox.store.uploadedBytes(id)).toEqual(FILE);
    expect(sandbox.requests.at(-1)!.route).toBe('upload');
  });
});

describe('storage host', () => {
  it('refuses a bad signature, an expired URL and a missing or changed signed header with 403', async () => {
    let clock = JUNE_2025;
    const sandbox = await sandboxWith({ now: () => clock, uploadTtlSeconds: 60 });
    const { id, upload } = await newBatch(sandbox);
    const code = async (response: Response) => /<Code>(\w+)<\/Code>/.exec(await response.text())?.[1];

    const tampered = upload.url.replace(
      /signature=(.)/,
      (_all, first: string) => `signature=${first === '0' ? '1' : '0'}`,
    );
    const badSignature = await put(tampered, FILE, upload.headers);
    expect(badSignature.status).toBe(403);
    expect(await code(badSignature)).toBe('SignatureDoesNotMatch');
    const longer = upload.url.replace(/expires=(\d+)/, (_all, expires: string) => `expires=${Number(expires) + 1000}`);
    expect((await put(longer, FILE, upload.headers)).status).toBe(403);

    const wrongType = await put(upload.url, FILE, { ...upload.headers, 'Content-Type': 'application/octet-stream' });
    expect(wrongType.status).toBe(403);
    expect(await code(wrongType)).toBe('SignatureDoesNotMatch');
    const noBatchHeader = await put(upload.url, FILE, { 'Content-Type': 'application/gzip' });
    expect(noBatchHeader.status).toBe(403);

    clock += 61_000;
    const expired = await put(upload.url, FILE, upload.headers);
    expect(expired.status).toBe(403);
    const text = await expired.text();
    expect(text).toContain('<Code>AccessDenied</Code>');
    expect(text).toContain('Request has expired');
    expect(sandbox.store.uploadPath(id)).toBeNull();
  });

  it('answers 404 off the object paths', async () => {
    const sandbox = await sandboxWith();
    expect((await fetch(`${sandbox.storageUrl}/elsewhere`)).status).toBe(404);
  });

  it('refuses another method on a signed PUT URL as S3 does: 403 SignatureDoesNotMatch (the method is signed)', async () => {
    const sandbox = await sandboxWith();
    const { id, upload } = await newBatch(sandbox);
    for (const method of ['GET', 'POST', 'DELETE']) {
      const answer = await fetch(upload.url, {
        method,
        headers: upload.headers,
        ...(method === 'POST' ? { body: FILE } : {}),
      });
      expect(answer.status, method).toBe(403);
      expect(await answer.text(), method).toContain('<Code>SignatureDoesNotMatch</Code>');
    }
    expect((await fetch(`${sandbox.storageUrl}/objects/bat_x`)).status).toBe(403);
    expect(sandbox.store.uploadPath(id)).toBeNull();
  });

  it('refuses a wrong Content-MD5 with 400 BadDigest and one that is no MD5 with 400 InvalidDigest, storing nothing', async () => {
    const sandbox = await sandboxWith();
    const { id, upload } = await newBatch(sandbox);
    const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('base64');
    const wrong = await put(upload.url, FILE, { ...upload.headers, 'Content-MD5': md5(Buffer.from('other')) });
    expect(wrong.status).toBe(400);
    const text = await wrong.text();
    expect(text).toContain('<Code>BadDigest</Code>');
    expect(text).toContain(`<CalculatedDigest>${md5(FILE)}</CalculatedDigest>`);
    expect(sandbox.store.uploadPath(id)).toBeNull();
    const invalid = await put(upload.url, FILE, { ...upload.headers, 'Content-MD5': 'not-an-md5' });
    expect(invalid.status).toBe(400);
    expect(await invalid.text()).toContain('<Code>InvalidDigest</Code>');
    expect(sandbox.store.uploadPath(id)).toBeNull();
    // The right one is taken.
    expect((await put(upload.url, FILE, { ...upload.headers, 'Content-MD5': md5(FILE) })).status).toBe(200);
    expect(sandbox.store.uploadPath(id)).not.toBeNull();
  });
});

/** What a raw HTTP/1.1 exchange got back: no client library in between to add, fix or hide anything. */
interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** How many bytes of the request's body had been written when the answer was complete. */
  bodyWritten: number;
  /** The server closed the connection after its answer. */
  closed: boolean;
}

/**
 * Sends `head` (request line and headers) then, unless the answer comes first, `body` in 64 KiB pieces; resolves
 * once the answer is complete and the server has closed the connection or kept it open for another request.
 */
function rawRequest(url: string, head: string[], body: Buffer = Buffer.alloc(0)): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let received = Buffer.alloc(0);
    let answer: Omit<RawAnswer, 'closed'> | undefined;
    let bodyWritten = 0;
    socket.on('error', reject);
    socket.on('connect', () => {
      socket.write(head.join('\r\n') + '\r\n\r\n');
      const writeMore = () => {
        while (answer === undefined && bodyWritten < body.length) {
          const piece = body.subarray(bodyWritten, bodyWritten + 65536);
          bodyWritten += piece.length;
          if (!socket.write(piece)) return void socket.once('drain', writeMore);
        }
      };
      writeMore();
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (answer !== undefined || end < 0) return;
      const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      const text = received.subarray(end + 4);
      if (text.length < Number(headers['content-length'])) return;
      answer = { status: Number(statusLine!.split(' ')[1]), headers, body: text.toString('utf8'), bodyWritten };
      if (headers.connection !== 'close') {
        socket.destroy();
        resolve({ ...answer, closed: false });
      }
    });
    socket.on('close', () => {
      if (answer === undefined) reject(new Error('closed without a complete answer'));
      else resolve({ ...answer, closed: true });
    });
  });
}

describe('storage host refuses what real storage refuses', () => {
  /** The request line and headers of an upload to a signed URL, as a custom uploader would write them. */
  function uploadHead(target: string, headers: Record<string, string>): string[] {
    const url = new URL(target);
    return [
      `PUT ${url.pathname}${url.search} HTTP/1.1`,
      `Host: ${url.host}`,
      ...Object.entries(headers).map(([n, v]) => `${n}: ${v}`),
    ];
  }
  const codeOf = (answer: RawAnswer) => /<Code>(\w+)<\/Code>/.exec(answer.body)?.[1];

  it('answers each refusal with S3-style XML and request ids', async () => {
    const sandbox = await sandboxWith();
    const { upload } = await newBatch(sandbox);
    const answer = await rawRequest(upload.url, uploadHead(upload.url, upload.headers));
    expect(answer.status).toBe(411);
    expect(answer.headers['content-type']).toBe('application/xml');
    expect(answer.headers['x-amz-request-id']).toMatch(/^[0-9A-F]{16}$/);
    expect(answer.headers['x-amz-id-2']).toMatch(/^[A-Za-z0-9+/]{64}$/);
    expect(answer.body).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>MissingContentLength</Code>' +
        '<Message>You must provide the Content-Length HTTP header.</Message>' +
        `<RequestId>${answer.headers['x-amz-request-id']}</RequestId></Error>`,
    );
  });

  it('refuses a chunked PUT with 501 NotImplemented naming Transfer-Encoding', async () => {
    const sandbox = await sandboxWith();
    const { id, upload } = await newBatch(sandbox);
    const chunked = Buffer.from(`${FILE.length.toString(16)}\r\n${FILE.toString()}\r\n0\r\n\r\n`);
    const head = uploadHead(upload.url, { ...upload.headers, 'Transfer-Encoding': 'chunked' });
    const answer = await rawRequest(upload.url, head, chunked);
    expect(answer.status).toBe(501);
    expect(codeOf(answer)).toBe('NotImplemented');
    expect(answer.body).toContain('<Header>Transfer-Encoding</Header>');
    expect(sandbox.store.uploadPath(id)).toBeNull();
  });

  it('refuses a header of the signed kind that the signature does not cover with 403', async () => {
    const sandbox = await sandboxWith();
    const { id, upload } = await newBatch(sandbox);
    const headers = { ...upload.headers, 'Content-Length': String(FILE.length), 'x-amz-meta-owner': 'me' };
    const answer = await rawRequest(upload.url, uploadHead(upload.url, headers), FILE);
    expect(answer.status).toBe(403);
    expect(codeOf(answer)).toBe('AccessDenied');
    expect(answer.body).toContain('<HeadersNotSigned>x-amz-meta-owner</HeadersNotSigned>');
    expect(sandbox.store.uploadPath(id)).toBeNull();
  });

  it('refuses a changed value of a signed header with 403 SignatureDoesNotMatch', async () => {
    const sandbox = await sandboxWith();
    const { id, upload } = await newBatch(sandbox);
    const headers = {
      ...upload.headers,
      'Content-Type': 'application/octet-stream',
      'Content-Length': String(FILE.length),
    };
    const answer = await rawRequest(upload.url, uploadHead(upload.url, headers), FILE);
    expect(answer.status).toBe(403);
    expect(codeOf(answer)).toBe('SignatureDoesNotMatch');
    expect(sandbox.store.uploadPath(id)).toBeNull();
  });

  it('refuses a body over its limit from its Content-Length, before reading it, and closes the connection', async () => {
    const sandbox = await sandboxWith({ maxUploadBytes: 1000 });
    const { id, upload } = await newBatch(sandbox);
    const headers = { ...upload.headers, 'Content-Length': '1001' };
    // The head alone: the answer must come without a byte of the body.
    const answer = await rawRequest(upload.url, uploadHead(upload.url, headers));
    expect(answer.status).toBe(400);
    expect(codeOf(answer)).toBe('EntityTooLarge');
    expect(answer.body).toContain('<ProposedSize>1001</ProposedSize><MaxSizeAllowed>1000</MaxSizeAllowed>');
    expect(answer.headers.connection).toBe('close');
    expect(answer.closed).toBe(true);
    expect(sandbox.store.uploadPath(id)).toBeNull();

    const atLimit = Buffer.alloc(1000, 'x');
    const fits = await rawRequest(
      upload.url,
      uploadHead(upload.url, { ...upload.headers, 'Content-Length': '1000' }),
      atLimit,
    );
    expect(fits.status).toBe(200);
  });

  it('refuses an expired URL with 403 AccessDenied "Request has expired"', async () => {
    let clock = JUNE_2025;
    const sandbox = await sandboxWith({ now: () => clock, uploadTtlSeconds: 60 });
    const { id, upload } = await newBatch(sandbox);
    clock += 61_000;
    const headers = { ...upload.headers, 'Content-Length': String(FILE.length) };
    const answer = await rawRequest(upload.url, uploadHead(upload.url, headers), FILE);
    expect(answer.status).toBe(403);
    expect(codeOf(answer)).toBe('AccessDenied');
    expect(answer.body).toContain('<Message>Request has expired</Message>');
    expect(answer.body).toMatch(/<Expires>[^<]+<\/Expires><ServerTime>[^<]+<\/ServerTime>/);
    expect(sandbox.store.uploadPath(id)).toBeNull();
  });
});

describe('idempotency', () => {
  it('returns the same batch for the same key and body, refuses the key with another body', async () => {
    const sandbox = await sandboxWith();
    const sourceId = await newSource(sandbox);
    const headers = { 'idempotency-key': 'same' };
    const first = await call(sandbox, 'POST', '/api/v1/batches', { body: createBody(sourceId), headers });
    const reordered = Object.fromEntries(Object.entries(createBody(sourceId)).reverse());
    const second = await call(sandbox, 'POST', '/api/v1/batches', { body: reordered, headers });
    expect([200, 201]).toContain(second.status);
    expect(second.json.batch).toEqual(first.json.batch);
    expect(second.json.upload.url).toMatch(/signature=/);
    expect(sandbox.store.batches()).toHaveLength(1);

    const reused = await call(sandbox, 'POST', '/api/v1/batches', {
      body: createBody(sourceId, { record_count: 3 }),
      headers,
    });
    expect(reused.status).toBe(422);
    expect(reused.json.error.code).toBe('idempotency_key_reused');
    const otherKey = await call(sandbox, 'POST', '/api/v1/batches', {
      body: createBody(sourceId),
      headers: { 'idempotency-key': 'new' },
    });
    expect(otherKey.json.batch.id).not.toBe(first.json.batch.id);
  });

  it('creates a second batch when told not to honour the key', async () => {
    const sandbox = await sandboxWith({ honourIdempotencyKey: false });
    const sourceId = await newSource(sandbox);
    const headers = { 'idempotency-key': 'same' };
    const first = await call(sandbox, 'POST', '/api/v1/batches', { body: createBody(sourceId), headers });
    const second = await call(sandbox, 'POST', '/api/v1/batches', { body: createBody(sourceId), headers });
    expect(second.json.batch.id).not.toBe(first.json.batch.id);
    expect(sandbox.store.batches().map((batch) => batch.idempotency_key)).toEqual(['same', 'same']);
  });
});

describe('faults', () => {
  it('answers an injected status with Retry-After, then handles normally', async () => {
    const sandbox = await sandboxWith();
    sandbox.faults.add({ route: 'me', status: 503, retryAfter: '2', times: 2 });
    sandbox.faults.add({ route: 'me', status: 502, body: '<html>bad gateway</html>' });
    expect(sandbox.faults.pending()).toHaveLength(2);
    const first = await call(sandbox, 'GET', '/api/v1/me');
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('2');
    expect(first.json.error.code).toBe('service_unavailable');
    expect(sandbox.faults.pending()[0]!.times).toBe(1);
    expect((await call(sandbox, 'GET', '/api/v1/me')).status).toBe(503);
    const html = await call(sandbox, 'GET', '/api/v1/me');
    expect(html.status).toBe(502);
    expect(html.headers.get('content-type')).toBe('text/html');
    expect(html.text).toBe('<html>bad gateway</html>');
    expect((await call(sandbox, 'GET', '/api/v1/me')).status).toBe(200);
    expect(sandbox.faults.pending()).toEqual([]);
  });

  it('does not apply a request answered with a status or a redirect', async () => {
    const sandbox = await sandboxWith();
    const sourceId = await newSource(sandbox);
    sandbox.faults.add({ route: 'create', status: 500 });
    sandbox.faults.add({ route: 'create', redirect: 'https://elsewhere.example/api/v1/batches' });
    expect((await call(sandbox, 'POST', '/api/v1/batches', { body: createBody(sourceId) })).status).toBe(500);
    const redirected = await call(sandbox, 'POST', '/api/v1/batches', { body: createBody(sourceId) });
    expect(redirected.status).toBe(307);
    expect(redirected.headers.get('location')).toBe('https://elsewhere.example/api/v1/batches');
    expect(sandbox.store.batches()).toEqual([]);
  });

  it('delays a request', async () => {
    const sandbox = await sandboxWith();
    sandbox.faults.add({ route: 'me', delayMs: 150 });
    const started = Date.now();
    expect((await call(sandbox, 'GET', '/api/v1/me')).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('applies a create whose response is lost, and one answered with replaced JSON', async () => {
    const sandbox = await sandboxWith();
    const sourceId = await newSource(sandbox);
    sandbox.faults.add({ route: 'create', loseResponse: true });
    await expect(call(sandbox, 'POST', '/api/v1/batches', { body: createBody(sourceId) })).rejects.toThrow();
    expect(sandbox.store.batches()).toHaveLength(1);
    expect(sandbox.requests.at(-1)!.status).toBe(0);

    sandbox.faults.add({ route: 'create', replaceJson: { batch: { id: 'bat_fake', status: 'awaiting_upload' } } });
    const replaced = await call(sandbox, 'POST', '/api/v1/batches', { body: createBody(sourceId) });
    expect(replaced.status).toBe(200);
    expect(replaced.json).toEqual({ batch: { id: 'bat_fake', status: 'awaiting_upload' } });
    expect(sandbox.store.batches()).toHaveLength(2);
  });

  it('cuts a response short with a reset', async () => {
    const sandbox = await sandboxWith();
    sandbox.faults.add({ route: 'me', resetAfterBytes: 5 });
    await expect(call(sandbox, 'GET', '/api/v1/me')).rejects.toThrow();
    expect(sandbox.requests.at(-1)!.status).toBe(200);
  });

  it('resets an upload mid-body and stores nothing', async () => {
    const sandbox = await sandboxWith();
    const { id, upload } = await newBatch(sandbox);
    sandbox.faults.add({ route: 'upload', resetAfterBytes: 1000 });
    await expect(put(upload.url, Buffer.alloc(4 << 20, 1), upload.headers)).rejects.toThrow();
    expect(sandbox.store.uploadPath(id)).toBeNull();
    expect((await put(upload.url, FILE, upload.headers)).status).toBe(200);
    expect(fs.readdirSync(path.dirname(sandbox.store.uploadPath(id)!))).toEqual([id]); // no partial file left
  });

  it('stores a corrupted upload so that complete sees a checksum mismatch', async () => {
    const sandbox = await sandboxWith();
    const { id, upload } = await newBatch(sandbox);
    sandbox.faults.add({ route: 'upload', corruptUpload: true });
    expect((await put(upload.url, FILE, upload.headers)).status).toBe(200);
    expect(sandbox.store.uploadedBytes(id)).not.toEqual(FILE);
    expect(sandbox.store.uploadedBytes(id)!.length).toBe(FILE.length);
    const completed = await call(sandbox, 'POST', `/api/v1/batches/${id}/complete`, { body: { sha256: sha256(FILE) } });
    expect(completed.json.error.code).toBe('checksum_mismatch');
  });

  it('hangs and stalls until the client gives up, and close() still returns at once', async () => {
    const sandbox = await sandboxWith();
    sandbox.faults.add({ route: 'me', hang: true });
    await expect(call(sandbox, 'GET', '/api/v1/me', { signal: AbortSignal.timeout(100) })).rejects.toThrow();
    expect(sandbox.requests.at(-1)!.status).toBe(0);

    sandbox.faults.add({ route: 'me', stallAfterBytes: 10 });
    const response = await fetch(`${sandbox.baseUrl}/api/v1/me`, {
      headers: { authorization: `Bearer ${sandbox.keys.live}` },
      signal: AbortSignal.timeout(150),
    });
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();

    // Leave one request hanging on each server while closing.
    sandbox.faults.add({ route: 'list', hang: true });
    const { upload } = await newBatch(sandbox);
    sandbox.faults.add({ route: 'upload', hang: true });
    const hungList = call(sandbox, 'GET', '/api/v1/batches?source_id=x').catch(() => 'closed');
    const hungUpload = put(upload.url, FILE, upload.headers).catch(() => 'closed');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await sandbox.close();
    expect(Date.now() - started).toBeLessThan(500);
    expect(await hungList).toBe('closed');
    expect(await hungUpload).toBe('closed');
  });
});

describe('control routes', () => {
  it('adds and clears faults, shows state and sets a status over HTTP, unrecorded', async () => {
    const sandbox = await sandboxWith();
    const control = (method: string, urlPath: string, body?: unknown) => call(sandbox, method, urlPath, { body });
    expect((await control('POST', '/_sandbox/faults', { route: 'nope' })).status).toBe(400);
    expect((await control('POST', '/_sandbox/faults', { route: 'me', status: 429, times: 3 })).status).toBe(201);
    expect(sandbox.faults.pending()).toEqual([{ route: 'me', status: 429, times: 3 }]);
    expect((await call(sandbox, 'GET', '/api/v1/me')).status).toBe(429);
    expect((await control('DELETE', '/_sandbox/faults')).status).toBe(200);
    expect(sandbox.faults.pending()).toEqual([]);

    const { id, sourceId } = await newBatch(sandbox);
    const state = await control('GET', '/_sandbox/state');
    expect(state.json.sources.map((source: { id: string }) => source.id)).toEqual([sourceId]);
    expect(state.json.batches[0]).toMatchObject({ id, status: 'awaiting_upload', report: { tool: 'scrub/1.0' } });

    expect((await control('POST', `/_sandbox/batches/${id}/status`, { status: 'weird' })).status).toBe(422);
    expect((await control('POST', '/_sandbox/batches/bat_nope/status', { status: 'accepted' })).status).toBe(404);
    const set = await control('POST', `/_sandbox/batches/${id}/status`, { status: 'accepted' });
    expect(set.status).toBe(200);
    expect(sandbox.store.batch(id)!.status).toBe('accepted');
    expect(sandbox.requests.some((request) => request.path.startsWith('/_sandbox'))).toBe(false);
  });

  it('refuses a request without a sandbox key, and a POST whose body is not declared JSON (a web page can send those)', async () => {
    const sandbox = await sandboxWith();
    const { id } = await newBatch(sandbox);
    const fault = { route: 'me', status: 500 };
    const status = { status: 'accepted' };
    const refused = [
      await call(sandbox, 'POST', '/_sandbox/faults', { key: null, body: fault }),
      await call(sandbox, 'POST', '/_sandbox/faults', { key: 'svc_test_not_the_sandbox_s', body: fault }),
      await call(sandbox, 'POST', '/_sandbox/faults', { body: fault, headers: { 'content-type': 'text/plain' } }),
      await call(sandbox, 'POST', `/_sandbox/batches/${id}/status`, { key: null, body: status }),
      await call(sandbox, 'POST', `/_sandbox/batches/${id}/status`, {
        body: status,
        headers: { 'content-type': 'text/plain;charset=UTF-8' },
      }),
      await call(sandbox, 'POST', `/_sandbox/batches/${id}/review`, {
        body: status,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      await call(sandbox, 'DELETE', '/_sandbox/faults', { key: null }),
      await call(sandbox, 'GET', '/_sandbox/state', { key: null }),
    ];
    expect(refused.map((res) => [res.status, res.json.error.code])).toEqual([
      [401, 'unauthorized'],
      [401, 'unauthorized'],
      [415, 'unsupported_media_type'],
      [401, 'unauthorized'],
      [415, 'unsupported_media_type'],
      [415, 'unsupported_media_type'],
      [401, 'unauthorized'],
      [401, 'unauthorized'],
    ]);
    expect(sandbox.faults.pending()).toEqual([]);
    expect(sandbox.store.batch(id)!.status).toBe('awaiting_upload');
    // With the key and JSON (a charset parameter is fine), as the API takes them.
    const added = await call(sandbox, 'POST', '/_sandbox/faults', {
      key: sandbox.keys.test,
      body: fault,
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(added.status).toBe(201);
  });
});

describe('persistence', () => {
  it('keeps sources, batches, uploads and signed URLs across a restart with a data dir', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bds-sandbox-test-'));
    try {
      const first = await startSandbox({ dataDir, now: () => JUNE_2025 });
      const { id, sourceId, upload } = await newBatch(first);
      await put(upload.url, FILE, upload.headers);
      await first.close();
      expect(fs.existsSync(path.join(dataDir, 'state.json'))).toBe(true);
      expect(fs.existsSync(path.join(dataDir, 'objects', id))).toBe(true);

      const second = await sandboxWith({ dataDir, storagePort: Number(new URL(first.storageUrl).port) });
      expect(second.store.sources().map((source) => source.id)).toEqual([sourceId]);
      expect(second.store.uploadedBytes(id)).toEqual(FILE);
      expect((await put(upload.url, FILE, upload.headers)).status).toBe(200); // the old signed URL still holds
      const completed = await call(second, 'POST', `/api/v1/batches/${id}/complete`, {
        body: { sha256: sha256(FILE) },
      });
      expect(completed.json.batch.status).toBe('received');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('removes its temp dir on close when no data dir is given', async () => {
    const sandbox = await startSandbox();
    const { id, upload } = await newBatch(sandbox);
    await put(upload.url, FILE, upload.headers);
    const file = sandbox.store.uploadPath(id)!;
    expect(fs.existsSync(file)).toBe(true);
    await sandbox.close();
    expect(fs.existsSync(path.dirname(path.dirname(file)))).toBe(false);
  });
});
