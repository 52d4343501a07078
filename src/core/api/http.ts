// The HTTP client of every API request and upload: base URL, key (only to the API's origin), headers, timeouts,
// limits and redaction, with the retry policy of retry.ts and the proxies of proxy.ts. Two others build requests,
// and neither carries the key: the monitoring ping's (ping-client.ts) and doctor's network checks
// (diagnostics/network.ts), which take a connection to the API one step at a time to name the one that fails.

import type { Readable } from 'node:stream';
import { request, type Dispatcher } from 'undici';
import { ApiError, AuthError, BdsError, NetworkError, UploadTooLargeError, type RequestInfo } from '../errors.js';
import { Dispatchers, ProxyConnectError, proxyRefusal, type ProxyServer, type ProxyEnv } from './proxy.js';
import { cleanText } from '../clean-text.js';
import { describeBody, errorCode, errorMessage, maxSizeAllowed, redactUrl } from './redact.js';
import {
  RETRY_NETWORK_CODES,
  RETRY_STATUSES,
  Retryable,
  retryAfterMs,
  withRetries,
  type RetryNotice,
} from './retry.js';
import { API_PREFIX, CLIENT_HEADER, REQUEST_ID_HEADER, type UploadTarget } from './types.js';

export interface HttpTuning {
  connectTimeoutMs: number;
  /** From the end of the request body to the response headers. */
  headersTimeoutMs: number;
  /** Longest pause between two chunks of a response body, or of an upload body leaving bds. */
  idleTimeoutMs: number;
  /**
   * One attempt of an API request, from its start to the last byte of the answer, and the reading of an upload's
   * answer: a server that trickles its answer resets the two timeouts above at every byte, never this one.
   */
  deadlineMs: number;
  /** The largest answer to an API request bds reads; a longer one is refused, not retried. */
  maxAnswerBytes: number;
  /** Attempts of one API request, the first included. */
  maxAttempts: number;
  /** Attempts of one upload; each re-sends the file from its start. */
  uploadMaxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** No API request is retried once this much time has passed since its first attempt. */
  maxTotalMs: number;
  /** A longer Retry-After is cut to this. */
  maxRetryAfterMs: number;
  /** A monitoring ping (ping-client.ts), both its tries: it must never hold a delivery up for long. */
  pingTimeoutMs: number;
  /** The most S3 takes in one upload (5 GiB): a connection closed while sending more is most likely its refusal. */
  singleUploadLimitBytes: number;
}

export const DEFAULT_TUNING: HttpTuning = {
  connectTimeoutMs: 10_000,
  headersTimeoutMs: 60_000,
  idleTimeoutMs: 60_000,
  deadlineMs: 120_000,
  maxAnswerBytes: 4 * 1024 * 1024,
  maxAttempts: 6,
  uploadMaxAttempts: 5,
  baseDelayMs: 1_000,
  maxDelayMs: 20_000,
  maxTotalMs: 120_000,
  maxRetryAfterMs: 60_000,
  pingTimeoutMs: 10_000,
  singleUploadLimitBytes: 5 * 1024 ** 3,
};

const MAX_ERROR_BODY = 64 * 1024;

export interface HttpClientSetup {
  baseUrl: URL;
  /** Where the base URL is set, in the words of the caller's door (`the baseUrl option, BDS_BASE_URL or baseUrl`). */
  baseUrlSettings: string;
  apiKey: string;
  /** Value of X-Service-Client. */
  clientHeader: string;
  /** Proxy variables (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, lower case too). */
  env: ProxyEnv;
  tuning?: Partial<HttpTuning>;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  now: () => number;
  /** Stops every request of this client (Ctrl-C); each call may add a signal of its own. */
  signal: AbortSignal;
  /** One line per HTTP exchange, already redacted (for --verbose). */
  log?: ((line: string) => void) | undefined;
  onRetry?: ((notice: RetryNotice) => void) | undefined;
}

