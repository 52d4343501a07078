// Wire types of the Batch Delivery Service API, as the service's API reference gives them.
// Shared by the client (src/core/api) and the sandbox (src/sandbox); nothing else is shared between them.

export const API_PREFIX = '/api/v1';

export const PRODUCTS = ['records', 'episodes', 'environment'] as const;
export type Product = (typeof PRODUCTS)[number];

export const BATCH_STATUSES = ['awaiting_upload', 'received', 'in_review', 'accepted', 'rejected'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

export const KEY_PREFIXES = { live: 'svc_live_', test: 'svc_test_' } as const;
export type KeyMode = keyof typeof KEY_PREFIXES;

/** The header a create carries so that a retried create returns the same batch. */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** The header every API response may carry to identify the request in the service's logs. */
export const REQUEST_ID_HEADER = 'x-request-id';
export const CLIENT_HEADER = 'x-service-client';

export interface Column {
  name: string;
  role: string;
  kind: string;
  transform?: string;
}

export interface RecordsSchema {
  format: 'jsonl';
  objects: Record<string, Column[]>;
}

export interface EpisodesSchema {
  format: 'episodes/v1';
  steps: Column[];
}

export type Schema = RecordsSchema | EpisodesSchema | Record<string, unknown>;

export interface ScrubReport {
  tool: string;
  files: unknown[];
  totals: Record<string, unknown>;
  [key: string]: unknown;
}

/** GET /api/v1/me */
export interface MeResponse {
  organization: { name: string };
  key: { id: string; mode: KeyMode };
  [key: string]: unknown;
}

/** POST /api/v1/sources */
export interface CreateSourceRequest {
  name: string;
  description?: string;
}

export interface Source {
  id: string;
  name: string;
  description?: string;
  created_at?: string;
}

/** The service may answer `{source: {...}}` or the bare source; the client accepts both. */
export type CreateSourceResponse = { source: Source } | Source;

/** POST /api/v1/batches */
export interface CreateBatchRequest {
  source_id: string;
  product: Product;
  period: string;
  record_count: number;
  schema: Schema;
  report: ScrubReport;
}

export interface BatchRef {
  id: string;
  status: BatchStatus;
}

export interface UploadTarget {
  url: string;
  method: string;
  headers: Record<string, string>;
}

export interface CreateBatchResponse {
  batch: BatchRef;
  upload: UploadTarget;
}

/** POST /api/v1/batches/:id/complete */
export interface CompleteBatchRequest {
  sha256: string;
}

export interface CompleteBatchResponse {
  batch: BatchRef;
}

/** GET /api/v1/batches?source_id=... */
export interface BatchListEntry {
  id: string;
  period: string;
  product: Product;
  record_count: number;
  status: BatchStatus;
  created_at: string;
}

export interface ListBatchesResponse {
  batches: BatchListEntry[];
}

/** Error bodies. The reference leaves them open; this is what the sandbox sends and the client reads first. */
export interface ErrorBody {
  error: { code: string; message: string };
}

/** Error codes the client acts on (beyond showing the message). */
export const ERROR_CODES = {
  checksumMismatch: 'checksum_mismatch',
  uploadMissing: 'upload_missing',
} as const;
