// Checking JSON Lines: every non-empty line must be a JSON object. The parser itself is WebAssembly
// (jsonl.as.ts, compiled by `npm run build`); this module gives each thread its own instance and lays out its
// memory. lines.ts cuts the file into buffers of whole lines and hands them to parseWholeLines, on the pass
// thread for a large file (thread.ts), on the caller's thread for a small one.

import { PARSER_WASM } from './jsonl-wasm.generated.js';

/** The longest record accepted; longer means the file is not JSON Lines (one huge document, say). */
export const MAX_LINE_BYTES = 64 << 20;

/** What parseWholeLines found: the records, the lines (empty ones included) and the first bad line, if any. */
export interface WholeLinesResult {
  /** Non-empty lines that are JSON objects, up to the first bad line. */
  records: number;
  /** Lines seen, empty ones included: the newlines, plus one for a last line without its newline. */
  lines: number;
  /**
   * The first bad line: its 1-based number within the buffer and what is wrong with it; for a line that is not
   * UTF-8, the 1-based position in the line of the byte that starts its first invalid sequence, and its value.
   */
  bad?:
    { line: number; what: 'not-object' | 'invalid' } | { line: number; what: 'not-utf8'; byte: number; value: number };
}

/** The part of the WebAssembly API used here: its types come with lib.dom, which bds does not compile with. */
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: object };
};

interface ParserExports {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  checkLines(start: number, end: number, stack: number): number;
  lines(): number;
  badLineNumber(): number;
  badLineKind(): number;
  badLineStart(): number;
}

/** Where the input starts in the parser's memory: never at 0, which the parser uses for "invalid". */
const INPUT_AT = 64;
/** Zeros after the input: the parser reads up to 16 bytes at a time, and a zero stops every scan. */
const PADDING = 64;
const PAGE = 64 << 10;

/** This thread's instance, made at first use (a worker thread has its own). */
let parser: ParserExports | undefined;

function instance(): ParserExports {
  parser ??= new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(PARSER_WASM, 'base64')), {})
    .exports as unknown as ParserExports;
  return parser;
}

/**
 * Checks a buffer of whole lines at once (its last line may lack the newline only at the end of the file).
 * No error is thrown: the first bad line is reported, and the caller, which knows where the buffer starts in
 * the file, names it. The bytes are copied into the parser's memory, which keeps the size of the largest
 * buffer checked so far, twice over (input and nesting room); the nesting room's pages are never touched,
 * and so take no memory, unless a line nests that deep.
 */
export function parseWholeLines(b: Uint8Array): WholeLinesResult {
  const wasm = instance();
  const end = INPUT_AT + b.length;
  const stack = end + PADDING;
  // Room for one byte of nesting per byte of input: the deepest a line can nest.
  const needed = stack + b.length;
  const memory = wasm.memory;
  if (memory.buffer.byteLength < needed) memory.grow(Math.ceil((needed - memory.buffer.byteLength) / PAGE));
  const bytes = new Uint8Array(memory.buffer);
  bytes.set(b, INPUT_AT);
  bytes.fill(0, end, stack);
  const records = wasm.checkLines(INPUT_AT, end, stack);
  const lines = wasm.lines();
  const badLine = wasm.badLineNumber();
  if (badLine === 0) return { records, lines };
  if (wasm.badLineKind() === 1) return { records, lines, bad: { line: badLine, what: 'not-object' } };
  // Invalid: told apart here, once, off the parser's hot path. A line that is not UTF-8 is that first.
  const start = wasm.badLineStart() - INPUT_AT;
  const newline = b.indexOf(0x0a, start);
  const line = b.subarray(start, newline === -1 ? b.length : newline);
  const at = firstInvalidUtf8(line);
  if (at === -1) return { records, lines, bad: { line: badLine, what: 'invalid' } };
  return { records, lines, bad: { line: badLine, what: 'not-utf8', byte: at + 1, value: line[at]! } };
}

/**
 * Where the first invalid UTF-8 sequence of `bytes` starts (RFC 3629: no overlong form, no surrogate, nothing
 * above U+10FFFF, nothing cut short), or -1. The same rules as the parser's skipUtf8 (jsonl.as.ts).
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  const continues = (at: number): boolean => at < bytes.length && (bytes[at]! & 0xc0) === 0x80;
  for (let i = 0; i < bytes.length;) {
    const c = bytes[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    const length = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    const second = bytes[i + 1] ?? 0;
    const low = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80;
    const high = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf;
    if (length === 0 || i + 1 >= bytes.length || second < low || second > high) return i;
    for (let k = 2; k < length; k++) if (!continues(i + k)) return i;
    i += length;
  }
  return -1;
}
