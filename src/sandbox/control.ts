// Control routes under /_sandbox on the API port: not recorded. For spawned CLIs, the benchmark and people
// poking at the sandbox with curl. They ask for a sandbox key and a JSON body as the API does: a web page the
// sandbox's user opens can send a `text/plain` POST without a key to 127.0.0.1, never one with either.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BATCH_STATUSES, REQUEST_ID_HEADER, type BatchStatus } from '../core/api/types.js';
import type { Fault, FaultInjector } from './faults.js';
import type { Reply } from './http.js';
import { errorReply, jsonReply } from './http.js';
import { keyOf } from './server.js';
import { ReviewError, type ReviewStatus, type SandboxStore } from './store.js';

export const CONTROL_PREFIX = '/_sandbox';
const STATUS_PATH = /^\/_sandbox\/batches\/([^/]+)\/status$/;
const REVIEW_PATH = /^\/_sandbox\/batches\/([^/]+)\/review$/;

/** Answers the request if it is a control request; returns whether it was. */
export function handleControl(
  store: SandboxStore,
  faults: FaultInjector,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): boolean {
  if (url.pathname !== CONTROL_PREFIX && !url.pathname.startsWith(`${CONTROL_PREFIX}/`)) return false;
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let reply: Reply;
    try {
      reply =
        refusal(req) ??
        controlReply(store, faults, req.method ?? '', url.pathname, Buffer.concat(chunks).toString('utf8'));
    } catch (error) {
      reply = errorReply(500, 'internal_error', error instanceof Error ? error.message : String(error));
    }
    res.writeHead(reply.status, {
      ...reply.headers,
      [REQUEST_ID_HEADER]: `req_${randomBytes(8).toString('hex')}`,
      'content-length': String(reply.body.length),
    });
    res.end(reply.body);
  });
  return true;
}

/** The reply to a control request without a sandbox key, or with a body that is not declared JSON. */
function refusal(req: IncomingMessage): Reply | undefined {
  const key = keyOf(req.headers.authorization);
  if ('status' in key) return key;
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (req.method === 'POST' && type !== 'application/json') {
    return errorReply(
      415,
      'unsupported_media_type',
      'a control request carries JSON: send Content-Type: application/json',
    );
  }
  return undefined;
}

function controlReply(
  store: SandboxStore,
  faults: FaultInjector,
  method: string,
  pathname: string,
  text: string,
): Reply {
  if (pathname === `${CONTROL_PREFIX}/faults`) {
    if (method === 'GET') return jsonReply(200, { faults: faults.pending() });
    if (method === 'DELETE') {
      faults.clear();
      return jsonReply(200, { faults: [] });
    }
    if (method === 'POST') {
      const parsed = parseJson(text);
      if ('reply' in parsed) return parsed.reply;
      try {
        faults.add(parsed.value as Fault); // add() validates
      } catch (error) {
        return errorReply(400, 'invalid_fault', (error as Error).message);
      }
      return jsonReply(201, { faults: faults.pending() });
    }
    return errorReply(405, 'method_not_allowed', `${method} is not allowed; use GET, POST or DELETE`, {
      allow: 'GET, POST, DELETE',
    });
  }
  if (pathname === `${CONTROL_PREFIX}/state`) {
    if (method !== 'GET')
      return errorReply(405, 'method_not_allowed', `${method} is not allowed; use GET`, { allow: 'GET' });
    return jsonReply(200, { sources: store.sources(), batches: store.batches() });
  }
  const statusMatch = STATUS_PATH.exec(pathname);
  if (statusMatch) {
    if (method !== 'POST')
      return errorReply(405, 'method_not_allowed', `${method} is not allowed; use POST`, { allow: 'POST' });
    const id = decodeURIComponent(statusMatch[1]!);
    const parsed = parseJson(text);
    if ('reply' in parsed) return parsed.reply;
    const status = (parsed.value as { status?: unknown } | null)?.status;
    if (!BATCH_STATUSES.includes(status as BatchStatus)) {
      return errorReply(422, 'invalid_request', `status must be one of ${BATCH_STATUSES.join(', ')}`);
    }
    if (!store.batch(id)) return errorReply(404, 'batch_not_found', `batch ${id} does not exist`);
    store.setStatus(id, status as BatchStatus);
    return jsonReply(200, { batch: { id, status } });
  }
  const reviewMatch = REVIEW_PATH.exec(pathname);
  if (reviewMatch) {
    if (method !== 'POST')
      return errorReply(405, 'method_not_allowed', `${method} is not allowed; use POST`, { allow: 'POST' });
    const id = decodeURIComponent(reviewMatch[1]!);
    const parsed = parseJson(text);
    if ('reply' in parsed) return parsed.reply;
    const status = (parsed.value as { status?: unknown } | null)?.status as ReviewStatus;
    try {
      store.review(id, status);
    } catch (error) {
      if (!(error instanceof ReviewError)) throw error;
      return errorReply(REVIEW_ERROR_STATUS[error.code], error.code, error.message);
    }
    return jsonReply(200, { batch: { id, status } });
  }
  return errorReply(404, 'not_found', `no control route ${pathname}`);
}

const REVIEW_ERROR_STATUS: Record<ReviewError['code'], number> = {
  invalid_request: 422,
  batch_not_found: 404,
  not_received: 409,
};

function parseJson(text: string): { value: unknown } | { reply: Reply } {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return { reply: errorReply(400, 'invalid_json', 'the request body is not valid JSON') };
  }
}
