// What both servers share: recording requests, reading bodies, building replies, and answering with the
// route's queued fault applied.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { REQUEST_ID_HEADER, type ErrorBody } from '../core/api/types.js';
import type { Fault, FaultInjector, RouteName } from './faults.js';

export interface RecordedRequest {
  server: 'api' | 'storage';
  route: RouteName | 'unknown';
  method: string;
  /** With the query. */
  path: string;
  /** Lower-cased names. */
  headers: Record<string, string>;
  bodyBytes: number;
  /**
   * An upload's body as it arrived: the bytes received in each RECEIVED_SLOT_MS since startedAt (a rate cap is
   * measured on it). Its length grows with the upload's time, not its size.
   */
  received: number[];
  /** What was answered, 0 if nothing. */
  status: number;
  /** When the request arrived and when its connection was done with it (performance.now(), ms): overlaps show concurrency. */
  startedAt: number;
  endedAt: number | undefined;
}

/** The width of a slot of RecordedRequest.received, in ms. */
export const RECEIVED_SLOT_MS = 50;

export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** Answer without reading the request's body, and close the connection after the answer (as S3 does). */
  closeUnread?: boolean;
}

/** One request being served. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  record: RecordedRequest;
  requestId: string;
  /** The fault this request suffers, if one was queued for its route. */
  fault: Fault | undefined;
}

export interface ServeContext {
  faults: FaultInjector;
  requests: RecordedRequest[];
  /** Aborted when the sandbox closes: pending delays give up. */
  closing: AbortSignal;
}

export function jsonReply(status: number, value: unknown, headers: Record<string, string> = {}): Reply {
  return {
    status,
    headers: { 'content-type': 'application/json', ...headers },
    body: Buffer.from(JSON.stringify(value)),
  };
}

export function errorReply(status: number, code: string, message: string, headers: Record<string, string> = {}): Reply {
  const body: ErrorBody = { error: { code, message } };
  return jsonReply(status, body, headers);
}

export function lowerCaseHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** Reads a (small, JSON) request body into memory. */
export async function readBody(exchange: Exchange): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of exchange.req as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    exchange.record.bodyBytes += chunk.length;
  }
  return Buffer.concat(chunks);
}

/** Reads and discards the rest of the request body, so that a client still sending sees the answer. */
async function drainBody(exchange: Exchange): Promise<void> {
  const { req, record } = exchange;
  if (req.complete || req.destroyed) return;
  await new Promise<void>((resolve) => {
    req.on('data', (chunk: Buffer) => {
      record.bodyBytes += chunk.length;
    });
    req.once('end', resolve);
    req.once('close', resolve);
  });
}

/**
 * Records the request and answers it with `handle`, applying the route's next queued fault.
 * `handle` returns null when it has already dealt with the connection (e.g. destroyed it).
 */
export async function serveRoute(
  context: ServeContext,
  server: RecordedRequest['server'],
  route: RouteName | 'unknown',
  req: IncomingMessage,
  res: ServerResponse,
  handle: (exchange: Exchange) => Promise<Reply | null>,
): Promise<void> {
  const record: RecordedRequest = {
    server,
    route,
    method: req.method ?? '',
    path: req.url ?? '',
    headers: lowerCaseHeaders(req),
    bodyBytes: 0,
    received: [],
    status: 0,
    startedAt: performance.now(),
    endedAt: undefined,
  };
  context.requests.push(record);
  res.once('close', () => (record.endedAt = performance.now()));
  const fault = route === 'unknown' ? undefined : context.faults.take(route);
  const exchange: Exchange = { req, res, record, requestId: newRequestId(server), fault };

  try {
    if (fault?.hang) {
      await drainBody(exchange); // the socket stays open until the client gives up or the sandbox closes
      return;
    }
    const refusal = fault && faultReply(fault);
    if (refusal) {
      await answer(exchange, refusal);
      return;
    }
    if (fault?.delayMs) {
      try {
        await sleep(fault.delayMs, undefined, { signal: context.closing });
      } catch {
        return; // closing
      }
    }
    const reply = await handle(exchange);
    if (reply === null || res.destroyed) return;
    if (fault?.loseResponse) {
      await drainBody(exchange);
      res.destroy();
      return;
    }
    await answer(exchange, fault?.replaceJson !== undefined ? jsonReply(200, fault.replaceJson) : reply);
  } catch (error) {
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return;
    }
    const message = error instanceof Error ? error.message : String(error);
    await answer(exchange, errorReply(500, 'internal_error', `sandbox failure: ${message}`));
  }
}

