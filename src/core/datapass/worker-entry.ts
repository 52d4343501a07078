// The entry module of the thread bds starts for the pass over a large data file (pool.ts's startWorker), and the
// only module of bds with top-level code: nothing imports it, so importing the package, in any thread, starts
// and listens to nothing.

import { parentPort, workerData } from 'node:worker_threads';
import type { PassRequest } from './thread.js';

const port = parentPort;
if (port && (workerData as { role?: unknown } | null)?.role === 'pass') {
  // Loaded only here, in that thread.
  void import('./thread.js').then(({ servePass }) => servePass(port, workerData as PassRequest));
}
