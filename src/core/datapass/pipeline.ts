// The one pass over the data file itself: read it, hash the exact bytes that will be uploaded, inflate, count
// the records and check that each is a JSON object. The thread that runs it reads, hashes, checks the lines
// (lines.ts) and feeds zlib, which inflates on libuv's threads, so that inflating and checking run on different
// cores; the gzip container around the deflate data is read by gunzip.ts, which leaves zlib only the inflate.
// A plain .jsonl is gzipped in the same pass, its blocks deflated on libuv's threads too (gzip.ts, the same
// bytes on any number of cores): into a temp copy when a delivery will upload it, or only hashed (check).
//
// data-pass.ts decides where it runs: on a thread of its own for a large file (thread.ts), so that zlib's
// garbage is collected in a small heap and nothing else on the caller's thread can hold zlib up.
//
// Memory, whatever the file's size: the file is read into READ_BUFFERS buffers of READ_CHUNK, reused; zlib's
// output comes in fresh buffers of INFLATE_CHUNK, at most four alive (the one zlib fills, one queued at each
// end of the pipe, the one being checked; and where a member follows, the one its gunzip fills meanwhile),
// each freed as soon as its lines are checked (checkedSink), but for the last, partly filled, of each zlib
// stream, which a collection frees; the line check keeps the line cut between two chunks (lines.ts) and the
// gzip its blocks in flight.

import { createHash } from 'node:crypto';
import nodeFs, { createWriteStream, promises as fs, type WriteStream } from 'node:fs';
import path from 'node:path';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { errnoCode } from '../guards.js';
import { UsageError } from '../errors.js';
import { changeSince, type FileStamp } from './file-stamp.js';
import { freeNow, type GarbageMeter } from './garbage.js';
import { GzipInflater } from './gunzip.js';
import { createParallelGzip } from './gzip.js';
import { LinesParser } from './lines.js';

/** Bytes per read of the data file. Each read is a round trip to libuv's threads, like zlib's chunks. */
const READ_CHUNK = 1 << 20;
/** Read buffers, used in turn: one being read into while the others wait for zlib. */
const READ_BUFFERS = 2;
/**
 * Bytes per chunk of zlib's inflated output, a fresh buffer each, dropped once its lines are checked. Each
 * chunk is a round trip between this thread and zlib's: zlib waits for this thread to take the chunk before
 * it inflates the next, and on a machine whose cores are all busy this thread often waits for a core in
 * between. Larger chunks make fewer such waits. Measured (bds check of 1 GiB of .jsonl.gz, a gzip -9 per core,
 * 2 cores): 23 s with 256 KiB chunks, 19.5 s with 1 MiB, 17.7 s with 2 MiB, 19 s with 3 or 4 MiB, against
 * 14 s for a bare inflate; on a quiet machine all within 3% of each other. Memory: see above.
 */
const INFLATE_CHUNK = 2 << 20;

/**
 * The gzip of a plain .jsonl (gzip.ts): zlib's default level, no file name or time in the header, and
 * the same bytes on any number of cores, so that the same .jsonl always gives the same checksum (and a re-run
 * finds its own delivery record).
 */
export const GZIP_LEVEL = 6;

export interface PassOptions {
  /** How messages name the file. */
  name: string;
  /** Where the gzipped copy of a plain .jsonl goes (deliver), or undefined to only hash it (check). */
  copy: string | undefined;
  /** The temp folder the copy is in, for the message when it cannot be written. */
  tmpDir: string;
  signal?: AbortSignal | undefined;
  /** Bytes of the data file read so far, as the pass goes. */
  onRead?: ((read: number) => void) | undefined;
  /** Counts the buffers the pass drops, on a thread that collects them as it goes (thread.ts). */
  garbage?: GarbageMeter | undefined;
}

