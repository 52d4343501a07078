// Receiving an upload, shared by the storage host and the API's own upload route: the body is streamed
// to a file while hashed, never held in memory.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { BatchStatus } from '../core/api/types.js';
import type { Exchange, Reply } from './http.js';
import { lowerCaseHeaders, RECEIVED_SLOT_MS, type RecordedRequest } from './http.js';
import type { SandboxStore, UploadRecord } from './store.js';

/** Large buffers so that multi-GiB uploads go at disk speed. */
export const STREAM_HIGH_WATER_MARK = 1 << 20;

/** The headers an upload must carry, as the create response lists them (and the storage URL signs them). */
export function uploadHeaders(batchId: string): Record<string, string> {
  return { 'Content-Type': 'application/gzip', 'x-bds-batch-id': batchId };
}

/** Real storage's own limit on one PUT (S3's); the sandbox's default. */
export const DEFAULT_MAX_UPLOAD_BYTES = 5 * 1024 ** 3;

/** Headers that a signed-URL host wants covered by the signature whenever they are sent (S3: x-amz-*). */
const MUST_BE_SIGNED = /^x-(amz|bds)-/;

/** Why storage refuses an upload before reading its body: S3's status, code and message, and S3's details. */
export interface Refusal {
  status: number;
  code: string;
  message: string;
  details?: Record<string, string>;
  /** Answered at once, the body unread, and the connection closed after the answer. */
  closeUnread?: boolean;
}

/** The framing real storage refuses: a chunked body (S3 answers 501) or none of a known length (411). */
export function framingRefusal(exchange: Exchange): Refusal | null {
  const { headers } = exchange.req;
  if (headers['transfer-encoding'] !== undefined) {
    return {
      status: 501,
      code: 'NotImplemented',
      message: 'A header you provided implies functionality that is not implemented',
      details: { Header: 'Transfer-Encoding' },
    };
  }
  if (headers['content-length'] === undefined) {
    return { status: 411, code: 'MissingContentLength', message: 'You must provide the Content-Length HTTP header.' };
  }
  return null;
}

/** A signed header missing or changed, or a header of the signed kind that the signature does not cover. */
export function headerRefusal(exchange: Exchange, batchId: string): Refusal | null {
  const signed = uploadHeaders(batchId);
  for (const [name, expected] of Object.entries(signed)) {
    if (exchange.req.headers[name.toLowerCase()] !== expected) {
      return {
        status: 403,
        code: 'SignatureDoesNotMatch',
        message: 'The request signature we calculated does not match the signature you provided.',
        details: { SignedHeader: name.toLowerCase() },
      };
    }
  }
  const signedNames = new Set(Object.keys(signed).map((name) => name.toLowerCase()));
  const unsigned = Object.keys(exchange.req.headers).filter(
    (name) => MUST_BE_SIGNED.test(name) && !signedNames.has(name),
  );
  if (unsigned.length === 0) return null;
  return {
    status: 403,
    code: 'AccessDenied',
    message: 'There were headers present in the request which were not signed',
    details: { HeadersNotSigned: unsigned.join(', ') },
  };
}

/** A body over the limit, refused from its Content-Length alone, as S3 refuses one over 5 GiB. */
export function sizeRefusal(exchange: Exchange, maxBytes: number): Refusal | null {
  const proposed = Number(exchange.req.headers['content-length']);
  if (!(proposed > maxBytes)) return null;
  return {
    status: 400,
    code: 'EntityTooLarge',
    message: 'Your proposed upload exceeds the maximum allowed size',
    details: { ProposedSize: String(proposed), MaxSizeAllowed: String(maxBytes) },
    closeUnread: true,
  };
}

/** The `Content-MD5` header, if sent (twice: both values, which no MD5 matches). */
function contentMd5Of(req: Exchange['req']): string | undefined {
  const value = req.headers['content-md5'];
  return Array.isArray(value) ? value.join(',') : value;
}

/** A `Content-MD5` that is no MD5 (the base64 of 16 bytes): S3 refuses it before reading the body. */
export function digestRefusal(exchange: Exchange): Refusal | null {
  const given = contentMd5Of(exchange.req);
  if (given === undefined || Buffer.from(given, 'base64').length === 16) return null;
  return { status: 400, code: 'InvalidDigest', message: 'The Content-MD5 you specified is not valid.' };
}

/** A body whose MD5 is not the `Content-MD5` it came with: S3's 400 BadDigest, nothing stored. */
function badDigest(expected: string, calculated: string): Refusal {
  return {
    status: 400,
    code: 'BadDigest',
    message: 'The Content-MD5 you specified did not match what was received.',
    details: { ExpectedDigest: expected, CalculatedDigest: calculated },
  };
}

