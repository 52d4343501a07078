// The upload rate cap of one run: a token bucket shared by every upload of the run (all months, whatever --jobs),
// and the stream that lets an upload's bytes through it. Written as GCRA (the token bucket as a "theoretical
// arrival time"): each piece reserves its slot when it asks, so uploads that share the cap take turns in the order
// they asked, and a stall (a busy machine, a slow storage host) is never made up for with a burst afterwards.

import { Readable, Transform } from 'node:stream';

/** How far ahead of the cap a piece may go: the burst, as a fraction of a second of the rate. */
const BURST_SECONDS = 0.1;
/** The largest piece one wait lets through: a chunk is cut to this, so that bytes leave evenly. */
const PIECE_SECONDS = 0.05;

export interface RateClock {
  /** ms */
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export class RateLimiter {
  /** When the bytes reserved so far will have left at the cap (ms on the clock). */
  private due = Number.NEGATIVE_INFINITY;
  readonly pieceBytes: number;

  constructor(
    readonly bytesPerSecond: number,
    private readonly clock: RateClock,
  ) {
    this.pieceBytes = Math.max(1, Math.floor(bytesPerSecond * PIECE_SECONDS));
  }

  /** Resolves when `bytes` may leave; rejects when `signal` aborts. */
  async take(bytes: number, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    const now = this.clock.now();
    const start = Math.max(this.due, now);
    this.due = start + (bytes * 1000) / this.bytesPerSecond;
    const wait = start - BURST_SECONDS * 1000 - now;
    if (wait > 0) await this.clock.sleep(Math.ceil(wait), signal);
  }
}

/**
 * `source` at the limiter's pace: its chunks cut into pieces (views of the same buffer, not copies), each let
 * through when the limiter allows. Destroying the result destroys the source and stops its wait at once, as
 * `signal` does.
 */
export function throttled(source: Readable, limiter: RateLimiter, signal: AbortSignal): Readable {
  const destroyed = new AbortController();
  const stop = AbortSignal.any([signal, destroyed.signal]);
  const throttle = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      const pass = async (): Promise<void> => {
        for (let at = 0; at < chunk.length; at += limiter.pieceBytes) {
          const piece = chunk.subarray(at, at + limiter.pieceBytes);
          await limiter.take(piece.length, stop);
          this.push(piece);
        }
      };
      pass().then(() => callback(), callback);
    },
    destroy(error, callback) {
      destroyed.abort();
      source.destroy();
      callback(error);
    },
  });
  source.on('error', (error) => throttle.destroy(error));
  return source.pipe(throttle);
}
