// Receiving an upload, shared by the storage host and the API's own upload route: the body is streamed
// to a file while hashed, never held in memory.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Exchange } from './http.js';
import { lowerCaseHeaders, RECEIVED_SLOT_MS, type RecordedRequest } from './http.js';
import type { SandboxStore } from './store.js';

/** Large buffers so that multi-GiB uploads go at disk speed. */
export const STREAM_HIGH_WATER_MARK = 1 << 20;

/** The headers an upload must carry, as the create response lists them (and the storage URL signs them). */
export function uploadHeaders(batchId: string): Record<string, string> {
  return { 'Content-Type': 'application/gzip', 'x-bds-batch-id': batchId };
}

/** The first upload header that is missing or differs from its expected value, or null. */
export function wrongUploadHeader(exchange: Exchange, batchId: string): string | null {
  for (const [name, expected] of Object.entries(uploadHeaders(batchId))) {
    if (exchange.req.headers[name.toLowerCase()] !== expected) return name;
  }
  return null;
}

/** Chunked or length-less uploads are refused, as a storage host does. */
export function hasContentLength(exchange: Exchange): boolean {
  const { headers } = exchange.req;
  return headers['content-length'] !== undefined && headers['transfer-encoding'] === undefined;
}

export type UploadOutcome =
  | { kind: 'stored'; bytes: number; sha256: string }
  | { kind: 'incomplete'; bytes: number; expected: number }
  | { kind: 'not_awaiting' }
  /** The connection went away (the client's doing, or a reset fault): there is nobody to answer. */
  | { kind: 'gone' };

export async function receiveUpload(exchange: Exchange, store: SandboxStore, batchId: string): Promise<UploadOutcome> {
  const { req, record, fault } = exchange;
  const socket = req.socket; // taken now: a destroyed request lets go of it
  const expected = Number(req.headers['content-length']);
  const tempPath = store.newUploadTempPath(batchId);
  const hash = createHash('sha256');
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