export interface JsonResponse<T> {
  status: number;
  body: T;
  requestId: string | undefined;
  /** The server's clock: its Date header. */
  date: string | undefined;
  /** The exchange, for an error about this answer. */
  request: RequestInfo;
}

export interface JsonRequest {
  query?: Record<string, string>;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
}

export interface UploadBody {
  size: number;
  /** A fresh stream of the whole file; called once per attempt. */
  open(): Readable;
}

export class HttpClient {
  readonly baseUrl: URL;
  private readonly options: HttpClientSetup;
  private readonly tuning: HttpTuning;
  private readonly dispatchers: Dispatchers;

  constructor(options: HttpClientSetup) {
    this.options = options;
    this.baseUrl = options.baseUrl;
    this.tuning = { ...DEFAULT_TUNING, ...options.tuning };
    this.dispatchers = new Dispatchers(options.env, this.tuning);
  }

  /** An API request with a JSON body and a JSON answer; retried on network errors and 408/429/5xx. */
  async json<T>(method: 'GET' | 'POST', path: string, req: JsonRequest = {}): Promise<JsonResponse<T>> {
    // Joined as text: resolving a path against the base URL could reach another host ("//host/...").
    const url = new URL(this.baseUrl.href.replace(/\/$/, '') + path);
    for (const [name, value] of Object.entries(req.query ?? {})) url.searchParams.set(name, value);
    const info: RequestInfo = { method, url: redactUrl(url) };
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const headers: Record<string, string> = {
      ...this.apiHeaders(),
      accept: 'application/json',
      ...req.headers,
    };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const limits = { maxAttempts: this.tuning.maxAttempts, maxTotalMs: this.tuning.maxTotalMs };
    return this.withRetries(info, limits, req.signal, (retrySignal) =>
      this.withDeadline(retrySignal, async (signal) => {
        const res = await this.send(info, url, { method, headers, body, signal });
        const requestId = requestIdOf(res.headers);
        const answered: RequestInfo = { ...info, status: res.statusCode, ...(requestId ? { requestId } : {}) };
        const success = res.statusCode >= 200 && res.statusCode < 300;
        // An error's answer is only summarised: its first bytes are enough.
        const text = success
          ? await this.readBody(answered, res, signal, { maxBytes: this.tuning.maxAnswerBytes, refuseLonger: true })
          : await this.readBody(answered, res, signal, { maxBytes: MAX_ERROR_BODY });
        if (success) {
          return {
            status: res.statusCode,
            body: parseJson<T>(text, res.headers, answered),
            requestId,
            date: header(res.headers, 'date'),
            request: answered,
          };
        }
        throw this.failure(answered, res.headers, text);
      }),
    );
  }

