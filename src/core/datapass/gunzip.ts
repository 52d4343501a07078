// The inflate of a .jsonl.gz in the pass (pipeline.ts), with the gzip container of its first member read here
// rather than by zlib: the header is skipped here, the deflate data inflated raw by zlib on libuv's threads, and
// the CRC-32 and length in the trailer checked here, the CRC computed on the pass thread as the lines are
// checked (`inflated`). zlib's gunzip computes that CRC on the thread that inflates: a sixth of its work on the
// bench's records (1.2 of 7.2 s of CPU for 1 GiB), on the thread every other one waits for. Measured (bds check
// of 1 GiB, two cores): 9.5 → 9.0 s on a quiet machine, 17.6 → 17.0 s with a gzip -9 on each core. Measured
// again against its removal (issue 40; interleaved, on two cores kept busy by other work): the pre-flight of
// 1 GiB 22.8 s with it, 23.9 s without, against 20.8 s for a bare inflate: 1.09 of it with, 1.15 without, which
// is the target (bench/README.md) with no margin left; so it stays. It costs no less CPU: it moves the CRC-32
// off the thread the others wait for.
//
// Everything else is left to zlib's gunzip as before, so that the same files are accepted and the same errors
// reported (the tests check it against zlib's gunzip, cut anywhere): what follows the first member (another
// member, or bytes that are not one), and a file whose first header is not the usual kind (a header CRC,
// reserved flags, a header longer than the first read, or not gzip at all).

