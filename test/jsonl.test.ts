// The byte-level JSON Lines checker against JSON.parse, the reference: the same verdict for every line of a
// corpus of tricky cases and of many seeded random mutations, and the same result however the input is
// split into chunks.
import { describe, expect, it } from 'vitest';
import { JsonLinesChecker, MAX_LINE_BYTES } from '../src/core/delivery/jsonl.js';
import { seededRandom } from './helpers.js';

/** What JSON.parse says of one line: 'empty', 'object', or an error message's kind. */
function reference(line: string): string {
  if (line.trim() === '' && !/[^ \t\r]/.test(line)) return 'empty';
  const first = line.replace(/^[ \t\r]+/, '')[0];
  if (first !== '{') return 'not a JSON object';
  try {
    JSON.parse(line);
    return 'object';
  } catch {
    return 'not valid JSON';
  }
}

/** What the checker says of the same line. */
function verdict(line: Buffer | string): string {
  const checker = new JsonLinesChecker('f');
  try {
    checker.push(Buffer.from(line));
    return checker.end() === 1 ? 'object' : 'empty';
  } catch (error) {
    return (error as Error).message.replace(/^f line 1 /, '').replace(/^is /, '');
  }
}

const CORPUS = [
  '{}',
  ' \t{ } \r',
  '{"a":1}',
  '{"a":-0,"b":0.5,"c":1e5,"d":1E+5,"e":-1.25e-3,"f":10}',
  '{"a":01}',
  '{"a":1.}',
  '{"a":.5}',
  '{"a":-}',
  '{"a":1e}',
  '{"a":+1}',
  '{"a":"\\u00e9\\n\\t\\"\\\\\\/\\b\\f\\r"}',
  '{"a":"\\x41"}',
  '{"a":"\\u00g0"}',
  '{"a":"tab\there"}',
  '{"a":"é日本"}',
  '{"a":[1,[2,[3,{"b":null}]]],"c":{"d":{}}}',
  '{"a":[1,2,]}',
  '{"a":1,}',
  '{,}',
  '{"a" 1}',
  '{"a":true,"b":false,"c":null}',
  '{"a":tru}',
  '{"a":nul}',
  '{"a":True}',
  '{"a":1}}',
  '{"a":1} {"b":2}',
  '{"a":1}x',
  '{a:1}',
  "{'a':1}",
  '{"a":1',
  '[1,2]',
  '"string"',
  '42',
  'null',
  'hello',
  '',
  '   ',
  '\r',
  '{"a":"unterminated}',
  '{"a":"\u0001"}',
  `{"deep":${'['.repeat(5000)}${']'.repeat(5000)}}`,
  `{"deep":${'['.repeat(5000)}${']'.repeat(4999)}}`,
];

const ALPHABET = '{}[]":,.-+eE0123456789truefalsn \t\\u/"abc\r\u0001é';

describe('JsonLinesChecker', () => {
  it('agrees with JSON.parse on a corpus of tricky lines', () => {
    for (const line of CORPUS) expect(verdict(line), line.slice(0, 60)).toBe(reference(line));
  });

  it('agrees with JSON.parse on 20,000 seeded random mutations', () => {
    const next = seededRandom(20261122);
    const seeds = CORPUS.filter((line) => line.length < 200 && reference(line) === 'object');
    for (let n = 0; n < 20_000; n++) {
      let line = seeds[Math.floor(next() * seeds.length)]!;
      for (let edits = 1 + Math.floor(next() * 3); edits > 0; edits--) {
        const at = Math.floor(next() * (line.length + 1));
        const ch = ALPHABET[Math.floor(next() * ALPHABET.length)]!;
        const kind = next();
        line =
          kind < 0.4
            ? line.slice(0, at) + ch + line.slice(at + 1)
            : kind < 0.7
              ? line.slice(0, at) + ch + line.slice(at)
              : line.slice(0, at) + line.slice(at + 1);
      }
      expect(verdict(line), JSON.stringify(line)).toBe(reference(line));
    }
  });

  it('gives the same count or the same error line however the input is split into chunks', () => {
    const inputs = [
      '{"a":1}\n\n{"b":[1,2,{"c":"x\\"y"}]}\n   \n{"d":null}',
      '{"a":1}\n{"b":"\\u00e9"}\n[1]\n{"c":2}\n',
      '{"a":1}\n{"b":2\n{"c":3}\n',
      '\n\n{"a":"unterminated\n',
    ];
    const feed = (chunks: Buffer[]): string => {
      const checker = new JsonLinesChecker('f');
      try {
        for (const chunk of chunks) checker.push(chunk);
        return `records ${checker.end()}`;
      } catch (error) {
        return (error as Error).message;
      }
    };
    for (const input of inputs) {
      const bytes = Buffer.from(input);
      const whole = feed([bytes]);
      for (let i = 0; i <= bytes.length; i++) {
        for (let j = i; j <= bytes.length; j += 3) {
          expect(feed([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]), `${input} split at ${i},${j}`).toBe(whole);
        }
      }
    }
    expect(feed([Buffer.from('{"a":1}\n\n{"b":2}\n{"c":')])).toBe('f line 4 is not valid JSON');
  });

  it('refuses a line longer than the limit instead of holding it all in memory', () => {
    const checker = new JsonLinesChecker('f');
    checker.push(Buffer.from('{"a":1}\n{"big":"'));
    const piece = Buffer.alloc(1 << 20, 0x61);
    expect(() => {
      for (let sent = 0; sent <= MAX_LINE_BYTES + piece.length; sent += piece.length) checker.push(piece);
    }).toThrow('f line 2 is longer than 64 MiB');
  });
});