/** What a pass finds: the same whether it ran now, on a thread, or is remembered from an earlier run. */
export interface PassFindings {
  recordCount: number;
  /** SHA-256 of the bytes to upload, lowercase hex. */
  sha256: string;
  /** How many bytes are uploaded. */
  size: number;
}

/** Passes chunks through unchanged after showing each to `see` (a hash); a throw fails the pass. */
function passThrough(see: (chunk: Buffer) => void): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      try {
        see(chunk);
        callback(null, chunk);
      } catch (error) {
        callback(error as Error);
      }
    },
  });
}

/**
 * The end of the pipeline for inflated bytes: each chunk shown to `see` (the inflater's CRC-32), then to the
 * line check. Called from zlib's callback, which gives zlib its next piece of work only once this returns: the
 * chunk is taken just after (setImmediate), while zlib inflates. Once checked, a chunk that ends zlib's output
 * buffer is its last piece: the buffer is freed then and there (freeNow). Any other is garbage, counted as such
 * just before the next is checked: a collection then finds it dead, where one made while it is checked would
 * see it alive (garbage.ts: a buffer seen alive by two collections is kept until a full one).
 */
function checkedSink(lines: LinesParser, see: (chunk: Buffer) => void, garbage: GarbageMeter | undefined): Writable {
  let droppedBefore = 0;
  return new Writable({
    highWaterMark: INFLATE_CHUNK,
    write(chunk: Buffer, _encoding, callback) {
      setImmediate(() => {
        try {
          garbage?.add(droppedBefore);
          see(chunk);
          lines.push(chunk);
          const ended = endedOutputBuffer(chunk);
          droppedBefore = ended && freeNow(ended) ? 0 : chunk.length;
          callback();
        } catch (error) {
          callback(error as Error);
        }
      });
    },
  });
}

/**
 * The buffer zlib wrote a chunk of its output in, when the chunk ends it. zlib writes into a buffer of its own,
 * of INFLATE_CHUNK bytes, and hands out each piece it fills (the output of one write), in order; once the
 * buffer is full, it takes a new one and never touches the old again. So a chunk that ends the buffer is the
 * last of it, and once checked, nothing reads the buffer again.
 */
function endedOutputBuffer(chunk: Buffer): ArrayBuffer | undefined {
  const { buffer } = chunk;
  const ends = buffer.byteLength === INFLATE_CHUNK && chunk.byteOffset + chunk.length === INFLATE_CHUNK;
  return ends && buffer instanceof ArrayBuffer ? buffer : undefined;
}

/**
 * Reads the data file once. Throws a UsageError for what is wrong with the file (or with the temp folder of
 * the copy), naming it. The caller removes the copy when it fails (data-pass.ts, which also does it for a pass
 * thread stopped before it could).
 */
export async function passOverFile(file: string, before: FileStamp, options: PassOptions): Promise<PassFindings> {
  const { name, copy, signal, onRead, garbage } = options;
  const hash = createHash('sha256');
  const lines = new LinesParser(name);
  let read = 0;
  const counted = (chunk: Buffer): void => {
    read += chunk.length;
    onRead?.(read);
  };
  const pipelineOptions = signal ? { signal } : {};
  let size = 0;
  /** The first error of the copy's own system calls: the temp folder's, however the pipeline passes it on. */
  let copyFailure: Error | undefined;
  const copyFailed = (error: Error): void => void (copyFailure ??= error);
  try {
    if (file.endsWith('.gz')) {
      const sink = checkedSink(lines, (chunk) => inflater.inflated(chunk), garbage);
      const inflater = new GzipInflater(sink, { chunkSize: INFLATE_CHUNK, signal });
      // The gzip data stops at zeros after the last member: what follows them is only hashed, as it is uploaded
      // all the same. Zeros alone are padding, as gzip -t accepts it; anything else is not.
      await feed(inflater, inflater.done, file, (chunk) => {
        counted(chunk);
        hash.update(chunk);
        return inflater.write(chunk);
      });
      if (inflater.dataEnd < before.size && !(await onlyZerosFrom(file, inflater.dataEnd))) throw trailingGarbage(name);
      size = before.size;
    } else {
      if (copy) {
        await fs.mkdir(path.dirname(copy), { recursive: true }).catch((error: Error) => {
          copyFailed(error);
          throw error;
        });
      }
      // What zlib leaves per block: the output, and the pieces it was gathered from.
      const gzip = createParallelGzip({ level: GZIP_LEVEL, onDropped: (bytes) => garbage?.add(2 * bytes) });
      const hashed = passThrough((chunk) => {
        hash.update(chunk);
        size += chunk.length;
      });
      const flowing = pipeline(gzip, hashed, copy ? copyStream(copy, copyFailed) : discard(), pipelineOptions);
      await feed(gzip, flowing, file, (chunk) => {
        counted(chunk);
        lines.push(chunk);
        return written(gzip, chunk);
      });
    }
    const recordCount = lines.end();
    await assertUnchangedSince(before, file, name);
    return { recordCount, sha256: hash.digest('hex'), size };
  } catch (error) {
    if (copyFailure) throw tempCopyError(copyFailure, name, options.tmpDir);
    throw asInputError(error, name, await startsLikeGzip(file));
  }
}

