// Counting and checking JSON Lines as they stream past: every non-empty line must be a JSON object.
//
// Works on bytes, never on strings: one pass per chunk with a hand-written JSON validator that also finds
// the end of each line (a newline is never JSON white space here, so it ends a line wherever it appears,
// and a newline inside an object or a string makes that line invalid, as JSON.parse of the line would).
// It accepts exactly what JSON.parse accepts for one line (RFC 8259 grammar; white space is space, tab and
// carriage return; bytes are not checked for valid UTF-8, as JSON.parse of the decoded line does not), at
// several times its speed and with no allocation per line. Only a line that straddles two chunks is copied.

import { UsageError } from '../errors.js';

const NEWLINE = 0x0a;
/** The longest record accepted; longer means the file is not JSON Lines (one huge document, say). */
export const MAX_LINE_BYTES = 64 << 20;
const OPEN_BRACE = 0x7b;

/**
 * Results of a scan below 0; a position (>= 0) means "valid up to here". INCOMPLETE is only ever returned
 * when the scan reached `end` without meeting a newline, so a chunk's lines are never misattributed.
 */
const INVALID = -1;
/** The input ended before the value did: the rest of the line is in the next chunk (or it is truncated). */
const INCOMPLETE = -2;

// Byte classes, as lookup tables (faster than comparisons in the hot loops).
/** JSON white space within a line (the newline ends the line instead). */
const SPACE = new Uint8Array(256);
SPACE[0x20] = SPACE[0x09] = SPACE[0x0d] = 1;
/** Inside a string: 0 an ordinary byte, 1 the closing quote, 2 a backslash, 3 a control character (invalid). */
const IN_STRING = new Uint8Array(256);
for (let byte = 0; byte < 0x20; byte++) IN_STRING[byte] = 3;
IN_STRING[0x22] = 1;
IN_STRING[0x5c] = 2;
const HEX_DIGIT = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX_DIGIT[c.charCodeAt(0)] = 1;
/** The single-character escapes: \" \\ \/ \b \f \n \r \t. */
const SIMPLE_ESCAPE = new Uint8Array(256);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPE[c.charCodeAt(0)] = 1;
const DIGIT = new Uint8Array(256);
for (let byte = 0x30; byte <= 0x39; byte++) DIGIT[byte] = 1;

const IN_OBJECT = 1;
const IN_ARRAY = 2;
/** Open containers of the value being scanned; grows for deeply nested lines. */
let stack = new Uint8Array(256);

/** Skips white space from i; returns the first other position (or end). */
function skipSpace(b: Uint8Array, i: number, end: number): number {
  while (i < end && SPACE[b[i]!] === 1) i++;
  return i;
}

/** A string's body from i (just past the opening quote); returns the position past the closing quote. */
function scanString(b: Uint8Array, i: number, end: number): number {
  for (;;) {
    let kind = 0;
    while (i < end && (kind = IN_STRING[b[i]!]!) === 0) i++;
    if (i >= end) return INCOMPLETE;
    if (kind === 1) return i + 1;
    if (kind === 3) return INVALID;
    // a backslash
    if (i + 1 >= end) return INCOMPLETE;
    const escaped = b[i + 1]!;
    if (SIMPLE_ESCAPE[escaped] === 1) {
      i += 2;
    } else if (escaped === 0x75) {
      if (i + 5 < end && HEX_DIGIT[b[i + 2]!]! & HEX_DIGIT[b[i + 3]!]! & HEX_DIGIT[b[i + 4]!]! & HEX_DIGIT[b[i + 5]!]!) {
        i += 6;
      } else {
        // Near the end of the input: incomplete only if what there is could still be four hex digits.
        for (let k = i + 2; k < end && k < i + 6; k++) if (HEX_DIGIT[b[k]!] !== 1) return INVALID;
        if (i + 5 < end) return INVALID;
        return INCOMPLETE;
      }
    } else {
      return INVALID;
    }
  }
}

/** -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? from i; returns the position after it. */
function scanNumber(b: Uint8Array, i: number, end: number): number {
  if (b[i] === 0x2d) i++;
  if (i >= end) return INCOMPLETE;
  if (b[i] === 0x30) i++;
  else if (DIGIT[b[i]!] === 1) {
    i++;
    while (i < end && DIGIT[b[i]!] === 1) i++;
  } else return INVALID;
  if (i < end && b[i] === 0x2e) {
    i++;
    if (i >= end) return INCOMPLETE;
    if (DIGIT[b[i]!] !== 1) return INVALID;
    i++;
    while (i < end && DIGIT[b[i]!] === 1) i++;
  }
  if (i < end && (b[i] === 0x65 || b[i] === 0x45)) {
    i++;
    if (i < end && (b[i] === 0x2b || b[i] === 0x2d)) i++;
    if (i >= end) return INCOMPLETE;
    if (DIGIT[b[i]!] !== 1) return INVALID;
    i++;
    while (i < end && DIGIT[b[i]!] === 1) i++;
  }
  // A number that runs to the end might go on in the next chunk.
  return i >= end ? INCOMPLETE : i;
}

