// The one public door of the data pass: a data file in; its record count, the SHA-256 and size of the bytes to
// upload, and those bytes out. What an earlier pass over the same unchanged file found (cache.ts), or a new
// pass (pipeline.ts): on a thread of its own for a large file (thread.ts), on this thread for a small one. The
// bytes to upload are the file itself, the gzipped copy the pass made of a plain .jsonl, or that .jsonl gzipped
// again on the way, to the same bytes.

import { close, createReadStream, open, promises as fs, read, rmSync, type Stats } from 'node:fs';
import { pipeline, type Readable } from 'node:stream';
import { UsageError } from '../errors.js';
import { whileHeld } from '../files.js';
import type { Platform } from '../platform.js';
import { GZIP_LEVEL, passOverFile, type PassFindings } from './pipeline.js';
import { passOnThread } from './thread.js';
import { GarbageMeter } from './garbage.js';
import { createParallelGzip } from './gzip.js';
import { zlibFor, type PassCache } from './cache.js';
import { stampOf, type FileStamp } from './file-stamp.js';
import { copyPath, removeLeftCopies, type CopyOwner } from './temp-copy.js';

/** What is uploaded. */
export interface UploadFile {
  /** The file read for the upload, as it was when checked: it must not change before the upload ends. */
  source: FileStamp;
  /** Bytes sent. */
  size: number;
  /**
   * `as-is`: the source's bytes (a .jsonl.gz); `copy`: a gzipped copy bds made of a plain .jsonl, removed when
   * the command ends; `gzip`: a plain .jsonl gzipped on the way.
   */
  form: 'as-is' | 'copy' | 'gzip';
}

/** What the pass found (`size` is the upload's), and the bytes to upload. */
export interface DataPass extends PassFindings {
  upload: UploadFile;
  /** Remembered from an earlier pass over the same unchanged file: not read this time. */
  fromCache: boolean;
}

/**
 * Bytes per read of the upload: each is garbage once sent, so the upload keeps little in flight (the pass,
 * which reuses its buffers, reads larger ones: pipeline.ts). Every read is a round trip through libuv's thread
 * pool and a turn of the streams, the hash and the socket's write on this thread, so a read of 1 MiB costs the
 * upload a quarter of the CPU per byte that one of 256 KiB did (bench/README.md, issue 34).
 */
const UPLOAD_READ_CHUNK = 1 << 20;

/** A file this large or larger is passed over on a thread of its own (thread.ts); a smaller one on this thread. */
const THREAD_FROM = 4 << 20;

/** The last pass thread asked for: the next one starts once it has ended (oneAtATime). */
let lastPass: Promise<void> = Promise.resolve();

/**
 * The pass threads of this process run one at a time. A pass already keeps the cores busy (zlib on one, the
 * check on another, a plain .jsonl's gzip on all), and each holds its own memory (bench/README.md): with
 * `deliver --jobs 2`, one month is read while the other uploads, in the memory of one pass. A pass waiting
 * for its turn still stops at once when its signal is aborted.
 */
async function oneAtATime<T>(signal: AbortSignal | undefined, pass: () => Promise<T>): Promise<T> {
  const before = lastPass;
  let finished!: () => void;
  const mine = new Promise<void>((resolve) => (finished = resolve));
  // The next pass waits for the one before this too: this one may give up its turn before that one ends.
  lastPass = before.then(() => mine);
  try {
    await untilAborted(before, signal);
    return await pass();
  } finally {
    finished();
  }
}

