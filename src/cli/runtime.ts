// What the CLI receives from the process instead of touching `process`: the core's Runtime, plus the streams and
// the interrupt signal. bin/bds.js builds one from the real process; tests build their own (fake TTYs, instant
// sleeps, short timeouts, a private HOME).

import type { EventListener } from '../core/events.js';
import type { Runtime } from '../core/runtime.js';

export interface OutputStream {
  write(chunk: string): boolean;
  isTTY?: boolean;
  columns?: number;
  rows?: number;
}

/** Standard input: a terminal to ask on, or a pipe (`bds login --with-key < key.txt`). */
export type InputStream = NodeJS.ReadableStream & { isTTY?: boolean };

export interface CliRuntime extends Runtime {
  stdout: OutputStream;
  stderr: OutputStream;
  /** Read only by the commands that ask for something (login); none in most tests. */
  stdin?: InputStream;
  /** Aborted on SIGINT, SIGTERM or SIGHUP (and SIGBREAK on Windows); its reason is the InterruptedError to report. */
  signal: AbortSignal;
  /** Sees every event of the run as well (the benchmark times the phases of a delivery with it). */
  observe?: EventListener;
  /**
   * Once stdout has taken what was written: the error that kept the result from being written (a full disk),
   * if any; a reader that went away is none.
   */
  resultWritten?: () => Promise<Error | undefined>;
}
