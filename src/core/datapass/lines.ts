// The JSON Lines check of a pass, on the thread that runs the pass (for a large file, a thread of its own,
// while zlib inflates or deflates on libuv's threads: thread.ts).
//
// The bytes are copied, in order, into one buffer that is cut after its last newline, so that the validator
// always sees whole lines (the partial line at the end moves to the front of the buffer). So a buffer's first
// line number is the count of lines checked before it, and the first bad line reported is the first in the file.

import { UsageError } from '../errors.js';
import { checkWholeLines, MAX_LINE_BYTES } from './jsonl.js';

/**
 * Bytes checked at a time. The validator copies them into its own memory, which keeps the size of the largest
 * buffer checked, twice over (jsonl.ts): 512 KiB at this size. Large enough that a call's fixed cost is nothing
 * next to the check (a quarter of a millisecond at 1 GB/s), small enough that the check never keeps zlib
 * waiting for long.
 */
export const CHUNK_BYTES = 256 << 10;
const NEWLINE = 0x0a;

export interface LinesCheckerOptions {
  /** Bytes checked at a time (default CHUNK_BYTES); tests use small ones to cut lines anywhere. */
  chunkBytes?: number;
}

export class LinesChecker {
  private readonly chunkBytes: number;
  /** The buffer being filled: it starts at the start of a line. It grows only for a line longer than itself. */
  private buffer: Buffer;
  private filled = 0;
  /** Records and lines (empty ones included) checked so far. */
  private records = 0;
  private lines = 0;
  /** The first failure: every later push() or end() throws it again. */
  private failure: Error | undefined;
  private ended = false;

  constructor(
    private readonly fileName: string,
    options: LinesCheckerOptions = {},
  ) {
    this.chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
    if (!Number.isInteger(this.chunkBytes) || this.chunkBytes < 1)
      throw new RangeError('chunkBytes must be a positive integer');
    this.buffer = Buffer.alloc(this.chunkBytes);
  }

  /**
   * The next bytes of the file, in order; copied, so the caller may reuse the chunk at once. Throws the
   * UsageError of the first bad line.
   */
  push(chunk: Uint8Array): void {
    this.guard(() => {
      let offset = 0;
      while (offset < chunk.length) {
        const n = Math.min(chunk.length - offset, this.buffer.length - this.filled);
        this.buffer.set(chunk.subarray(offset, offset + n), this.filled);
        this.filled += n;
        offset += n;
        if (this.filled === this.buffer.length) this.cut();
      }
    });
  }

  /** The end of the file (its last line may lack the newline): returns the record count. */
  end(): number {
    this.guard(() => {
      this.ended = true;
      if (this.filled > 0) this.check(this.filled);
      this.filled = 0;
    });
    return this.records;
  }

  private guard(work: () => void): void {
    if (this.failure) throw this.failure;
    if (this.ended) throw new Error('LinesChecker: push() or end() after end()');
    try {
      work();
    } catch (error) {
      this.failure = error as Error;
      throw error;
    }
  }

  /** The buffer is full: check its whole lines, and start it again with the partial line after them. */
  private cut(): void {
    const full = this.buffer;
    const end = full.lastIndexOf(NEWLINE) + 1;
    if (end === 0) {
      // One line fills the whole buffer. Longer than the longest accepted (a buffer holds at most
      // MAX_LINE_BYTES + 1 bytes, so that one line of exactly the limit fits with its newline)?
      if (full.length > MAX_LINE_BYTES) throw this.bad(this.lines + 1, `is longer than ${MAX_LINE_BYTES >> 20} MiB`);
      // Grow, doubling (each byte is copied a few times at most), up to that limit.
      this.buffer = Buffer.alloc(full.length * 2 >= MAX_LINE_BYTES ? MAX_LINE_BYTES + 1 : full.length * 2);
      full.copy(this.buffer);
      return;
    }
    this.check(end);
    const rest = full.length - end;
    // Back to the usual size once a long line is checked, unless the partial line after it is long too.
    if (full.length > this.chunkBytes && rest < this.chunkBytes) {
      this.buffer = Buffer.alloc(this.chunkBytes);
      full.copy(this.buffer, 0, end);
    } else {
      full.copyWithin(0, end);
    }
    this.filled = rest;
  }

  /** Checks bytes [0, length) of the buffer: whole lines, but for the end of the file. */
  private check(length: number): void {
    const result = checkWholeLines(this.buffer.subarray(0, length));
    if (result.bad) {
      throw this.bad(
        this.lines + result.bad.line,
        result.bad.what === 'not-object' ? 'is not a JSON object' : 'is not valid JSON',
      );
    }
    this.records += result.records;
    this.lines += result.lines;
  }

  private bad(line: number, what: string): UsageError {
    return new UsageError(`${this.fileName} line ${line} ${what}`, {
      hint: 'every non-empty line of the data file must be one JSON object',
    });
  }
}
