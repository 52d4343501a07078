// Typed endpoints of the Batch Delivery Service. Each checks that the answer has the fields bds relies on,
// so a response that makes no sense becomes a clear NetworkError (exit 5) instead of a crash, and passes the
// text fields bds shows (names, ids, statuses, periods) through clean-text.ts: from here on they are safe for a
// terminal, a log and an annotation, and an honest server's values come out unchanged.

import { NetworkError, type RequestInfo } from '../errors.js';
import { cleanText } from '../clean-text.js';
import { travelsSafely } from './url-rules.js';
import type { HttpClient, JsonResponse, UploadBody } from './http.js';
import {
  API_PREFIX,
  IDEMPOTENCY_HEADER,
  type BatchListEntry,
  type BatchRef,
  type BatchStatus,
  type CompleteBatchRequest,
  type CompleteBatchResponse,
  type CreateBatchRequest,
  type CreateBatchResponse,
  type CreateSourceRequest,
  type CreateSourceResponse,
  type KeyMode,
  type ListBatchesResponse,
  type MeResponse,
  type Product,
  type Source,
  type UploadTarget,
} from './types.js';

export class ApiClient {
  constructor(readonly http: HttpClient) {}

  async me(signal?: AbortSignal): Promise<MeResponse> {
    return (await this.meAndClock(signal)).me;
  }

  /** GET /me, and the server's clock from its Date header (doctor compares it with this machine's). */
  async meAndClock(signal?: AbortSignal): Promise<{ me: MeResponse; serverDate: string | undefined }> {
    const res = await this.http.json<MeResponse>('GET', `${API_PREFIX}/me`, { signal });
    const { organization, key } = res.body;
    if (typeof organization?.name !== 'string' || typeof key?.id !== 'string' || typeof key?.mode !== 'string') {
      throw nonsense(res, 'GET /me', 'organization.name, key.id or key.mode');
    }
    // Shown to a person: safe for a terminal from here on.
    const me = {
      ...res.body,
      organization: { ...organization, name: cleanText(organization.name) },
      key: { ...key, id: cleanText(key.id), mode: cleanText(key.mode) as KeyMode },
    };
    return { me, serverDate: res.date };
  }

  async createSource(req: CreateSourceRequest, idempotencyKey: string, signal?: AbortSignal): Promise<Source> {
    const res = await this.http.json<CreateSourceResponse>('POST', `${API_PREFIX}/sources`, {
      body: req,
      headers: { [IDEMPOTENCY_HEADER]: idempotencyKey },
      signal,
    });
    const source =
      'source' in res.body && res.body.source && typeof res.body.source === 'object' ? res.body.source : res.body;
    if (typeof (source as Source).id !== 'string') throw nonsense(res, 'POST /sources', 'source.id');
    const { id, name } = source as Source;
    return { ...(source as Source), id: cleanText(id), ...(typeof name === 'string' ? { name: cleanText(name) } : {}) };
  }

  async createBatch(
    req: CreateBatchRequest,
    idempotencyKey: string,
    signal?: AbortSignal,
  ): Promise<CreateBatchResponse> {
    const res = await this.http.json<CreateBatchResponse>('POST', `${API_PREFIX}/batches`, {
      body: req,
      headers: { [IDEMPOTENCY_HEADER]: idempotencyKey },
      signal,
    });
    const { batch, upload } = res.body;
    checkBatch(res, batch, 'POST /batches');
    if (!isUploadTarget(upload)) {
      throw nonsense(
        res,
        'POST /batches',
        'a usable upload (url, method, headers; https://, or http:// only to this machine)',
      );
    }
    return { batch: cleanBatch(batch), upload: { ...upload, headers: upload.headers ?? {} } };
  }

  upload(
    target: UploadTarget,
    file: UploadBody,
    onSent?: (bytes: number, chunk: Buffer) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    return this.http.upload(target, file, onSent, signal);
  }

  /** The batch as the answer gives it, and the exchange (for an error about a status that is not delivered). */
  async completeBatch(
    id: string,
    sha256: string,
    signal?: AbortSignal,
  ): Promise<{ batch: BatchRef; request: RequestInfo }> {
    const res = await this.http.json<CompleteBatchResponse>(
      'POST',
      `${API_PREFIX}/batches/${encodeURIComponent(id)}/complete`,
      { body: { sha256 } satisfies CompleteBatchRequest, signal },
    );
    checkBatch(res, res.body.batch, 'POST /complete');
    return { batch: cleanBatch(res.body.batch), request: res.request };
  }

  /** The source's batches, newest first. */
  async listBatches(sourceId: string, signal?: AbortSignal): Promise<BatchListEntry[]> {
    const res = await this.http.json<ListBatchesResponse>('GET', `${API_PREFIX}/batches`, {
      query: { source_id: sourceId },
      signal,
    });
    const { batches } = res.body;
    if (!Array.isArray(batches) || !batches.every(isListEntry)) {
      throw nonsense(res, 'GET /batches', 'batches, each with id, period, product, status');
    }
    // The API promises no order; bds shows and decides newest first.
    return batches.map(cleanListEntry).sort((a, b) => String(b.created_at).localeCompare(String(a.created_at)));
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

function checkBatch(res: JsonResponse<unknown>, batch: BatchRef | undefined, what: string): asserts batch is BatchRef {
  if (typeof batch?.id !== 'string' || !batch.id || typeof batch.status !== 'string') {
    throw nonsense(res, what, 'batch.id and batch.status');
  }
}

function cleanBatch<T extends BatchRef>(batch: T): T {
  return { ...batch, id: cleanText(batch.id), status: cleanText(batch.status) as BatchStatus };
}

function cleanListEntry(entry: BatchListEntry): BatchListEntry {
  const created = entry.created_at as unknown;
  return {
    ...cleanBatch(entry),
    period: cleanText(entry.period),
    product: cleanText(entry.product) as Product,
    ...(typeof created === 'string' ? { created_at: cleanText(created) } : {}),
  };
}

function isUploadTarget(value: unknown): value is UploadTarget {
  if (value === null || typeof value !== 'object') return false;
  const { url, method, headers } = value as Record<string, unknown>;
  // The method goes on the wire and into messages: an HTTP token, nothing else.
  if (typeof url !== 'string' || typeof method !== 'string' || !HTTP_TOKEN.test(method)) return false;
  try {
    // Else the file and the signed URL would travel in clear.
    if (!travelsSafely(new URL(url))) return false;
  } catch {
    return false;
  }
  return (
    headers === undefined ||
    (headers !== null && typeof headers === 'object' && Object.values(headers).every((v) => typeof v === 'string'))
  );
}

const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function isListEntry(value: unknown): value is BatchListEntry {
  if (value === null || typeof value !== 'object') return false;
  const entry = value as Record<string, unknown>;
  return (
    typeof entry.id === 'string' &&
    typeof entry.period === 'string' &&
    typeof entry.product === 'string' &&
    typeof entry.status === 'string'
  );
}

function nonsense(res: JsonResponse<unknown>, what: string, missing: string): NetworkError {
  return new NetworkError(
    `the API's answer to ${what} (${res.status}) makes no sense: it lacks ${missing}${res.requestId ? ` (request id ${res.requestId})` : ''}`,
    res.request,
    { hint: 'is the base URL the Batch Delivery Service API?' },
  );
}
