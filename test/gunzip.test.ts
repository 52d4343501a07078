// The pass's inflate of a .jsonl.gz (src/core/datapass/gunzip.ts: the first member's header and trailer read
// by bds, its CRC-32 computed on the pass thread) against zlib's gunzip, the reference, which read the whole
// file before: the same output, the same end of the gzip data, and the same error, for seeded random files
// (one to three members, every kind of header, zeros, garbage or another member after them, damaged and cut
// short anywhere) written in random pieces, several in flight, into a sink that takes its time.
import { Writable } from 'node:stream';
import { createGunzip, crc32, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { GzipInflater, usualHeaderLength } from '../src/core/datapass/gunzip.js';
import { seededRandom } from './helpers.js';

/**
 * The inflated bytes, and whether only zeros follow where the gzip data ends (pipeline.ts refuses anything
 * else); or the error. Where zlib's gunzip says the data ends among the zeros after it depends on how the
 * writes were timed, so the test compares the verdict, not the offset.
 */
type Outcome = { output: string; onlyZerosAfter: boolean } | { error: string };

function inflatedTo(output: Buffer[], file: Buffer, dataEnd: number): Outcome {
  return {
    output: Buffer.concat(output).toString('latin1'),
    onlyZerosAfter: file.subarray(dataEnd).every((b) => b === 0),
  };
}

function errorOf(error: unknown): { error: string } {
  const { code, message } = error as { code?: string; message: string };
  return { error: `${code}: ${message}` };
}

/** What zlib's gunzip makes of `file`, written in `pieces`: the pass before bds read the gzip container. */
async function reference(pieces: Buffer[]): Promise<Outcome> {
  const gunzip = createGunzip({ chunkSize: 4096 });
  const output: Buffer[] = [];
  gunzip.on('data', (chunk: Buffer) => output.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    gunzip.on('end', resolve);
    gunzip.on('error', reject);
  });
  for (const piece of pieces) gunzip.write(piece);
  gunzip.end();
  try {
    await ended;
    return inflatedTo(output, Buffer.concat(pieces), gunzip.bytesWritten);
  } catch (error) {
    return errorOf(error);
  }
}

/** What the pass's inflater makes of it, with a sink that takes each chunk a tick later, as the pass's does. */
async function subject(pieces: Buffer[], chunkSize: number, inFlight: number): Promise<Outcome> {
  const output: Buffer[] = [];
  const sink = new Writable({
    highWaterMark: chunkSize,
    write(chunk: Buffer, _encoding, callback) {
      setImmediate(() => {
        inflater.inflated(chunk);
        output.push(Buffer.from(chunk));
        callback();
      });
    },
  });
  const inflater = new GzipInflater(sink, { chunkSize });
  const flowing = inflater.done.then(
    () => undefined,
    (error: unknown) => errorOf(error),
  );
  const writes: Promise<void>[] = [];
  for (const [n, piece] of pieces.entries()) {
    if (n >= inFlight) await writes[n - inFlight]!.catch(() => undefined);
    writes.push(inflater.write(piece));
  }
  await Promise.allSettled(writes);
  inflater.end();
  const failed = await flowing;
  if (failed) return failed;
  return inflatedTo(output, Buffer.concat(pieces), inflater.dataEnd);
}

/** `data` gzipped with a header of the given flags (RFC 1952): FTEXT, FHCRC, FEXTRA, FNAME, FCOMMENT. */
function member(data: Buffer, flags: number, next: () => number): Buffer {
  const plain = gzipSync(data, { level: 1 + Math.floor(next() * 9) });
  const parts = [plain.subarray(0, 10)];
  const head = Buffer.from(plain.subarray(0, 10));
  head[3] = flags;
  parts[0] = head;
  if (flags & 0x04) {
    const extra = Buffer.alloc(Math.floor(next() * 300), 0x41);
    const length = Buffer.alloc(2);
    length.writeUInt16LE(extra.length);
    parts.push(length, extra);
  }
  if (flags & 0x08) parts.push(Buffer.from('records.jsonl\0'));
  if (flags & 0x10) parts.push(Buffer.from('a comment\0'));
  if (flags & 0x02) {
    const crc = Buffer.alloc(2);
    crc.writeUInt16LE(crc32(Buffer.concat(parts)) & 0xffff);
    parts.push(crc);
  }
  parts.push(plain.subarray(10));
  return Buffer.concat(parts);
}

function randomData(next: () => number): Buffer {
  const size = Math.floor(next() ** 3 * 200_000);
  const lines: string[] = [];
  let total = 0;
  while (total < size) {
    const line =
      next() < 0.5
        ? `{"id":${Math.floor(next() * 1e9)},"name":"n${total}"}`
        : Buffer.from(Array.from({ length: 1 + Math.floor(next() * 200) }, () => Math.floor(next() * 256))).toString(
            'latin1',
          );
    lines.push(line);
    total += line.length + 1;
  }
  return Buffer.from(lines.join('\n'), 'latin1');
}

