// The parallel building blocks: the worker pool and its in-order results, the parallel gzip (the same bytes
// whatever the number of workers, a valid gzip for every tool at hand, gzipSync's bytes for one block) and
// the parallel JSON Lines check (JSON.parse's verdicts line by line, the first bad line in file order).
// Worker threads run dist/ (npm test builds it first). No assertion depends on timing.
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants as zlibConstants, deflateRawSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../src/core/errors.js';
import { MAX_LINE_BYTES } from '../src/core/datapass/jsonl.js';
import { BLOCK_BYTES, createParallelGzip, gzipHeader, type ParallelGzipOptions } from '../src/core/datapass/gzip.js';
import { CHUNK_BYTES, ParallelLinesChecker, type ParallelLinesOptions } from '../src/core/datapass/lines.js';
import { InOrder, WorkerPool, workerScript } from '../src/core/datapass/pool.js';
import { runTask } from '../src/core/datapass/tasks.js';
import { linesVerdict, seededRandom, tempDir } from './helpers.js';

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

let pool1: WorkerPool;
let pool4: WorkerPool;
beforeAll(() => {
  pool1 = new WorkerPool({ workers: 1 });
  pool4 = new WorkerPool({ workers: 4 });
});
afterAll(async () => {
  await pool1.close();
  await pool4.close();
});

/** Runs `body` with a pool whose workers run `source` (the single-executable path), then closes it. */
async function withEvalWorkers<T>(source: string, body: (pool: WorkerPool) => Promise<T>): Promise<T> {
  const global = globalThis as { __bdsWorkerSource?: string };
  global.__bdsWorkerSource = source;
  const pool = new WorkerPool({ workers: 2 });
  try {
    return await body(pool);
  } finally {
    delete global.__bdsWorkerSource;
    await pool.close();
  }
}

describe('worker tasks', () => {
  it('deflates a block exactly as zlib does, primed with its dictionary', () => {
    const input = jsonLines(100_000);
    const buffer = new ArrayBuffer(input.length);
    new Uint8Array(buffer).set(input);
    const result = runTask({
      kind: 'deflate',
      buffer,
      dataOffset: 40_000,
      dataLength: 60_000,
      dictionaryLength: 32_768,
      level: 6,
      last: false,
    });
    const expected = deflateRawSync(input.subarray(40_000, 100_000), {
      level: 6,
      dictionary: input.subarray(40_000 - 32_768, 40_000),
      finishFlush: zlibConstants.Z_SYNC_FLUSH,
    });
    expect('output' in result && Buffer.from(result.output).equals(expected)).toBe(true);
    expect(result.buffer).toBe(buffer);
  });

  it('rejects an unknown task', () => {
    expect(() => runTask({ kind: 'nonsense' } as never)).toThrow('unknown task kind: nonsense');
  });
});

