// The JSON Lines parse of a pass (each line must parse as a JSON object), on the thread that runs the pass (for a large file, a thread of its own,
// while zlib inflates or deflates on libuv's threads: thread.ts).
//
// Each chunk is checked in windows of whole lines, straight from the chunk (the parser copies a window into
// its own memory); only a line cut by the end of a chunk is copied, to a small buffer of its own, and checked
// once the next chunk ends it. So a window's first line number is the count of lines checked before it, and
// the first bad line reported is the first in the file.

import { UsageError } from '../errors.js';
import { parseWholeLines, MAX_LINE_BYTES } from './jsonl.js';

/**
 * Bytes checked at a time (a window, cut after its last newline). The parser copies them into its own
 * memory, which keeps the size of the largest window checked, twice over (jsonl.ts): 512 KiB at this size.
 * Large enough that a call's fixed cost is nothing next to the check (a quarter of a millisecond at 1 GB/s).
 */
export const CHUNK_BYTES = 256 << 10;
const NEWLINE = 0x0a;

export class LinesParser {
  private readonly chunkBytes: number;
  /** The line cut by the end of the last chunk: its first `cut` bytes, waiting for the newline that ends it. */
  private carried: Buffer;
  private cut = 0;
  /** Records and lines (empty ones included) checked so far. */
  private records = 0;
  private lines = 0;
  /** The first failure: every later call throws it again. */
  private failure: Error | undefined;
  /** Whether a chunk came before: only the first may start with a byte order mark. */
  private pushed = false;
  private ended = false;

  constructor(
    private readonly fileName: string,
    /** `chunkBytes`: bytes parsed at a time (default CHUNK_BYTES); tests use small ones to cut lines anywhere. */
    options: { chunkBytes?: number } = {},
  ) {
    this.chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
    if (!Number.isInteger(this.chunkBytes) || this.chunkBytes < 1)
      throw new RangeError('chunkBytes must be a positive integer');
    this.carried = Buffer.alloc(this.chunkBytes);
  }

  /**
   * The next bytes of the file, in order: checked now, all but a line cut at the chunk's end, which is copied.
   * The caller may reuse the chunk as soon as this returns. Throws the UsageError of the first bad line.
   */
  push(chunk: Uint8Array): void {
    this.guard(() => {
      let offset = 0;
      if (!this.pushed) {
        this.pushed = true;
        offset = byteOrderMarkLength(chunk);
      }
      if (this.cut > 0) {
        // First the line the last chunk cut, up to its newline in this chunk.
        const newline = chunk.indexOf(NEWLINE);
        if (newline === -1) {
          this.carry(chunk);
          return;
        }
        this.carry(chunk.subarray(0, newline + 1));
        this.check(this.carried, 0, this.cut);
        this.cut = 0;
        offset = newline + 1;
      }
      while (offset < chunk.length) {
        const windowEnd = Math.min(offset + this.chunkBytes, chunk.length);
        let end = chunk.lastIndexOf(NEWLINE, windowEnd - 1) + 1;
        if (end <= offset) {
          // A line longer than the window: up to its newline, if this chunk has it.
          const newline = chunk.indexOf(NEWLINE, windowEnd);
          if (newline === -1) break;
          this.refuseLongerThanMax(newline - offset);
          end = newline + 1;
        }
        this.check(chunk, offset, end);
        offset = end;
      }
      this.carry(chunk.subarray(offset));
    });
  }

  /** The end of the file (its last line may lack the newline): returns the record count. */
  end(): number {
    this.guard(() => {
      this.ended = true;
      if (this.cut > 0) this.check(this.carried, 0, this.cut);
      this.cut = 0;
    });
    return this.records;
  }

  private guard(work: () => void): void {
    if (this.failure) throw this.failure;
    if (this.ended) throw new Error('LinesParser: push() or end() after end()');
    try {
      work();
    } catch (error) {
      this.failure = error as Error;
      throw error;
    }
  }

  /**
   * Appends to the cut line, refusing it once it is longer than the longest accepted. Its buffer grows for a
   * long line (doubling), and is back to its usual size once a long line is checked.
   */
  private carry(bytes: Uint8Array): void {
    const length = this.cut + bytes.length;
    const newline = bytes.length > 0 && bytes[bytes.length - 1] === NEWLINE ? 1 : 0;
    this.refuseLongerThanMax(length - newline);
    if (this.cut === 0 && this.carried.length > this.chunkBytes && length <= this.chunkBytes) {
      this.carried = Buffer.alloc(this.chunkBytes);
    } else if (length > this.carried.length) {
      const grown = Buffer.alloc(Math.min(Math.max(length, 2 * this.carried.length), MAX_LINE_BYTES + 1));
      this.carried.copy(grown, 0, 0, this.cut);
      this.carried = grown;
    }
    this.carried.set(bytes, this.cut);
    this.cut = length;
  }

  /** The line about to be checked (or still cut) has this many bytes before its newline. */
  private refuseLongerThanMax(length: number): void {
    if (length > MAX_LINE_BYTES) {
      throw this.bad(
        this.lines + 1,
        `is longer than ${MAX_LINE_BYTES >> 20} MiB`,
        `a line of the data file may hold at most ${MAX_LINE_BYTES >> 20} MiB: is it JSON Lines, one record per line?`,
      );
    }
  }

  /** Checks bytes [start, end) of `bytes`: whole lines, but for the end of the file. */
  private check(bytes: Uint8Array, start: number, end: number): void {
    const { bad, records, lines } = parseWholeLines(bytes.subarray(start, end));
    if (bad?.what === 'not-utf8') {
      const value = bad.value.toString(16).toUpperCase();
      throw new UsageError(
        `${this.fileName} line ${this.lines + bad.line} is not valid UTF-8 at byte ${bad.byte} of the line (0x${value})`,
        {
          hint: 'JSON Lines must be UTF-8 (RFC 8259): write the file as UTF-8, not as Latin-1 or Windows-1252',
        },
      );
    }
    if (bad) {
      throw this.bad(this.lines + bad.line, bad.what === 'not-object' ? 'is not a JSON object' : 'is not valid JSON');
    }
    this.records += records;
    this.lines += lines;
  }

  private bad(
    line: number,
    what: string,
    hint = 'every non-empty line of the data file must be one JSON object',
  ): UsageError {
    return new UsageError(`${this.fileName} line ${line} ${what}`, { hint });
  }
}

/**
 * A UTF-8 byte order mark at the start of the first chunk is allowed (RFC 8259 lets a parser ignore it): the
 * lines are checked without it, and the file is sent as it is.
 */
function byteOrderMarkLength(chunk: Uint8Array): number {
  return chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0;
}
