// The bench's sandbox in a process of its own (forked by bench/bench.js): the storage host receives, hashes
// and writes each upload on its own event loop and cores, not on the bench's, so that "bds upload / curl -T"
// says which side is short. The bench asks it about the store over IPC: {id, op, args} → {id, value | error}.

import fs from 'node:fs';
import { startSandbox } from '../dist/sandbox/emulator.js';

const box = await startSandbox({ dataDir: process.argv[2] });

const ops = {
  createSource: (name) => box.store.createSource({ name }).id,
  /** The batch as the store holds it (status, upload: {bytes, sha256}). */
  batch: (id) => box.store.batch(id) ?? null,
  /** Frees the disk an upload took. */
  removeUpload: (id) => {
    const stored = box.store.uploadPath(id);
    if (stored) fs.rmSync(stored, { force: true });
  },
  /** Peak RSS of this process. */
  maxRss: () => process.resourceUsage().maxRSS * 1024,
};

process.on('message', ({ id, op, args }) => {
  try {
    process.send({ id, value: ops[op](...args) });
  } catch (error) {
    process.send({ id, error: error.message });
  }
});
process.once('disconnect', () => void box.close().then(() => process.exit(0)));
process.send({ ready: { baseUrl: box.baseUrl, storageUrl: box.storageUrl, keys: box.keys } });