/**
 * Reads the file into `first`, the head of the pipeline `flowing`: each chunk goes to `take`, which writes it
 * there and resolves once its buffer may be read into again; at the end of the file `first` is ended. A failed
 * read destroys `first` with its error; a failed pipeline stops the reading. Its error wins: when both fail,
 * it is the cause.
 */
async function feed(
  first: { end(): unknown; destroy(error: Error): unknown },
  flowing: Promise<void>,
  file: string,
  take: (chunk: Buffer) => Promise<void>,
): Promise<void> {
  const reading = readChunks(file, take, flowing).then(
    () => void first.end(),
    (error: unknown) => {
      first.destroy(error as Error);
      throw error;
    },
  );
  const [flowed, fed] = await Promise.allSettled([flowing, reading]);
  if (flowed.status === 'rejected') throw flowed.reason;
  if (fed.status === 'rejected') throw fed.reason;
}

/**
 * Reads the file from its start in chunks of READ_CHUNK, into READ_BUFFERS buffers in turn, handing each chunk
 * to `take`; a buffer is read into again only once `take`'s promise for its last chunk has resolved, or the
 * pipeline `flowing` has ended (zlib took nothing after the gzip data: `take` then only hashes). Gives up as
 * soon as the pipeline fails.
 */
async function readChunks(file: string, take: (chunk: Buffer) => Promise<void>, flowing: Promise<void>): Promise<void> {
  const handle = await fs.open(file, 'r');
  try {
    const slots = Array.from({ length: READ_BUFFERS }, () => ({
      buffer: Buffer.allocUnsafe(READ_CHUNK),
      free: Promise.resolve(),
    }));
    for (let n = 0; ; n++) {
      const slot = slots[n % READ_BUFFERS]!;
      await Promise.race([slot.free, flowing]);
      const { bytesRead } = await handle.read(slot.buffer, 0, READ_CHUNK, null);
      if (bytesRead === 0) return;
      slot.free = take(slot.buffer.subarray(0, bytesRead));
      // Awaited in its turn; until then a failure is the pipeline's to report.
      slot.free.catch(() => undefined);
    }
  } finally {
    await handle.close();
  }
}

/** Writes a chunk to a stream; resolves once the stream is done with it (its write callback). */
function written(stream: Writable, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.write(chunk, (error) => (error ? reject(error) : resolve()));
  });
}

/** A sink that keeps nothing (check hashes a plain .jsonl's gzip without a copy). */
function discard(): Writable {
  return new Writable({
    write(_chunk, _encoding, callback) {
      callback();
    },
  });
}