  /**
   * PUT (or the method given) of a file to an upload target, with a fixed Content-Length. The key goes only
   * to the API's own origin; a signed storage URL gets just the headers the API returned.
   */
  async upload(
    target: UploadTarget,
    file: UploadBody,
    onSent?: (bytes: number, chunk: Buffer) => void,
    callSignal?: AbortSignal,
  ): Promise<void> {
    const url = new URL(target.url);
    const info: RequestInfo = { method: target.method.toUpperCase(), url: redactUrl(url) };
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(target.headers)) {
      if (!HOP_HEADERS.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
    }
    if (url.origin === this.baseUrl.origin) Object.assign(headers, this.apiHeaders());
    headers['content-length'] = String(file.size);

    const limits = { maxAttempts: this.tuning.uploadMaxAttempts, maxTotalMs: Number.POSITIVE_INFINITY };
    await this.withRetries(info, limits, callSignal, async (signal) => {
      let sent = 0;
      // Counted on the way out without a stream in between: undici reads the file stream itself. Paused
      // first, so that our listener does not start the flow before undici listens (it resumes the stream).
      const source = file.open().pause();
      // Our own idle timer: undici never times out a request body that stops flowing.
      const idle = new AbortController();
      const timer = setTimeout(() => idle.abort(idleTimeout(this.tuning.idleTimeoutMs)), this.tuning.idleTimeoutMs);
      source.on('data', (chunk: Buffer) => {
        sent += chunk.length;
        timer.refresh();
        onSent?.(sent, chunk);
      });
      try {
        const res = await this.send(info, url, {
          method: info.method,
          headers,
          body: source,
          signal: AbortSignal.any([signal, idle.signal]),
        });
        clearTimeout(timer);
        const requestId = requestIdOf(res.headers, 'x-amz-request-id');
        const answered: RequestInfo = { ...info, status: res.statusCode, ...(requestId ? { requestId } : {}) };
        // The file is sent: from here on, its answer has the deadline of an API request.
        const text = await this.withDeadline(signal, (deadline) =>
          this.readBody(answered, res, deadline, { maxBytes: MAX_ERROR_BODY }),
        );
        if (res.statusCode >= 200 && res.statusCode < 300) return;
        if (res.statusCode === 413 || TOO_LARGE_CODES.has(errorCode(text, res.headers) ?? '')) {
          throw new UploadTooLargeError(file.size, maxSizeAllowed(text, res.headers), answered);
        }
        throw this.failure(answered, res.headers, text);
      } catch (error) {
        throw overSingleUploadLimit(error, file.size, this.tuning.singleUploadLimitBytes);
      } finally {
        clearTimeout(timer);
        source.destroy();
      }
    });
  }

  close(): Promise<void> {
    return this.dispatchers.close();
  }

  private apiHeaders(): Record<string, string> {
    return { authorization: `Bearer ${this.options.apiKey}`, [CLIENT_HEADER]: this.options.clientHeader };
  }

  /** One exchange: returns any HTTP answer; turns transport failures into Retryable or final errors. */
  private async send(
    info: RequestInfo,
    url: URL,
    init: { method: string; headers: Record<string, string>; body?: string | Readable; signal: AbortSignal },
  ): Promise<Dispatcher.ResponseData> {
    // Before the request: an unusable proxy variable is the user's to fix (exit 2), not a network failure.
    const dispatcher = this.dispatchers.for(url);
    const started = this.options.now();
    try {
      const res = await request(url, {
        method: init.method as Dispatcher.HttpMethod,
        headers: init.headers,
        body: init.body ?? null,
        signal: init.signal,
        dispatcher,
        headersTimeout: this.tuning.headersTimeoutMs,
        bodyTimeout: this.tuning.idleTimeoutMs,
      });
      const requestId = requestIdOf(res.headers);
      this.log(
        `${info.method} ${info.url} → ${res.statusCode} (${this.options.now() - started} ms)${requestId ? ` [${requestId}]` : ''}`,
      );
      return res;
    } catch (error) {
      this.log(`${info.method} ${info.url} → ${describeTransportError(error)} (${this.options.now() - started} ms)`);
      throw this.transportFailure(info, error, init.signal);
    }
  }

  /**
   * Reads an answer's body, its first maxBytes: the rest is left unread, or with refuseLonger an error that is not
   * retried (a server sending that much is not the API). A reset or a stall there is a transport failure like one
   * before the headers.
   */
  private async readBody(
    info: RequestInfo,
    res: Dispatcher.ResponseData,
    signal: AbortSignal,
    limit: { maxBytes: number; refuseLonger?: boolean },
  ): Promise<string> {
    const tooLong = (): NetworkError => {
      this.log(`${info.method} ${info.url} → ${res.statusCode}, then more than ${binarySize(limit.maxBytes)}`);
      return new NetworkError(
        `${info.method} ${info.url} → ${res.statusCode} with an answer larger than ${binarySize(limit.maxBytes)}, the most bds reads from the API`,
        info,
        { hint: 'is the base URL the Batch Delivery Service API?' },
      );
    };
    if (limit.refuseLonger && Number(header(res.headers, 'content-length')) > limit.maxBytes) {
      res.body.destroy();
      throw tooLong();
    }
    let read: { text: string; longer: boolean };
    try {
      read = await readUpTo(res.body, limit.maxBytes);
    } catch (error) {
      this.log(`${info.method} ${info.url} → ${res.statusCode}, then ${describeTransportError(error)}`);
      throw this.transportFailure(info, error, signal);
    }
    if (read.longer && limit.refuseLonger) throw tooLong();
    return read.text;
  }