/** `word` (true, false, null) at i, whose first byte is already known to match. */
function scanWord(b: Uint8Array, i: number, end: number, word: Uint8Array): number {
  const stop = i + word.length;
  for (let k = 1; k < word.length; k++) {
    if (i + k >= end) return INCOMPLETE;
    if (b[i + k] !== word[k]) return INVALID;
  }
  return stop;
}

const TRUE = new Uint8Array([0x74, 0x72, 0x75, 0x65]);
const FALSE = new Uint8Array([0x66, 0x61, 0x6c, 0x73, 0x65]);
const NULL = new Uint8Array([0x6e, 0x75, 0x6c, 0x6c]);

/** `"key" :` from i (at the key's opening quote, white space skipped); returns the position after the colon. */
function scanKey(b: Uint8Array, i: number, end: number): number {
  if (i >= end) return INCOMPLETE;
  if (b[i] !== 0x22) return INVALID;
  i = scanString(b, i + 1, end);
  if (i < 0) return i;
  i = skipSpace(b, i, end);
  if (i >= end) return INCOMPLETE;
  return b[i] === 0x3a ? i + 1 : INVALID;
}

/**
 * One JSON value from i (an object's '{' for a line); returns the position just after it, INVALID, or
 * INCOMPLETE when `end` came first. Iterative, with an explicit stack: any depth, no recursion.
 */
function scanValue(b: Uint8Array, i: number, end: number): number {
  let depth = 0;
  for (;;) {
    // A value is expected at i.
    i = skipSpace(b, i, end);
    if (i >= end) return INCOMPLETE;
    const c = b[i]!;
    if (c === 0x7b || c === 0x5b) {
      i = skipSpace(b, i + 1, end);
      if (i >= end) return INCOMPLETE;
      if (b[i] === (c === 0x7b ? 0x7d : 0x5d)) {
        i++; // {} or []
      } else {
        if (depth === stack.length) {
          const bigger = new Uint8Array(depth * 2);
          bigger.set(stack);
          stack = bigger;
        }
        stack[depth++] = c === 0x7b ? IN_OBJECT : IN_ARRAY;
        if (c === 0x7b) {
          i = scanKey(b, i, end);
          if (i < 0) return i;
        }
        continue;
      }
    } else if (c === 0x22) {
      i = scanString(b, i + 1, end);
    } else if (c === 0x2d || DIGIT[c] === 1) {
      i = scanNumber(b, i, end);
    } else if (c === 0x74) {
      i = scanWord(b, i, end, TRUE);
    } else if (c === 0x66) {
      i = scanWord(b, i, end, FALSE);
    } else if (c === 0x6e) {
      i = scanWord(b, i, end, NULL);
    } else {
      return INVALID;
    }
    if (i < 0) return i;
    // After a value: a comma and the next member or element, or the end of one or more containers.
    for (;;) {
      if (depth === 0) return i;
      i = skipSpace(b, i, end);
      if (i >= end) return INCOMPLETE;
      const next = b[i++];
      if (next === 0x2c) {
        if (stack[depth - 1] === IN_OBJECT) {
          i = scanKey(b, skipSpace(b, i, end), end);
          if (i < 0) return i;
        }
        break;
      }
      if (next !== (stack[depth - 1] === IN_OBJECT ? 0x7d : 0x5d)) return INVALID;
      depth--;
    }
  }
}

/**
 * Checks one line that is known to be whole, [start, end) without its newline: 'empty', 'object', or what
 * is wrong with it.
 */
function checkJsonLine(b: Uint8Array, start: number, end: number): 'empty' | 'object' | 'not-object' | 'invalid' {
  const first = skipSpace(b, start, end);
  if (first === end) return 'empty';
  if (b[first] !== OPEN_BRACE) return 'not-object';
  const after = scanValue(b, first, end);
  if (after < 0) return 'invalid';
  return skipSpace(b, after, end) === end ? 'object' : 'invalid';
}

