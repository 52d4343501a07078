// A local emulator of the Batch Delivery Service: the API on one port, the storage host on another.
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { handleControl } from './control.js';
import { FaultInjector } from './faults.js';
import type { RecordedRequest } from './http.js';
import { SANDBOX_KEYS, createApiServer } from './server.js';
import { createStorageServer } from './storage.js';
import { SandboxStore, type ReviewMode, type ReviewStatus } from './store.js';
import { DEFAULT_MAX_UPLOAD_BYTES } from './upload.js';

export { SANDBOX_KEYS } from './server.js';
export { FaultInjector, ROUTE_NAMES } from './faults.js';
export type { Fault, RouteName } from './faults.js';
export { RECEIVED_SLOT_MS } from './http.js';
export type { RecordedRequest } from './http.js';
export { SandboxStore } from './store.js';
export type { BatchRecord, ReviewMode, ReviewStatus, SourceRecord, UploadRecord } from './store.js';

export interface EmulatorOptions {
  /** Default '127.0.0.1'. */
  host?: string;
  /** API port; default 0 (a random free port). */
  port?: number;
  /** Storage host port; default 0 (a random free port). */
  storagePort?: number;
  /** Keep uploads and state.json here, reloaded on start; default a fresh temp dir, deleted on close, state in memory. */
  dataDir?: string;
  /** Lifetime of signed upload URLs; default 3600. */
  uploadTtlSeconds?: number;
  /** The largest body one upload may carry, refused before it is read (400 EntityTooLarge); default 5 GiB. */
  maxUploadBytes?: number;
  /** Default true. */
  honourIdempotencyKey?: boolean;
  /** Default 'storage'; 'api' puts the upload URL on the API's own origin (which needs the bearer key). */
  uploadOrigin?: 'storage' | 'api';
  /**
   * The origins upload URLs name, when clients reach the sandbox by other names (through a proxy and a TLS
   * front, as in bds's proxy tests); default where each server listens.
   */
  publicUrls?: { api?: string; storage?: string };
  /** Clock in ms; default Date.now. Tests move it to expire URLs or to judge "future period". */
  now?: () => number;
  /** The sandbox's own review of received batches; default 'none' (they stay received until a test decides). */
  review?: ReviewMode;
  /** accept or reject: how long after it was received a batch is decided, in ms; default 10 s. */
  reviewAfter?: number;
  /** Added to the clock in every answer's `Date` header: a server whose clock is off (bds doctor warns). */
  clockSkewMs?: number;
}

export interface Sandbox {
  /** e.g. http://127.0.0.1:41234, no trailing slash. */
  baseUrl: string;
  storageUrl: string;
  keys: { live: string; test: string; revoked: string };
  store: SandboxStore;
  faults: FaultInjector;
  /** Every request either server received, in order (control requests excepted). */
  requests: RecordedRequest[];
  /** Decides one received batch's review (as POST /_sandbox/batches/<id>/review does); throws for another. */
  review(id: string, status: ReviewStatus): void;
  /** Closes both servers, destroys open sockets (hung ones too), removes the temp dir. */
  close(): Promise<void>;
}

/** How long after it was received the sandbox's own review decides a batch, unless told otherwise. */
export const DEFAULT_REVIEW_AFTER_MS = 10_000;

export async function startSandbox(options: EmulatorOptions = {}): Promise<Sandbox> {
  if (options.review !== undefined && !['accept', 'reject', 'none'].includes(options.review)) {
    throw new TypeError(`review must be accept, reject or none, not ${String(options.review)}`);
  }
  if (options.reviewAfter !== undefined && !(Number.isFinite(options.reviewAfter) && options.reviewAfter >= 0)) {
    throw new TypeError(`reviewAfter must be a number of milliseconds, not ${String(options.reviewAfter)}`);
  }
  const maxUploadBytes = options.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES;
  if (!(Number.isSafeInteger(maxUploadBytes) && maxUploadBytes >= 0)) {
    throw new TypeError(`maxUploadBytes must be a number of bytes, not ${String(options.maxUploadBytes)}`);
  }
  const host = options.host ?? '127.0.0.1';
  const now = options.now ?? Date.now;
  const dir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'bds-sandbox-'));
  const store = new SandboxStore(dir, options.dataDir !== undefined, now);
  const faults = new FaultInjector();
  const requests: RecordedRequest[] = [];
  const closing = new AbortController();
  /** Where the servers listen, and the origins upload URLs name. */
  const listening = { base: '', storage: '' };
  const urls = { base: '', storage: '' };

  const storageServer = createStorageServer({
    store,
    faults,
    requests,
    closing: closing.signal,
    now,
    maxUploadBytes,
  });
  const apiServer = createApiServer(
    {
      store,
      faults,
      requests,
      closing: closing.signal,
      now,
      uploadTtlSeconds: options.uploadTtlSeconds ?? 3600,
      maxUploadBytes,
      honourIdempotencyKey: options.honourIdempotencyKey ?? true,
      uploadOrigin: options.uploadOrigin ?? 'storage',
      review: { mode: options.review ?? 'none', afterMs: options.reviewAfter ?? DEFAULT_REVIEW_AFTER_MS },
      urls,
    },
    (req, res, url) => handleControl(store, faults, req, res, url),
  );

  const servers = [apiServer, storageServer];
  const skew = options.clockSkewMs;
  if (skew) {
    // First of the request listeners, so that the header is set before any route answers.
    for (const server of servers)
      server.prependListener('request', (_req, res) => res.setHeader('date', new Date(now() + skew).toUTCString()));
  }
  try {
    listening.base = await listen(apiServer, host, options.port ?? 0);
    listening.storage = await listen(storageServer, host, options.storagePort ?? 0);
    urls.base = options.publicUrls?.api ?? listening.base;
    urls.storage = options.publicUrls?.storage ?? listening.storage;
  } catch (error) {
    await closeServers(servers);
    if (options.dataDir === undefined) fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  let closed: Promise<void> | undefined;
  return {
    baseUrl: listening.base,
    storageUrl: listening.storage,
    keys: SANDBOX_KEYS,
    store,
    faults,
    requests,
    review: (id, status) => store.review(id, status),
    close() {
      closed ??= (async () => {
        closing.abort();
        await closeServers(servers);
        if (options.dataDir === undefined) fs.rmSync(dir, { recursive: true, force: true });
      })();
      return closed;
    },
  };
}

function listen(server: Server, host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      resolve(`http://${advertisedHost(address)}:${address.port}`);
    });
  });
}

/**
 * The host to put in URLs: an unspecified address (0.0.0.0, ::) accepts connections on every address but
 * names none, and bds sends its key over http:// only to loopback; this machine's loopback address works.
 */
function advertisedHost(address: AddressInfo): string {
  if (address.address === '0.0.0.0') return '127.0.0.1';
  if (address.address === '::') return '[::1]';
  return address.family === 'IPv6' ? `[${address.address}]` : address.address;
}

async function closeServers(servers: Server[]): Promise<void> {
  await Promise.all(
    servers.map(
      (server) =>
        new Promise<void>((resolve) => {
          if (!server.listening) return resolve();
          server.close(() => resolve());
          server.closeAllConnections(); // hung and stalled requests included
        }),
    ),
  );
}