  /** Runs one attempt under the deadline: a server that trickles its answer a byte at a time ends it too. */
  private async withDeadline<T>(signal: AbortSignal, attempt: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const { deadlineMs } = this.tuning;
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(deadlineExceeded(deadlineMs)), deadlineMs);
    try {
      return await attempt(AbortSignal.any([signal, deadline.signal]));
    } finally {
      clearTimeout(timer);
    }
  }

  /** A request that got no answer, or only part of one: through a proxy, the proxy is named. */
  private transportFailure(info: RequestInfo, error: unknown, signal: AbortSignal): Error {
    if (this.options.signal.aborted) return this.options.signal.reason as Error;
    // A call's own signal (a delivery's abort) carries a BdsError as its reason, returned below.
    const reason = signal.aborted ? signal.reason : error;
    // An error raised by the body stream itself (the file vanished, bds's own checks) is not the network's.
    if (reason instanceof BdsError) return reason;
    const proxy = this.dispatchers.proxyFor(new URL(info.url));
    const refusal = proxy && proxyRefusal(reason, proxy);
    if (refusal) {
      const failure = new NetworkError(`${info.method} ${info.url} failed: ${refusal.message}`, info, {
        cause: reason,
        hint: refusal.hint,
      });
      return RETRY_STATUSES.has(refusal.status) ? new Retryable(failure) : failure;
    }
    // A tunnel that could not be opened failed at the proxy: its own cause says how.
    const tunnel = reason instanceof ProxyConnectError;
    const cause = tunnel ? reason.cause : reason;
    const code = errorCodeOf(cause);
    const words = describeTransportError(cause);
    const hint = (code === undefined ? undefined : TRANSPORT_HINTS[code]) ?? (proxy && proxyHint(proxy.variable));
    const failure = new NetworkError(`${info.method} ${info.url} failed: ${proxyWords(proxy, tunnel, words)}`, info, {
      cause,
      ...(hint ? { hint } : {}),
    });
    return code !== undefined && RETRY_NETWORK_CODES.has(code) ? new Retryable(failure) : failure;
  }

  /** The error for an HTTP answer that is not a success. */
  private failure(info: RequestInfo, headers: Dispatcher.ResponseData['headers'], text: string): Error {
    const status = info.status ?? 0;
    const message = errorMessage(text, headers) ?? `HTTP ${status}`;
    const code = errorCode(text, headers);
    const line = `${info.method} ${info.url} → ${status}: ${message}${info.requestId ? ` (request id ${info.requestId})` : ''}`;
    if (status >= 300 && status < 400) {
      const location = header(headers, 'location');
      return new ApiError(
        `${info.method} ${info.url} → ${status}: redirected to ${location ? redactUrl(location) : '(no location)'}; bds never follows redirects`,
        info,
        {
          hint: `check the base URL (${this.options.baseUrlSettings}): it should be the API address itself`,
          about: { code: 'redirected' },
        },
      );
    }
    if ((status === 401 || status === 403) && new URL(info.url).origin === this.baseUrl.origin) {
      return new AuthError(line, {
        request: info,
        hint: 'the API refused the key: check BDS_API_KEY, BDS_API_KEY_FILE or apiKey, and that it is for this base URL',
      });
    }
    if (RETRY_STATUSES.has(status)) {
      return new Retryable(
        new NetworkError(line, info),
        retryAfterMs(header(headers, 'retry-after'), this.options.now()),
      );
    }
    if (status >= 500) return new NetworkError(line, info);
    const hint = status === 404 ? this.doubledPrefixHint(info) : undefined;
    return new ApiError(line, info, { ...(code !== undefined && { code }), ...(hint && { hint }) });
  }

  /**
   * bds puts /api/v1 before each path itself: a base URL that ends with it asks for /api/v1/api/v1/me, which no
   * API has. The hint names the base URL to use instead.
   */
  private doubledPrefixHint(info: RequestInfo): string | undefined {
    const basePath = this.baseUrl.pathname.replace(/\/+$/, '');
    if (!basePath.endsWith(API_PREFIX) || !info.url.startsWith(`${this.baseUrl.origin}${basePath}${API_PREFIX}/`))
      return undefined;
    return `leave ${API_PREFIX} out of the base URL, which bds adds itself: ${this.baseUrl.origin}${basePath.slice(0, -API_PREFIX.length)}`;
  }

  private withRetries<T>(
    info: RequestInfo,
    limits: { maxAttempts: number; maxTotalMs: number },
    callSignal: AbortSignal | undefined,
    attempt: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const { sleep, random, now, onRetry } = this.options;
    const signal = callSignal ? AbortSignal.any([this.options.signal, callSignal]) : this.options.signal;
    return withRetries({ policy: this.tuning, sleep, random, now, signal, onRetry }, info, limits, attempt);
  }

  private log(line: string): void {
    this.options.log?.(line);
  }
}

