// The JSON Lines parser, in AssemblyScript: compiled to WebAssembly by scripts/build-wasm.js (npm run
// build), and run by jsonl.ts. It is the hot loop of the pre-flight: every inflated byte passes through it.
// In WebAssembly it runs about 2.5 times as fast as the same parser in JavaScript, enough to keep up with
// zlib's inflate on one core; strings, two thirds of a typical line, are scanned 16 bytes at a time. On the
// bench's records, 1.4 GB/s on one core of the bench's machine; the fast paths for what compact JSON Lines are
// made of (one compare for "no white space here", the next member of an object as `,"key":`, control
// characters found with and + eq) took it from 1.15 GB/s, which left the pass thread little time for zlib.
//
// It accepts exactly what JSON.parse accepts for one line (a line of white space only is an empty line, not
// an error): RFC 8259's grammar, white space is space, tab and carriage return; a newline is never white space, so it ends the line wherever it appears (inside an object
// or a string it makes the line invalid). The text must be UTF-8 (RFC 8259 §8.1): a byte of 0x80 or more is
// valid only in a string, in a well-formed sequence (no overlong form, no surrogate, nothing above U+10FFFF);
// strings are scanned 16 bytes at a time all the same, and only a byte of 0x80 or more stops the scan to
// check its sequence. A line found invalid is told apart (not UTF-8, or not JSON) by the caller, off the hot path.
// What that costs is the stop (a mispredicted branch; 0.9 sequences per line of the bench's records), not the check:
// tried and measured no faster were Keiser and Lemire's SIMD check of whole blocks (lookup tables, i8x16.swizzle),
// a run of sequences checked without going back to the scan, the block's next stop taken from its mask without
// loading it again, and a skipUtf8 without branches.
//
// The caller (jsonl.ts) lays out the memory: whole lines at [start, end), then at least 16 zero bytes, then
// room for end - start bytes of nesting. The zeros stop every scan (a zero is valid nowhere in JSON), so no loop
// here checks for the end of the input: a line cut short by it is invalid, like one with a zero in it.

/** A scan that found the line invalid; a position is never 0 (the caller puts the input above it). */
const INVALID: usize = 0;

/** Results of the last checkLines beyond the record count it returns. */
let linesSeen: i32 = 0;
let badLine: i32 = 0;
let badKind: i32 = 0;
let badStart: usize = 0;

/** Lines seen by the last checkLines, empty ones included; up to the bad one if there is one. */
export function lines(): i32 {
  return linesSeen;
}

/** The 1-based number of the first bad line the last checkLines found, or 0. */
export function badLineNumber(): i32 {
  return badLine;
}

/** What is wrong with it: 1 it is not an object, 2 it is not valid JSON. */
export function badLineKind(): i32 {
  return badKind;
}

/** Where the bad line starts in memory (its first byte), for the caller to tell what is wrong with it. */
export function badLineStart(): usize {
  return badStart;
}

@inline function isSpace(c: u32): bool {
  // Almost every byte after a token is above 0x20: one compare for them.
  if (c > 0x20) return false;
  return c == 0x20 || c == 0x09 || c == 0x0d;
}

@inline function isDigit(c: u32): bool {
  return c - 0x30 < 10;
}

@inline function isHexDigit(c: u32): bool {
  return c - 0x30 < 10 || (c | 0x20) - 0x61 < 6;
}

@inline function skipSpace(p: usize): usize {
  while (isSpace(load<u8>(p))) p++;
  return p;
}

/**
 * The UTF-8 sequence whose first byte, c (0x80 or more), is at p; returns the position after it. RFC 3629's
 * table: C2-DF 80-BF; E0 A0-BF 80-BF; E1-EC and EE-EF 80-BF 80-BF; ED 80-9F 80-BF (no surrogates); F0 90-BF,
 * F1-F3 80-BF, F4 80-8F (nothing above U+10FFFF), each with two more 80-BF. A sequence cut short meets a quote,
 * a newline or the padding's zeros, none of which continues it. Inlined into scanString, its only caller.
 */
