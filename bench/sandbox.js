// The bench's sandbox: startSandbox() from dist/ in a process of its own (bench/sandbox-process.js), where it
// keeps what it receives, the certificate of its storage host, and the cores it gets for the upload case.

import { fork, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BENCH, DATA } from './harness.js';
import { log, processCpu, which } from './measure.js';

/**
 * The sandbox, in a process of its own (bench/sandbox-process.js): its storage host gets its own event loop,
 * as a real one is another machine. Its store is asked over IPC.
 */
export class SandboxProcess {
  static async start(dataDir, certDir) {
    const child = fork(path.join(BENCH, 'sandbox-process.js'), [dataDir, ...(certDir ? [certDir] : [])], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const ready = await new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`the sandbox process exited ${code}`)));
      child.once('message', (message) => resolve(message.ready));
    });
    return new SandboxProcess(child, ready);
  }

  constructor(child, { baseUrl, storageUrl, keys }) {
    this.child = child;
    this.baseUrl = baseUrl;
    this.storageUrl = storageUrl;
    this.keys = keys;
    this.pending = new Map();
    this.nextId = 0;
    child.on('message', ({ id, value, error }) => {
      const call = this.pending.get(id);
      this.pending.delete(id);
      if (error) call?.reject(new Error(`sandbox process: ${error}`));
      else call?.resolve(value);
    });
  }

  call(op, ...args) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, op, args });
    });
  }

  /** Moves the sandbox process, every thread of it, to these cores (taskset's list). */
  pin(cpus) {
    const res = spawnSync('taskset', ['-a', '-p', '-c', cpus, String(this.child.pid)], { encoding: 'utf8' });
    if (res.status !== 0) throw new Error(`taskset could not move the sandbox process to cores ${cpus}: ${res.stderr}`);
  }

  /** CPU seconds the sandbox has taken so far, read from /proc: no IPC inside a measure. */
  cpu() {
    return processCpu(this.child.pid);
  }

  async close() {
    if (!this.child.connected) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.disconnect();
    await exited;
  }
}

/**
 * The cores this process may run on (Linux: /proc/self/status), split in two for the upload comparison, or
 * undefined (fewer than two cores, or no taskset). The comparison runs with the storage host on cores of its
 * own, as another machine's are: the sandbox process on the second half, bds or curl on the first. Sharing
 * every core, the storage host (about 1.2 cores' worth at full speed on 2 cores) borrowed the second core while
 * curl ran, but less while bds did, whose SHA-256 of the bytes it sends (the contract's) takes 0.6 s of CPU per
 * GiB: that figure measures the contest for two cores, not which side of the upload is short.
 */
export function coreSplit() {
  let allowed;
  try {
    allowed = /Cpus_allowed_list:\s*(\S+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1];
  } catch {
    return undefined;
  }
  const ids = (allowed ?? '').split(',').flatMap((part) => {
    const [from, to = from] = part.split('-').map(Number);
    return Array.from({ length: to - from + 1 }, (_, k) => from + k);
  });
  if (ids.length < 2 || ids.some((id) => !Number.isInteger(id)) || !which('taskset')) return undefined;
  const half = ids.length >> 1;
  return { contender: ids.slice(0, half).join(','), storage: ids.slice(half).join(','), all: ids.join(',') };
}

/**
 * Where the sandbox keeps what it receives: a memory file system (/dev/shm) when it has room for the largest
 * upload. On this VM, the storage host's writes into ext4's page cache (copy_folio_from_iter_atomic) took from
 * 3 % to 27 % of its CPU from one run to the next, and made the upload's figure bimodal (2.9 s or 4.1 s for 1 GiB
 * of the same bds).
 */
export function sandboxRoot(largest, dataFiles) {
  try {
    const { bavail, bsize } = fs.statfsSync('/dev/shm');
    // tmpfs says how large it may grow, not how much memory is free: the data files must stay in the page cache.
    const available = Number(/MemAvailable:\s+(\d+)/.exec(fs.readFileSync('/proc/meminfo', 'utf8'))?.[1]) * 1024;
    const needed = largest * 1.25 + 256 * 2 ** 20;
    if (bavail * bsize > needed && available > needed + dataFiles + 2 ** 30) return '/dev/shm';
  } catch {
    // no /dev/shm or /proc/meminfo
  }
  return DATA;
}

/** Removes the sandbox folders of earlier bench runs that died before they could (their process is gone). */
export function removeStaleSandboxes() {
  for (const root of ['/dev/shm', DATA]) {
    let names = [];
    try {
      names = fs.readdirSync(root);
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = Number(/^bds-bench-sandbox-(\d+)$/.exec(name)?.[1]);
      if (!pid || alive(pid)) continue;
      fs.rmSync(path.join(root, name), { recursive: true, force: true });
      log(`removed ${path.join(root, name)}, left by a bench run that ended without cleaning up`);
    }
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * A key and a self-signed certificate for 127.0.0.1 in `dir` (key.pem, cert.pem), made for this run: the
 * storage host's, trusted by bds (NODE_EXTRA_CA_CERTS) and curl (--cacert) alone.
 */
export function selfSignedCertificate(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const made = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=bds bench storage',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      path.join(dir, 'key.pem'),
      '-out',
      path.join(dir, 'cert.pem'),
    ],
    { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] },
  );
  if (made.status !== 0) throw new Error(`openssl req could not make the storage host's certificate: ${made.stderr}`);
  return dir;
}