/** A storage host's codes for a body larger than one upload may be: S3's, and the sandbox API route's. */
const TOO_LARGE_CODES = new Set(['EntityTooLarge', 'entity_too_large']);

const HOP_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);

function header(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A request id header, cleaned: it reaches messages and --verbose lines. */
function requestIdOf(headers: Dispatcher.ResponseData['headers'], storageHeader?: string): string | undefined {
  const value = header(headers, REQUEST_ID_HEADER) ?? (storageHeader && header(headers, storageHeader));
  return value ? cleanText(value, REQUEST_ID_MAX) || undefined : undefined;
}

/** Long enough for any request id seen (UUIDs, S3's), short enough for an error line. */
const REQUEST_ID_MAX = 100;

/** A body's first maxBytes as text; `longer` when there was more (left unread: the stream is destroyed). */
async function readUpTo(
  body: Dispatcher.ResponseData['body'],
  maxBytes: number,
): Promise<{ text: string; longer: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let longer = false;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (size + chunk.length > maxBytes) {
      chunks.push(chunk.subarray(0, maxBytes - size));
      longer = true;
      break;
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return { text: Buffer.concat(chunks).toString('utf8'), longer };
}

/** 4 MiB, 64 KiB: a limit as its documentation writes it. */
function binarySize(bytes: number): string {
  if (bytes % 2 ** 20 === 0) return `${bytes / 2 ** 20} MiB`;
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;
}

function parseJson<T>(text: string, headers: Dispatcher.ResponseData['headers'], info: RequestInfo): T {
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object') return value as T;
  } catch {
    // reported below
  }
  throw new NetworkError(
    `${info.method} ${info.url} → ${info.status} with a body that is not a JSON object: ${describeBody(text, headers)}`,
    info,
    { hint: 'is the base URL the API, and not a web page or a proxy?' },
  );
}

function deadlineExceeded(ms: number): Error {
  return Object.assign(new Error(`no complete answer within ${Math.round(ms / 100) / 10} s`), {
    code: 'BDS_DEADLINE',
  });
}

/** How a connection ends when the other side closes it while bds is still sending. */
const CLOSED_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET']);

/**
 * An upload of more than S3 takes in one PUT whose connection was closed: S3 answers 400 EntityTooLarge and closes
 * the connection while the body is still coming, so its answer is often never read. The failure gets a hint
 * naming the likely limit; it is retried all the same, as any reset is (a reset may be the network's, and hosts
 * other than S3 take larger files in one PUT).
 */
function overSingleUploadLimit(error: unknown, size: number, limit: number): unknown {
  const failure = error instanceof Retryable ? error.failure : error;
  if (size <= limit || !(failure instanceof NetworkError) || !CLOSED_CODES.has(errorCodeOf(failure.cause) ?? '')) {
    return error;
  }
  const shown = limit % 1024 ** 3 === 0 ? `${limit / 1024 ** 3} GiB` : `${limit} bytes`;
  const hinted = new NetworkError(failure.message, failure.request, {
    cause: failure.cause,
    hint:
      `the file is ${size} bytes, over ${shown}, the most S3 takes in one upload: a storage host that closes the ` +
      'connection on a file this large is most likely refusing its size, and the service must accept the file in ' +
      'parts before it can be delivered',
  });
  return error instanceof Retryable ? new Retryable(hinted, error.retryAfterMs) : hinted;
}

function idleTimeout(ms: number): Error {
  return Object.assign(new Error(`no upload progress for ${Math.round(ms / 1000)} s`), { code: 'BDS_IDLE_TIMEOUT' });
}

function errorCodeOf(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const { code, cause } = error as { code?: unknown; cause?: unknown };
  if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
  // undici wraps the socket's own error (ECONNRESET and the like) as its cause.
  return errorCodeOf(cause) ?? (typeof code === 'string' ? code : undefined);
}

const TRANSPORT_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed while sending',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'name lookup failed',
  UND_ERR_SOCKET: 'connection closed by the other side',
  UND_ERR_CONNECT_TIMEOUT: 'timed out connecting',
  UND_ERR_HEADERS_TIMEOUT: 'timed out waiting for the response',
  UND_ERR_BODY_TIMEOUT: 'timed out reading the response',
  BDS_IDLE_TIMEOUT: 'the upload stalled',
  ERR_SSL_WRONG_VERSION_NUMBER: 'the server did not answer in TLS',
};

