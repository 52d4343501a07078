// The one pass over the data file: hash the exact bytes that will be uploaded, inflate, count the records
// and check that each is a JSON object. This thread reads, hashes and feeds zlib (which inflates on libuv's
// threads); the lines are checked on worker threads (parallel/). A plain .jsonl is gzipped on every core in
// the same pass (parallel/gzip.ts, the same bytes on any number of cores): into a temp copy when a delivery
// will upload it, or only hashed (check); openUpload() gzips it again on the way when there is no copy, so
// the bytes are the ones hashed here.

import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, promises as fs, type Stats } from 'node:fs';
import path from 'node:path';
import { Transform, Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import os from 'node:os';
import { createGunzip } from 'node:zlib';
import { errnoCode } from '../checks.js';
import { UsageError } from '../errors.js';
import { JsonLinesChecker } from './jsonl.js';
import { createParallelGzip } from './parallel/gzip.js';
import { ParallelLinesChecker } from './parallel/lines.js';
import { InlineRunner, WorkerPool, type TaskRunner } from './parallel/pool.js';
import { identityOf, type PassCache } from './pass-cache.js';

/** The file read for the upload, and what it was when checked: it must not change before the upload ends. */
export interface UploadSource {
  path: string;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

/** What is uploaded. */
export interface UploadFile {
  source: UploadSource;
  /** Bytes sent. */
  size: number;
  /**
   * `as-is`: the source's bytes (a .jsonl.gz); `copy`: a gzipped copy bds made of a plain .jsonl, removed when
   * the command ends; `gzip`: a plain .jsonl gzipped on the way.
   */
  form: 'as-is' | 'copy' | 'gzip';
}

export interface ScanResult {
  upload: UploadFile;
  recordCount: number;
  /** SHA-256 of the uploaded bytes, lowercase hex. */
  sha256: string;
  /** Remembered from an earlier pass over the same unchanged file: not read this time. */
  fromCache: boolean;
}

const READ_CHUNK = 1 << 20;

/**
 * Constant memory: every inflated chunk is a fresh 1 MiB buffer that zlib allocates and we drop at once.
 * V8 collects such buffers only once 64 MB more of them have piled up since its last collection (it counts
 * them as external memory, and our validator allocates next to nothing that would trigger a collection
 * sooner), so RSS would float up to 64 MB above what is live. A full collection every COLLECT_EVERY bytes
 * of inflated data halves that, at a cost of a few ms each (1-2% of the pass), when the caller offers one
 * (the CLI does; see Runtime.collectGarbage).
 */
const COLLECT_EVERY = 32 << 20;

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
 * The line check of a pass: on the worker pool for a large file, so that it runs off the thread that reads,
 * hashes and feeds zlib; in this thread for a small one, where starting workers costs more than it saves.
 * Either way the same validator and the same errors.
 */
interface LineCheck {
  push(chunk: Buffer): Promise<void>;
  /** The record count, once every line is checked. */
  end(): Promise<number>;
}

function lineCheck(fileName: string, runner: TaskRunner): LineCheck {
  if (runner instanceof WorkerPool) {
    const parallel = new ParallelLinesChecker(runner, fileName);
    return { push: (chunk) => parallel.push(chunk), end: () => parallel.end() };
  }
  const inline = new JsonLinesChecker(fileName);
  return { push: async (chunk) => inline.push(chunk), end: async () => inline.end() };
}

/** A file this large or larger is checked and gzipped on worker threads. */
const PARALLEL_FROM = 4 << 20;
/** Workers at most: beyond this, more threads cost memory and gain little (the reader is one thread). */
const MAX_WORKERS = 8;

function runnerFor(size: number): TaskRunner {
  return size >= PARALLEL_FROM ? new WorkerPool({ workers: Math.min(os.availableParallelism(), MAX_WORKERS) }) : new InlineRunner();
}

/** The end of the pipeline for inflated (or plain) bytes: each chunk to the line check, with memory kept flat. */
function checkedSink(lines: LineCheck, collectGarbage: (() => void) | undefined): Writable {
  let sinceCollection = 0;
  return new Writable({
    highWaterMark: 4 * READ_CHUNK,
    write(chunk: Buffer, _encoding, callback) {
      lines.push(chunk).then(() => {
        sinceCollection += chunk.length;
        if (sinceCollection >= COLLECT_EVERY) {
          sinceCollection = 0;
          collectGarbage?.();
        }
        callback();
      }, callback);
    },
  });
}

export interface ScanOptions {
  /** Where a gzipped copy of a plain .jsonl goes. */
  tmpDir: string;
  signal: AbortSignal | undefined;
  collectGarbage?: (() => void) | undefined;
  /** Bytes of the data file read so far, as the pass goes. */
  onRead?: ((read: number, total: number) => void) | undefined;
  /** Write a gzipped copy of a plain .jsonl for the upload (deliver), or only hash it (check). */
  copy: boolean;
  /** Passes remembered from earlier runs; each pass made is remembered there too. */
  cache?: PassCache | undefined;
}

export async function scanDataFile(file: string, { tmpDir, signal, collectGarbage, onRead, copy: keepCopy, cache }: ScanOptions): Promise<ScanResult> {
  const name = path.basename(file);
  let before: Stats;
  try {
    before = await fs.stat(file);
  } catch {
    throw new UsageError(`no such data file: ${file}`);
  }
  if (!before.isFile()) throw new UsageError(`not a file: ${file}`);
  const gzipped = file.endsWith('.gz');
  if (!gzipped && !file.endsWith('.jsonl')) {
    throw new UsageError(`${file}: a data file ends in .jsonl.gz (gzipped JSON Lines) or .jsonl`);
  }
  if (before.size === 0) throw new UsageError(`${file}: the file is empty`);
  const identity = identityOf(file, before);
  const remembered = await cache?.recall(identity);
  if (remembered) {
    const { recordCount, sha256, uploadSize } = remembered;
    return { upload: { source: sourceOf(file, before), size: uploadSize, form: gzipped ? 'as-is' : 'gzip' }, recordCount, sha256, fromCache: true };
  }

  const hash = createHash('sha256');
  const runner = runnerFor(before.size);
  const lines = lineCheck(name, runner);
  let read = 0;
  const counted = passThrough((chunk) => {
    read += chunk.length;
    onRead?.(read, before.size);
  });
  const options = signal ? { signal } : {};
  let upload: UploadFile;
  let recordCount: number;
  // The gzipped copy of a plain .jsonl: a failure writing it is the temp folder's fault, not the file's.
  let copy: string | undefined;
  try {
    if (gzipped) {
      await pipeline(
        // Made here, inside pipeline(), so that an error opening the file is never an unhandled 'error' event.
        createReadStream(file, { highWaterMark: READ_CHUNK }),
        counted,
        passThrough((chunk) => hash.update(chunk)),
        createGunzip({ chunkSize: READ_CHUNK }),
        withoutByteOrderMark(),
        checkedSink(lines, collectGarbage),
        options,
      );
      upload = { source: sourceOf(file, before), size: before.size, form: 'as-is' };
    } else {
      // A name of bds's own: the data file's name could make it longer than the file system allows.
      if (keepCopy) {
        copy = path.join(tmpDir, `bds-${randomUUID()}.jsonl.gz`);
        await fs.mkdir(tmpDir, { recursive: true });
      }
      let size = 0;
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
        options,
      );
      upload = copy
        ? { source: sourceOf(copy, await fs.stat(copy)), size, form: 'copy' }
        : { source: sourceOf(file, before), size, form: 'gzip' };
    }
    recordCount = await lines.end();
    await assertUnchangedSince(before, file);
  } catch (error) {
    // A temp folder that is not one (ENOTDIR) has nothing to remove either.
    if (copy) await fs.rm(copy, { force: true }).catch(() => undefined);
    if (copy && isCopyPath((error as { path?: unknown }).path, copy)) throw tempCopyError(error, file, tmpDir);
    throw asInputError(error, file, await startsLikeGzip(file));
  } finally {
    await runner.close();
  }
  if (recordCount === 0) {
    await removeCopy(upload);
    throw new UsageError(`${file}: no records (the file holds no non-empty line)`);
  }
  const result = { upload, recordCount, sha256: hash.digest('hex'), fromCache: false };
  await cache?.remember(identity, { recordCount: result.recordCount, sha256: result.sha256, uploadSize: upload.size });
  return result;
}

/**
 * The gzip of a plain .jsonl (parallel/gzip.ts): zlib's default level, no file name or time in the header, and
 * the same bytes on any number of cores, so that the same .jsonl always gives the same checksum (and a re-run
 * finds its own delivery record).
 */
const GZIP_LEVEL = 6;

/** A fresh stream of the bytes to upload; one per attempt. A plain .jsonl is gzipped as the pass gzipped it. */
export function openUpload(upload: UploadFile): Readable {
  const file = createReadStream(upload.source.path, { highWaterMark: READ_CHUNK });
  if (upload.form !== 'gzip') return file;
  const runner = runnerFor(upload.source.size);
  const gzip = createParallelGzip(runner, { level: GZIP_LEVEL });
  // The upload's reader sees gzip's errors; a read error of the file is passed on to it.
  file.on('error', (error) => gzip.destroy(error));
  gzip.on('close', () => void runner.close());
  return file.pipe(gzip);
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

/** Removes the gzipped copy bds made, if it made one. */
export async function removeCopy(upload: UploadFile): Promise<void> {
  if (upload.form === 'copy') await fs.rm(upload.source.path, { force: true });
}

function sourceOf(file: string, stat: Stats): UploadSource {
  return { path: file, size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs };
}

/** The file must be as it was when the pass began: a file still being written is not checked. */
async function assertUnchangedSince(before: Stats, file: string): Promise<void> {
  const after = await fs.stat(file).catch(() => undefined);
  if (
    !after ||
    after.ino !== before.ino ||
    after.size !== before.size ||
    after.mtimeMs !== before.mtimeMs ||
    after.ctimeMs !== before.ctimeMs
  ) {
    throw new UsageError(`${file} changed while it was being checked; nothing was sent`, {
      hint: 'run bds again once the scrubber has finished writing it',
    });
  }
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

function tempCopyError(error: unknown, file: string, tmpDir: string): UsageError {
  return new UsageError(
    `cannot write the gzipped copy of ${path.basename(file)} in the temp folder ${tmpDir} (${errnoCode(error) ?? String(error)})`,
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
    return new UsageError(
      /header check|unknown compression method/i.test(message)
        ? `${file}: there is data after the end of the gzip data (trailing garbage)`
        : `${file}: corrupt gzip data (${message})`,
      { hint: 'the file was damaged or appended to after it was written; write it again' },
    );
  }
  if (code !== undefined && /^E[A-Z]+$/.test(code)) return new UsageError(`${file}: cannot read it (${code})`);
  return error as Error;
}
