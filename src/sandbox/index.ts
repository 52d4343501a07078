// The sandbox as a seller's pipeline tests use it (`import { startSandbox } from '@batch-delivery/bds/sandbox'`):
// the whole API on a local port, with a source registered and ready to deliver to.

import {
  startSandbox as startEmulator,
  type Sandbox as Emulator,
  type ReviewMode,
  type ReviewStatus,
} from './emulator.js';

export type { ReviewMode, ReviewStatus } from './emulator.js';

export interface SandboxOptions {
  /** Default 0: a free port. The storage host listens on the next one (or on a free one for port 0). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Keep sources, batches and uploads in this folder across restarts; default a temp folder removed on close. */
  dataDir?: string;
  /**
   * The review of received batches, so that `bds status` and `--wait` can be tried: 'accept' or 'reject' puts a
   * received batch in review at once and decides it `reviewAfter` later; default 'none', it stays received
   * until `review()` decides.
   */
  review?: ReviewMode;
  /** In ms; default 10 s. */
  reviewAfter?: number;
  /**
   * The largest file one upload may carry, in bytes; default 5 GiB, real storage's limit on one PUT. A larger one
   * is refused from its Content-Length, before its body is read (400 EntityTooLarge, as S3 answers).
   */
  maxUploadSize?: number;
  /** Puts the server's clock this far off in its `Date` header (to try `bds doctor`'s clock check); default 0. */
  clockSkewMs?: number;
}

export interface Sandbox {
  /** e.g. http://127.0.0.1:41234 */
  baseUrl: string;
  storageUrl: string;
  /** A live-mode and a test-mode key the sandbox accepts. */
  keys: { live: string; test: string };
  /** A source registered at start (with dataDir, the first one kept there). */
  sourceId: string;
  /** Decides one received batch's review: accepted, rejected or in_review; throws for a batch not received. */
  review(id: string, status: ReviewStatus): void;
  /** Stops both servers; removes the temp folder. */
  close(): Promise<void>;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const port = options.port ?? 0;
  const emulator: Emulator = await startEmulator({
    ...(options.host === undefined ? {} : { host: options.host }),
    port,
    // The next port, as the CLI's banner says; a free one where there is no next port.
    storagePort: port === 0 || port === 65535 ? 0 : port + 1,
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    ...(options.review === undefined ? {} : { review: options.review }),
    ...(options.reviewAfter === undefined ? {} : { reviewAfter: options.reviewAfter }),
    ...(options.maxUploadSize === undefined ? {} : { maxUploadBytes: options.maxUploadSize }),
    ...(options.clockSkewMs === undefined ? {} : { clockSkewMs: options.clockSkewMs }),
  });
  const source = emulator.store.sources()[0] ?? emulator.store.createSource({ name: 'sandbox demo' });
  return {
    baseUrl: emulator.baseUrl,
    storageUrl: emulator.storageUrl,
    keys: { live: emulator.keys.live, test: emulator.keys.test },
    sourceId: source.id,
    review: (id, status) => emulator.review(id, status),
    close: () => emulator.close(),
  };
}
