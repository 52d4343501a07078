// The sandbox's state: sources, batches and uploaded objects. No HTTP here.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { BatchStatus, CreateBatchRequest } from '../core/api/types.js';

export interface SourceRecord {
  id: string;
  name: string;
  description?: string;
  created_at: string;
}

export interface UploadRecord {
  bytes: number;
  sha256: string;
}

/** A batch as the sandbox keeps it: what the create asked for, and what happened to it since. */
export interface BatchRecord extends CreateBatchRequest {
  id: string;
  status: BatchStatus;
  created_at: string;
  /** The X-Service-Client header of the create. */
  client: string | null;
  key_id: string;
  idempotency_key: string | null;
  upload: UploadRecord | null;
  /** Headers the last successful upload carried, lower-cased. */
  upload_headers: Record<string, string> | null;
  /** When the upload was confirmed: the review's clock starts here. Absent in state files of older sandboxes. */
  received_at?: string | null;
  /** A test decided the review (the control route, review()): the sandbox's own review leaves it alone. */
  review_decided?: boolean;
}

/** What the sandbox's own review does to a received batch: accept or reject it, or nothing (a test decides). */
export type ReviewMode = 'accept' | 'reject' | 'none';

/** The review's decisions a test may make for one batch. */
export const REVIEW_STATUSES = ['accepted', 'rejected', 'in_review'] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];

export type NewBatch = Pick<
  BatchRecord,
  'source_id' | 'product' | 'period' | 'record_count' | 'schema' | 'report' | 'client' | 'key_id' | 'idempotency_key'
>;

interface State {
  /** Kept with the state so that signed upload URLs stay valid across a restart with the same data dir. */
  signing_secret: string;
  sources: SourceRecord[];
  batches: BatchRecord[];
  /** "<key id> <Idempotency-Key>" → source id, so that a repeated create returns the same source. */
  source_idempotency_keys?: Record<string, string>;
}

const STATE_FILE = 'state.json';
const PARTIAL_SUFFIX = '.part';

export class SandboxStore {
  private readonly state: State;
  private readonly objectsDir: string;

  /** `persist`: save the state to `dir/state.json` after each change and load it here; else it lives in memory. */
  constructor(
    private readonly dir: string,
    private readonly persist: boolean,
    private readonly now: () => number,
  ) {
    this.objectsDir = path.join(dir, 'objects');
    fs.mkdirSync(this.objectsDir, { recursive: true });
    this.state = (persist && loadState(path.join(dir, STATE_FILE))) || {
      signing_secret: randomBytes(32).toString('hex'),
      sources: [],
      batches: [],
    };
    // Uploads cut off by a crash leave partial files behind; nothing refers to them.
    for (const name of fs.readdirSync(this.objectsDir)) {
      if (name.endsWith(PARTIAL_SUFFIX)) fs.rmSync(path.join(this.objectsDir, name), { force: true });
    }
    this.save();
  }

  get signingSecret(): string {
    return this.state.signing_secret;
  }

  sources(): SourceRecord[] {
    return structuredClone(this.state.sources);
  }

  source(id: string): SourceRecord | undefined {
    const found = this.state.sources.find((source) => source.id === id);
    return found && structuredClone(found);
  }

  /** With an idempotency key already seen for this API key, the source it created then. */
  createSource(
    input: { name: string; description?: string },
    idempotency?: { keyId: string; key: string },
  ): SourceRecord {
    const keys = (this.state.source_idempotency_keys ??= {});
    const earlier = idempotency && keys[`${idempotency.keyId} ${idempotency.key}`];
    if (earlier) return this.source(earlier)!;
    const source: SourceRecord = {
      id: `src_${randomBytes(8).toString('hex')}`,
      name: input.name,
      created_at: this.timestamp(),
    };
    if (input.description !== undefined) source.description = input.description;
    this.state.sources.push(source);
    if (idempotency) keys[`${idempotency.keyId} ${idempotency.key}`] = source.id;
    this.save();
    return structuredClone(source);
  }

  /** All batches in creation order. */
  batches(): BatchRecord[] {
    return structuredClone(this.state.batches);
  }

  batch(id: string): BatchRecord | undefined {
    const found = this.findBatch(id);
    return found && structuredClone(found);
  }

  findByIdempotencyKey(keyId: string, idempotencyKey: string): BatchRecord | undefined {
    const found = this.state.batches.find(
      (batch) => batch.key_id === keyId && batch.idempotency_key === idempotencyKey,
    );
    return found && structuredClone(found);
  }

