// The JSON Lines validator (WebAssembly, src/core/datapass/jsonl.as.ts) against JSON.parse, the reference:
// the same verdict for every line of a corpus of tricky cases, for many seeded random mutations (zeros, bytes
// above 0x7f and newlines among them: the validator relies on zeros after the input to stop its scans), and
// the same result however the input is split into chunks on its way through a pass.
import { describe, expect, it } from 'vitest';
import { checkWholeLines } from '../src/core/datapass/jsonl.js';
import { LinesChecker } from '../src/core/datapass/lines.js';
import { linesVerdict, seededRandom } from './helpers.js';

/** The validator's verdict on a buffer of whole lines, in the words of linesVerdict. */
function verdict(input: Buffer | string): string {
  const result = checkWholeLines(Buffer.from(input));
  if (!result.bad) return `records ${result.records}`;
  return `f line ${result.bad.line} ${result.bad.what === 'not-object' ? 'is not a JSON object' : 'is not valid JSON'}`;
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
  '{"a":-01}',
  '{"a":1e+}',
  '{"a":"\\u00e9\\n\\t\\"\\\\\\/\\b\\f\\r"}',
  '{"a":"\\uD83D\\uDE00","b":"\\uABCD\\uabcd"}',
  '{"a":"\\x41"}',
  '{"a":"\\u00g0"}',
  '{"a":"\\u00e"}',
  '{"a":"\\',
  '{"a":"tab\there"}',
  '{"a":"é日本"}',
  '{"a":"a string of more than sixteen bytes, with \\"escapes\\" across the 16-byte steps\\\\"}',
  '{"0123456789abcdef0123456789abcdef":"0123456789abcdef","x":"0123456789abcde\\""}',
  '{"a":"nul\u0000inside"}',
  '{"a":1}\u0000',
  '{"a":[1,[2,[3,{"b":null}]]],"c":{"d":{}}}',
  '{"a":[ 1 , 2 ] , "b" : { } , "c" : [ ] }',
  '{"a":[1,2,]}',
  '{"a":1,}',
  '{,}',
  '{"a" 1}',
  '{"a":true,"b":false,"c":null}',
  '{"a":tru}',
  '{"a":nul}',
  '{"a":fals}',
  '{"a":True}',
  '{"a":nulll}',
  '{"a":true1}',
  '{"a":1}}',
  '{"a":1} {"b":2}',
  '{"a":1}x',
  '{a:1}',
  "{'a':1}",
  '{"a":1',
  '{"a":',
  '{"a"',
  '{"a',
  '{',
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
  '{"a":"\u001f","b":"\u007f"}',
  // The validator's fast path for the next member of a compact object (,"key":) and what must miss it.
  '{"a":1,"b":2,"c":"x","d":[1,"e"],"f":{"g":1,"h":"i"}}',
  '{"a":1,"b" :2}',
  '{"a":1,"b"2}',
  '{"a":1,"b":}',
  '{"a":1,"b\\"":2}',
  '{"a":1,"":2}',
  '{"a":1,"b',
  '{"a":1,"b"',
  '{"a":["x","y"],"b":1}',
  '{"a":[1,"b":2]}',
  '{"a":1 ,"b":2}',
  `{"deep":${'['.repeat(5000)}${']'.repeat(5000)}}`,
  `{"deep":${'['.repeat(5000)}${']'.repeat(4999)}}`,
  `{"deep":${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}}`,
];

const ALPHABET = '{}[]":,.-+eE0123456789truefalsn \t\\u/"abc\r\n\u0001\u0000é\u0080';