function randomFile(next: () => number): Buffer {
  const flagChoices = [0, 0, 0, 0x08, 0x01, 0x04, 0x10, 0x1c, 0x02, 0x0a, 0x20, 0x80];
  const members = Array.from({ length: next() < 0.7 ? 1 : 2 + Math.floor(next() * 2) }, () =>
    member(randomData(next), flagChoices[Math.floor(next() * flagChoices.length)]!, next),
  );
  let file = Buffer.concat(members);
  const tails = [
    () => Buffer.alloc(0),
    () => Buffer.alloc(1 + Math.floor(next() * 5000)),
    () => Buffer.from('trailing garbage'),
    () => Buffer.from([0x1f, 0x00, 0x01]),
    () => Buffer.concat([Buffer.alloc(3), Buffer.from('x')]),
    () => Buffer.from([0x1f]),
  ];
  file = Buffer.concat([file, tails[Math.floor(next() * tails.length)]!()]);
  const damage = next();
  if (damage < 0.15) {
    // Cut short anywhere: in a header, the deflate data, a trailer.
    file = file.subarray(0, Math.floor(next() * file.length));
  } else if (damage < 0.3) {
    // One byte changed anywhere; near the end of the first member half the time (its trailer).
    const first = members[0]!.length;
    const at = next() < 0.5 ? first - 1 - Math.floor(next() * 8) : Math.floor(next() * file.length);
    file = Buffer.from(file);
    file[at] = file[at]! ^ (1 + Math.floor(next() * 255));
  }
  return file;
}

function randomPieces(file: Buffer, next: () => number): Buffer[] {
  const pieces: Buffer[] = [];
  // Pieces of a few bytes only for small files: each piece is a round trip to zlib's thread.
  const most = [file.length < 20_000 ? 3 : 64, 64, 4096, 70_000][Math.floor(next() * 4)]!;
  for (let at = 0; at < file.length;) {
    const size = 1 + Math.floor(next() * most);
    pieces.push(file.subarray(at, at + size));
    at += size;
  }
  return pieces;
}

describe('the inflate of a .jsonl.gz', () => {
  it('reads the usual headers itself and leaves the others to zlib', () => {
    const plain = gzipSync('{}\n');
    expect(usualHeaderLength(plain)).toBe(10);
    const next = seededRandom(1);
    expect(usualHeaderLength(member(Buffer.from('{}\n'), 0x08, next))).toBe(10 + 'records.jsonl\0'.length);
    expect(usualHeaderLength(member(Buffer.from('{}\n'), 0x18, next))).toBe(10 + 14 + 10);
    expect(usualHeaderLength(member(Buffer.from('{}\n'), 0x02, next))).toBeUndefined();
    expect(usualHeaderLength(member(Buffer.from('{}\n'), 0x20, next))).toBeUndefined();
    expect(usualHeaderLength(plain.subarray(0, 9))).toBeUndefined();
    expect(usualHeaderLength(member(Buffer.from('{}\n'), 0x08, next).subarray(0, 15))).toBeUndefined();
    expect(usualHeaderLength(Buffer.from('{"a":1}\n{"a":2}\n'))).toBeUndefined();
  });

  it('makes of 300 seeded random files, cut in random pieces, what zlib gunzip makes of them', async () => {
    const next = seededRandom(20261124);
    const kinds = new Set<string>();
    for (let n = 0; n < 300; n++) {
      const file = randomFile(next);
      const pieces = randomPieces(file, next);
      const chunkSize = [64, 1024, 65_536][Math.floor(next() * 3)]!;
      const expected = await reference(pieces);
      const actual = await subject(pieces, chunkSize, 1 + Math.floor(next() * 3));
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        expect({ n, file: file.length, actual }).toEqual({ n, file: file.length, actual: expected });
      }
      kinds.add('error' in expected ? expected.error : expected.onlyZerosAfter ? 'inflated' : 'trailing bytes');
    }
    // The files made every outcome a pass must tell apart.
    expect([...kinds].sort()).toEqual(
      expect.arrayContaining([
        'Z_BUF_ERROR: unexpected end of file',
        'Z_DATA_ERROR: incorrect data check',
        'Z_DATA_ERROR: incorrect header check',
        'Z_DATA_ERROR: incorrect length check',
        'inflated',
        'trailing bytes',
      ]),
    );
  }, 120_000);

  it('fails with a read error that comes while the first member is still being checked and the next has started', async () => {
    // The sink holds the first member's output until the read has failed: flow is then waiting for it to be
    // seen, and a gunzip has already taken the start of the second member. It must not wait for that gunzip,
    // which will never get the rest.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        void held.then(() => {
          inflater.inflated(chunk);
          callback();
        });
      },
    });
    const inflater = new GzipInflater(sink, { chunkSize: 65_536 });
    const outcome = inflater.done.then(
      () => 'inflated',
      (error: Error) => error.message,
    );
    const second = gzipSync('{"b":2}\n'.repeat(1000));
    await inflater.write(Buffer.concat([gzipSync('{"a":1}\n'.repeat(1000)), second.subarray(0, 20)]));
    // Private state, read only to know when flow waits for the sink (no timer: the suite runs on busy machines).
    const waitsForSink = (): boolean => (inflater as unknown as { rawSeen?: unknown }).rawSeen !== undefined;
    while (!waitsForSink()) await new Promise((resolve) => setImmediate(resolve));
    inflater.destroy(new Error('EIO: i/o error, read'));
    release();
    const stalled = new Promise((resolve) => setTimeout(() => resolve('still waiting after 10 s'), 10_000).unref());
    expect(await Promise.race([outcome, stalled])).toBe('EIO: i/o error, read');
  });
});
