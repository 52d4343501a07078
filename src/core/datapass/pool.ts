// The threads of the data pass: starting the pass thread (thread.ts), and InOrder, which takes the results of
// work running in parallel (zlib's, on libuv's threads) in the order it was given, a bounded number at a time.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * Starts a thread running worker-entry.js with `workerData`. Normally worker-entry.js beside this module. The
 * single-executable build embeds the worker's bundle instead and sets globalThis.__bdsWorkerSource to it (a
 * script, run with eval: true).
 */
export function startWorker(workerData: object): Worker {
  const source = (globalThis as { __bdsWorkerSource?: unknown }).__bdsWorkerSource;
  if (typeof source === 'string') return new Worker(source, { eval: true, workerData });
  return new Worker(workerScript(import.meta.url), { workerData });
}

/** worker-entry.js beside the module at moduleUrl, or, when that module is TypeScript source, its compiled counterpart. */
export function workerScript(moduleUrl: string): URL {
  const beside = new URL('./worker-entry.js', moduleUrl);
  if (!moduleUrl.endsWith('.ts')) return beside;
  // Running from src/*.ts (vitest runs the sources as they are), but a worker thread has no TypeScript
  // loader: it runs tsc's output of the same file under dist/ instead. `npm test` runs tsc to dist/ before
  // vitest, so that file is there and current.
  const at = beside.href.lastIndexOf('/src/');
  if (at === -1) throw new Error(`cannot find the compiled worker for ${moduleUrl}`);
  const compiled = new URL(`${beside.href.slice(0, at)}/dist/${beside.href.slice(at + '/src/'.length)}`);
  if (!existsSync(fileURLToPath(compiled))) {
    throw new Error(
      `${fileURLToPath(compiled)} is missing: run \`npm run build\` first (tests run from sources use dist/ for worker threads)`,
    );
  }
  return compiled;
}

/**
 * Results of tasks that run in parallel, taken in the order the tasks were added, whatever order they
 * finish in: each goes to `take` once every earlier one has. At most `limit` tasks are added and not yet
 * taken: add() waits for the oldest beyond that, so a producer that awaits add() runs in constant memory.
 * A task's rejection, or a throw from `take`, comes out of the add() or drain() that reaches it in turn.
 */
export class InOrder<R> {
  private readonly queue: { result: Promise<R>; settled: boolean }[] = [];

  constructor(
    private readonly limit: number,
    private readonly take: (result: R) => void | Promise<void>,
  ) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, not ${limit}`);
  }

  async add(result: Promise<R>): Promise<void> {
    const entry = { result, settled: false };
    // Marked either way; a rejection is thrown when its turn comes, and is not "unhandled" until then.
    const settled = (): void => {
      entry.settled = true;
    };
    result.then(settled, settled);
    this.queue.push(entry);
    // Take what is done at the front at once too: output flows and a failure shows as early as it can.
    while (this.queue.length > this.limit || this.queue[0]?.settled) await this.takeOldest();
  }

  /** Takes every remaining result, in order. */
  async drain(): Promise<void> {
    while (this.queue.length > 0) await this.takeOldest();
  }

  /** Tasks added and not yet taken. */
  get pending(): number {
    return this.queue.length;
  }

  private async takeOldest(): Promise<void> {
    const entry = this.queue.shift()!;
    await this.take(await entry.result);
  }
}