@inline function skipUtf8(p: usize, c: u32): usize {
  const c1 = <u32>load<u8>(p + 1);
  if (c < 0xe0) return c >= 0xc2 && (c1 & 0xc0) == 0x80 ? p + 2 : INVALID;
  const c2 = <u32>load<u8>(p + 2);
  if (c < 0xf0) {
    const low: u32 = c == 0xe0 ? 0xa0 : 0x80;
    const high: u32 = c == 0xed ? 0x9f : 0xbf;
    return c1 >= low && c1 <= high && (c2 & 0xc0) == 0x80 ? p + 3 : INVALID;
  }
  const c3 = <u32>load<u8>(p + 3);
  const low: u32 = c == 0xf0 ? 0x90 : 0x80;
  const high: u32 = c == 0xf4 ? 0x8f : 0xbf;
  return c <= 0xf4 && c1 >= low && c1 <= high && (c2 & 0xc0) == 0x80 && (c3 & 0xc0) == 0x80 ? p + 4 : INVALID;
}

/**
 * A string's body from p (just past the opening quote); returns the position past the closing quote.
 * Inlined: measured 7% faster on the benchmark's records, whose strings average 9 bytes.
 */
@inline function scanString(p: usize): usize {
  const quote = i8x16.splat(0x22);
  const backslash = i8x16.splat(0x5c);
  const space = i8x16.splat(0x20);
  while (true) {
    // The next quote, backslash, control character (a newline, the padding's zeros) or byte of 0x80 or more in
    // 16 bytes. One signed compare finds the last two, a byte of 0x80 or more being negative as an i8: one
    // instruction on x64, where the and + eq for control characters alone was two and lt_u has none.
    const bytes = v128.load(p);
    const stops = i8x16.bitmask(v128.or(v128.or(i8x16.eq(bytes, quote), i8x16.eq(bytes, backslash)), i8x16.lt_s(bytes, space)));
    if (stops == 0) {
      p += 16;
      continue;
    }
    p += <usize>ctz(stops);
    const c = load<u8>(p);
    if (c == 0x22) return p + 1;
    if (c >= 0x80) {
      p = skipUtf8(p, c);
      if (p == INVALID) return INVALID;
      continue;
    }
    if (c != 0x5c) return INVALID;
    const escaped = <u32>load<u8>(p + 1);
    if (escaped == 0x75) {
      if (!(isHexDigit(load<u8>(p + 2)) && isHexDigit(load<u8>(p + 3)) && isHexDigit(load<u8>(p + 4)) && isHexDigit(load<u8>(p + 5)))) {
        return INVALID;
      }
      p += 6;
    } else if (escaped == 0x22 || escaped == 0x5c || escaped == 0x2f || escaped == 0x62 || escaped == 0x66 || escaped == 0x6e || escaped == 0x72 || escaped == 0x74) {
      p += 2; // \" \\ \/ \b \f \n \r \t
    } else {
      return INVALID;
    }
  }
}

/** -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? from p; returns the position after it. */
function scanNumber(p: usize): usize {
  if (load<u8>(p) == 0x2d) p++;
  let c = <u32>load<u8>(p);
  if (c == 0x30) {
    p++;
  } else if (c - 0x31 < 9) {
    p++;
    while (isDigit(load<u8>(p))) p++;
  } else {
    return INVALID;
  }
  if (load<u8>(p) == 0x2e) {
    p++;
    if (!isDigit(load<u8>(p))) return INVALID;
    p++;
    while (isDigit(load<u8>(p))) p++;
  }
  if ((<u32>load<u8>(p) | 0x20) == 0x65) {
    p++;
    c = load<u8>(p);
    if (c == 0x2b || c == 0x2d) p++;
    if (!isDigit(load<u8>(p))) return INVALID;
    p++;
    while (isDigit(load<u8>(p))) p++;
  }
  return p;
}