/** The file must be as it was when the pass began: a file still being written is not checked. */
async function assertUnchangedSince(before: FileStamp, file: string, name: string): Promise<void> {
  if (changeSince(before, await fs.stat(file).catch(() => undefined)) === undefined) return;
  throw new UsageError(`${name} changed while it was being checked; nothing was sent`, {
    hint: 'run bds again once the scrubber has finished writing it',
  });
}

/**
 * The gzipped copy's file, whose system calls (open, write, writev, close) hand their errors to `failed` first.
 * An error of a write carries no path, and the pipeline passes the errors of other streams (a read of the
 * data file) to this one too: only its own calls tell that the temp folder failed.
 */
function copyStream(copy: string, failed: (error: Error) => void): WriteStream {
  type Call = (...args: unknown[]) => void;
  const watched =
    (name: 'open' | 'write' | 'writev' | 'close'): Call =>
    (...args) => {
      const callback = args.pop() as (error: Error | null, ...results: unknown[]) => void;
      // Looked up at each call, as Node's own stream does.
      (nodeFs[name] as Call)(...args, (error: Error | null, ...results: unknown[]) => {
        if (error) failed(error);
        callback(error, ...results);
      });
    };
  const fs = { open: watched('open'), write: watched('write'), writev: watched('writev'), close: watched('close') };
  return createWriteStream(copy, { mode: 0o600, fs });
}

/** Whether the file holds only zero bytes from `offset` to its end. */
async function onlyZerosFrom(file: string, offset: number): Promise<boolean> {
  const handle = await fs.open(file, 'r');
  try {
    const buffer = Buffer.alloc(READ_CHUNK);
    for (let position = offset; ;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
      if (bytesRead === 0) return true;
      if (buffer.subarray(0, bytesRead).some((byte) => byte !== 0)) return false;
      position += bytesRead;
    }
  } finally {
    await handle.close();
  }
}

function trailingGarbage(name: string): UsageError {
  return new UsageError(`${name}: there is data after the end of the gzip data (trailing garbage)`, {
    hint: 'the file was damaged or appended to after it was written; write it again',
  });
}

async function startsLikeGzip(file: string): Promise<boolean> {
  try {
    const handle = await fs.open(file, 'r');
    try {
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(2), 0, 2, 0);
      return bytesRead === 2 && buffer[0] === 0x1f && buffer[1] === 0x8b;
    } finally {
      await handle.close();
    }
  } catch {
    return false;
  }
}

function tempCopyError(error: unknown, name: string, tmpDir: string): UsageError {
  return new UsageError(
    `cannot write the gzipped copy of ${name} in the temp folder ${tmpDir} (${errnoCode(error) ?? String(error)})`,
    {
      hint: 'a plain .jsonl is gzipped there before the upload and needs its gzipped size free: free space, or set TMPDIR to another folder',
    },
  );
}

function asInputError(error: unknown, file: string, looksGzipped: boolean): Error {
  if (error instanceof UsageError) return error;
  if ((error as { name?: string }).name === 'AbortError') return (error as { cause?: Error }).cause ?? (error as Error);
  const code = errnoCode(error);
  if (code === 'Z_BUF_ERROR' || /unexpected end of file/i.test(String((error as Error).message))) {
    return new UsageError(`${file}: the gzip data ends early (the file is truncated)`);
  }
  if (code === 'Z_DATA_ERROR') {
    const message = (error as Error).message;
    if (!looksGzipped) {
      return new UsageError(`${file}: not a gzip file`, { hint: 'a plain JSON Lines file should be named *.jsonl' });
    }
    // It starts as gzip: what follows a complete member is neither another member nor zeros.
    if (/header check|unknown compression method/i.test(message)) return trailingGarbage(file);
    return new UsageError(`${file}: corrupt gzip data (${message})`, {
      hint: 'the file was damaged or appended to after it was written; write it again',
    });
  }
  if (code !== undefined && /^E[A-Z]+$/.test(code)) return new UsageError(`${file}: cannot read it (${code})`);
  return error as Error;
}