import type { Duplex, Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { crc32, createGunzip, createInflateRaw, type Gunzip, type InflateRaw } from 'node:zlib';

const FHCRC = 0x02;
const FEXTRA = 0x04;
const FNAME = 0x08;
const FCOMMENT = 0x10;
const RESERVED = 0xe0;
/** CRC-32 and length of the inflated data, four bytes each, little-endian (RFC 1952). */
const TRAILER_BYTES = 8;

/**
 * The length of the gzip header `head` starts with, when it is whole there and of the usual kind: the deflate
 * data follows it. Otherwise undefined, and zlib's gunzip reads the file.
 */
export function usualHeaderLength(head: Buffer): number | undefined {
  if (head.length < 10 || head[0] !== 0x1f || head[1] !== 0x8b || head[2] !== 8) return undefined;
  const flags = head[3]!;
  if (flags & (FHCRC | RESERVED)) return undefined;
  let end = 10;
  if (flags & FEXTRA) {
    if (end + 2 > head.length) return undefined;
    end += 2 + head.readUInt16LE(end);
  }
  for (const flag of [FNAME, FCOMMENT]) {
    if (!(flags & flag)) continue;
    const zero = head.indexOf(0, end);
    if (zero < 0) return undefined;
    end = zero + 1;
  }
  return end <= head.length ? end : undefined;
}

/** An error as zlib's gunzip reports it (pipeline.ts turns it into words). */
function zlibError(message: string, code: 'Z_BUF_ERROR' | 'Z_DATA_ERROR'): Error {
  return Object.assign(new Error(message), { code });
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: Error) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** Where the file's bytes go next: the first member's header, its deflate data, its trailer, and after it. */
type Stage = 'header' | 'deflate' | 'trailer' | 'after trailer' | 'gunzip' | 'ended';

export interface GzipInflaterSetup {
  /** Bytes per chunk of inflated output. */
  chunkSize: number;
  signal?: AbortSignal | undefined;
}

/**
 * Takes the bytes of a .gz file in order (`write`, then `end`) and writes what they inflate to into `sink`,
 * which must show every chunk to `inflated` before it drops it. `done` settles once the sink has finished,
 * rejecting with the first error (zlib's, the sink's, or the trailer's).
 */
export class GzipInflater {
  readonly done: Promise<void>;
  private readonly first = deferred<Duplex>();
  /** What follows the first member when zlib's gunzip reads it, or undefined when nothing does. */
  private readonly next = deferred<Gunzip | undefined>();
  private stage: Stage = 'header';
  private raw: InflateRaw | undefined;
  private gunzip: Gunzip | undefined;
  private gunzipFrom = 0;
  /** Why the file's bytes stopped coming (destroy), if they did. */
  private failure: Error | undefined;
  private taken = 0;
  private endOfData: number | undefined;
  private readonly trailer = Buffer.alloc(TRAILER_BYTES);
  private trailerBytes = 0;
  /** Bytes the raw inflate gave the sink, and how many of them `inflated` has seen, with their CRC-32. */
  private rawOutput = 0;
  private crcBytes = 0;
  private crc = 0;
  private settled = false;
  /** Called once `inflated` has seen all of the raw inflate's output, when flow waits for that. */
  private rawSeen: (() => void) | undefined;
  /** Rejects the write to zlib under way, if there is one. */
  private abandonWrite: ((error: Error) => void) | undefined;
  /** The write taken last, or the end. */
  private queue = Promise.resolve();

  constructor(
    private readonly sink: Writable,
    private readonly options: GzipInflaterSetup,
  ) {
    this.done = this.flow().then(
      () => void (this.settled = true),
      (error: unknown) => {
        this.settled = true;
        this.abandonWrite?.(error as Error);
        // Including a gunzip started for what follows the first member, which flow never reached.
        this.raw?.destroy();
        this.gunzip?.destroy();
        throw error;
      },
    );
  }

  /** Where the gzip data ends in the file (for the check that only zeros follow it), once `done` has settled. */
  get dataEnd(): number {
    if (this.gunzip) return this.gunzipFrom + this.gunzip.bytesWritten;
    return this.endOfData ?? this.taken;
  }

  /** The sink shows each chunk here before it drops it: the first member's are checked against its trailer. */
  inflated(chunk: Buffer): void {
    if (this.crcBytes >= this.rawOutput) return;
    this.crc = crc32(chunk, this.crc);
    this.crcBytes += chunk.length;
    if (this.crcBytes >= this.rawOutput) this.rawSeen?.();
  }

  /**
   * Takes the next bytes of the file; resolves once their buffer may be used again. Writes may overlap (the
   * pass reads the next chunk meanwhile): each is taken once the one before has been.
   */
  write(chunk: Buffer): Promise<void> {
    const taking = this.queue.then(() => this.take(chunk));
    this.queue = taking.catch(() => undefined);
    return taking;
  }

  /** The file has no more bytes: once the last write has been taken. */
  end(): void {
    this.queue = this.queue.then(() => this.takeEnd());
  }

  private async take(chunk: Buffer): Promise<void> {
    this.taken += chunk.length;
    let rest = chunk;
    if (this.stage === 'header') {
      const headerLength = usualHeaderLength(chunk);
      if (headerLength === undefined) {
        this.startGunzip(this.first);
      } else {
        this.raw = createInflateRaw({ chunkSize: this.options.chunkSize });
        // Its errors reach flow through the pipe; one after that (destroy, once it has ended) goes nowhere.
        this.raw.on('error', () => undefined);
        this.first.resolve(this.raw);
        this.stage = 'deflate';
        rest = chunk.subarray(headerLength);
      }
    }
    if (this.stage === 'deflate') {
      if (rest.length === 0) return;
      const raw = this.raw!;
      const before = raw.bytesWritten;
      await this.writeTo(raw, rest);
      // zlib takes nothing past the end of the deflate data: the trailer starts where it stopped taking.
      const took = raw.bytesWritten - before;
      if (took === rest.length) return;
      raw.end();
      this.stage = 'trailer';
      rest = rest.subarray(took);
    }
    if (this.stage === 'trailer') {
      const part = rest.subarray(0, TRAILER_BYTES - this.trailerBytes);
      this.trailerBytes += part.copy(this.trailer, this.trailerBytes);
      rest = rest.subarray(part.length);
      if (this.trailerBytes < TRAILER_BYTES) return;
      this.stage = 'after trailer';
    }
    if (this.stage === 'after trailer') {
      if (rest.length === 0) return;
      // As zlib's gunzip: a zero ends the gzip data (padding); anything else must be another member.
      if (rest[0] === 0) {
        this.endOfData = this.taken - rest.length;
        this.stage = 'ended';
        this.next.resolve(undefined);
        return;
      }
      this.gunzipFrom = this.taken - rest.length;
      this.startGunzip(this.next);
    }
    if (this.stage === 'gunzip' && !this.settled) await this.writeTo(this.gunzip!, rest);
  }

  private takeEnd(): void {
    switch (this.stage) {
      case 'header':
        // An empty file: zlib's gunzip says what it says of one.
        this.startGunzip(this.first);
        this.gunzip!.end();
        return;
      case 'deflate':
        // The deflate data ends early (zlib says so), or the trailer is missing (flow says so).
        this.raw!.end();
        this.next.resolve(undefined);
        return;
      case 'trailer':
      case 'after trailer':
        this.next.resolve(undefined);
        return;
      case 'gunzip':
        this.gunzip!.end();
        return;
      case 'ended':
        return;
    }
  }

  /**
   * Stops with `error` (the file could not be read): whatever stage flow is at, it fails with it, including
   * when it is still checking the first member's last chunks and a gunzip has already taken what follows.
   */
  destroy(error: Error): void {
    this.failure ??= error;
    this.first.reject(error);
    this.next.reject(error);
    this.raw?.destroy(error);
    this.gunzip?.destroy(error);
  }

  /**
   * Writes to a zlib stream; resolves once the stream is done with the chunk (its write callback). Gives up
   * when the inflate fails, as zlib never calls back the write it failed on.
   */
  private writeTo(stream: Writable, chunk: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.abandonWrite = reject;
      stream.write(chunk, (error) => (error ? reject(error) : resolve()));
    });
  }

  private startGunzip(into: Deferred<Duplex> | Deferred<Gunzip | undefined>): void {
    this.gunzip = createGunzip({ chunkSize: this.options.chunkSize });
    // It may fail before flow pipes it (that waits for the first member's trailer): the pipe then fails with it.
    this.gunzip.on('error', () => undefined);
    this.stage = 'gunzip';
    into.resolve(this.gunzip);
  }

  private async flow(): Promise<void> {
    const { signal } = this.options;
    const ends = signal ? { signal } : {};
    const first = await this.first.promise;
    if (first === this.gunzip) {
      await pipeline(first, this.sink, ends);
      return;
    }
    const piped = pipeline(first, this.sink, { ...ends, end: false });
    first.on('data', (chunk: Buffer) => (this.rawOutput += chunk.length));
    await piped;
    const next = await this.next.promise;
    // The first member's trailer is checked before anything after it is inflated, as zlib's gunzip does.
    await this.allRawSeen();
    if (this.failure) throw this.failure;
    this.checkTrailer();
    if (next) {
      await pipeline(next, this.sink, ends);
    } else {
      signal?.throwIfAborted();
      this.sink.end();
      await finished(this.sink);
    }
  }

  /** Resolves once the sink has shown `inflated` every chunk of the raw inflate; rejects if the sink fails. */
  private async allRawSeen(): Promise<void> {
    if (this.crcBytes >= this.rawOutput) return;
    const seen = new Promise<void>((resolve) => (this.rawSeen = resolve));
    await Promise.race([seen, finished(this.sink)]);
  }

  private checkTrailer(): void {
    if (this.trailerBytes < TRAILER_BYTES) throw zlibError('unexpected end of file', 'Z_BUF_ERROR');
    if (this.trailer.readUInt32LE(0) !== this.crc >>> 0) throw zlibError('incorrect data check', 'Z_DATA_ERROR');
    if (this.trailer.readUInt32LE(4) !== this.rawOutput % 2 ** 32) {
      throw zlibError('incorrect length check', 'Z_DATA_ERROR');
    }
  }
}