describe('WorkerPool', () => {
  it('runs tasks on workers, transferring buffers both ways', async () => {
    const text = Buffer.from('{"a":1}\n\n{"b":2}\n');
    const buffer = new ArrayBuffer(64);
    new Uint8Array(buffer).set(text);
    const result = await pool4.run({ kind: 'lines', buffer, length: text.length }, [buffer]);
    expect(buffer.byteLength).toBe(0); // it moved to the worker
    expect(result).toMatchObject({ records: 2, lines: 3 });
    expect(result.buffer.byteLength).toBe(64); // and came back
  });

  it('runs many more tasks than workers, each with its own result', async () => {
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, n) => {
        const text = Buffer.from('{}\n'.repeat(n));
        const buffer = new Uint8Array(text).buffer;
        return pool4.run({ kind: 'lines', buffer, length: text.length }, [buffer]);
      }),
    );
    expect(results.map((result) => result.records)).toEqual(Array.from({ length: 40 }, (_, n) => n));
  });

  it('rejects a task that throws in the worker, and goes on with the others', async () => {
    const buffer = new ArrayBuffer(10);
    const task = {
      kind: 'deflate',
      buffer,
      dataOffset: 0,
      dataLength: 10,
      dictionaryLength: 0,
      level: 42,
      last: true,
    } as const;
    await expect(pool1.run(task)).rejects.toThrow(/level/);
    await expect(pool1.run({ kind: 'nonsense' } as never)).rejects.toThrow('unknown task kind: nonsense');
    const ok = new ArrayBuffer(3);
    new Uint8Array(ok).set(Buffer.from('{}\n'));
    await expect(pool1.run({ kind: 'lines', buffer: ok, length: 3 }, [ok])).resolves.toMatchObject({ records: 1 });
  });

  it('rejects every task when a worker dies, and every task after that', async () => {
    await withEvalWorkers('throw new Error("boom at start")', async (pool) => {
      const tasks = [1, 2, 3].map(() => pool.run({ kind: 'lines', buffer: new ArrayBuffer(0), length: 0 }));
      for (const task of tasks) await expect(task).rejects.toThrow('boom at start');
      await expect(pool.run({ kind: 'lines', buffer: new ArrayBuffer(0), length: 0 })).rejects.toThrow('boom at start');
    });
    await withEvalWorkers('process.exit(3)', async (pool) => {
      await expect(pool.run({ kind: 'lines', buffer: new ArrayBuffer(0), length: 0 })).rejects.toThrow('exit code 3');
    });
  });

  it('runs the embedded worker source when the single-executable build sets one', async () => {
    const echo = `const { parentPort } = require('node:worker_threads');
      parentPort.on('message', ({ id, task }) => parentPort.postMessage({ id, result: { records: task.length, lines: -1, buffer: task.buffer } }));`;
    const result = await withEvalWorkers(echo, (pool) =>
      pool.run({ kind: 'lines', buffer: new ArrayBuffer(0), length: 7 }),
    );
    expect(result).toMatchObject({ records: 7, lines: -1 });
  });

  it('rejects tasks after close()', async () => {
    const pool = new WorkerPool({ workers: 1 });
    const running = expect(pool.run({ kind: 'lines', buffer: new ArrayBuffer(0), length: 0 })).rejects.toThrow(
      'closed',
    );
    await pool.close();
    await running;
    await expect(pool.run({ kind: 'lines', buffer: new ArrayBuffer(0), length: 0 })).rejects.toThrow('closed');
  });

  it('finds the compiled worker beside a compiled module, and in dist/ for a TypeScript one', () => {
    expect(workerScript('file:///app/dist/core/datapass/pool.js').href).toBe(
      'file:///app/dist/core/datapass/worker-entry.js',
    );
    const source = new URL('../src/core/datapass/pool.ts', import.meta.url).href;
    expect(workerScript(source).href).toBe(new URL('../dist/core/datapass/worker-entry.js', import.meta.url).href);
    expect(() => workerScript('file:///nowhere/src/core/pool.ts')).toThrow('npm run build');
  });

  it('refuses a senseless size', () => {
    expect(() => new WorkerPool({ workers: 0 })).toThrow(RangeError);
    expect(new WorkerPool().size).toBe(os.availableParallelism());
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
  async function gzipWith(
    pool: WorkerPool,
    input: Buffer,
    options: ParallelGzipOptions = {},
    maxChunk = 100_000,
  ): Promise<Buffer> {
    const out: Buffer[] = [];
    await pipeline(
      Readable.from(chunks(input, maxChunk)),
      createParallelGzip(pool, options),
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

  it('gives the same bytes with 1 and 4 workers, however the input arrives', async () => {
    const one = await gzipWith(pool1, input);
    const four = await gzipWith(pool4, input, {}, 7_000);
    expect(four.equals(one)).toBe(true);
    expect(gunzipSync(one).equals(input)).toBe(true);
    // Blocks really were joined: the result is a single member, a little larger than one stream would be.
    expect(one.length).toBeGreaterThan(gzipSync(input).length);
    expect(one.length).toBeLessThan(gzipSync(input).length * 1.01);
  });

  it('gives the same bytes with 1 and 4 workers with many small blocks in flight', async () => {
    const options = { blockBytes: 32 << 10, maxInFlight: 16 };
    const one = await gzipWith(pool1, input, options);
    const four = await gzipWith(pool4, input, options, 3_000);
    expect(four.equals(one)).toBe(true);
    expect(gunzipSync(four).equals(input)).toBe(true);
  });

  it("gives gzipSync's exact bytes for an input of one block or less", async () => {
    for (const size of [0, 1, 1000, BLOCK_BYTES]) {
      const small = jsonLines(size).subarray(0, size);
      expect((await gzipWith(pool4, small)).equals(gzipSync(small)), `${size} bytes`).toBe(true);
    }
    const small = jsonLines(50_000);
    for (const level of [0, 1, 2, 5, 9]) {
      expect((await gzipWith(pool4, small, { level })).equals(gzipSync(small, { level })), `level ${level}`).toBe(true);
    }
    expect(gzipHeader(6).equals(gzipSync(Buffer.alloc(0)).subarray(0, 10))).toBe(true);
  });

  it('is valid at every block boundary', async () => {
    for (const size of [BLOCK_BYTES + 1, 2 * BLOCK_BYTES, 2 * BLOCK_BYTES + 1]) {
      const exact = jsonLines(size).subarray(0, size);
      const gz = await gzipWith(pool4, exact);
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
    writeFileSync(file, await gzipWith(pool4, input));
    execFileSync('gzip', ['-t', file]);
    expect(execFileSync('gzip', ['-dc', file], { maxBuffer: 64 << 20 }).equals(input)).toBe(true);
  });

  it.skipIf(!tools.python3)("passes Python's gzip module", async () => {
    const dir = tempDir('bds-parallel-');
    const file = path.join(dir, 'data.jsonl.gz');
    writeFileSync(file, await gzipWith(pool4, input));
    const script = 'import gzip, sys; sys.stdout.buffer.write(gzip.open(sys.argv[1]).read())';
    expect(execFileSync('python3', ['-c', script, file], { maxBuffer: 64 << 20 }).equals(input)).toBe(true);
  });

  it('fails the stream when a worker fails', async () => {
    await withEvalWorkers('process.exit(5)', async (pool) => {
      await expect(gzipWith(pool, input)).rejects.toThrow('exit code 5');
    });
  });

  it('refuses a level or a block size it cannot honour', () => {
    expect(() => createParallelGzip(pool1, { level: 10 })).toThrow(RangeError);
    expect(() => createParallelGzip(pool1, { blockBytes: 1000 })).toThrow(RangeError);
  });
});

describe('ParallelLinesChecker', () => {
  /** The parallel check's verdict: the record count or the error message (and hint). */
  async function check(
    pool: WorkerPool,
    input: Buffer,
    options: ParallelLinesOptions = {},
    maxChunk = 1000,
  ): Promise<string> {
    const checker = new ParallelLinesChecker(pool, 'f', options);
    try {
      for (const chunk of chunks(input, maxChunk)) await checker.push(chunk);
      return `records ${await checker.end()}`;
    } catch (error) {
      return (error as Error).message;
    }
  }
  const small: ParallelLinesOptions = { chunkBytes: 256, maxInFlight: 12 };

  it('counts the records of a large input checked in many chunks at once', async () => {
    const input = jsonLines(3 * CHUNK_BYTES + 1000);
    const records = input
      .toString()
      .split('\n')
      .filter((line) => line !== '').length;
    expect(await check(pool4, input, {}, 1 << 20)).toBe(`records ${records}`);
    expect(await check(pool4, input, { chunkBytes: 4096, maxInFlight: 16 }, 50_000)).toBe(`records ${records}`);
  });

  it('agrees with JSON.parse on empty lines, CRLF, a last line without newline, line numbers across chunks', async () => {
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
          expect(await check(pool4, input, small, maxChunk), `${JSON.stringify(text)} by ${maxChunk}`).toBe(
            linesVerdict(input),
          );
        }
      }
    }
  });

  it('numbers a bad line right wherever it falls among the chunks', async () => {
    const lines = jsonLines(40_000).toString().split('\n');
    for (const at of [0, 1, 2, 37, 100, 101, 250]) {
      const bad = [...lines.slice(0, at), '{"broken":', ...lines.slice(at)].join('\n');
      const input = Buffer.from(bad);
      const expected = `f line ${at + 1} is not valid JSON`;
      expect(linesVerdict(input)).toBe(expected);
      expect(await check(pool4, input, small, 777)).toBe(expected);
    }
  });

  it('reports the first bad line in file order, even when a later one is found first', async () => {
    // A first chunk of 2 MiB with its bad line at the very end, then a small chunk bad from its first
    // line: with 4 workers the second is likely done first. The answer must not depend on it.
    const heavy = jsonLines(2 << 20);
    const heavyLines = heavy.toString().split('\n').length - 1;
    const two = Buffer.concat([heavy, Buffer.from('[1]\nx\n{}\n')]);
    expect(linesVerdict(two)).toBe(`f line ${heavyLines + 1} is not a JSON object`);
    for (let run = 0; run < 5; run++) {
      expect(await check(pool4, two, { chunkBytes: heavy.length + 4, maxInFlight: 4 }, 1 << 20)).toBe(
        linesVerdict(two),
      );
    }
    // 4 MiB of good lines, a bad one, then 30 chunks of 1 MiB each with a bad line early on (quick to find,
    // so these finish before the slow chunks still running on the other workers).
    const parts = [jsonLines(4 << 20), Buffer.from('[1]\n')];
    for (let n = 0; n < 30; n++) parts.push(Buffer.from('x\n'), jsonLines(200_000, n));
    const many = Buffer.concat(parts);
    for (let run = 0; run < 3; run++) {
      expect(await check(pool4, many, { chunkBytes: 1 << 20, maxInFlight: 40 }, 1 << 20)).toBe(linesVerdict(many));
    }
    // Tiny chunks, each with a bad line, many in flight at once: still the first.
    const tiny = Buffer.from(Array.from({ length: 200 }, (_, n) => `{"n":${n}}\n{"n":${n}},\n`).join(''));
    for (let run = 0; run < 5; run++)
      expect(await check(pool4, tiny, { chunkBytes: 64, maxInFlight: 50 }, 500)).toBe('f line 2 is not valid JSON');
  });

  it('throws a UsageError naming the line, with a hint, and again on every later call', async () => {
    const checker = new ParallelLinesChecker(pool4, 'data.jsonl');
    await checker.push(Buffer.from('{}\n"no"\n'));
    type Failure = Error & { hint?: string; exitCode?: number };
    const error = (await checker.end().then(
      () => undefined,
      (caught: unknown) => caught,
    )) as Failure;
    expect(error).toBeInstanceOf(UsageError);
    expect({ message: error.message, hint: error.hint, exitCode: error.exitCode }).toEqual({
      message: 'data.jsonl line 2 is not a JSON object',
      hint: 'every non-empty line of the data file must be one JSON object',
      exitCode: 2,
    });
    await expect(checker.push(Buffer.from('{}\n'))).rejects.toBe(error);
  });

  it('accepts a line of exactly 64 MiB and refuses one byte more, with its line number', async () => {
    const head = Buffer.from('{"a":1}\n\n');
    const line = (size: number): Buffer => {
      const bytes = Buffer.alloc(size, 0x61);
      bytes.write('{"big":"');
      bytes.write('"}', size - 2);
      return bytes;
    };
    const exact = Buffer.concat([head, line(MAX_LINE_BYTES), Buffer.from('\n{"b":2}\n')]);
    expect(await check(pool4, exact, {}, 1 << 20)).toBe('records 3');
    const over = Buffer.concat([head, line(MAX_LINE_BYTES + 1), Buffer.from('\n{"b":2}\n')]);
    expect(await check(pool4, over, {}, 1 << 20)).toBe('f line 3 is longer than 64 MiB');
    // Also without its newline at the end of the file, and behind a bad line, which comes first.
    expect(await check(pool4, Buffer.concat([head, line(MAX_LINE_BYTES + 1)]), {}, 1 << 20)).toBe(
      'f line 3 is longer than 64 MiB',
    );
    const badFirst = Buffer.concat([Buffer.from('{"a":1}\n[]\n'), line(MAX_LINE_BYTES + 1)]);
    expect(await check(pool4, badFirst, {}, 1 << 20)).toBe('f line 2 is not a JSON object');
  });

  it('rejects when a worker fails', async () => {
    await withEvalWorkers('process.exit(4)', async (pool) => {
      expect(await check(pool, jsonLines(5000), small)).toMatch('exit code 4');
    });
  });

  it('asks for each push to be awaited', async () => {
    const checker = new ParallelLinesChecker(pool1, 'f', { chunkBytes: 16 });
    const first = checker.push(Buffer.from('{}\n'.repeat(100)));
    await expect(checker.push(Buffer.from('{}\n'))).rejects.toThrow('await each push');
    await first;
    expect(await checker.end()).toBe(100);
  });
});
