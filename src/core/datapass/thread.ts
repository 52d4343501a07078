// The pass over a large data file on a thread of its own (a worker thread started as worker-entry.ts with the
// role 'pass'): it reads, hashes and checks there, while zlib inflates (or deflates) on libuv's threads.
//
// Why: zlib hands out a fresh buffer per inflated chunk, a GB of garbage per GB of data. On the caller's thread
// each collection of it walks the caller's whole heap, and while that thread is busy (collecting, or drawing
// progress) zlib waits for it before inflating the next chunk. Measured with the CLI's modules loaded (undici
// among them), V8 ran a full collection every 16 MB of inflated data, 1 s of a 4.5 s pass; in a thread of its
// own, with a heap of a few MB, each chunk's buffer is freed once checked, and young-generation collections
// free the rest as it goes (garbage.ts).
//
// Progress comes back as messages. Abort terminates the thread; once it is gone, the caller removes what it
// left. A 'done' that crosses an abort loses to it: the caller asked to stop. Errors come back as data: a
// UsageError keeps its message and hint, anything else is internal.

import type { MessagePort } from 'node:worker_threads';
import { UsageError } from '../errors.js';
import type { FileStamp } from './file-stamp.js';
import { passOverFile, type PassFindings } from './pipeline.js';
import { GarbageMeter } from './garbage.js';
import { startWorker } from './pool.js';

export interface PassRequest {
  role: 'pass';
  file: string;
  /** How messages name the file. */
  name: string;
  before: FileStamp;
  copy: string | undefined;
  tmpDir: string;
}

type PassReply =
  | { type: 'read'; read: number }
  | { type: 'done'; result: PassFindings }
  | { type: 'failed'; usage: boolean; message: string; hint?: string | undefined; stack?: string | undefined };

/**
 * Runs the pass on a new thread; rejects as the pass would have thrown, or with the signal's reason. Settles
 * only once the thread has exited, whatever ended it, so that nothing writes the copy after the caller
 * removes it.
 */
export function passOnThread(
  request: Omit<PassRequest, 'role'>,
  signal: AbortSignal | undefined,
  onRead?: (read: number) => void,
): Promise<PassFindings> {
  return new Promise<PassFindings>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const thread = startWorker({ ...request, role: 'pass' } satisfies PassRequest);
    let result: PassFindings | undefined;
    let failure: { error: unknown } | undefined;
    /** The first way the pass went wrong wins; the thread is stopped at once. */
    const fail = (error: unknown): void => {
      failure ??= { error };
      void thread.terminate();
    };
    const onAbort = (): void => fail(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    thread.on('message', (reply: PassReply) => {
      if (reply.type === 'read') {
        try {
          onRead?.(reply.read);
        } catch (error) {
          // A caller's progress handler that throws fails the pass, as it does on this thread.
          fail(error);
        }
      } else if (reply.type === 'done') {
        result = reply.result;
      } else {
        fail(
          reply.usage
            ? new UsageError(reply.message, reply.hint === undefined ? {} : { hint: reply.hint })
            : internalError(reply),
        );
      }
    });
    thread.on('error', fail);
    thread.on('exit', (code) => {
      signal?.removeEventListener('abort', onAbort);
      if (failure) reject(failure.error);
      else if (result) resolve(result);
      else reject(new Error(`the pass thread stopped unexpectedly (exit code ${code})`));
    });
  });
}

function internalError(reply: { message: string; stack?: string | undefined }): Error {
  return Object.assign(new Error(reply.message), reply.stack === undefined ? {} : { stack: reply.stack });
}

/** Progress goes to the caller's thread once per this many bytes read (a message per read took 4% of this thread's time). */
const REPORT_EVERY = 1 << 20;

/** The thread's side: run the pass it was started for, report, and let the thread end. */
export async function servePass(port: MessagePort, request: PassRequest): Promise<void> {
  const { file, name, before, copy, tmpDir } = request;
  let reported = 0;
  let reply: PassReply;
  try {
    const result = await passOverFile(file, before, {
      name,
      copy,
      tmpDir,
      garbage: new GarbageMeter(),
      onRead: (read) => {
        if (read - reported < REPORT_EVERY) return;
        reported = read;
        port.postMessage({ type: 'read', read } satisfies PassReply);
      },
    });
    reply = { type: 'done', result };
  } catch (error) {
    reply =
      error instanceof UsageError
        ? { type: 'failed', usage: true, message: error.message, hint: error.hint }
        : error instanceof Error
          ? { type: 'failed', usage: false, message: error.message, stack: error.stack }
          : { type: 'failed', usage: false, message: String(error) };
  }
  port.postMessage(reply);
  port.close();
}
