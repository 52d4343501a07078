// The retry policy on one screen: what is retried (network errors and 408/429/5xx answers), how long to wait
// (exponential backoff with "equal jitter", or the server's Retry-After), and when to give up.

import { NetworkError, type RequestInfo } from '../errors.js';
import { counted } from '../plural.js';

export const RETRY_STATUSES = new Set([408, 429, 500, 502, 503, 504]);

/** Network failures worth another attempt; a DNS "no such host" or a TLS failure is not. */
export const RETRY_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'BDS_IDLE_TIMEOUT',
  'BDS_DEADLINE',
]);

export interface RetryPolicy {
  baseDelayMs: number;
  maxDelayMs: number;
  /** A longer Retry-After is cut to this. */
  maxRetryAfterMs: number;
}

/** A retry about to happen, for the caller to show. */
export interface RetryNotice {
  request: RequestInfo;
  /** The attempt about to be made (2 for the first retry). */
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  reason: string;
}

/** A failure that another attempt may cure. */
export class Retryable extends Error {
  constructor(
    readonly failure: NetworkError,
    readonly retryAfterMs?: number,
  ) {
    super(failure.message);
  }
}

export interface RetryDeps {
  policy: RetryPolicy;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  now: () => number;
  signal: AbortSignal;
  onRetry?: ((notice: RetryNotice) => void) | undefined;
}

/** Runs attempt() until it succeeds, fails for good, or the attempts or the time run out. */
export async function withRetries<T>(
  deps: RetryDeps,
  info: RequestInfo,
  limits: { maxAttempts: number; maxTotalMs: number },
  attempt: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const started = deps.now();
  for (let n = 1; ; n++) {
    try {
      return await attempt(deps.signal);
    } catch (error) {
      if (!(error instanceof Retryable)) throw error;
      const delayMs = retryDelay(deps.policy, n, error.retryAfterMs, deps.random);
      const elapsed = deps.now() - started;
      if (n >= limits.maxAttempts || elapsed + delayMs > limits.maxTotalMs) {
        throw new NetworkError(
          `${error.failure.message} (gave up after ${counted(n, 'attempt')} in ${Math.round(elapsed / 1000)} s)`,
          error.failure.request,
          // A hint about the failure itself (a proxy to check) says more than the general one.
          {
            cause: error.failure.cause,
            ...(error.failure.hint
              ? { hint: error.failure.hint, about: error.failure.about }
              : { hint: 'the service or the network is failing; try again later', about: { code: 'gave_up' } }),
          },
        );
      }
      deps.onRetry?.({
        request: info,
        attempt: n + 1,
        maxAttempts: limits.maxAttempts,
        delayMs,
        reason: error.failure.message,
      });
      await deps.sleep(delayMs, deps.signal);
    }
  }
}

/** The wait before attempt n + 1: the server's Retry-After (capped), else backoff with "equal jitter". */
function retryDelay(policy: RetryPolicy, n: number, retryAfterMs: number | undefined, random: () => number): number {
  if (retryAfterMs !== undefined) return Math.round(Math.min(retryAfterMs, policy.maxRetryAfterMs));
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (n - 1));
  // At least half the backoff, so that retries never bunch up at zero.
  return Math.round(backoff / 2 + random() * (backoff / 2));
}

/** Retry-After in seconds or as an HTTP date, as a wait in ms. */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