describe('the JSON Lines validator', () => {
  it('agrees with JSON.parse on a corpus of tricky lines', () => {
    for (const line of CORPUS) expect(verdict(line), JSON.stringify(line.slice(0, 60))).toBe(linesVerdict(line));
  });

  it('agrees with JSON.parse on 20,000 seeded random mutations, line numbers included', () => {
    const next = seededRandom(20261122);
    const seeds = CORPUS.filter((line) => line.length < 200 && linesVerdict(line) === 'records 1');
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
      // Behind a good line, and with another after it, so that a bad line's number is checked too.
      const input = `{"before":1}\n${line}${next() < 0.5 ? '\n{"after":2}\n' : ''}`;
      expect(verdict(input), JSON.stringify(input)).toBe(linesVerdict(input));
    }
  });

  it('agrees with JSON.parse on buffers of several lines, line numbers included', () => {
    const inputs = [
      '',
      '\n',
      '{}',
      '{}\n',
      '{"a":1}\n\n{"b":[1,2,{"c":"x\\"y"}]}\n   \n{"d":null}',
      '{"a":1}\r\n{"b":2}\r\n',
      '{"a":1}\n  \t\r',
      '{"a":1}\n{"b":"\\u00e9"}\n[1]\n{"c":2}\n',
      '{"a":1}\n{"b":2\n{"c":3}\n',
      '\n\n{"a":"unterminated\n',
      '{"a":1}\n{"a":1} x\n',
      '{"a":1}\n{"a":1',
      '{"a":1}\n{"a":"\\u00',
      '{"a":01}',
      ' {"a":1}}',
      'null\n',
      `{"deep":${'['.repeat(3000)}${']'.repeat(3000)}}\n{"deep":${'['.repeat(3000)}${']'.repeat(2999)}}\n`,
    ];
    for (const input of inputs) expect(verdict(input), JSON.stringify(input.slice(0, 40))).toBe(linesVerdict(input));
  });

  it('counts every line, empty ones and a last one without its newline included', () => {
    expect(checkWholeLines(Buffer.from(''))).toEqual({ records: 0, lines: 0 });
    expect(checkWholeLines(Buffer.from('\n\n'))).toEqual({ records: 0, lines: 2 });
    expect(checkWholeLines(Buffer.from('{}\n\n{}\n'))).toEqual({ records: 2, lines: 3 });
    expect(checkWholeLines(Buffer.from('{}\n{}'))).toEqual({ records: 2, lines: 2 });
    expect(checkWholeLines(Buffer.from('{}\n '))).toEqual({ records: 1, lines: 2 });
    expect(checkWholeLines(Buffer.from('{}\r\n\r\n{}\r\n'))).toEqual({ records: 2, lines: 3 });
    expect(checkWholeLines(Buffer.from('{}\n\n[]\n{}\n'))).toEqual({
      records: 1,
      lines: 3,
      bad: { line: 3, what: 'not-object' },
    });
    expect(checkWholeLines(Buffer.from('{}\n{"a":\n{}\n'))).toEqual({
      records: 1,
      lines: 2,
      bad: { line: 2, what: 'invalid' },
    });
  });

  it('sees only the bytes it is given: a smaller buffer after a larger one, and the bytes after a view', () => {
    expect(verdict('{"a":"xxxxxxxxxx"}\n' + '{}\n'.repeat(30_000))).toBe('records 30001');
    // Left in the validator's memory by the one before, the rest of its first line must not complete this one.
    expect(verdict('{"a":"xx')).toBe('f line 1 is not valid JSON');
    const bytes = Buffer.from('{"a":1}\n{"b":2}\n');
    expect(checkWholeLines(bytes.subarray(0, 10))).toEqual({ records: 1, lines: 2, bad: { line: 2, what: 'invalid' } });
  });

  it('takes a UTF-8 byte order mark at the start of the first chunk, and nowhere else', () => {
    const mark = Buffer.from([0xef, 0xbb, 0xbf]);
    const first = new LinesChecker('f');
    first.push(Buffer.concat([mark, Buffer.from('{"a":1}\n')]));
    first.push(Buffer.from('{"a":2}\n'));
    expect(first.end()).toBe(2);
    const later = new LinesChecker('f');
    later.push(Buffer.from('{"a":1}\n'));
    expect(() => later.push(Buffer.concat([mark, Buffer.from('{"a":2}\n')]))).toThrow('f line 2 is not a JSON object');
  });

  it('gives the same count or the same error line however the input is split into chunks', () => {
    const inputs = [
      '{"a":1}\n\n{"b":[1,2,{"c":"x\\"y"}]}\n   \n{"d":null}',
      '{"a":1}\n{"b":"\\u00e9"}\n[1]\n{"c":2}\n',
      '{"a":1}\n{"b":2\n{"c":3}\n',
      '\n\n{"a":"unterminated\n',
    ];
    const feed = (chunks: Buffer[]): string => {
      const checker = new LinesChecker('f', { chunkBytes: 16 });
      try {
        for (const chunk of chunks) checker.push(chunk);
        return `records ${checker.end()}`;
      } catch (error) {
        return (error as Error).message;
      }
    };
    for (const input of inputs) {
      const bytes = Buffer.from(input);
      const whole = linesVerdict(bytes);
      for (let i = 0; i <= bytes.length; i++) {
        for (let j = i; j <= bytes.length; j += 3) {
          expect(
            feed([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]),
            `${input} split at ${i},${j}`,
          ).toBe(whole);
        }
      }
    }
    expect(feed([Buffer.from('{"a":1}\n\n{"b":2}\n{"c":')])).toBe('f line 4 is not valid JSON');
  });
});
