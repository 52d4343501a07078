// The building blocks of the data pass: in-order results, the parallel gzip (the same bytes whatever the number
// of blocks in flight and however the input arrives, a valid gzip for every tool at hand, gzipSync's bytes for
// one block), the JSON Lines check (JSON.parse's verdicts line by line, the first bad line in file order), the
// young-generation collections and the buffers freed at once that keep a pass's memory constant, and where the
// pass thread's script is.
// No assertion depends on timing.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/core/errors.js';
import { MAX_LINE_BYTES } from '../src/core/datapass/jsonl.js';
import { collectYoungGeneration, freeNow, GarbageMeter } from '../src/core/datapass/garbage.js';
import { stampOf } from '../src/core/datapass/file-stamp.js';
import { passOverFile } from '../src/core/datapass/pipeline.js';
import {
  BLOCK_BYTES,
  blocksInFlight,
  createParallelGzip,
  gzipHeader,
  type ParallelGzipOptions,
} from '../src/core/datapass/gzip.js';
import { CHUNK_BYTES, LinesParser } from '../src/core/datapass/lines.js';
import { InOrder, workerScript } from '../src/core/datapass/pool.js';
import { linesVerdict, seededRandom, tempDir, until } from './helpers.js';

/** About `bytes` of JSON Lines that compress like real records (ids, numbers, repeated keys, some text). */
function jsonLines(bytes: number, seed = 1): Buffer {
  const next = seededRandom(seed);
  const lines: string[] = [];
  let size = 0;
  for (let n = 0; size < bytes; n++) {
    const line = JSON.stringify({
      id: Math.floor(next() * 2 ** 48).toString(16),
      n,
      amount: Math.round(next() * 1e6) / 100,
      customer: `c-${Math.floor(next() * 5000)}`,
      tags: ['a', 'b', 'é日本'].slice(0, Math.floor(next() * 4)),
      note: next() < 0.2 ? 'said "hi"\n then left' : null,
    });
    lines.push(line);
    size += line.length + 1;
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

/** The input cut into chunks of seeded random sizes up to `max`. */
function* chunks(input: Buffer, max: number, seed = 7): Generator<Buffer> {
  const next = seededRandom(seed);
  for (let at = 0; at < input.length;) {
    const size = 1 + Math.floor(next() * max);
    yield input.subarray(at, at + size);
    at += size;
  }
}

describe('the pass thread', () => {
  it('finds the compiled worker beside a compiled module, and in dist/ for a TypeScript one', () => {
    expect(workerScript('file:///app/dist/core/datapass/pool.js').href).toBe(
      'file:///app/dist/core/datapass/worker-entry.js',
    );
    const source = new URL('../src/core/datapass/pool.ts', import.meta.url).href;
    expect(workerScript(source).href).toBe(new URL('../dist/core/datapass/worker-entry.js', import.meta.url).href);
    expect(() => workerScript('file:///nowhere/src/core/pool.ts')).toThrow('npm run build');
  });
});

describe('GarbageMeter', () => {
  it('collects each time the bytes dropped since the last collection reach its step', () => {
    let collections = 0;
    const meter = new GarbageMeter(1000, () => collections++);
    meter.add(999);
    expect(collections).toBe(0);
    meter.add(1);
    expect(collections).toBe(1);
    [400, 400, 400, 400, 400].forEach((bytes) => meter.add(bytes));
    expect(collections).toBe(2);
    meter.add(600);
    expect(collections).toBe(3);
  });

  it('collects the young generation: V8 reports a minor collection', async () => {
    let minor = 0;
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        if ((entry as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) minor++;
      }
    });
    observer.observe({ entryTypes: ['gc'] });
    try {
      // gc entries are delivered asynchronously, and in a test worker V8 does not report every one: called until
      // one is seen. A hook that collects nothing never gets there.
      await until(() => {
        collectYoungGeneration();
        return minor > 0;
      }, 'a minor collection');
    } finally {
      observer.disconnect();
    }
  });
});

