// The one pass over the data file: hash the exact bytes that will be uploaded, inflate, count the records
// and check that each is a JSON object. A plain .jsonl is gzipped into a temp file in the same pass.

import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, promises as fs, type Stats } from 'node:fs';
import path from 'node:path';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants as zlibConstants, createGunzip, createGzip } from 'node:zlib';
import { UsageError } from '../errors.js';
import { JsonLinesChecker } from './jsonl.js';

/** The file whose exact bytes are uploaded, and what it was when checked. */
export interface UploadFile {
  path: string;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  /** A gzipped copy bds made of a plain .jsonl; removed when the command ends. */
  temporary: boolean;
}

export interface ScanResult {
  upload: UploadFile;
  recordCount: number;
  /** SHA-256 of the uploaded bytes, lowercase hex. */
  sha256: string;
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

function checker(lines: JsonLinesChecker, collectGarbage: (() => void) | undefined): Writable {
  let sinceCollection = 0;
  return new Writable({
    highWaterMark: 4 * READ_CHUNK,
    write(chunk: Buffer, _encoding, callback) {
      // Deferred, so that zlib starts inflating the next chunk (on the thread pool) before we check this one.
      setImmediate(() => {
        try {
          lines.push(chunk);
          sinceCollection += chunk.length;
          if (sinceCollection >= COLLECT_EVERY) {
            sinceCollection = 0;
            collectGarbage?.();
          }
          callback();
        } catch (error) {
          callback(error as Error);
        }
      });
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
}

export async function scanDataFile(file: string, { tmpDir, signal, collectGarbage, onRead }: ScanOptions): Promise<ScanResult> {
  const name = path.basename(file);
  let stat: Stats;
  try {
    stat = await fs.stat(file);
  } catch {
    throw new UsageError(`no such data file: ${file}`);
  }
  if (!stat.isFile()) throw new UsageError(`not a file: ${file}`);
  const gzipped = file.endsWith('.gz');
  if (!gzipped && !file.endsWith('.jsonl')) {
    throw new UsageError(`${file}: a data file ends in .jsonl.gz (gzipped JSON Lines) or .jsonl`);
  }

  const hash = createHash('sha256');
  const lines = new JsonLinesChecker(name);
  const input = createReadStream(file, { highWaterMark: READ_CHUNK });
  let read = 0;
  input.on('data', (chunk) => {
    read += chunk.length;
    onRead?.(read, stat.size);
  });
  const options = signal ? { signal } : {};
  let upload: UploadFile;
  try {
    if (gzipped) {
      await pipeline(input, passThrough((chunk) => hash.update(chunk)), createGunzip({ chunkSize: READ_CHUNK }), checker(lines, collectGarbage), options);
      upload = { path: file, size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, temporary: false };
    } else {
      await fs.mkdir(tmpDir, { recursive: true });
      const copy = path.join(tmpDir, `bds-${randomUUID()}-${name}.gz`);
      try {
        await pipeline(
          input,
          passThrough((chunk) => lines.push(chunk)),
          // Fixed level and no file name or time in the header: the same .jsonl always gives the same bytes,
          // so a re-run finds its own delivery record.
          createGzip({ level: zlibConstants.Z_DEFAULT_COMPRESSION, chunkSize: READ_CHUNK }),
          passThrough((chunk) => hash.update(chunk)),
          createWriteStream(copy, { mode: 0o600 }),
          options,
        );
      } catch (error) {
        await fs.rm(copy, { force: true });
        throw error;
      }
      const copied = await fs.stat(copy);
      upload = { path: copy, size: copied.size, mtimeMs: copied.mtimeMs, ctimeMs: copied.ctimeMs, temporary: true };
    }
    lines.end();
  } catch (error) {
    throw asInputError(error, file);
  }
  if (lines.records === 0) throw new UsageError(`${file}: no records (the file holds no non-empty line)`);
  return { upload, recordCount: lines.records, sha256: hash.digest('hex') };
}

function asInputError(error: unknown, file: string): Error {
  if (error instanceof UsageError) return error;
  if ((error as { name?: string }).name === 'AbortError') return (error as { cause?: Error }).cause ?? (error as Error);
  const code = (error as { code?: string }).code;
  if (code === 'Z_BUF_ERROR' || /unexpected end of file/i.test(String((error as Error).message))) {
    return new UsageError(`${file}: the gzip data ends early (the file is truncated)`);
  }
  if (code === 'Z_DATA_ERROR') {
    const message = (error as Error).message;
    return new UsageError(
      /header check/i.test(message) ? `${file}: not a gzip file` : `${file}: corrupt gzip data (${message})`,
      { hint: /header check/i.test(message) ? 'a plain JSON Lines file should be named *.jsonl' : undefined },
    );
  }
  if (code === 'EACCES' || code === 'EISDIR') return new UsageError(`${file}: cannot read it (${code})`);
  return error as Error;
}
