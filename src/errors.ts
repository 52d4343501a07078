// Every failure bds reports is one of these; src/main.ts turns them into exit codes in one place.

export const EXIT = {
  ok: 0,
  internal: 1,
  usage: 2,
  auth: 3,
  refused: 4,
  network: 5,
  locked: 6,
  sigint: 130,
  sigterm: 143,
} as const;

export abstract class BdsError extends Error {
  abstract readonly exitCode: number;
  /** A second line that tells the user what to do about it. */
  readonly hint: string | undefined;

  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.hint = options.hint;
  }
}

/** A bug in bds: anything thrown that is not one of the errors below. */
export class InternalError extends BdsError {
  readonly exitCode = EXIT.internal;
}

/** Bad flags, settings or input files; nothing that creates anything was sent. */
export class UsageError extends BdsError {
  readonly exitCode = EXIT.usage;
}

/** No key, a malformed key, or 401/403 from the API. */
export class AuthError extends BdsError {
  readonly exitCode = EXIT.auth;
}

/** What identifies one HTTP exchange in an error; the URL is already redacted. */
export interface RequestInfo {
  method: string;
  url: string;
  status?: number;
  requestId?: string;
}

/** The API or the storage host refused the request (4xx), or the API answered with a redirect. */
export class ApiError extends BdsError {
  readonly exitCode = EXIT.refused;
  /** The exchange that was refused; none when bds itself refused on what the API said earlier. */
  readonly request: RequestInfo | undefined;
  /** `error.code` from the body, when the service sent one. */
  readonly code: string | undefined;

  constructor(message: string, request?: RequestInfo, options: { code?: string; hint?: string } = {}) {
    super(message, options);
    this.request = request;
    this.code = options.code;
  }

  get status(): number | undefined {
    return this.request?.status;
  }
}

/** Network or server failure after retries, or a response that makes no sense. */
export class NetworkError extends BdsError {
  readonly exitCode = EXIT.network;
  readonly request: RequestInfo | undefined;

  constructor(message: string, request?: RequestInfo, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options);
    this.request = request;
  }
}

/** Another bds process holds the lock for this delivery. */
export class LockedError extends BdsError {
  readonly exitCode = EXIT.locked;
}

/** SIGINT or SIGTERM arrived; whatever was in flight was aborted and the record saved. */
export class InterruptedError extends BdsError {
  readonly exitCode: number;
  readonly signal: 'SIGINT' | 'SIGTERM';

  constructor(signal: 'SIGINT' | 'SIGTERM') {
    super(`interrupted by ${signal}`, { hint: 'run the same command again to resume this delivery' });
    this.signal = signal;
    this.exitCode = signal === 'SIGINT' ? EXIT.sigint : EXIT.sigterm;
  }
}
