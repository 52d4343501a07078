// The bench's sandbox in a process of its own (forked by bench/sandbox.js): the storage host receives, hashes
// and writes each upload on its own event loop and cores, not on the bench's, so that "bds upload / curl -T"
// says which side is short. The bench asks it about the store over IPC: {id, op, args} → {id, value | error}.
//
// With a certificate folder (argv[3]: key.pem, cert.pem), the storage host is reached over HTTPS, as real
// storage is and as the contract's bound for the upload is stated: a TLS front in this process decrypts each
// connection and passes it to the storage host's own port, and upload URLs name the front.

import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { startSandbox } from '../dist/sandbox/emulator.js';

const [dataDir, certDir] = process.argv.slice(2);

/** The TLS front, and where it passes connections to (set once the sandbox listens). */
const front = { server: undefined, target: undefined };
if (certDir) {
  front.server = tls.createServer(
    { key: fs.readFileSync(path.join(certDir, 'key.pem')), cert: fs.readFileSync(path.join(certDir, 'cert.pem')) },
    (clear) => {
      const storage = net.connect(front.target);
      storage.setNoDelay(true);
      clear.pipe(storage).pipe(clear);
      clear.on('error', () => storage.destroy());
      storage.on('error', () => clear.destroy());
    },
  );
  await new Promise((resolve) => front.server.listen(0, '127.0.0.1', resolve));
}
const storageUrl = front.server ? `https://127.0.0.1:${front.server.address().port}` : undefined;
const box = await startSandbox({ dataDir, ...(storageUrl ? { publicUrls: { storage: storageUrl } } : {}) });
if (front.server) {
  const { hostname, port } = new URL(box.storageUrl);
  front.target = { host: hostname, port: Number(port) };
}

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
process.once('disconnect', () => {
  front.server?.close();
  void box.close().then(() => process.exit(0));
});
process.send({ ready: { baseUrl: box.baseUrl, storageUrl: storageUrl ?? box.storageUrl, keys: box.keys } });