export type UploadOutcome =
  | { kind: 'stored'; bytes: number; sha256: string }
  | { kind: 'incomplete'; bytes: number; expected: number }
  /** Received whole, and refused all the same (a wrong Content-MD5). */
  | { kind: 'refused'; refusal: Refusal }
  | { kind: 'not_awaiting' }
  /** The connection went away (the client's doing, or a reset fault): there is nobody to answer. */
  | { kind: 'gone' };

export async function receiveUpload(exchange: Exchange, store: SandboxStore, batchId: string): Promise<UploadOutcome> {
  const { req, record, fault } = exchange;
  const socket = req.socket; // taken now: a destroyed request lets go of it
  const expected = Number(req.headers['content-length']);
  const tempPath = store.newUploadTempPath(batchId);
  const hash = createHash('sha256');
  const contentMd5 = contentMd5Of(req);
  const md5 = contentMd5 === undefined ? undefined : createHash('md5');
  let bytes = 0;
  let corrupt = fault?.corruptUpload === true;
  const resetAfter = fault?.resetAfterBytes;

  async function* hashAndCount(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (let chunk of source) {
      bytes += chunk.length;
      record.bodyBytes = bytes;
      countArrival(record, chunk.length);
      if (resetAfter !== undefined && bytes >= resetAfter) throw new ResetFault();
      if (corrupt && chunk.length > 0) {
        chunk = Buffer.from(chunk);
        chunk[0] = chunk[0]! ^ 0xff;
        corrupt = false;
      }
      hash.update(chunk);
      md5?.update(chunk);
      yield chunk;
    }
    if (resetAfter !== undefined) throw new ResetFault(); // the body was shorter than the reset point
  }

  const file = fs.createWriteStream(tempPath, { highWaterMark: STREAM_HIGH_WATER_MARK });
  try {
    if (resetAfter === 0) throw new ResetFault();
    await pipeline(req, hashAndCount, file);
  } catch (error) {
    file.destroy();
    // Wait until the file is closed, else it may be created after it is removed.
    if (!file.closed) await new Promise<void>((resolve) => file.once('close', () => resolve()));
    fs.rmSync(tempPath, { force: true });
    if (error instanceof ResetFault) socket.destroy();
    if (error instanceof ResetFault || req.destroyed) return { kind: 'gone' };
    throw error;
  }
  if (bytes !== expected) {
    fs.rmSync(tempPath, { force: true });
    return { kind: 'incomplete', bytes, expected };
  }
  const calculated = md5?.digest('base64');
  if (contentMd5 !== undefined && calculated !== contentMd5) {
    fs.rmSync(tempPath, { force: true });
    return { kind: 'refused', refusal: badDigest(contentMd5, calculated!) };
  }
  const sha256 = hash.digest('hex');
  if (!store.recordUpload(batchId, tempPath, { bytes, sha256 }, lowerCaseHeaders(req))) {
    fs.rmSync(tempPath, { force: true });
    return { kind: 'not_awaiting' };
  }
  return { kind: 'stored', bytes, sha256 };
}

function countArrival(record: RecordedRequest, bytes: number): void {
  const slot = Math.floor((performance.now() - record.startedAt) / RECEIVED_SLOT_MS);
  while (record.received.length <= slot) record.received.push(0);
  record.received[slot]! += bytes;
}

class ResetFault extends Error {
  constructor() {
    super('connection reset by an injected fault');
  }
}

/** How an upload route words its answers: the API's JSON errors, or the storage host's XML ones. */
export interface UploadAnswers {
  notAwaiting(status: BatchStatus | undefined): Reply;
  incomplete(bytes: number, expected: number): Reply;
  refused(refusal: Refusal): Reply;
  stored(upload: UploadRecord): Reply;
}

/** Takes the upload of an existing batch and answers it; null when there is nobody left to answer. */
export async function answerUpload(
  exchange: Exchange,
  store: SandboxStore,
  batchId: string,
  answers: UploadAnswers,
): Promise<Reply | null> {
  const notAwaiting = () => answers.notAwaiting(store.batch(batchId)?.status);
  if (store.batch(batchId)?.status !== 'awaiting_upload') return notAwaiting();
  const outcome = await receiveUpload(exchange, store, batchId);
  switch (outcome.kind) {
    case 'gone':
      return null;
    case 'incomplete':
      return answers.incomplete(outcome.bytes, outcome.expected);
    case 'refused':
      return answers.refused(outcome.refusal);
    case 'not_awaiting':
      return notAwaiting();
    case 'stored':
      return answers.stored({ bytes: outcome.bytes, sha256: outcome.sha256 });
  }
}
