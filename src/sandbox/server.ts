// The API routes under /api/v1, validating as a real service would.
import http from 'node:http';
import {
  API_PREFIX,
  CLIENT_HEADER,
  IDEMPOTENCY_HEADER,
  KEY_PREFIXES,
  PRODUCTS,
  type BatchListEntry,
  type CreateBatchRequest,
  type CreateBatchResponse,
  type KeyMode,
  type MeResponse,
  type Product,
  type UploadTarget,
} from '../core/api/types.js';
import type { RouteName } from './faults.js';
import type { Exchange, Reply, ServeContext } from './http.js';
import { errorReply, jsonReply, readBody, serveRoute } from './http.js';
import { signedUploadUrl } from './storage.js';
import type { BatchRecord, ReviewMode, SandboxStore } from './store.js';
import {
  STREAM_HIGH_WATER_MARK,
  framingRefusal,
  headerRefusal,
  answerUpload,
  digestRefusal,
  sizeRefusal,
  uploadHeaders,
  type Refusal,
} from './upload.js';

/** Fixed, well-known keys, so that docs, scripts and spawned CLIs can use them. */
export const SANDBOX_KEYS = {
  live: `${KEY_PREFIXES.live}sandbox_4f1c9a2e7b3d6058`,
  test: `${KEY_PREFIXES.test}sandbox_8e2b6d0f4a9c1375`,
  revoked: `${KEY_PREFIXES.live}sandbox_revoked_00000000`,
} as const satisfies { live: string; test: string; revoked: string };

const KEY_IDS: Record<string, { id: string; mode: KeyMode }> = {
  [SANDBOX_KEYS.live]: { id: 'key_live_sandbox', mode: 'live' },
  [SANDBOX_KEYS.test]: { id: 'key_test_sandbox', mode: 'test' },
};

export interface ApiContext extends ServeContext {
  store: SandboxStore;
  now: () => number;
  uploadTtlSeconds: number;
  /** The largest upload body accepted (storage's limit, also on the API's own upload route). */
  maxUploadBytes: number;
  honourIdempotencyKey: boolean;
  uploadOrigin: 'storage' | 'api';
  /** The sandbox's own review of received batches. */
  review: { mode: ReviewMode; afterMs: number };
  /** Known once both servers listen. */
  urls: { base: string; storage: string };
}

interface ApiRoute {
  pattern: RegExp;
  methods: Record<string, RouteName>;
}

const BATCH_ID = '([^/]+)';
const API_ROUTES: ApiRoute[] = [
  { pattern: new RegExp(`^${API_PREFIX}/me$`), methods: { GET: 'me' } },
  { pattern: new RegExp(`^${API_PREFIX}/sources$`), methods: { POST: 'sources' } },
  { pattern: new RegExp(`^${API_PREFIX}/batches$`), methods: { POST: 'create', GET: 'list' } },
  { pattern: new RegExp(`^${API_PREFIX}/batches/${BATCH_ID}/complete$`), methods: { POST: 'complete' } },
];
const UPLOAD_ROUTE: ApiRoute = {
  pattern: new RegExp(`^${API_PREFIX}/batches/${BATCH_ID}/upload$`),
  methods: { PUT: 'upload' },
};

type Handler = (
  exchange: Exchange,
  key: { id: string; mode: KeyMode },
  url: URL,
  pathId: string | undefined,
) => Promise<Reply | null>;

/** Answers the API routes; `handleControl` sees each request first and returns true if it answered it. */
export function createApiServer(
  context: ApiContext,
  handleControl: (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => boolean,
): http.Server {
  const routes = context.uploadOrigin === 'api' ? [...API_ROUTES, UPLOAD_ROUTE] : API_ROUTES;
  const handlers: Record<RouteName, Handler> = {
    me: async (_exchange, key) =>
      jsonReply(200, { organization: { name: 'Sandbox Seller' }, key } satisfies MeResponse),
    sources: (exchange, key) => createSource(context, exchange, key.id),
    create: (exchange, key) => createBatch(context, exchange, key.id),
    complete: (exchange, _key, _url, id) => completeBatch(context, exchange, id!),
    list: async (_exchange, _key, url) => listBatches(context, url),
    upload: (exchange, _key, _url, id) => uploadToApi(context, exchange, id!),
  };

  return http.createServer({ highWaterMark: STREAM_HIGH_WATER_MARK }, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://api');
    // Every answer, the control routes' included, sees the review as it stands now.
    context.store.advanceReviews(context.review.mode, context.review.afterMs);
    if (handleControl(req, res, url)) return;
    const matched = routes.find((route) => route.pattern.test(url.pathname));
    const route = matched?.methods[req.method ?? ''];
    void serveRoute(context, 'api', route ?? 'unknown', req, res, async (exchange) => {
      if (!matched) return errorReply(404, 'not_found', `no route for ${url.pathname}`);
      if (!route) {
        const allow = Object.keys(matched.methods).join(', ');
        return errorReply(405, 'method_not_allowed', `${req.method} is not allowed on ${url.pathname}; use ${allow}`, {
          allow,
        });
      }
      const key = keyOf(req.headers.authorization);
      if ('status' in key) return key;
      const pathId = matched.pattern.exec(url.pathname)?.[1];
      return handlers[route](exchange, key, url, pathId && decodeURIComponent(pathId));
    });
  });
}

