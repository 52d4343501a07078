// Constant memory for a thread that passes gigabytes through short-lived buffers: zlib's output of the pass,
// the file chunks of an upload.
//
// V8 frees an ArrayBuffer's memory only when a collection finds it dead, and it starts a young-generation
// collection for such memory by itself only once 32 MB of it has piled up in a thread (twice V8's default
// semi-space on 64-bit; --max-semi-space-size does not change that threshold); what survives two young
// collections moves to the old generation, which only a full collection frees (after 64 MB more). Measured on
// a bare streaming inflate: 40 MB of RSS above Node's own, on a busy machine more. A young collection (a
// scavenge: it visits only what is alive in the young generation, well under a millisecond here) every
// COLLECT_EVERY bytes of such garbage keeps the pile at COLLECT_EVERY. Whoever counts makes sure that a buffer
// is seen alive by at most one collection (it is dropped, and counted, before COLLECT_EVERY more bytes are), so
// that nothing is promoted to the old generation: a collection after each of the pass's 2 MiB chunks, of
// which up to four are alive at a time (pipeline.ts), promoted them and took a check to 150 MB.
//
// A buffer whose owner knows that nothing will read or write it again needs no collection: freeNow detaches it,
// which frees its memory at once. The pass frees zlib's output buffers so, once checked (pipeline.ts), which
// also spares the pass thread its collections. Measured (bds check of 1 GiB, 2 cores): peak RSS 90 to 93 MB →
// 86 to 88 MB; 9.5 → 8.7 s on a quiet machine, 17.4 → 16.1 s with a gzip -9 on each core (with gunzip.ts).
//
// Measured against its removal (issue 40; no collections and nothing freed early, its V8 flags unset),
// interleaved, three runs each, on two cores that other work kept at a load average of 10 to 12: peak RSS of a
// check of the bench's 1 GiB .jsonl.gz 112 to 117 MB without it against 84 to 85 MB with it, of its delivery
// 114 to 127 against 88 to 93 MB, of a delivery of its 584 MiB plain .jsonl 140 to 150 against 90 to 94 MB. The
// 100 MB of the contract's "Speed" is kept only with it, so it stays (the figures: bench/README.md).

import v8 from 'node:v8';
import vm from 'node:vm';

/** Bytes of dropped buffers between two young-generation collections. */
export const COLLECT_EVERY = 4 << 20;

type Collect = (options: { type: 'minor' }) => void;
/** The gc hook (V8's expose-gc flag, set at first use); null where it cannot be had: then memory is only less tight. */
let collect: Collect | null | undefined;

/** A young-generation collection, now; nothing where V8's gc hook cannot be had. */
export function collectYoungGeneration(): void {
  if (collect === undefined) collect = behindFlag<Collect>('--expose-gc', 'gc');
  collect?.({ type: 'minor' });
}

type Transfer = (this: ArrayBuffer, newLength: number) => ArrayBuffer;
/** ArrayBuffer.prototype.transfer (behind a V8 flag on Node 20, set at first use); null where it cannot be had. */
let transfer: Transfer | null | undefined;

/**
 * Frees the memory of `buffer` now, without a collection: the buffer is detached (transferred to an empty one),
 * and every view of it is empty from then on. Only for a buffer that nothing reads or writes again. Returns
 * false where that cannot be done; a collection then frees it, as any other.
 */
export function freeNow(buffer: ArrayBuffer): boolean {
  // Node 20's V8 has it behind a flag; the one of another context detaches a buffer of any context.
  transfer ??=
    (ArrayBuffer.prototype as { transfer?: Transfer }).transfer ??
    behindFlag<Transfer>('--harmony-rab-gsab-transfer', 'ArrayBuffer.prototype.transfer');
  if (!transfer) return false;
  transfer.call(buffer, 0);
  return true;
}

/**
 * What `expression` gives in a new context once V8's `flag` is set (a context made after the flag has what it
 * enables); null where that cannot be had.
 */
function behindFlag<T>(flag: string, expression: string): T | null {
  try {
    v8.setFlagsFromString(flag);
    return (vm.runInNewContext(expression) as T | undefined) ?? null;
  } catch {
    return null;
  }
}

/** Counts the bytes of buffers a thread dropped; collects the young generation every `every` bytes. */
export class GarbageMeter {
  private dropped = 0;

  constructor(
    private readonly every = COLLECT_EVERY,
    private readonly collectNow: () => void = collectYoungGeneration,
  ) {}

  add(bytes: number): void {
    this.dropped += bytes;
    if (this.dropped < this.every) return;
    this.dropped = 0;
    this.collectNow();
  }
}
