// The entry module of every worker thread bds starts (pool.ts's startWorker), and the only module of bds with
// top-level code: nothing imports it, so importing the package, in any thread, starts and listens to nothing.
// A thread started with the role 'pass' runs a whole pass over a large data file (thread.ts); any other serves
// tasks from a pool (tasks.ts).

import { parentPort, workerData } from 'node:worker_threads';
import type { PassRequest } from './thread.js';
import { leftBehind, runTask, transferables, ZLIB_CHUNK, type ReplyMessage, type TaskMessage } from './tasks.js';

const port = parentPort;
if (port) {
  const started = (workerData ?? {}) as { role?: unknown; source?: unknown };
  // In the single executable, the workers this thread starts (the pass thread's pool) run the same source.
  if (typeof started.source === 'string')
    (globalThis as { __bdsWorkerSource?: string }).__bdsWorkerSource = started.source;
  if (started.role === 'pass') {
    // Loaded only here: a task worker has no use for the pass's streams.
    void import('./thread.js').then(({ servePass }) => servePass(port, workerData as PassRequest));
  } else {
    port.on('message', ({ id, task }: TaskMessage) => {
      let reply: ReplyMessage;
      let transfer: ArrayBuffer[] = [];
      try {
        const result = runTask(task);
        reply = { id, result };
        transfer = transferables(result);
        if ('output' in result) leftBehind(result.output.byteLength + ZLIB_CHUNK);
      } catch (error) {
        const { name, message, stack } = error instanceof Error ? error : new Error(String(error));
        reply = { id, error: stack === undefined ? { name, message } : { name, message, stack } };
      }
      port.postMessage(reply, transfer);
    });
  }
}
