// The tasks bds's worker threads run (worker-entry.ts serves them; InlineRunner runs them on the caller's
// thread): two kinds, both CPU-bound and independent of each other's order, so that any worker may take any task:
//   - 'lines': check a buffer of whole JSON lines (the parallel JSON Lines check, lines.ts);
//   - 'deflate': deflate one block of the parallel gzip (gzip.ts), primed with the 32 KiB before it.
// Buffers come and go as transferables: the input buffer goes back with the result, so that the thread that
// sent it can fill it again (constant memory, and no garbage left to this thread's collector, which rarely
// runs).

import v8 from 'node:v8';
import vm from 'node:vm';
import { constants as zlibConstants, deflateRawSync } from 'node:zlib';
import { checkWholeLines, type WholeLinesResult } from './jsonl.js';

export interface LinesTask {
  kind: 'lines';
  /** Whole lines in bytes [0, length) of buffer. */
  buffer: ArrayBuffer;
  length: number;
}

export interface LinesResult extends WholeLinesResult {
  /** The task's buffer, handed back for reuse. */
  buffer: ArrayBuffer;
}

export interface DeflateTask {
  kind: 'deflate';
  /** The block is [dataOffset, dataOffset + dataLength); the dictionary the dictionaryLength bytes before it. */
  buffer: ArrayBuffer;
  dataOffset: number;
  dataLength: number;
  dictionaryLength: number;
  level: number;
  /** The last block ends the deflate stream (Z_FINISH); any other ends on a byte boundary (Z_SYNC_FLUSH). */
  last: boolean;
}

export interface DeflateResult {
  /** The task's buffer, handed back for reuse. */
  buffer: ArrayBuffer;
  /** Raw deflate data, the whole ArrayBuffer (exactly its length). */
  output: ArrayBuffer;
}

export type Task = LinesTask | DeflateTask;
export interface TaskResults {
  lines: LinesResult;
  deflate: DeflateResult;
}
export type TaskResult = TaskResults[Task['kind']];

/** The thread that sends a task (the pass thread, or the caller's for openUpload's gzip) to a worker. */
export interface TaskMessage {
  id: number;
  task: Task;
}
/** Worker to that thread: a result, or what the task threw. */
export type ReplyMessage =
  { id: number; result: TaskResult } | { id: number; error: { name: string; message: string; stack?: string } };

export function runTask(task: Task): TaskResult {
  switch (task.kind) {
    case 'lines': {
      const result = checkWholeLines(new Uint8Array(task.buffer, 0, task.length));
      return { ...result, buffer: task.buffer };
    }
    case 'deflate': {
      const data = new Uint8Array(task.buffer, task.dataOffset, task.dataLength);
      const deflated = deflateRawSync(data, {
        level: task.level,
        // Exactly 32 KiB (or nothing for the first block): deflate's window, so the block compresses as if
        // the stream had run through it, which is what makes the blocks join into one deflate stream.
        ...(task.dictionaryLength > 0
          ? { dictionary: new Uint8Array(task.buffer, task.dataOffset - task.dictionaryLength, task.dictionaryLength) }
          : {}),
        finishFlush: task.last ? zlibConstants.Z_FINISH : zlibConstants.Z_SYNC_FLUSH,
      });
      return { buffer: task.buffer, output: ownArrayBuffer(deflated) };
    }
    default:
      throw new Error(`unknown task kind: ${(task as { kind: unknown }).kind}`);
  }
}

/**
 * Constant memory. deflateRawSync leaves zlib's output buffers behind (16 KiB ones: the result itself moves
 * to the thread that asked). V8 collects such memory, outside its heap, only once about 64 MB of it has
 * piled up since the last collection, and this thread allocates next to nothing else that would trigger one sooner:
 * each worker would float up to 64 MB (measured: +55 MB RSS with 2 workers gzipping 300 MB). A full
 * collection of this small heap (a millisecond or so) every COLLECT_EVERY bytes of such garbage keeps it
 * low. The gc hook needs V8's expose-gc flag, set here at first use and in a worker thread only; without it
 * the work runs as well, only with more memory.
 */
const COLLECT_EVERY = 16 << 20;
/** What a deflate leaves beyond its output, at most: zlib's first output buffer (Z_DEFAULT_CHUNK). */
export const ZLIB_CHUNK = 16 << 10;
let garbage = 0;
let collector: (() => void) | null | undefined;
/** Counts what a deflate left behind; collects every COLLECT_EVERY bytes. Worker threads only. */
export function leftBehind(bytes: number): void {
  garbage += bytes;
  if (garbage < COLLECT_EVERY) return;
  garbage = 0;
  if (collector === undefined) {
    try {
      v8.setFlagsFromString('--expose-gc');
      collector = vm.runInNewContext('gc') as () => void;
    } catch {
      collector = null;
    }
  }
  collector?.();
}

/**
 * The bytes as an ArrayBuffer of their own, fit to transfer: zlib's result usually is one, but a small
 * one may be a slice of Node's shared Buffer pool, which cannot be transferred (and must not be detached).
 */
function ownArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) {
    return bytes.buffer;
  }
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy.buffer;
}

export function transferables(result: TaskResult): ArrayBuffer[] {
  return 'output' in result ? [result.buffer, result.output] : [result.buffer];
}