/** The key an `Authorization` header names, or the 401/403 reply (the control routes ask for it too). */
export function keyOf(authorization: string | undefined): { id: string; mode: KeyMode } | Reply {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) return errorReply(401, 'unauthorized', 'missing bearer key: send Authorization: Bearer <API_KEY>');
  if (match[1] === SANDBOX_KEYS.revoked) return errorReply(403, 'forbidden', 'this API key has been revoked');
  return KEY_IDS[match[1]!] ?? errorReply(401, 'unauthorized', 'unknown API key');
}

/** Parses a JSON object body, or gives the 400 reply. */
async function readJsonObject(exchange: Exchange): Promise<{ body: Record<string, unknown> } | { reply: Reply }> {
  const text = (await readBody(exchange)).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { reply: errorReply(400, 'invalid_json', 'the request body is not valid JSON') };
  }
  if (!isObject(value)) return { reply: errorReply(400, 'invalid_json', 'the request body must be a JSON object') };
  return { body: value };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(message: string): Reply {
  return errorReply(422, 'invalid_request', message);
}

async function createSource(context: ApiContext, exchange: Exchange, keyId: string): Promise<Reply> {
  const parsed = await readJsonObject(exchange);
  if ('reply' in parsed) return parsed.reply;
  const { body } = parsed;
  const { name, description } = body;
  if (typeof name !== 'string' || name.trim() === '' || name.length > 200) {
    return invalid('name must be a non-empty string of at most 200 characters');
  }
  if (description !== undefined && typeof description !== 'string') return invalid('description must be a string');
  const idempotencyKey = exchange.req.headers[IDEMPOTENCY_HEADER];
  const idempotency =
    typeof idempotencyKey === 'string' && context.honourIdempotencyKey ? { keyId, key: idempotencyKey } : undefined;
  const source = context.store.createSource(description === undefined ? { name } : { name, description }, idempotency);
  return jsonReply(201, { source });
}

/** The first problem with a create body, or null. */
function createProblem(body: Record<string, unknown>, nowMs: number): string | null {
  if (typeof body.source_id !== 'string' || body.source_id === '') return 'source_id must be a non-empty string';
  if (!PRODUCTS.includes(body.product as Product)) return `product must be one of ${PRODUCTS.join(', ')}`;
  const period = typeof body.period === 'string' ? /^(\d{4})-(0[1-9]|1[0-2])$/.exec(body.period) : null;
  if (!period) return 'period must be YYYY-MM with a month from 01 to 12';
  const now = new Date(nowMs);
  if (Number(period[1]) * 12 + Number(period[2]) > now.getUTCFullYear() * 12 + now.getUTCMonth() + 1) {
    return `period ${body.period} is in the future`;
  }
  if (!Number.isSafeInteger(body.record_count) || (body.record_count as number) < 0) {
    return 'record_count must be a non-negative integer';
  }
  if (!isObject(body.schema)) return 'schema must be an object';
  const report = body.report;
  if (!isObject(report)) return 'report must be an object';
  if (typeof report.tool !== 'string') return 'report.tool must be a string';
  if (!Array.isArray(report.files)) return 'report.files must be an array';
  if (!isObject(report.totals)) return 'report.totals must be an object';
  return null;
}

