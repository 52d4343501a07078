// What every use case (deliver, check, whoami, ...) runs with: the machine, the settings and API access, where
// its events go, and the signal that stops it. The CLI builds one per command, the library one per call.

import os from 'node:os';
import type { RetryNotice } from './api/retry.js';
import type { ClientHooks, Connection } from './connection.js';
import type { EventListener, Subject } from './delivery/events.js';
import type { Runtime } from './runtime.js';

export interface Operation {
  runtime: Runtime;
  connection: Connection;
  /** Stops the operation: Ctrl-C in the CLI, the caller's AbortSignal in the library. */
  signal: AbortSignal;
  onEvent: EventListener;
  /** One line per HTTP exchange, already redacted (--verbose). */
  log?: ((line: string) => void) | undefined;
}

/** Where a gzipped copy of a plain .jsonl goes. */
export function tempDir(runtime: Runtime): string {
  return runtime.env.TMPDIR || os.tmpdir();
}

/** The settings' warnings, as events: said once, by the operation that resolved them. */
export async function announceSettings(op: Operation): Promise<void> {
  for (const message of (await op.connection.settings()).warnings) op.onEvent({ type: 'notice', code: 'warning', message });
}

/** Hooks for an API client: its retries become notices about `subject` (a delivery's period and product). */
export function clientHooks(op: Operation, signal: AbortSignal, subject: Partial<Subject> = {}): ClientHooks {
  return {
    signal,
    log: op.log,
    onRetry: ({ request, attempt, maxAttempts, delayMs, reason }: RetryNotice) =>
      op.onEvent({ type: 'notice', code: 'retry', ...subject, method: request.method, url: request.url, attempt, maxAttempts, delayMs, reason }),
  };
}