/** Resolves with `promise`, or rejects with the signal's reason as soon as it is aborted. */
function untilAborted(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

export interface DataPassOptions {
  /** Where a gzipped copy of a plain .jsonl goes. */
  tmpDir: string;
  signal: AbortSignal | undefined;
  /** Bytes of the data file read so far, as the pass goes. */
  onRead?: ((read: number, total: number) => void) | undefined;
  /** Write a gzipped copy of a plain .jsonl for the upload (deliver), or only hash it (check). */
  copy: boolean;
  /** This process (the copy's name carries it), and how to tell the copies of processes gone, which deliver removes. */
  owner: CopyOwner;
  /** The system, which decides how a copy is removed (removeCopy). */
  platform: Platform;
  /** Passes remembered from earlier runs; each pass made is remembered there too. */
  cache?: PassCache | undefined;
  /** How messages name the file (the same form in all of them); default its path. */
  name?: string | undefined;
}

export async function passOverDataFile(
  file: string,
  { tmpDir, signal, onRead, copy: keepCopy, owner, platform, cache, name = file }: DataPassOptions,
): Promise<DataPass> {
  let before: Stats;
  try {
    before = await fs.stat(file);
  } catch {
    throw new UsageError(`no such data file: ${name}`);
  }
  if (!before.isFile()) throw new UsageError(`not a file: ${name}`);
  const gzipped = file.endsWith('.gz');
  if (!gzipped && !file.endsWith('.jsonl')) {
    throw new UsageError(`${name}: a data file ends in .jsonl.gz (gzipped JSON Lines) or .jsonl`);
  }
  if (before.size === 0) throw new UsageError(`${name}: the file is empty`);
  // Whatever this delivery sends, the copies of runs killed before they could remove theirs go.
  if (keepCopy) await removeLeftCopies(tmpDir, owner);
  const stamp = stampOf(file, before);
  const zlib = zlibFor(!gzipped);
  const remembered = await cache?.recall(stamp, zlib);
  if (remembered) {
    return {
      ...remembered,
      upload: { source: stamp, size: remembered.size, form: gzipped ? 'as-is' : 'gzip' },
      fromCache: true,
    };
  }

  const copy = !gzipped && keepCopy ? copyPath(tmpDir, owner) : undefined;
  const reportRead = onRead && ((read: number) => onRead(read, before.size));
  let pass: PassFindings;
  try {
    pass =
      before.size >= THREAD_FROM
        ? await oneAtATime(signal, () => passOnThread({ file, name, before: stamp, copy, tmpDir }, signal, reportRead))
        : await passOverFile(file, stamp, { name, copy, tmpDir, signal, onRead: reportRead });
  } catch (error) {
    // Whatever failed, on this thread or the pass thread (even one stopped half-way): a temp folder that is not
    // one (ENOTDIR) has nothing to remove either.
    if (copy) await fs.rm(copy, { force: true }).catch(() => undefined);
    throw error;
  }
  const upload: UploadFile = copy
    ? { source: stampOf(copy, await fs.stat(copy)), size: pass.size, form: 'copy' }
    : { source: stamp, size: pass.size, form: gzipped ? 'as-is' : 'gzip' };
  if (pass.recordCount === 0) {
    removeCopy(upload, platform);
    throw new UsageError(`${name}: no records (the file holds no non-empty line)`);
  }
  await cache?.remember(stamp, zlib, pass);
  return { ...pass, upload, fromCache: false };
}

/**
 * A fresh stream of the bytes to upload; one per attempt. A plain .jsonl is gzipped as the pass gzipped it.
 * Every chunk read (and every block gzipped) is garbage once sent: collected as the upload goes (garbage.ts),
 * or the caller's thread would pile up 32 MB of it. Destroying the stream closes the file, whichever form.
 */
export function openUpload(upload: UploadFile): Readable {
  const garbage = new GarbageMeter();
  // Counted as read, with no stream in between: a chunk is sent before a few more are read. ReadStream calls
  // its `fs.read` with these six arguments.
  const countedRead = (
    fd: number,
    buffer: Buffer,
    offset: number,
    length: number,
    position: number | null,
    callback: (error: NodeJS.ErrnoException | null, bytesRead: number, buffer: Buffer) => void,
  ): void =>
    read(fd, buffer, offset, length, position, (error, bytesRead) => {
      garbage.add(bytesRead);
      callback(error, bytesRead, buffer);
    });
  const file = createReadStream(upload.source.path, {
    highWaterMark: UPLOAD_READ_CHUNK,
    fs: { open, close, read: countedRead },
  });
  if (upload.form !== 'gzip') return file;
  // The upload's reader sees every error of the file (a read error is passed on to the gzip stream it reads),
  // and destroying the gzip stream destroys the file stream.
  const gzip = createParallelGzip({ level: GZIP_LEVEL, onDropped: (bytes) => garbage.add(2 * bytes) });
  return pipeline(file, gzip, () => undefined);
}

/**
 * Removes the gzipped copy bds made, if it made one. On Windows a virus scanner or the search indexer may hold a
 * file just written for a moment (EBUSY, EPERM): the removal waits for it as a rename does (files.ts's
 * whileHeld), rather than failing a delivery that is done.
 */
export function removeCopy(upload: UploadFile, platform: Platform): void {
  if (upload.form === 'copy') whileHeld(platform, () => rmSync(upload.source.path, { force: true }));
}