const UNTRUSTED_CERTIFICATE =
  "no certificate authority Node trusts signed the server's certificate; if a proxy or gateway re-signs TLS " +
  'with its own, point NODE_EXTRA_CA_CERTS at that authority (a PEM file)';
const TRANSPORT_HINTS: Record<string, string> = {
  ERR_SSL_WRONG_VERSION_NUMBER: 'is this an https:// URL for an http:// server? (the sandbox speaks http://)',
  DEPTH_ZERO_SELF_SIGNED_CERT: UNTRUSTED_CERTIFICATE,
  SELF_SIGNED_CERT_IN_CHAIN: UNTRUSTED_CERTIFICATE,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: UNTRUSTED_CERTIFICATE,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: UNTRUSTED_CERTIFICATE,
};

/** A transport failure of a proxied request: at the proxy (no tunnel), or on the way through it. */
function proxyWords(proxy: ProxyServer | undefined, tunnel: boolean, words: string): string {
  if (!proxy) return words;
  const name = `the proxy ${proxy.shown} (${proxy.variable})`;
  return tunnel ? `${name} failed to open a tunnel: ${words}` : `${words}, through ${name}`;
}

/** What to check when a proxy failed to carry a request (doctor's TLS check says the same). */
export function proxyHint(variable: string): string {
  return `is the proxy running, and can it reach the host? check ${variable}, and NO_PROXY for hosts to reach directly`;
}

const NODE_CA_ADVICE = /; if the root CA is installed locally, try running Node\.js with --use-system-ca/;

export function describeTransportError(error: unknown): string {
  const code = errorCodeOf(error);
  const words = code === undefined ? undefined : TRANSPORT_WORDS[code];
  if (words) return `${words} (${code})`;
  // OpenSSL's own message spans two lines and names its source files; its reason is what a person can read.
  const { reason } = (error ?? {}) as { reason?: unknown };
  const message =
    typeof reason === 'string' && reason
      ? `TLS error: ${reason}`
      : error instanceof Error
        ? error.message
        : String(error);
  // Node 24 adds advice about its own flag to certificate errors; bds's hint says what to do instead.
  const line = message.replace(NODE_CA_ADVICE, '').replace(/\s+/g, ' ').trim();
  return code ? `${line} (${code})` : line;
}
