// The one pass over the data file itself: read it, hash the exact bytes that will be uploaded, inflate, count
// the records and check that each is a JSON object. The thread that runs it reads, hashes and feeds zlib
// (which inflates on libuv's threads); the lines are checked on a TaskRunner (worker threads for a large
// file, pool.ts). A plain .jsonl is gzipped on every core in the same pass (gzip.ts, the same bytes
// on any number of cores): into a temp copy when a delivery will upload it, or only hashed (check).
//
// data-pass.ts decides where it runs: on a thread of its own for a large file (thread.ts), so that zlib's
// garbage is collected in a small heap and nothing else on the caller's thread can hold zlib up.

import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { errnoCode } from '../checks.js';
import { UsageError } from '../errors.js';
import { changeSince, type FileStamp } from './file-stamp.js';
import { createParallelGzip } from './gzip.js';
import { ParallelLinesChecker } from './lines.js';
import type { TaskRunner } from './pool.js';

export const READ_CHUNK = 1 << 20;

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
  /** Checks the lines (and gzips a plain .jsonl); the pass closes it. */
  runner: TaskRunner;
  signal?: AbortSignal | undefined;
  /** Bytes of the data file read so far, as the pass goes. */
  onRead?: ((read: number) => void) | undefined;
}

/** What a pass finds: the same whether it ran now, on a thread, or is remembered from an earlier run. */
export interface PassFindings {
  recordCount: number;
  /** SHA-256 of the bytes to upload, lowercase hex. */
  sha256: string;
  /** How many bytes are uploaded. */
  size: number;
}

/** Passes chunks through unchanged after showing each to `see` (a hash, the line checker); a throw fails the pass. */
function passThrough(see: (chunk: Buffer) => void): Transform {
  return new Transform({
    highWaterMark: READ_CHUNK,
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
 * The end of the pipeline for inflated bytes: each chunk to the line check. Every chunk is a fresh 1 MiB
 * buffer from zlib, garbage once copied; in the pass thread's small heap V8 collects it as it goes (measured:
 * a peak RSS of 142 to 144 MB for a 4.7 GB pass, the same as with a full collection every 16 MiB, and 10%
 * faster). On a large heap it would pile up to 64 MB first, one more reason for the thread.
 */
function checkedSink(lines: ParallelLinesChecker): Writable {
  return new Writable({
    highWaterMark: 4 * READ_CHUNK,
    write(chunk: Buffer, _encoding, callback) {
      lines.push(chunk).then(() => callback(), callback);
    },
  });
}

/**
 * Reads the data file once. Throws a UsageError for what is wrong with the file (or with the temp folder of
 * the copy), naming it. The caller removes the copy when it fails (data-pass.ts, which also does it for a pass
 * thread stopped before it could).
 */
export async function passOverFile(file: string, before: FileStamp, options: PassOptions): Promise<PassFindings> {
  const { name, copy, runner, signal, onRead } = options;
  const hash = createHash('sha256');
  // On the worker pool for a large file, off the thread that reads, hashes and feeds zlib; on this thread
  // for a small one, where starting workers costs more than it saves. The same validator and errors either way.
  const lines = new ParallelLinesChecker(runner, name);
  let read = 0;
  const counted = passThrough((chunk) => {
    read += chunk.length;
    onRead?.(read);
  });
  const pipelineOptions = signal ? { signal } : {};
  let size = 0;
  try {
    if (file.endsWith('.gz')) {
      const gunzip = createGunzip({ chunkSize: READ_CHUNK });
      await pipeline(
        // Made here, inside pipeline(), so that an error opening the file is never an unhandled 'error' event.
        createReadStream(file, { highWaterMark: READ_CHUNK }),
        counted,
        passThrough((chunk) => hash.update(chunk)),
        gunzip,
        withoutByteOrderMark(),
        checkedSink(lines),
        pipelineOptions,
      );
      // zlib stops at zeros after the last member and drops whatever follows them unread: bytesWritten is where
      // the gzip data ended. Zeros alone are padding, as gzip -t accepts it; anything else is not.
      if (gunzip.bytesWritten < before.size && !(await onlyZerosFrom(file, gunzip.bytesWritten)))
        throw trailingGarbage(name);
      size = before.size;
    } else {
      if (copy) await fs.mkdir(path.dirname(copy), { recursive: true });
      await pipeline(
        createReadStream(file, { highWaterMark: READ_CHUNK }),
        counted,
        withoutByteOrderMark((chunk) => lines.push(chunk)),
        createParallelGzip(runner, { level: GZIP_LEVEL }),
        passThrough((chunk) => {
          hash.update(chunk);
          size += chunk.length;
        }),
        copy ? createWriteStream(copy, { mode: 0o600 }) : discard(),
        pipelineOptions,
      );
    }
    const recordCount = await lines.end();
    await assertUnchangedSince(before, file, name);
    return { recordCount, sha256: hash.digest('hex'), size };
  } catch (error) {
    if (copy && isCopyPath((error as { path?: unknown }).path, copy)) throw tempCopyError(error, name, options.tmpDir);
    throw asInputError(error, name, await startsLikeGzip(file));
  } finally {
    await runner.close();
  }
}

/** A sink that keeps nothing (check hashes a plain .jsonl's gzip without a copy). */
function discard(): Writable {
  return new Writable({
    highWaterMark: READ_CHUNK,
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
 * A UTF-8 byte order mark before the first line is allowed (RFC 8259 lets a parser ignore it): the lines are
 * checked without it, and the file is sent as it is. `see`, when given, is shown the chunks without it.
 */
function withoutByteOrderMark(see?: (chunk: Buffer) => Promise<void>): Transform {
  let first = true;
  return new Transform({
    highWaterMark: READ_CHUNK,
    transform(chunk: Buffer, _encoding, callback) {
      let checked = chunk;
      if (first) {
        first = false;
        if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) checked = chunk.subarray(3);
      }
      // Shown to `see`, the original bytes go on (to gzip); else the stripped ones go on (to the checker).
      if (!see) return callback(null, checked);
      see(checked).then(() => callback(null, chunk), callback);
    },
  });
}

/** Whether a failed system call was about the temp copy: its own path, or a folder on the way to it. */
function isCopyPath(failed: unknown, copy: string): boolean {
  if (typeof failed !== 'string') return false;
  const relative = path.relative(path.resolve(failed), copy);
  return !relative.startsWith('..') && !path.isAbsolute(relative);
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

function trailingGarbage(file: string): UsageError {
  return new UsageError(`${file}: there is data after the end of the gzip data (trailing garbage)`, {
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
