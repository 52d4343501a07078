// The pass over a large data file on a thread of its own (a worker thread started as parallel/worker.ts with
// the role 'pass'), which in turn checks lines and gzips blocks on its own worker pool.
//
// Why: zlib hands out a fresh 1 MiB buffer per inflated chunk, a GB of garbage per GB of data. On the caller's
// thread each collection of it walks the caller's whole heap, and while that thread is busy (collecting, or
// drawing progress) zlib waits for it before inflating the next chunk. Measured with the CLI's modules loaded
// (undici among them), V8 ran a full collection every 16 MB of inflated data, 1 s of a 4.5 s pass; in a thread
// of its own, with a heap of a few MB, young-generation collections free it as it goes.
//
// Progress comes back as messages. Abort terminates the thread (and its pool with it); once it is gone, the
// caller removes what it left. Errors come back as data: a UsageError keeps its message and hint, anything else is internal.

import type { MessagePort } from 'node:worker_threads';
import { UsageError } from '../errors.js';
import { passOverFile, type FileState, type PassResult } from './pass.js';
import { startWorker, WorkerPool } from './parallel/pool.js';

export interface PassRequest {
  role: 'pass';
  file: string;
  before: FileState;
  copy: string | undefined;
  tmpDir: string;
  workers: number;
}

type PassReply =
  | { type: 'read'; read: number }
  | { type: 'done'; result: PassResult }
  | { type: 'failed'; usage: boolean; message: string; hint?: string | undefined; stack?: string | undefined };

/** Runs the pass on a new thread; rejects as the pass would have thrown, or with the signal's reason. */
export function passOnThread(request: Omit<PassRequest, 'role'>, signal: AbortSignal | undefined, onRead?: (read: number) => void): Promise<PassResult> {
  signal?.throwIfAborted();
  return new Promise<PassResult>((resolve, reject) => {
    const thread = startWorker({ ...request, role: 'pass' } satisfies PassRequest);
    let settled = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    // Settled once the thread is gone ('exit'), so that nothing writes the copy after the caller removes it.
    const onAbort = (): void => void thread.terminate();
    signal?.addEventListener('abort', onAbort, { once: true });
    thread.on('message', (reply: PassReply) => {
      if (reply.type === 'read') onRead?.(reply.read);
      else if (reply.type === 'done') settle(() => resolve(reply.result));
      else settle(() => reject(reply.usage ? new UsageError(reply.message, reply.hint === undefined ? {} : { hint: reply.hint }) : internalError(reply)));
    });
    thread.on('error', (error) => settle(() => reject(error)));
    thread.on('exit', (code) =>
      settle(() => reject(signal?.aborted ? signal.reason : new Error(`the pass thread stopped unexpectedly (exit code ${code})`))),
    );
  });
}

function internalError(reply: { message: string; stack?: string | undefined }): Error {
  return Object.assign(new Error(reply.message), reply.stack === undefined ? {} : { stack: reply.stack });
}

/** The thread's side: run the pass it was started for, report, and let the thread end. */
export async function servePass(port: MessagePort, request: PassRequest): Promise<void> {
  const { file, before, copy, tmpDir, workers } = request;
  let reply: PassReply;
  try {
    const result = await passOverFile(file, before, {
      copy,
      tmpDir,
      runner: new WorkerPool({ workers }),
      onRead: (read) => port.postMessage({ type: 'read', read } satisfies PassReply),
    });
    reply = { type: 'done', result };
  } catch (error) {
    reply =
      error instanceof UsageError
        ? { type: 'failed', usage: true, message: error.message, hint: error.hint }
        : { type: 'failed', usage: false, message: String((error as Error).message ?? error), stack: (error as Error).stack };
  }
  port.postMessage(reply);
  port.close();
}
