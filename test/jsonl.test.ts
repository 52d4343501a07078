// The JSON Lines validator (WebAssembly, src/core/datapass/jsonl.as.ts) against JSON.parse, the reference:
// the same verdict for every line of a corpus of tricky cases, for many seeded random mutations (zeros, bytes
// above 0x7f and newlines among them: the validator relies on zeros after the input to stop its scans), and
// the same result however the input is split into chunks on its way through a pass.
import { describe, expect, it } from 'vitest';
import { parseWholeLines } from '../src/core/datapass/jsonl.js';
import { LinesParser } from '../src/core/datapass/lines.js';
import { linesVerdict, seededRandom } from './helpers.js';

/** The validator's verdict on a buffer of whole lines, in the words of linesVerdict. */
function verdict(input: Buffer | string): string {
  const result = parseWholeLines(Buffer.from(input));
  const { bad } = result;
  if (!bad) return `records ${result.records}`;
  if (bad.what === 'not-utf8') {
    return `f line ${bad.line} is not valid UTF-8 at byte ${bad.byte} of the line (0x${bad.value.toString(16).toUpperCase()})`;
  }
  return `f line ${bad.line} ${bad.what === 'not-object' ? 'is not a JSON object' : 'is not valid JSON'}`;
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

/** Lines as bytes: UTF-8's edges (RFC 3629's table) in strings and keys, and bytes of 0x80 or more elsewhere. */
const hex = (text: string): Buffer => Buffer.from(text.replace(/\s/g, ''), 'hex');
const q = (body: Buffer): Buffer => Buffer.concat([Buffer.from('{"a":"'), body, Buffer.from('"}')]);
const BYTE_CORPUS = [
  q(Buffer.from('caf\xe9', 'latin1')), // Latin-1
  q(hex('c3a9')), // é
  q(hex('c2 80')), // U+0080, the smallest of two bytes
  q(hex('c1 bf')), // overlong U+007F
  q(hex('c0 af')), // overlong '/'
  q(hex('c0 80')), // overlong NUL
  q(hex('df bf')), // U+07FF
  q(hex('e0 a0 80')), // U+0800, the smallest of three bytes
  q(hex('e0 9f bf')), // overlong U+07FF
  q(hex('e0 80 af')), // overlong '/'
  q(hex('ed 9f bf')), // U+D7FF, the last before the surrogates
  q(hex('ed a0 80')), // U+D800, a surrogate
  q(hex('ed bf bf')), // U+DFFF, a surrogate
  q(hex('ed a0 bd ed b8 80')), // a surrogate pair, as CESU-8 writes it
  q(hex('ee 80 80')), // U+E000
  q(hex('ef bf bf')), // U+FFFF
  q(hex('ef bb bf')), // a byte order mark inside a string: U+FEFF, valid
  q(hex('f0 90 80 80')), // U+10000, the smallest of four bytes
  q(hex('f0 8f bf bf')), // overlong U+FFFF
  q(hex('f0 9f 98 80')), // 😀
  q(hex('f4 8f bf bf')), // U+10FFFF, the largest
  q(hex('f4 90 80 80')), // U+110000
  q(hex('f5 80 80 80')), // beyond U+10FFFF
  q(hex('f7 bf bf bf')),
  q(hex('f8 88 80 80 80')), // five bytes
  q(hex('fc 84 80 80 80 80')), // six bytes
  q(hex('fe')),
  q(hex('ff')),
  q(hex('80')), // a continuation byte alone
  q(hex('bf 41')),
  q(hex('c3')), // cut short by the closing quote
  q(hex('e6 97')),
  q(hex('f0 9f 98')),
  q(hex('c3 41')), // cut short by an ASCII byte
  q(hex('e6 41 a5')),
  q(hex('f0 9f 41 80')),
  q(hex('c3 a9 c3')), // a good one, then one cut short
  q(Buffer.concat([Buffer.from('0123456789abcde'), hex('e6 97 a5 e6 97 a5 e6 97 a5 e6 97 a5 e6 97 a5 e9')])), // across 16-byte steps
  q(Buffer.concat([Buffer.from('0123456789abcd'), hex('f0 9f 98 80'), Buffer.from('x'.repeat(40)), hex('80')])),
  Buffer.concat([Buffer.from('{"'), hex('e9'), Buffer.from('":1}')]), // in a key
  Buffer.concat([Buffer.from('{"a":1,"'), hex('ff'), Buffer.from('":1}')]), // in a key on the ,"key": fast path
  Buffer.concat([Buffer.from('{"a":1,"k":"'), hex('c3 a9'), Buffer.from('","b":"'), hex('c0 af'), Buffer.from('"}')]),
  Buffer.concat([Buffer.from('{"a":'), hex('c3 a9'), Buffer.from('}')]), // outside a string: valid UTF-8, not JSON
  Buffer.concat([Buffer.from('{"a":'), hex('e9'), Buffer.from('}')]), // outside a string: neither
  Buffer.concat([Buffer.from('{"a":"'), hex('e9'), Buffer.from('"')]), // not UTF-8 and not whole
  Buffer.concat([Buffer.from('{"a":"x", ,"b":"'), hex('e9'), Buffer.from('"}')]), // not JSON before the bad byte
  Buffer.concat([Buffer.from('{"a":"\\'), hex('e9'), Buffer.from('"}')]), // escaped
  Buffer.concat([Buffer.from('{"a":"\\u00'), hex('e9'), Buffer.from('"}')]),
  Buffer.concat([hex('e9'), Buffer.from('{"a":1}')]), // before the object
  Buffer.concat([Buffer.from('{"a":1}'), hex('e9')]), // after it
  Buffer.concat([Buffer.from('{"a":1} \r'), hex('c3 a9')]),
];

/** Bytes that make UTF-8's sequences and break them. */
const BYTE_ALPHABET = [
  0x22, 0x5c, 0x41, 0x0a, 0x00, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xa9, 0xbf, 0xc0, 0xc1, 0xc2, 0xc3, 0xdf, 0xe0, 0xe6,
  0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff,
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

  it('agrees with a fatal UTF-8 TextDecoder and JSON.parse on lines that are not UTF-8, the bad byte included', () => {
    for (const line of BYTE_CORPUS) {
      expect(verdict(line), line.toString('hex')).toBe(linesVerdict(line));
      const input = Buffer.concat([Buffer.from('{"before":"é"}\n\n'), line, Buffer.from('\n{"after":"日"}\n')]);
      expect(verdict(input), input.toString('hex')).toBe(linesVerdict(input));
    }
    expect(verdict(q(Buffer.from('caf\xe9', 'latin1')))).toBe(
      'f line 1 is not valid UTF-8 at byte 10 of the line (0xE9)',
    );
    expect(verdict(q(hex('c0 af')))).toBe('f line 1 is not valid UTF-8 at byte 7 of the line (0xC0)');
    expect(verdict(q(hex('ed a0 80')))).toBe('f line 1 is not valid UTF-8 at byte 7 of the line (0xED)');
    expect(verdict(q(hex('f4 90 80 80')))).toBe('f line 1 is not valid UTF-8 at byte 7 of the line (0xF4)');
    expect(verdict(q(hex('c3 a9 c3')))).toBe('f line 1 is not valid UTF-8 at byte 9 of the line (0xC3)');
  });

  it('agrees with a fatal UTF-8 TextDecoder and JSON.parse on 20,000 seeded random byte mutations', () => {
    const next = seededRandom(20261126);
    const seeds: Buffer[] = [
      ...[...CORPUS, '{"a":"é日😀"}']
        .filter((line) => line.length < 200 && linesVerdict(line) === 'records 1')
        .map((line) => Buffer.from(line)),
      ...BYTE_CORPUS.filter((line) => linesVerdict(line) === 'records 1'),
    ];
    for (let n = 0; n < 20_000; n++) {
      let line: Buffer = seeds[Math.floor(next() * seeds.length)]!;
      for (let edits = 1 + Math.floor(next() * 3); edits > 0; edits--) {
        const at = Math.floor(next() * (line.length + 1));
        const byte = Buffer.from([BYTE_ALPHABET[Math.floor(next() * BYTE_ALPHABET.length)]!]);
        const kind = next();
        line =
          kind < 0.4
            ? Buffer.concat([line.subarray(0, at), byte, line.subarray(at + 1)])
            : kind < 0.7
              ? Buffer.concat([line.subarray(0, at), byte, line.subarray(at)])
              : Buffer.concat([line.subarray(0, at), line.subarray(at + 1)]);
      }
      const input = Buffer.concat([
        Buffer.from('{"before":1}\n'),
        line,
        Buffer.from(next() < 0.5 ? '\n{"after":2}\n' : ''),
      ]);
      expect(verdict(input), input.toString('hex')).toBe(linesVerdict(input));
    }
  });

  it('agrees with a fatal UTF-8 TextDecoder and JSON.parse on random strings of good and bad UTF-8, at every offset', () => {
    // Strings are scanned 16 bytes at a time from their first byte, so each sequence is put at every offset of
    // that step, whole and cut short, and ended by the closing quote, a newline or the end of the input (the
    // validator's padding of zeros).
    const good = ['c2 80', 'c3 a9', 'df bf', 'e0 a0 80', 'e6 97 a5', 'ed 9f bf', 'ee 80 80', 'ef bf bf', 'f0 90 80 80'];
    const bad = ['c0 80', 'c1 bf', 'e0 80 80', 'e0 9f bf', 'ed a0 80', 'ed bf bf', 'f0 80 80 80', 'f0 8f bf bf'];
    const sequences = [
      ...good,
      'f0 9f 98 80',
      'f4 8f bf bf',
      ...bad,
      'f4 90 80 80',
      'f5 80 80 80',
      'f8 88 80 80 80',
      '80',
      'fe',
      'ff',
    ].map(hex);
    const ends = ['"}', '","b":"\u00e9"}\n{"after":1}', '\n{"after":1}', ''];
    for (const sequence of sequences) {
      for (let cut = 1; cut <= sequence.length; cut++) {
        for (let offset = 0; offset < 20; offset++) {
          for (const end of ends) {
            const input = Buffer.concat([
              Buffer.from(`{"before":1}\n{"a":"${'x'.repeat(offset)}`),
              sequence.subarray(0, cut),
              Buffer.from(end),
            ]);
            expect(verdict(input), input.toString('hex')).toBe(linesVerdict(input));
          }
        }
      }
    }
    // Random keys and values: runs of ASCII (escapes among them) and of sequences, now and then a bad one.
    const next = seededRandom(20261127);
    const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)]!;
    const ascii = 'abc xyz0189-_/:.,';
    const text = (): Buffer => {
      const parts: Buffer[] = [];
      for (let n = Math.floor(next() * 8); n > 0; n--) {
        const kind = next();
        if (kind < 0.4) {
          parts.push(Buffer.from(Array.from({ length: Math.floor(next() * 20) }, () => pick([...ascii])).join('')));
        } else if (kind < 0.5) {
          parts.push(Buffer.from(pick(['\\"', '\\\\', '\\n', '\\u00e9', '\\uD83D\\uDE00'])));
        } else if (kind < 0.97) {
          for (let run = 1 + Math.floor(next() * 6); run > 0; run--) parts.push(pick(sequences.slice(0, 11)));
        } else {
          const sequence = pick(sequences);
          parts.push(sequence.subarray(0, 1 + Math.floor(next() * sequence.length)));
        }
      }
      return Buffer.concat(parts);
    };
    let refused = 0;
    for (let n = 0; n < 5_000; n++) {
      const input = Buffer.concat([
        Buffer.from('{"before":1}\n{"'),
        text(),
        Buffer.from('":"'),
        text(),
        Buffer.from('","n":1,"'),
        text(),
        Buffer.from('":["'),
        text(),
        Buffer.from('"]}\n{"after":2}\n'),
      ]);
      const expected = linesVerdict(input);
      if (expected !== 'records 3') refused++;
      expect(verdict(input), input.toString('hex')).toBe(expected);
    }
    // Both verdicts are common, so neither side of the comparison is trivially true.
    expect(refused).toBeGreaterThan(500);
    expect(refused).toBeLessThan(4_500);
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
    expect(parseWholeLines(Buffer.from(''))).toEqual({ records: 0, lines: 0 });
    expect(parseWholeLines(Buffer.from('\n\n'))).toEqual({ records: 0, lines: 2 });
    expect(parseWholeLines(Buffer.from('{}\n\n{}\n'))).toEqual({ records: 2, lines: 3 });
    expect(parseWholeLines(Buffer.from('{}\n{}'))).toEqual({ records: 2, lines: 2 });
    expect(parseWholeLines(Buffer.from('{}\n '))).toEqual({ records: 1, lines: 2 });
    expect(parseWholeLines(Buffer.from('{}\r\n\r\n{}\r\n'))).toEqual({ records: 2, lines: 3 });
    expect(parseWholeLines(Buffer.from('{}\n\n[]\n{}\n'))).toEqual({
      records: 1,
      lines: 3,
      bad: { line: 3, what: 'not-object' },
    });
    expect(parseWholeLines(Buffer.from('{}\n{"a":\n{}\n'))).toEqual({
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
    expect(parseWholeLines(bytes.subarray(0, 10))).toEqual({ records: 1, lines: 2, bad: { line: 2, what: 'invalid' } });
  });

  it('takes a UTF-8 byte order mark at the start of the first chunk, and nowhere else', () => {
    const mark = Buffer.from([0xef, 0xbb, 0xbf]);
    const first = new LinesParser('f');
    first.push(Buffer.concat([mark, Buffer.from('{"a":1}\n')]));
    first.push(Buffer.from('{"a":2}\n'));
    expect(first.end()).toBe(2);
    const later = new LinesParser('f');
    later.push(Buffer.from('{"a":1}\n'));
    expect(() => later.push(Buffer.concat([mark, Buffer.from('{"a":2}\n')]))).toThrow('f line 2 is not a JSON object');
  });

  it('gives the same count or the same error line however the input is split into chunks', () => {
    const inputs = [
      '{"a":1}\n\n{"b":[1,2,{"c":"x\\"y"}]}\n   \n{"d":null}',
      '{"a":1}\n{"b":"\\u00e9"}\n[1]\n{"c":2}\n',
      '{"a":1}\n{"b":2\n{"c":3}\n',
      '\n\n{"a":"unterminated\n',
      '{"a":"日本"}\n{"b":"😀é"}\n',
      Buffer.concat([Buffer.from('{"a":"日本"}\n{"b":"x'), hex('e6 97'), Buffer.from('"}\n{"c":1}\n')]),
    ];
    const feed = (chunks: Buffer[]): string => {
      const checker = new LinesParser('f', { chunkBytes: 16 });
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
            `${bytes.toString('hex')} split at ${i},${j}`,
          ).toBe(whole);
        }
      }
    }
    expect(feed([Buffer.from('{"a":1}\n\n{"b":2}\n{"c":')])).toBe('f line 4 is not valid JSON');
  });
});