/** JSON with object keys sorted, so that two bodies compare by meaning, not key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value)) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

function createFields(batch: CreateBatchRequest | BatchRecord): string {
  const { source_id, product, period, record_count, schema, report } = batch;
  return canonicalJson({ source_id, product, period, record_count, schema, report });
}

function uploadTarget(context: ApiContext, batchId: string): UploadTarget {
  const url =
    context.uploadOrigin === 'api'
      ? `${context.urls.base}${API_PREFIX}/batches/${batchId}/upload`
      : signedUploadUrl(
          context.urls.storage,
          context.store.signingSecret,
          batchId,
          Math.floor(context.now() / 1000) + context.uploadTtlSeconds,
        );
  return { url, method: 'PUT', headers: uploadHeaders(batchId) };
}

async function createBatch(context: ApiContext, exchange: Exchange, keyId: string): Promise<Reply> {
  const parsed = await readJsonObject(exchange);
  if ('reply' in parsed) return parsed.reply;
  const { body } = parsed;
  const problem = createProblem(body, context.now());
  if (problem) return invalid(problem);
  const request = body as unknown as CreateBatchRequest;
  if (!context.store.source(request.source_id)) {
    return errorReply(404, 'source_not_found', `source ${request.source_id} does not exist`);
  }

  const idempotencyKey = exchange.req.headers[IDEMPOTENCY_HEADER];
  const key = typeof idempotencyKey === 'string' ? idempotencyKey : null;
  if (key !== null && context.honourIdempotencyKey) {
    const earlier = context.store.findByIdempotencyKey(keyId, key);
    if (earlier) {
      if (createFields(earlier) !== createFields(request)) {
        return errorReply(422, 'idempotency_key_reused', `Idempotency-Key ${key} was used for a different request`);
      }
      const replay: CreateBatchResponse = {
        batch: { id: earlier.id, status: earlier.status },
        upload: uploadTarget(context, earlier.id),
      };
      return jsonReply(201, replay, { 'idempotent-replayed': 'true' });
    }
  }

  const clientHeader = exchange.req.headers[CLIENT_HEADER];
  const batch = context.store.createBatch({
    source_id: request.source_id,
    product: request.product,
    period: request.period,
    record_count: request.record_count,
    schema: request.schema,
    report: request.report,
    client: typeof clientHeader === 'string' ? clientHeader : null,
    key_id: keyId,
    idempotency_key: key,
  });
  const response: CreateBatchResponse = {
    batch: { id: batch.id, status: batch.status },
    upload: uploadTarget(context, batch.id),
  };
  return jsonReply(201, response);
}

async function completeBatch(context: ApiContext, exchange: Exchange, batchId: string): Promise<Reply> {
  const parsed = await readJsonObject(exchange);
  if ('reply' in parsed) return parsed.reply;
  const { body } = parsed;
  const batch = context.store.batch(batchId);
  if (!batch) return errorReply(404, 'batch_not_found', `batch ${batchId} does not exist`);
  const { sha256 } = body;
  if (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256))
    return invalid('sha256 must be 64 lowercase hex characters');
  if (batch.status !== 'awaiting_upload') {
    return errorReply(409, 'already_completed', `batch ${batchId} is already ${batch.status}`);
  }
  if (!batch.upload) return errorReply(409, 'upload_missing', `batch ${batchId} has no upload yet`);
  if (sha256 !== batch.upload.sha256) {
    return errorReply(
      422,
      'checksum_mismatch',
      `sha256 ${sha256} does not match the uploaded object (${batch.upload.sha256})`,
    );
  }
  context.store.setStatus(batchId, 'received');
  return jsonReply(200, { batch: { id: batchId, status: 'received' } });
}

function listBatches(context: ApiContext, url: URL): Reply {
  const sourceId = url.searchParams.get('source_id');
  if (!sourceId) return errorReply(400, 'invalid_request', 'the source_id query parameter is required');
  if (!context.store.source(sourceId)) return errorReply(404, 'source_not_found', `source ${sourceId} does not exist`);
  const batches: BatchListEntry[] = context.store
    .batches()
    .filter((batch) => batch.source_id === sourceId)
    .map(({ id, period, product, record_count, status, created_at }) => ({
      id,
      period,
      product,
      record_count,
      status,
      created_at,
    }));
  return jsonReply(200, { batches });
}

/** A storage refusal as the API words its errors: S3's code in snake case, its details in the message. */
function jsonRefusal(refusal: Refusal): Reply {
  const code = refusal.code.replace(/(?<=[a-z])(?=[A-Z])/g, '_').toLowerCase();
  const details = Object.entries(refusal.details ?? {}).map(([name, value]) => `${name}: ${value}`);
  const message = [refusal.message, ...details].join('; ');
  return { ...errorReply(refusal.status, code, message), ...(refusal.closeUnread ? { closeUnread: true } : {}) };
}

/** The upload route when uploadOrigin is 'api': the storage host's checks, minus signature and expiry. */
async function uploadToApi(context: ApiContext, exchange: Exchange, batchId: string): Promise<Reply | null> {
  if (!context.store.batch(batchId)) return errorReply(404, 'batch_not_found', `batch ${batchId} does not exist`);
  const refusal =
    framingRefusal(exchange) ??
    headerRefusal(exchange, batchId) ??
    digestRefusal(exchange) ??
    sizeRefusal(exchange, context.maxUploadBytes);
  if (refusal) return jsonRefusal(refusal);
  return answerUpload(exchange, context.store, batchId, {
    notAwaiting: (status) => errorReply(409, 'already_completed', `batch ${batchId} is already ${status}`),
    incomplete: (bytes, expected) =>
      errorReply(400, 'incomplete_body', `received ${bytes} bytes, Content-Length said ${expected}`),
    refused: jsonRefusal,
    stored: ({ bytes, sha256 }) =>
      jsonReply(200, { batch: { id: batchId, status: 'awaiting_upload' }, bytes, sha256 }, { etag: `"${sha256}"` }),
  });
}
