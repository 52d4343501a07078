// What every command receives instead of touching `process`: bin/bds.js builds one from the real process,
// tests build their own (fake TTYs, instant sleeps, short timeouts, a private HOME).

import type { HttpTuning } from './api/http.js';

export interface OutputStream {
  write(chunk: string): boolean;
  isTTY?: boolean;
  columns?: number;
}

export type Env = Readonly<Record<string, string | undefined>>;

export interface Context {
  env: Env;
  cwd: string;
  homedir: string;
  hostname: string;
  pid: number;
  stdout: OutputStream;
  stderr: OutputStream;
  /** Aborted on SIGINT/SIGTERM; its reason is the InterruptedError to report. */
  signal: AbortSignal;
  now: () => Date;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  /** Whether a process with this pid is running (for stale locks). */
  isProcessAlive: (pid: number) => boolean;
  /** Timeouts and retry policy; tests shorten them. */
  http?: Partial<HttpTuning>;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
