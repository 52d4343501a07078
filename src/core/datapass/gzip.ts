// Gzip on every core, the way pigz does it: the input is cut into fixed-size blocks, each deflated with the
// 32 KiB before it as the dictionary (so it compresses almost as well as one stream), every block but the last
// ending with a sync flush (an empty stored block: byte-aligned, not final), so that the blocks, written in
// order, are one deflate stream. Around them: the 10-byte header zlib writes and the CRC-32 and length of the
// whole input. One gzip member, valid for gzip, zcat, Python and Node.
//
// The blocks are deflated by zlib's asynchronous API, on libuv's thread pool (the threads Node already runs for
// file reads and zlib): several at once, with no thread of bds's own, no copy between threads and no second
// JavaScript heap. The pool has 4 threads unless UV_THREADPOOL_SIZE says otherwise (bin/bds.js gives it one per
// core, at most 8, plus one for reads).
//
// The bytes depend only on the input, the level and BLOCK_BYTES, never on the number of threads or on how
// the input arrives in chunks: the checksum of a delivered .jsonl is the same on every machine. Keep
// BLOCK_BYTES fixed for that reason (changing it changes every checksum, and re-runs would no longer find
// their delivery record). An input of one block or less gives exactly gzipSync's bytes (at that level).

import os from 'node:os';
import { Transform, type TransformCallback } from 'node:stream';
import { constants as zlibConstants, crc32, deflateRaw } from 'node:zlib';
import { InOrder } from './pool.js';

/**
 * Input bytes per block. Each block costs a fresh deflate state and a 32 KiB dictionary load. Measured (CPU
 * time, level 6, 64 MiB of the bench's records): 128 KiB blocks (pigz's default) take about 11% more than one
 * stream, 256 KiB to 1 MiB about 6-8% (within the noise of each other), and the output is within 0.1% of one
 * stream's. 512 KiB: that cost, and blocks fine enough for any number of cores, in a few MB in flight. Also
 * the size up to which the output is exactly gzipSync's.
 */
export const BLOCK_BYTES = 512 << 10;
/** Deflate's window: the dictionary each block is primed with. */
const WINDOW = 32 << 10;

/**
 * Blocks being deflated or waiting for their turn, at most: one per core (at most 8), plus two so that a
 * thread that finishes finds the next block ready. Each holds about 1 MB (its 544 KiB input, zlib's 268 KB
 * deflate state, its output): 4 MB on two cores, 10 MB at most.
 */
export function blocksInFlight(): number {
  return Math.min(os.availableParallelism(), 8) + 2;
}

export interface ParallelGzipOptions {
  /**
   * zlib level, 1 to 9 (default 6; -1, zlib's Z_DEFAULT_COMPRESSION, is 6). Not 0: zlib's stored blocks are
   * cut where its output buffer fills, so they would depend on how zlib is called; at 1 to 9 the blocks depend
   * only on the input (deflateRaw gives deflateRawSync's bytes, checked on Node 20 to 26).
   */
  level?: number;
  /** Blocks in flight at most (default blocksInFlight()). */
  maxInFlight?: number;
  /** For tests only: a different block size (at least 32 KiB) gives different bytes. */
  blockBytes?: number;
  /** Shown the size of each deflated block once it is written out (and so dropped): see garbage.ts. */
  onDropped?: (bytes: number) => void;
}

/** zlib's gzip header: no name, mtime 0, OS 3 (Unix), and the XFL byte zlib derives from the level. */
export function gzipHeader(level: number): Buffer {
  const xfl = level === 9 ? 2 : level === 1 ? 4 : 0;
  return Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, xfl, 0x03]);
}

/** A deflated block, and the buffer it came from, to fill again. */
interface Deflated {
  output: Buffer;
  buffer: Buffer;
}

/**
 * A Transform: plain bytes in, one gzip member out. Memory stays at about maxInFlight blocks whatever the
 * input's size: the block buffers are reused. Destroying the stream leaves the blocks in flight to finish on
 * their own.
 */
export function createParallelGzip(options: ParallelGzipOptions = {}): Transform {
  const level = options.level === undefined || options.level === -1 ? 6 : options.level;
  if (!Number.isInteger(level) || level < 1 || level > 9) throw new RangeError(`level must be 1 to 9, not ${level}`);
  const blockBytes = options.blockBytes ?? BLOCK_BYTES;
  if (!Number.isInteger(blockBytes) || blockBytes < WINDOW)
    throw new RangeError(`blockBytes must be at least ${WINDOW}`);
  const bufferBytes = WINDOW + blockBytes;

  let crc = 0;
  let inputBytes = 0;
  /** Buffers whose block is written out, to fill again. */
  const free: Buffer[] = [];
  /** The block being filled: [WINDOW - dictionaryLength, WINDOW) the dictionary, then `filled` bytes of input. */
  let block: Buffer = Buffer.allocUnsafe(bufferBytes);
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
  const blocks = new InOrder<Deflated>(options.maxInFlight ?? blocksInFlight(), ({ output, buffer }) => {
    stream.push(output);
    options.onDropped?.(output.length);
    free.push(buffer); // at most maxInFlight + 1 buffers ever exist
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
      chunk.copy(block, WINDOW + filled, offset, offset + n);
      filled += n;
      offset += n;
    }
  }

  async function send(last: boolean): Promise<void> {
    const sent = block;
    block = free.pop() ?? Buffer.allocUnsafe(bufferBytes);
    // The next block's dictionary: the last 32 KiB of this one (a block that is not the last is full).
    if (!last) sent.copy(block, 0, WINDOW + filled - WINDOW, WINDOW + filled);
    const data = sent.subarray(WINDOW, WINDOW + filled);
    const dictionary = dictionaryLength > 0 ? sent.subarray(WINDOW - dictionaryLength, WINDOW) : undefined;
    dictionaryLength = WINDOW;
    filled = 0;
    await blocks.add(deflateBlock(sent, data, dictionary, level, last));
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

/**
 * One block on libuv's thread pool. The dictionary is exactly 32 KiB (or none for the first block): deflate's
 * window, so the block compresses as if the stream had run through it, which is what makes the blocks join
 * into one deflate stream. The last block ends the stream (Z_FINISH); any other ends on a byte boundary
 * (Z_SYNC_FLUSH). zlib holds `buffer` until it calls back.
 */
function deflateBlock(
  buffer: Buffer,
  data: Buffer,
  dictionary: Buffer | undefined,
  level: number,
  last: boolean,
): Promise<Deflated> {
  return new Promise((resolve, reject) => {
    deflateRaw(
      data,
      {
        level,
        ...(dictionary ? { dictionary } : {}),
        finishFlush: last ? zlibConstants.Z_FINISH : zlibConstants.Z_SYNC_FLUSH,
      },
      (error, output) => (error ? reject(error) : resolve({ output, buffer })),
    );
  });
}
