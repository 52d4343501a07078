// Gzip on every core, the way pigz does it: the input is cut into fixed-size blocks, each deflated on a
// worker with the 32 KiB before it as the dictionary (so it compresses almost as well as one stream), every
// block but the last ending with a sync flush (an empty stored block: byte-aligned, not final), so that the
// blocks, written in order, are one deflate stream. Around them: the 10-byte header zlib writes and the
// CRC-32 and length of the whole input. One gzip member, valid for gzip, zcat, Python and Node.
//
// The bytes depend only on the input, the level and BLOCK_BYTES, never on the number of workers or on how
// the input arrives in chunks: the checksum of a delivered .jsonl is the same on every machine. Keep
// BLOCK_BYTES fixed for that reason (changing it changes every checksum, and re-runs would no longer find
// their delivery record). An input of one block or less gives exactly gzipSync's bytes (at that level).

import { Transform, type TransformCallback } from 'node:stream';
import { crc32 } from 'node:zlib';
import { InOrder, type TaskRunner } from './pool.js';
import type { DeflateResult } from './tasks.js';

/**
 * Input bytes per block. Each block costs a fresh deflate state, a 32 KiB dictionary load and a message
 * round trip. Measured (CPU time, level 6, 64 MiB of the bench's records): 128 KiB blocks (pigz's default)
 * take about 11% more than one stream, 256 KiB to 1 MiB about 6-8% (within the noise of each other), and
 * the output is within 0.1% of one stream's. 512 KiB: that cost, and blocks fine enough for any number of
 * cores, in a few MB in flight. Also the size up to which the output is exactly gzipSync's.
 */
export const BLOCK_BYTES = 512 << 10;
/** Deflate's window: the dictionary each block is primed with. */
const WINDOW = 32 << 10;

export interface ParallelGzipOptions {
  /** zlib level, 0 to 9 (default 6; -1, zlib's Z_DEFAULT_COMPRESSION, is 6). */
  level?: number;
  /** Blocks in flight at most (default: twice the pool's workers, plus two). */
  maxInFlight?: number;
  /** For tests only: a different block size (at least 32 KiB) gives different bytes. */
  blockBytes?: number;
}

/** zlib's gzip header: no name, mtime 0, OS 3 (Unix), and the XFL byte zlib derives from the level. */
export function gzipHeader(level: number): Buffer {
  const xfl = level === 9 ? 2 : level >= 0 && level < 2 ? 4 : 0;
  return Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, xfl, 0x03]);
}

/**
 * A Transform: plain bytes in, one gzip member out. Memory stays at about maxInFlight blocks whatever the
 * input's size. The caller owns the pool (and closes it); destroying the stream leaves the blocks in flight
 * to finish on their own.
 */
export function createParallelGzip(pool: TaskRunner, options: ParallelGzipOptions = {}): Transform {
  const level = options.level === undefined || options.level === -1 ? 6 : options.level;
  if (!Number.isInteger(level) || level < 0 || level > 9) throw new RangeError(`level must be 0 to 9, not ${level}`);
  const blockBytes = options.blockBytes ?? BLOCK_BYTES;
  if (!Number.isInteger(blockBytes) || blockBytes < WINDOW)
    throw new RangeError(`blockBytes must be at least ${WINDOW}`);
  const bufferBytes = WINDOW + blockBytes;

  let crc = 0;
  let inputBytes = 0;
  /** Buffers handed back by the workers, to fill again. */
  const free: ArrayBuffer[] = [];
  /** The block being filled: [WINDOW - dictionaryLength, WINDOW) the dictionary, then `filled` bytes of input. */
  let block = new Uint8Array(bufferBytes);
  let dictionaryLength = 0;
  let filled = 0;

  const stream: Transform = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      feed(chunk).then(() => callback(), callback);
    },
    flush(callback: TransformCallback) {
      finish().then(() => callback(), callback);
    },
  });
  const blocks = new InOrder<DeflateResult>(options.maxInFlight ?? 2 * pool.size + 2, (result) => {
    stream.push(Buffer.from(result.output));
    free.push(result.buffer); // at most maxInFlight + 1 buffers ever exist
  });
  stream.push(gzipHeader(level));

  async function feed(chunk: Buffer): Promise<void> {
    crc = crc32(chunk, crc);
    inputBytes += chunk.length;
    let offset = 0;
    while (offset < chunk.length) {
      // A full block is sent only once more input comes: the last block must be the one that finishes.
      if (filled === blockBytes) await send(false);
      const n = Math.min(chunk.length - offset, blockBytes - filled);
      block.set(chunk.subarray(offset, offset + n), WINDOW + filled);
      filled += n;
      offset += n;
    }
  }

  async function send(last: boolean): Promise<void> {
    const sent = block;
    const next = free.pop();
    block = next ? new Uint8Array(next) : new Uint8Array(bufferBytes);
    // The next block's dictionary: the last 32 KiB of this one (a block that is not the last is full).
    if (!last) block.set(sent.subarray(WINDOW + filled - WINDOW, WINDOW + filled), 0);
    const task = {
      kind: 'deflate' as const,
      buffer: sent.buffer as ArrayBuffer,
      dataOffset: WINDOW,
      dataLength: filled,
      dictionaryLength,
      level,
      last,
    };
    dictionaryLength = WINDOW;
    filled = 0;
    await blocks.add(pool.run(task, [task.buffer]));
  }

  async function finish(): Promise<void> {
    await send(true);
    await blocks.drain();
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(crc >>> 0, 0);
    trailer.writeUInt32LE(inputBytes % 2 ** 32, 4);
    stream.push(trailer);
  }

  return stream;
}