/** What checkWholeLines found: the records, the lines (empty ones included) and the first bad line, if any. */
export interface WholeLinesResult {
  /** Non-empty lines that are JSON objects, up to the first bad line. */
  records: number;
  /** Lines seen, empty ones included: the newlines, plus one for a last line without its newline. */
  lines: number;
  /** The first bad line: its 1-based number within the buffer and what is wrong with it. */
  bad?: { line: number; what: 'not-object' | 'invalid' };
}

/**
 * Checks a buffer of whole lines at once (the parallel check hands each worker such a buffer; its last line
 * may lack the newline only at the end of the file). The same validator and the same verdicts as
 * JsonLinesChecker, and no error thrown: a worker reports the first bad line, and the caller, which knows
 * where the buffer starts in the file, names it. Reads `b` only, allocates nothing per line.
 */
export function checkWholeLines(b: Uint8Array): WholeLinesResult {
  const end = b.length;
  let records = 0;
  let line = 0;
  let start = 0;
  while (start < end) {
    line++;
    let i = skipSpace(b, start, end);
    if (i >= end) break; // a last line of white space only
    if (b[i] === NEWLINE) {
      start = i + 1; // an empty line
      continue;
    }
    if (b[i] !== OPEN_BRACE) return { records, lines: line, bad: { line, what: 'not-object' } };
    // The buffer ends with a line's end, so INCOMPLETE means a truncated line: invalid.
    i = scanValue(b, i, end);
    if (i < 0) return { records, lines: line, bad: { line, what: 'invalid' } };
    i = skipSpace(b, i, end);
    if (i < end && b[i] !== NEWLINE) return { records, lines: line, bad: { line, what: 'invalid' } };
    records++;
    start = i + 1;
  }
  return { records, lines: line };
}

export class JsonLinesChecker {
  /** Non-empty lines seen so far: the record count. */
  records = 0;
  /** Lines seen so far, empty ones included (1-based number of the line being read). */
  private line = 0;
  /** The start of a line that went on past the end of the previous chunk(s). */
  private carry: Buffer[] = [];
  private carryBytes = 0;

  constructor(private readonly fileName: string) {}

  push(chunk: Buffer): void {
    let start = 0;
    if (this.carryBytes > 0) {
      const newline = chunk.indexOf(NEWLINE);
      if (newline === -1) {
        this.carry.push(chunk);
        this.carryBytes += chunk.length;
        // A line is held whole until its end: a file without newlines must not take all memory with it.
        if (this.carryBytes > MAX_LINE_BYTES) throw this.bad(this.line + 1, `is longer than ${MAX_LINE_BYTES >> 20} MiB`);
        return;
      }
      const line = Buffer.concat([...this.carry, chunk.subarray(0, newline)]);
      this.carry = [];
      this.carryBytes = 0;
      this.wholeLine(line);
      start = newline + 1;
    }
    const end = chunk.length;
    let records = this.records;
    let line = this.line;
    try {
      while (start < end) {
        line++;
        let i = skipSpace(chunk, start, end);
        if (i >= end) break; // only white space so far: the line goes on in the next chunk
        let c = chunk[i];
        if (c === NEWLINE) {
          start = i + 1; // an empty line
          continue;
        }
        if (c !== OPEN_BRACE) throw this.bad(line, 'is not a JSON object');
        i = scanValue(chunk, i, end);
        if (i === INCOMPLETE) break;
        if (i === INVALID) throw this.bad(line, 'is not valid JSON');
        i = skipSpace(chunk, i, end);
        if (i >= end) break; // the newline (or the last line's end) is yet to come
        c = chunk[i];
        if (c !== NEWLINE) throw this.bad(line, 'is not valid JSON');
        records++;
        start = i + 1;
      }
    } finally {
      this.records = records;
      this.line = line;
    }
    if (start < end) {
      // The last line of this chunk goes on in the next one: it is checked whole, once its end is known.
      this.line--;
      this.carry.push(chunk.subarray(start));
      this.carryBytes = end - start;
    }
  }

  /** The last line may lack its newline. */
  end(): number {
    if (this.carryBytes > 0) this.wholeLine(Buffer.concat(this.carry));
    this.carry = [];
    this.carryBytes = 0;
    return this.records;
  }

  private wholeLine(data: Buffer): void {
    this.line++;
    const verdict = checkJsonLine(data, 0, data.length);
    if (verdict === 'object') this.records++;
    else if (verdict === 'not-object') throw this.bad(this.line, 'is not a JSON object');
    else if (verdict === 'invalid') throw this.bad(this.line, 'is not valid JSON');
  }

  private bad(line: number, what: string): UsageError {
    return new UsageError(`${this.fileName} line ${line} ${what}`, {
      hint: 'every non-empty line of the data file must be one JSON object',
    });
  }
}