describe('freeNow', () => {
  it('frees a buffer at once, without a collection: it is detached, and its views are empty', () => {
    // Other buffers of the test process come and go meanwhile: the margins are 1 MiB either way.
    const held = (): number => process.memoryUsage().arrayBuffers;
    const before = held();
    const chunks = Array.from({ length: 8 }, () => Buffer.alloc(2 << 20, 1).subarray(0, 1 << 20));
    const allocated = held();
    expect(allocated - before).toBeGreaterThan(15 << 20);
    for (const chunk of chunks) expect(freeNow(chunk.buffer as ArrayBuffer)).toBe(true);
    expect(chunks.every((chunk) => chunk.length === 0 && chunk.buffer.byteLength === 0)).toBe(true);
    expect(allocated - held()).toBeGreaterThan(15 << 20);
  });

  it("frees zlib's output buffers in the pass as their lines are checked: none is left for a collection", async () => {
    const folder = mkdtempSync(path.join(os.tmpdir(), 'bds-free-'));
    try {
      const file = path.join(folder, 'records.jsonl.gz');
      const line = `{"id":"${'7'.repeat(100)}"}\n`;
      const text = line.repeat(Math.ceil((24 << 20) / line.length));
      writeFileSync(file, gzipSync(text));
      let collected = 0;
      const garbage = new GarbageMeter(1 << 20, () => collected++);
      const found = await passOverFile(file, stampOf(file, statSync(file)), {
        name: 'records.jsonl.gz',
        copy: undefined,
        tmpDir: folder,
        garbage,
      });
      expect(found.recordCount).toBe(text.length / line.length);
      // 12 buffers of 2 MiB were inflated and freed; only the last, partly filled, is left to a collection.
      expect(collected).toBeLessThanOrEqual(2);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('InOrder', () => {
  function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: Error) => void } {
    let resolve!: (value: T) => void;
    let reject!: (error: Error) => void;
    const promise = new Promise<T>((yes, no) => {
      resolve = yes;
      reject = no;
    });
    return { promise, resolve, reject };
  }

  it('takes results in the order added, whatever order they settle in, at most `limit` pending', async () => {
    const taken: number[] = [];
    const inOrder = new InOrder<number>(2, (n) => {
      taken.push(n);
    });
    const tasks = [0, 1, 2, 3].map(() => deferred<number>());
    await inOrder.add(tasks[0]!.promise);
    await inOrder.add(tasks[1]!.promise);
    expect(inOrder.pending).toBe(2);
    let added = false;
    const third = inOrder.add(tasks[2]!.promise).then(() => (added = true));
    tasks[2]!.resolve(2);
    tasks[1]!.resolve(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(added).toBe(false); // the oldest is still running: no room, nothing taken
    expect(taken).toEqual([]);
    tasks[0]!.resolve(0);
    await third;
    expect(taken).toEqual([0, 1, 2]); // what was done at the front was taken at once
    await inOrder.add(tasks[3]!.promise);
    tasks[3]!.resolve(3);
    await inOrder.drain();
    expect(taken).toEqual([0, 1, 2, 3]);
  });

  it("throws an earlier task's failure before a later one's, and reports nothing unhandled", async () => {
    const inOrder = new InOrder<number>(10, () => {});
    const first = deferred<number>();
    const second = deferred<number>();
    await inOrder.add(first.promise);
    await inOrder.add(second.promise);
    second.reject(new Error('second'));
    await new Promise((resolve) => setImmediate(resolve));
    first.reject(new Error('first'));
    await expect(inOrder.drain()).rejects.toThrow('first');
  });
});

describe('createParallelGzip', () => {
  async function gzipWith(input: Buffer, options: ParallelGzipOptions = {}, maxChunk = 100_000): Promise<Buffer> {
    const out: Buffer[] = [];
    await pipeline(
      Readable.from(chunks(input, maxChunk)),
      createParallelGzip(options),
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          out.push(chunk);
          callback();
        },
      }),
    );
    return Buffer.concat(out);
  }

  const input = jsonLines(6 * BLOCK_BYTES + 12_345);

  it('gives the same bytes with 1 and many blocks in flight, however the input arrives', async () => {
    const one = await gzipWith(input, { maxInFlight: 1 });
    const four = await gzipWith(input, {}, 7_000);
    expect(blocksInFlight()).toBeGreaterThanOrEqual(3);
    expect(four.equals(one)).toBe(true);
    expect(gunzipSync(one).equals(input)).toBe(true);
    // Blocks really were joined: the result is a single member, a little larger than one stream would be.
    expect(one.length).toBeGreaterThan(gzipSync(input).length);
    expect(one.length).toBeLessThan(gzipSync(input).length * 1.01);
  });

  it('gives the same bytes with 1 and many small blocks in flight', async () => {
    const one = await gzipWith(input, { blockBytes: 32 << 10, maxInFlight: 1 });
    const four = await gzipWith(input, { blockBytes: 32 << 10, maxInFlight: 16 }, 3_000);
    expect(four.equals(one)).toBe(true);
    expect(gunzipSync(four).equals(input)).toBe(true);
  });

  it("gives gzipSync's exact bytes for an input of one block or less", async () => {
    for (const size of [0, 1, 1000, BLOCK_BYTES]) {
      const small = jsonLines(size).subarray(0, size);
      expect((await gzipWith(small)).equals(gzipSync(small)), `${size} bytes`).toBe(true);
    }
    const small = jsonLines(50_000);
    for (const level of [1, 2, 5, 9]) {
      expect((await gzipWith(small, { level })).equals(gzipSync(small, { level })), `level ${level}`).toBe(true);
    }
    expect(gzipHeader(6).equals(gzipSync(Buffer.alloc(0)).subarray(0, 10))).toBe(true);
  });

  it('is valid at every block boundary', async () => {
    for (const size of [BLOCK_BYTES + 1, 2 * BLOCK_BYTES, 2 * BLOCK_BYTES + 1]) {
      const exact = jsonLines(size).subarray(0, size);
      const gz = await gzipWith(exact);
      expect(gunzipSync(gz).equals(exact), `${size} bytes`).toBe(true);
    }
  });

  const tools = {
    gzip: spawnSync('gzip', ['--version']).status === 0,
    python3: spawnSync('python3', ['-c', 'import gzip']).status === 0,
  };

  it.skipIf(!tools.gzip)('passes gzip -t, and zcat gives the input back', async () => {
    const dir = tempDir('bds-parallel-');
    const file = path.join(dir, 'data.jsonl.gz');
    writeFileSync(file, await gzipWith(input));
    execFileSync('gzip', ['-t', file]);
    expect(execFileSync('gzip', ['-dc', file], { maxBuffer: 64 << 20 }).equals(input)).toBe(true);
  });

  it.skipIf(!tools.python3)("passes Python's gzip module", async () => {
    const dir = tempDir('bds-parallel-');
    const file = path.join(dir, 'data.jsonl.gz');
    writeFileSync(file, await gzipWith(input));
    const script = 'import gzip, sys; sys.stdout.buffer.write(gzip.open(sys.argv[1]).read())';
    expect(execFileSync('python3', ['-c', script, file], { maxBuffer: 64 << 20 }).equals(input)).toBe(true);
  });

  it('refuses a level or a block size it cannot honour', () => {
    expect(() => createParallelGzip({ level: 10 })).toThrow(RangeError);
    expect(() => createParallelGzip({ level: 0 })).toThrow(RangeError);
    expect(() => createParallelGzip({ blockBytes: 1000 })).toThrow(RangeError);
  });
});

describe('LinesParser', () => {
  /** The check's verdict: the record count or the error message (and hint). */
  function check(input: Buffer, options: { chunkBytes?: number } = {}, maxChunk = 1000): string {
    const checker = new LinesParser('f', options);
    try {
      for (const chunk of chunks(input, maxChunk)) checker.push(chunk);
      return `records ${checker.end()}`;
    } catch (error) {
      return (error as Error).message;
    }
  }
  const small = { chunkBytes: 256 };

  it('counts the records of a large input checked in many chunks', () => {
    const input = jsonLines(3 * CHUNK_BYTES + 1000);
    const records = input
      .toString()
      .split('\n')
      .filter((line) => line !== '').length;
    expect(check(input, {}, 1 << 20)).toBe(`records ${records}`);
    expect(check(input, { chunkBytes: 4096 }, 50_000)).toBe(`records ${records}`);
  });

  it('agrees with JSON.parse on empty lines, CRLF, a last line without newline, line numbers across chunks', () => {
    const inputs = [
      '',
      '\n\n\n',
      '{"a":1}',
      '{"a":1}\n\n\n{"b":2}\n   \n',
      '{"a":1}\r\n{"b":2}\r\n\r\n{"c":3}',
      '{"a":1}\n{"a":1}\n  \t',
      '{"a":1}\n{"b":2\n{"c":3}\n',
      '{"a":1}\n{"b":2}\n{"c":',
      '{"a":1}\n\n[1]\n',
    ];
    const filler = '{"x":"' + 'y'.repeat(90) + '"}\n';
    for (const text of inputs) {
      // Alone, and after hundreds of lines (many chunks of 256 bytes before it, cut anywhere).
      for (const input of [Buffer.from(text), Buffer.from(filler.repeat(300) + '\n'.repeat(7) + text)]) {
        for (const maxChunk of [1, 13, 1000]) {
          if (maxChunk === 1 && input.length > 1000) continue;
          expect(check(input, small, maxChunk), `${JSON.stringify(text)} by ${maxChunk}`).toBe(linesVerdict(input));
        }
      }
    }
  });

  it('numbers a bad line right wherever it falls among the chunks', () => {
    const lines = jsonLines(40_000).toString().split('\n');
    for (const at of [0, 1, 2, 37, 100, 101, 250]) {
      const bad = [...lines.slice(0, at), '{"broken":', ...lines.slice(at)].join('\n');
      const input = Buffer.from(bad);
      const expected = `f line ${at + 1} is not valid JSON`;
      expect(linesVerdict(input)).toBe(expected);
      expect(check(input, small, 777)).toBe(expected);
    }
  });

  it('reports the first bad line in file order, after many good buffers', () => {
    const parts = [jsonLines(4 << 20), Buffer.from('[1]\n')];
    for (let n = 0; n < 3; n++) parts.push(Buffer.from('x\n'), jsonLines(200_000, n));
    const many = Buffer.concat(parts);
    expect(linesVerdict(many)).toMatch(/is not a JSON object$/);
    expect(check(many, {}, 1 << 20)).toBe(linesVerdict(many));
  });

  it('throws a UsageError naming the line, with a hint, and again on every later call', () => {
    const checker = new LinesParser('data.jsonl');
    checker.push(Buffer.from('{}\n"no"'));
    type Failure = Error & { hint?: string; exitCode?: number };
    let error: Failure | undefined;
    try {
      checker.end();
    } catch (caught) {
      error = caught as Failure;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect({ message: error!.message, hint: error!.hint, exitCode: error!.exitCode }).toEqual({
      message: 'data.jsonl line 2 is not a JSON object',
      hint: 'every non-empty line of the data file must be one JSON object',
      exitCode: 2,
    });
    expect(() => checker.push(Buffer.from('{}\n'))).toThrow(error);
    // A whole bad line is refused by the push that brings it.
    const early = new LinesParser('data.jsonl');
    expect(() => early.push(Buffer.from('{}\n"no"\n{}'))).toThrow('data.jsonl line 2 is not a JSON object');
    expect(() => early.end()).toThrow('data.jsonl line 2 is not a JSON object');
  });

  it('accepts a line of exactly 64 MiB and refuses one byte more, with its line number', () => {
    const head = Buffer.from('{"a":1}\n\n');
    const line = (size: number): Buffer => {
      const bytes = Buffer.alloc(size, 0x61);
      bytes.write('{"big":"');
      bytes.write('"}', size - 2);
      return bytes;
    };
    const exact = Buffer.concat([head, line(MAX_LINE_BYTES), Buffer.from('\n{"b":2}\n')]);
    expect(check(exact, {}, 1 << 20)).toBe('records 3');
    const over = Buffer.concat([head, line(MAX_LINE_BYTES + 1), Buffer.from('\n{"b":2}\n')]);
    expect(check(over, {}, 1 << 20)).toBe('f line 3 is longer than 64 MiB');
    // Also without its newline at the end of the file, and behind a bad line, which comes first.
    expect(check(Buffer.concat([head, line(MAX_LINE_BYTES + 1)]), {}, 1 << 20)).toBe('f line 3 is longer than 64 MiB');
    const badFirst = Buffer.concat([Buffer.from('{"a":1}\n[]\n'), line(MAX_LINE_BYTES + 1)]);
    expect(check(badFirst, {}, 1 << 20)).toBe('f line 2 is not a JSON object');
    // The hint names the limit: the person reading it finds it nowhere else at hand.
    const checker = new LinesParser('f');
    expect(() => checker.push(over)).toThrow(
      expect.objectContaining({
        hint: 'a line of the data file may hold at most 64 MiB: is it JSON Lines, one record per line?',
      }),
    );
  });

  it('goes back to its usual buffer after a long line', () => {
    const long = `{"long":"${'z'.repeat(3 * CHUNK_BYTES)}"}\n`;
    const input = Buffer.concat([
      jsonLines(CHUNK_BYTES),
      Buffer.from(long),
      jsonLines(2 * CHUNK_BYTES, 2),
      Buffer.from('{}\n[]\n'),
    ]);
    expect(check(input, {}, 1 << 20)).toBe(linesVerdict(input));
  });
});
