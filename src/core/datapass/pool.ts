// A pool of worker threads for the CPU-bound parts of the pass over a data file (checking JSON lines,
// deflating gzip blocks), and InOrder, which takes their results in the order the tasks were given,
// a bounded number at a time.
//
// Nothing happens on import: workers start when the first tasks arrive, and idle ones do not keep the
// process alive (a forgotten close() cannot hang the CLI at exit).

import { existsSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { runTask, type ReplyMessage, type Task, type TaskMessage, type TaskResult, type TaskResults } from './tasks.js';

/** What the parallel gzip and line check run their tasks on: worker threads, or this thread. */
export interface TaskRunner {
  /** How many tasks can run at once. */
  readonly size: number;
  run<T extends Task>(task: T, transfer?: readonly ArrayBuffer[]): Promise<TaskResults[T['kind']]>;
  close(): Promise<void>;
}

/**
 * The same tasks on this thread, one at a time: for a small file, starting workers costs more than they save.
 * The same code runs them, so the bytes (a gzip, a checksum) are the same as on any number of workers.
 */
export class InlineRunner implements TaskRunner {
  readonly size = 1;

  async run<T extends Task>(task: T): Promise<TaskResults[T['kind']]> {
    return runTask(task) as TaskResults[T['kind']];
  }

  async close(): Promise<void> {}
}

export interface WorkerPoolOptions {
  /** Worker threads at most (default: os.availableParallelism()). */
  workers?: number;
}

interface Running {
  resolve: (result: TaskResult) => void;
  reject: (error: Error) => void;
}

interface Queued extends Running {
  message: TaskMessage;
  transfer: readonly ArrayBuffer[];
}

/**
 * Starts a thread running worker-entry.js (with `workerData`, which says what it is for). Normally worker-entry.js beside
 * this module. The single-executable build embeds the worker's bundle instead and sets
 * globalThis.__bdsWorkerSource to it (a script, run with eval: true); a pass thread gets the source along in
 * workerData, to start its own pool's workers (a task worker starts none, and is spared the copy).
 */
export function startWorker(workerData: { role?: 'pass' } = {}): Worker {
  const source = (globalThis as { __bdsWorkerSource?: unknown }).__bdsWorkerSource;
  if (typeof source === 'string') {
    return new Worker(source, {
      eval: true,
      workerData: workerData.role === 'pass' ? { ...workerData, source } : workerData,
    });
  }
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

export class WorkerPool implements TaskRunner {
  /** The most workers this pool runs. */
  readonly size: number;
  private readonly idle: Worker[] = [];
  private readonly all: Worker[] = [];
  private readonly queue: Queued[] = [];
  /** What each busy worker is doing. */
  private readonly running = new Map<Worker, Running>();
  private nextId = 0;
  /** Set once a worker fails or the pool is closed: every task from then on is rejected with it. */
  private failure: Error | undefined;

  constructor(options: WorkerPoolOptions = {}) {
    const size = options.workers ?? os.availableParallelism();
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`workers must be a positive integer, not ${size}`);
    this.size = size;
  }

  /**
   * Runs one task on a free worker (or as soon as one is free; tasks start in the order given). The
   * buffers in `transfer` move to the worker: the caller must not touch them until the result hands them back.
   * Rejects if the task throws, or if a worker dies or the pool is closed before it is done.
   */
  run<T extends Task>(task: T, transfer: readonly ArrayBuffer[] = []): Promise<TaskResults[T['kind']]> {
    return new Promise<TaskResult>((resolve, reject) => {
      if (this.failure) {
        reject(this.failure);
        return;
      }
      const job: Queued = { message: { id: this.nextId++, task }, transfer, resolve, reject };
      const worker = this.idle.pop() ?? (this.all.length < this.size ? this.spawn() : undefined);
      if (worker) this.start(worker, job);
      else this.queue.push(job);
    }) as Promise<TaskResults[T['kind']]>;
  }

  /** Stops every worker; tasks not done yet are rejected. */
  async close(): Promise<void> {
    this.fail(new Error('the worker pool is closed'));
    await Promise.all(this.all.map((worker) => worker.terminate()));
  }

  private spawn(): Worker {
    const worker = startWorker();
    this.all.push(worker);
    worker.on('message', (reply: ReplyMessage) => this.settle(worker, reply));
    worker.on('error', (error) => this.fail(error));
    worker.on('messageerror', (error) => this.fail(error));
    worker.on('exit', (code) => this.fail(new Error(`a worker thread stopped unexpectedly (exit code ${code})`)));
    return worker;
  }

  private start(worker: Worker, job: Queued): void {
    this.running.set(worker, job);
    // A busy worker keeps the process alive (someone awaits its result); an idle one does not.
    worker.ref();
    worker.postMessage(job.message, job.transfer);
  }

  private settle(worker: Worker, reply: ReplyMessage): void {
    const job = this.running.get(worker);
    this.running.delete(worker);
    if (job) {
      if ('error' in reply) {
        job.reject(
          Object.assign(new Error(`worker: ${reply.error.message}`), {
            name: reply.error.name,
            stack: reply.error.stack,
          }),
        );
      } else {
        job.resolve(reply.result);
      }
    }
    if (this.failure) return;
    const next = this.queue.shift();
    if (next) {
      this.start(worker, next);
    } else {
      worker.unref();
      this.idle.push(worker);
    }
  }

  /** The first failure wins; everything waiting and everything asked from now on is rejected with it. */
  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    for (const job of this.running.values()) job.reject(error);
    for (const job of this.queue) job.reject(error);
    this.running.clear();
    this.queue.length = 0;
    this.idle.length = 0;
  }
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
