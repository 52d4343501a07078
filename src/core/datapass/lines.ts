// The JSON Lines check of a pass, on a TaskRunner: on the worker pool for a large file, so that the checking
// runs off the thread that reads, hashes and feeds zlib; on that thread (InlineRunner) for a small one.
//
// The inflated bytes are copied, in order, into large buffers cut after their last newline, so that each
// holds whole lines (the partial line at the end moves to the next buffer); each is checked on a worker,
// and the results are taken in file order (InOrder). So a buffer's first line number is the sum of the
// lines of the buffers before it, and the first bad line reported is the first in the file: a bad line in
// a later buffer whose worker happens to finish first waits its turn, and loses to an earlier one.

import { UsageError } from '../errors.js';
import { MAX_LINE_BYTES } from './jsonl.js';
import { InOrder, type TaskRunner } from './pool.js';
import type { LinesResult } from './tasks.js';

/**
 * Bytes per task. Large enough that the message round trip (tens of microseconds) is little next to the
 * check (about 2 ms at 500 MB/s); small, because every buffer in flight is memory, twice over (the buffer,
 * and its copy in the worker's validator): measured on 1.2 GB, 1 MiB instead of 4 MiB took 18 MB off the
 * peak RSS and nothing off the speed.
 */
export const CHUNK_BYTES = 1 << 20;
const NEWLINE = 0x0a;

export interface ParallelLinesOptions {
  /** Bytes per task (default CHUNK_BYTES); tests use small ones to have many tasks in flight. */
  chunkBytes?: number;
  /** Tasks in flight at most (default: the pool's workers, plus two). */
  maxInFlight?: number;
}

export class ParallelLinesChecker {
  private readonly chunkBytes: number;
  private readonly results: InOrder<LinesResult>;
  /** Buffers of chunkBytes handed back by the workers, to fill again. */
  private readonly free: ArrayBuffer[] = [];
  /** The buffer being filled: it starts at the start of a line. */
  private buffer: Buffer;
  private filled = 0;
  /** Records and lines (empty ones included) of the buffers taken so far. */
  private recordsTaken = 0;
  private linesTaken = 0;
  /** The first failure: every later push() or end() throws it again. */
  private failure: Error | undefined;
  private busy = false;
  private ended = false;

  constructor(
    private readonly pool: TaskRunner,
    private readonly fileName: string,
    options: ParallelLinesOptions = {},
  ) {
    this.chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
    if (!Number.isInteger(this.chunkBytes) || this.chunkBytes < 1)
      throw new RangeError('chunkBytes must be a positive integer');
    this.results = new InOrder(options.maxInFlight ?? pool.size + 2, (result) => this.take(result));
    this.buffer = Buffer.alloc(this.chunkBytes);
  }

  /** Records counted so far (all of them once end() has resolved). */
  get records(): number {
    return this.recordsTaken;
  }

  /**
   * The next inflated bytes, in file order. The chunk is copied, so the caller may reuse it at once. Waits
   * while too many buffers are being checked: await each push before the next. Rejects with the UsageError
   * of the first bad line, once every line before it is known to be good.
   */
  async push(chunk: Uint8Array): Promise<void> {
    await this.exclusive(async () => {
      let offset = 0;
      while (offset < chunk.length) {
        const n = Math.min(chunk.length - offset, this.buffer.length - this.filled);
        this.buffer.set(chunk.subarray(offset, offset + n), this.filled);
        this.filled += n;
        offset += n;
        if (this.filled === this.buffer.length) await this.cut();
      }
    });
  }

  /** The end of the file (its last line may lack the newline): resolves with the record count. */
  async end(): Promise<number> {
    await this.exclusive(async () => {
      this.ended = true;
      if (this.filled > 0) await this.send(this.filled);
      this.filled = 0;
      await this.results.drain();
    });
    return this.recordsTaken;
  }

  private async exclusive(work: () => Promise<void>): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.busy) throw new Error('ParallelLinesChecker: await each push() before the next');
    if (this.ended) throw new Error('ParallelLinesChecker: push() or end() after end()');
    this.busy = true;
    try {
      await work();
    } catch (error) {
      this.failure ??= error as Error;
      throw this.failure;
    } finally {
      this.busy = false;
    }
  }

  /** The buffer is full: send its whole lines, and start the next buffer with the partial line after them. */
  private async cut(): Promise<void> {
    const full = this.buffer;
    const end = full.lastIndexOf(NEWLINE) + 1;
    if (end === 0) {
      // One line fills the whole buffer. Longer than the longest accepted (a buffer holds at most
      // MAX_LINE_BYTES + 1 bytes, so that one line of exactly the limit fits with its newline)?
      if (full.length > MAX_LINE_BYTES) {
        // Every line before it has been sent: the first bad one among them comes first.
        await this.results.drain();
        throw this.bad(this.linesTaken + 1, `is longer than ${MAX_LINE_BYTES >> 20} MiB`);
      }
      // Grow, doubling (each byte is copied a few times at most), up to that limit.
      this.buffer = Buffer.alloc(full.length * 2 >= MAX_LINE_BYTES ? MAX_LINE_BYTES + 1 : full.length * 2);
      full.copy(this.buffer);
      return;
    }
    const rest = full.length - end;
    const reuse = rest < this.chunkBytes ? this.free.pop() : undefined;
    this.buffer = reuse ? Buffer.from(reuse) : Buffer.alloc(rest < this.chunkBytes ? this.chunkBytes : full.length);
    full.copy(this.buffer, 0, end);
    this.filled = rest;
    // Sent last: the buffer moves to the worker and is unusable here from then on.
    await this.send(end, full);
  }

  /** Sends bytes [0, length) of the buffer (the current one unless given) to be checked. */
  private async send(length: number, buffer: Buffer = this.buffer): Promise<void> {
    const arrayBuffer = buffer.buffer as ArrayBuffer;
    await this.results.add(this.pool.run({ kind: 'lines', buffer: arrayBuffer, length }, [arrayBuffer]));
  }

  private take(result: LinesResult): void {
    if (result.bad) {
      throw this.bad(
        this.linesTaken + result.bad.line,
        result.bad.what === 'not-object' ? 'is not a JSON object' : 'is not valid JSON',
      );
    }
    this.recordsTaken += result.records;
    this.linesTaken += result.lines;
    if (result.buffer.byteLength === this.chunkBytes) this.free.push(result.buffer);
  }

  private bad(line: number, what: string): UsageError {
    return new UsageError(`${this.fileName} line ${line} ${what}`, {
      hint: 'every non-empty line of the data file must be one JSON object',
    });
  }
}
