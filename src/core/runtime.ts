// What the core needs from the machine it runs on, handed in rather than read from `process`: the CLI builds
// one from the real process (bin/bds.js), the library from its options and the process's defaults, tests
// their own (instant sleeps, short timeouts, a private HOME).

import type { HttpTuning } from './api/http.js';
import type { Platform } from './platform.js';

export type Env = Readonly<Record<string, string | undefined>>;

export interface Runtime {
  env: Env;
  cwd: string;
  homedir: string;
  /** The system (process.platform): its folders, path rules, file modes and signals. */
  platform: Platform;
  hostname: string;
  pid: number;
  /**
   * Who runs bds (process.getuid()); undefined where the system has no uids. A config file the search finds
   * that belongs to another user (not root) is passed over.
   */
  uid?: number | undefined;
  now: () => Date;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  /** Whether a process with this pid is running (for stale locks); when the system cannot tell, true. */
  isProcessAlive: (pid: number) => boolean;
  /**
   * When a running process started (ms since the epoch), where the system tells, or at least not before (the
   * boot): a lock's pid may be reused.
   */
  processStartedAt?: (pid: number) => number | undefined;
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