/** The storage host's ids look like S3's (16 upper-case hex digits), the API's like the service's. */
function newRequestId(server: RecordedRequest['server']): string {
  return server === 'storage' ? randomBytes(8).toString('hex').toUpperCase() : `req_${randomBytes(8).toString('hex')}`;
}

/** The request ids an answer carries: S3's pair from the storage host, the service's header from the API. */
function requestIdHeaders(exchange: Exchange): Record<string, string> {
  if (exchange.record.server === 'api') return { [REQUEST_ID_HEADER]: exchange.requestId };
  return { 'x-amz-request-id': exchange.requestId, 'x-amz-id-2': randomBytes(48).toString('base64') };
}

/** The reply a status or redirect fault gives instead of handling the request. */
function faultReply(fault: Fault): Reply | undefined {
  if (fault.redirect !== undefined) {
    return errorReply(307, 'redirect', `moved to ${fault.redirect}`, { location: fault.redirect });
  }
  if (fault.status === undefined) return undefined;
  const headers: Record<string, string> = fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter };
  if (fault.body !== undefined) {
    return {
      status: fault.status,
      headers: { 'content-type': fault.contentType ?? 'text/html', ...headers },
      body: Buffer.from(fault.body),
    };
  }
  const code = (STATUS_CODES[fault.status] ?? 'error').toLowerCase().replace(/[^a-z0-9]+/g, '_');
  return errorReply(
    fault.status,
    code,
    `injected fault: ${fault.status} ${STATUS_CODES[fault.status] ?? ''}`.trim(),
    headers,
  );
}

/** Writes the reply, or the part of it a stall or reset fault lets through. */
async function answer(exchange: Exchange, reply: Reply): Promise<void> {
  const { res, record, fault } = exchange;
  if (!reply.closeUnread) await drainBody(exchange);
  if (res.destroyed) return;
  res.writeHead(reply.status, {
    ...reply.headers,
    ...requestIdHeaders(exchange),
    'content-length': String(reply.body.length),
    ...(reply.closeUnread ? { connection: 'close' } : {}),
  });
  record.status = reply.status;
  if (fault?.stallAfterBytes !== undefined) {
    res.write(reply.body.subarray(0, fault.stallAfterBytes)); // and never end: the sandbox's close() ends it
    return;
  }
  // An upload's reset happens while its body is read; here it cuts the answer short.
  if (fault?.resetAfterBytes !== undefined && fault.route !== 'upload') {
    res.write(reply.body.subarray(0, fault.resetAfterBytes), () => res.destroy());
    return;
  }
  if (reply.closeUnread) lingerAfterAnswer(exchange.req.socket);
  res.end(reply.body);
}

/** How long a connection answered before its body was read may go on sending, discarded, before it is cut. */
const LINGER_MS = 5_000;

/**
 * A lingering close, as nginx and Apache do it: Node's server closes a `connection: close` socket once the answer
 * is written (its destroySoon), and closing with the client's bytes still arriving sends a TCP reset, which can
 * destroy the answer before the client reads it. Instead: end our side, discard what still comes, and close
 * when the client does, or after LINGER_MS.
 */
function lingerAfterAnswer(socket: Socket): void {
  socket.destroySoon = () => {
    socket.end();
    socket.resume();
    socket.once('end', () => socket.destroy());
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
}