  createBatch(input: NewBatch): BatchRecord {
    const batch: BatchRecord = {
      id: `bat_${randomBytes(8).toString('hex')}`,
      ...structuredClone(input),
      status: 'awaiting_upload',
      created_at: this.timestamp(),
      upload: null,
      upload_headers: null,
    };
    this.state.batches.push(batch);
    this.save();
    return structuredClone(batch);
  }

  /** Throws when the batch does not exist. */
  setStatus(id: string, status: BatchStatus): void {
    const batch = this.findBatch(id);
    if (!batch) throw new Error(`no batch ${id}`);
    batch.status = status;
    if (status === 'received') batch.received_at = this.timestamp();
    this.save();
  }

  /** A test's decision for one batch; it must have been received. Throws a ReviewError otherwise. */
  review(id: string, status: ReviewStatus): void {
    if (!REVIEW_STATUSES.includes(status))
      throw new ReviewError('invalid_request', `status must be one of ${REVIEW_STATUSES.join(', ')}`);
    const batch = this.findBatch(id);
    if (!batch) throw new ReviewError('batch_not_found', `batch ${id} does not exist`);
    if (batch.status === 'awaiting_upload')
      throw new ReviewError('not_received', `batch ${id} is awaiting_upload: only a received batch is reviewed`);
    batch.status = status;
    batch.review_decided = true;
    this.save();
  }

  /**
   * The sandbox's own review, brought up to `now`: a received batch is in review at once, and accepted (or
   * rejected) once `afterMs` have passed since it was received. Worked out from the stored times whenever the
   * API is asked, so it needs no timer and goes on where it was after a restart with the same data dir.
   */
  advanceReviews(mode: ReviewMode, afterMs: number): void {
    if (mode === 'none') return;
    const now = this.now();
    let changed = false;
    for (const batch of this.state.batches) {
      if ((batch.status !== 'received' && batch.status !== 'in_review') || batch.review_decided) continue;
      const receivedAt = Date.parse(batch.received_at ?? batch.created_at);
      const status: BatchStatus =
        now - receivedAt >= afterMs ? (mode === 'accept' ? 'accepted' : 'rejected') : 'in_review';
      if (status === batch.status) continue;
      batch.status = status;
      changed = true;
    }
    if (changed) this.save();
  }

  /** Where a fresh upload for the batch is written before it is recorded. */
  newUploadTempPath(id: string): string {
    return path.join(this.objectsDir, `${id}.${randomBytes(6).toString('hex')}${PARTIAL_SUFFIX}`);
  }

  /**
   * Moves a fully received upload into place, replacing any earlier one. Returns false (and leaves the
   * file alone) when the batch is gone or no longer awaiting an upload.
   */
  recordUpload(id: string, tempPath: string, upload: UploadRecord, headers: Record<string, string>): boolean {
    const batch = this.findBatch(id);
    if (!batch || batch.status !== 'awaiting_upload') return false;
    fs.renameSync(tempPath, this.objectPath(id));
    batch.upload = { ...upload };
    batch.upload_headers = { ...headers };
    this.save();
    return true;
  }

  uploadPath(id: string): string | null {
    return this.findBatch(id)?.upload ? this.objectPath(id) : null;
  }

  uploadedBytes(id: string): Buffer | null {
    const file = this.uploadPath(id);
    return file === null ? null : fs.readFileSync(file);
  }

  uploadedSha256(id: string): string | null {
    return this.findBatch(id)?.upload?.sha256 ?? null;
  }

  private findBatch(id: string): BatchRecord | undefined {
    return this.state.batches.find((batch) => batch.id === id);
  }

  private objectPath(id: string): string {
    return path.join(this.objectsDir, id);
  }

  private timestamp(): string {
    return new Date(this.now()).toISOString();
  }

  private save(): void {
    if (!this.persist) return;
    const file = path.join(this.dir, STATE_FILE);
    const temp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, JSON.stringify(this.state, null, 2));
    fs.renameSync(temp, file);
  }
}

/** Why a review could not be made; `code` is the control route's error code. */
export class ReviewError extends Error {
  constructor(
    readonly code: 'invalid_request' | 'batch_not_found' | 'not_received',
    message: string,
  ) {
    super(message);
  }
}

function loadState(file: string): State | undefined {
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    // A folder by that name is no state file either: reported below, as a file of another tool is.
    if (code !== 'EISDIR') throw error;
  }
  let state: State | undefined;
  try {
    state = JSON.parse(text) as State;
  } catch {
    // reported below
  }
  if (typeof state?.signing_secret !== 'string' || !Array.isArray(state.sources) || !Array.isArray(state.batches)) {
    throw Object.assign(new Error(`${file} is not a sandbox state file`), { code: 'ESANDBOXSTATE' });
  }
  return state;
}
