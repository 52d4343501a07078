// Counting and checking JSON Lines as they stream past: every non-empty line must be a JSON object.
// Works on bytes (newline search in native code) and only decodes a line to parse it.

import { UsageError } from '../errors.js';

const NEWLINE = 0x0a;
const OPEN_BRACE = 0x7b;

export class JsonLinesChecker {
  /** Non-empty lines seen so far: the record count. */
  records = 0;
  private line = 0;
  private carry: Buffer | undefined;

  constructor(private readonly fileName: string) {}

  push(chunk: Buffer): void {
    let start = 0;
    let data = chunk;
    if (this.carry) {
      data = Buffer.concat([this.carry, chunk]);
      this.carry = undefined;
    }
    for (;;) {
      const end = data.indexOf(NEWLINE, start);
      if (end === -1) break;
      this.checkLine(data, start, end);
      start = end + 1;
    }
    if (start < data.length) this.carry = data.subarray(start);
  }

  /** The last line may lack its newline. */
  end(): number {
    if (this.carry) this.checkLine(this.carry, 0, this.carry.length);
    this.carry = undefined;
    return this.records;
  }

  private checkLine(data: Buffer, start: number, end: number): void {
    this.line++;
    let first = start;
    while (first < end && isSpace(data[first]!)) first++;
    if (first === end) return;
    if (data[first] !== OPEN_BRACE) throw this.bad('is not a JSON object');
    try {
      JSON.parse(data.toString('utf8', first, end));
    } catch {
      throw this.bad('is not valid JSON');
    }
    this.records++;
  }

  private bad(what: string): UsageError {
    return new UsageError(`${this.fileName} line ${this.line} ${what}`, {
      hint: 'every non-empty line of the data file must be one JSON object',
    });
  }
}

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0d;
}