/** `"key" :` from p (at the key's opening quote); returns the position after the colon. */
@inline function scanKey(p: usize): usize {
  if (load<u8>(p) != 0x22) return INVALID;
  p = scanString(p + 1);
  if (p == INVALID) return INVALID;
  p = skipSpace(p);
  return load<u8>(p) == 0x3a ? p + 1 : INVALID;
}

/**
 * One JSON value from p (an object's '{' for a line); returns the position just after it. Iterative: the
 * containers open around the current one are kept at `stack` (1 for an object), so any depth is fine.
 */
function scanValue(p: usize, stack: usize): usize {
  let depth: usize = 0;
  let inObject = false;
  while (true) {
    // A value is expected at p.
    p = skipSpace(p);
    const c = <u32>load<u8>(p);
    if (c == 0x22) {
      p = scanString(p + 1);
    } else if (isDigit(c) || c == 0x2d) {
      p = scanNumber(p);
    } else if (c == 0x7b || c == 0x5b) {
      p = skipSpace(p + 1);
      if (<u32>load<u8>(p) == (c == 0x7b ? 0x7d : 0x5d)) {
        p++; // {} or []
      } else {
        store<u8>(stack + depth, <u8>inObject);
        depth++;
        inObject = c == 0x7b;
        if (inObject) {
          p = scanKey(p);
          if (p == INVALID) return INVALID;
        }
        continue;
      }
    } else if (c == 0x74) {
      p = load<u32>(p) == 0x65757274 ? p + 4 : INVALID; // true
    } else if (c == 0x66) {
      p = load<u32>(p + 1) == 0x65736c61 ? p + 5 : INVALID; // false
    } else if (c == 0x6e) {
      p = load<u32>(p) == 0x6c6c756e ? p + 4 : INVALID; // null
    } else {
      return INVALID;
    }
    if (p == INVALID) return INVALID;
    // After a value: a comma and the next member or element, or the end of one or more containers.
    while (true) {
      if (depth == 0) return p;
      // The usual case in compact JSON, the next member of an object: ,"key":
      if (inObject && load<u16>(p) == 0x222c) {
        p = scanString(p + 2);
        if (p == INVALID) return INVALID;
        p = skipSpace(p);
        if (load<u8>(p) != 0x3a) return INVALID;
        p++;
        break;
      }
      p = skipSpace(p);
      const next = load<u8>(p++);
      if (next == 0x2c) {
        if (inObject) {
          p = scanKey(skipSpace(p));
          if (p == INVALID) return INVALID;
        }
        break;
      }
      if (next != (inObject ? 0x7d : 0x5d)) return INVALID;
      depth--;
      inObject = <bool>load<u8>(stack + depth);
    }
  }
}

/**
 * Checks the whole lines at [start, end) (the last may lack its newline); returns the records (non-empty
 * lines that are JSON objects) up to the first bad line. lines(), badLineNumber() and badLineKind() tell
 * the rest.
 */
export function checkLines(start: usize, end: usize, stack: usize): i32 {
  let records: i32 = 0;
  let line: i32 = 0;
  let p = start;
  badLine = 0;
  badKind = 0;
  let lineStart = p;
  while (p < end) {
    line++;
    lineStart = p;
    p = skipSpace(p);
    if (p >= end) break; // a last line of white space only
    const c = load<u8>(p);
    if (c == 0x0a) {
      p++; // an empty line
      continue;
    }
    if (c != 0x7b) {
      badKind = 1;
      break;
    }
    p = scanValue(p, stack);
    if (p != INVALID) p = skipSpace(p);
    if (p == INVALID || (p < end && load<u8>(p) != 0x0a)) {
      badKind = 2;
      break;
    }
    records++;
    p++;
  }
  if (badKind != 0) {
    badLine = line;
    badStart = lineStart;
  }
  linesSeen = line;
  return records;
}
