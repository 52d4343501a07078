// Every failure bds reports is one of these; each carries its exit code, and the CLI turns them into exit codes
// in one place (src/cli/run-command.ts). The key never appears in any of them.

import type { NamedOption } from './option-names.js';
import type { Platform } from './platform.js';

export const EXIT_CODES = {
  ok: 0,
  internal: 1,
  usage: 2,
  auth: 3,
  refused: 4,
  network: 5,
  locked: 6,
  /** `status` (or `deliver --wait`): a month in a state --fail-on names, or still pending when the wait timed out. */
  status: 7,
  sighup: 129,
  sigint: 130,
  sigterm: 143,
} as const;

/** What identifies one HTTP exchange in an error; the URL is already redacted. */
export interface RequestInfo {
  method: string;
  url: string;
  status?: number;
  requestId?: string;
}

/**
 * What a failure is about, as data: for a program that reacts to it (a library caller), and for the words a person
 * at the command line reads besides the message, which already names each option as the door does
 * (core/option-names.ts): a command to run, a usage syntax, a folder's failure. src/cli/output/error-words.ts adds
 * them by code.
 */
export type ErrorAbout =
  /** The value of this option is wrong (`period 2024-13 is not ...`). */
  | { code: 'option_value'; option: NamedOption }
  /** Options given without the one they go with. */
  | { code: 'goes_with'; options: NamedOption[]; needs: NamedOption }
  /** An option given with others it excludes. */
  | { code: 'options_conflict'; option: NamedOption; with: NamedOption[] }
  | { code: 'no_period' }
  | { code: 'periods_in_name' }
  | { code: 'no_data_file' }
  | { code: 'data_files' }
  | { code: 'product_unknown' }
  | { code: 'no_source_name' }
  | { code: 'since_after_until'; since: string; until: string }
  | { code: 'no_first_month' }
  | { code: 'earliest_after_until'; earliest: string; until: string }
  /** With several folders, one whose name holds no period. */
  | { code: 'no_period_in_name' }
  /** One folder of several failed its checks: its error, said with the folder. */
  | { code: 'folder_failed'; dir: string; error: ErrorText }
  /** A month of several kept from starting (an abort, a refused key): the error that kept it, with its words. */
  | { code: 'not_started'; error: ErrorText }
  /** Several folders failed their checks (`total`: how many were given). */
  | { code: 'folders_failed'; total: number; failures: Array<ErrorText & { dir: string }> }
  /** The data file changed during the delivery. */
  | { code: 'file_changed' }
  /** The batch was created but its record could not be saved. */
  | { code: 'record_not_saved' }
  /** The month was delivered from another file; `alone`: this folder as named, when it is one of several. */
  | { code: 'delivered_elsewhere'; alone: string | undefined }
  /** The data file is another month's: `dir` names this folder, for `period`; `several`: one of several. */
  | { code: 'same_file'; dir: string; period: string; several: boolean }
  /** The data file is larger than the storage host takes in one upload (sizes in bytes; `gzipped`: bds gzipped it). */
  | { code: 'upload_too_large'; file: string; gzipped: boolean; size: number; limit: number | undefined }
  | { code: 'no_api_key' }
  | { code: 'no_source' }
  | { code: 'internal' }
  /** The API answered with a redirect: the base URL is not the API's. */
  | { code: 'redirected' }
  /** Retries ran out on a failure with no hint of its own. */
  | { code: 'gave_up' }
  // doctor's findings (DoctorFinding's `about`):
  | { code: 'unknown_source' }
  | { code: 'unfinished_delivery' }
  | { code: 'temp_copies_left' }
  | { code: 'host_not_found' }
  | { code: 'not_reachable' };

/** An error's words and what it is about, as data (inside another error's `about`, or a result's failure). */
export interface ErrorText {
  message: string;
  hint: string | undefined;
  about: ErrorAbout | undefined;
}

export interface BdsErrorOptions {
  hint?: string | undefined;
  about?: ErrorAbout | undefined;
  cause?: unknown;
  /** The HTTP exchange the failure comes from, whatever the error's class. */
  request?: RequestInfo | undefined;
}

export abstract class BdsError extends Error {
  abstract readonly exitCode: number;
  /** A second line that tells the user what to do about it. */
  readonly hint: string | undefined;
  /** For a failure that comes from an HTTP exchange (an answer, or none): which one; else undefined. */
  readonly request: RequestInfo | undefined;
  /** What it is about, for a caller that words it its own way; undefined where the message says it all. */
  readonly about: ErrorAbout | undefined;

  constructor(message: string, options: BdsErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.hint = options.hint;
    this.request = options.request;
    this.about = options.about;
  }
}

/** A bug in bds: anything thrown that is not one of the errors below. */
export class InternalError extends BdsError {
  readonly exitCode = EXIT_CODES.internal;
}

/** Bad flags, settings or input files; nothing that creates anything was sent. */
export class UsageError extends BdsError {
  readonly exitCode = EXIT_CODES.usage;
}

/** No key, a malformed key (no `request`), or 401/403 from the API (its `request`). */
export class AuthError extends BdsError {
  readonly exitCode = EXIT_CODES.auth;
}

/** The API or the storage host refused the request (4xx), or the API answered with a redirect. */
export class ApiError extends BdsError {
  readonly exitCode = EXIT_CODES.refused;
  /** `error.code` from the body, when the service sent one. */
  readonly code: string | undefined;

  /** `request`: the exchange that was refused; none when bds itself refused on what the API said earlier. */
  constructor(
    message: string,
    request?: RequestInfo,
    options: { code?: string; hint?: string; about?: ErrorAbout } = {},
  ) {
    super(message, { ...options, request });
    this.code = options.code;
  }

  get status(): number | undefined {
    return this.request?.status;
  }
}

/**
 * The storage host refused the file as larger than one upload may carry (S3's 400 EntityTooLarge, or 413):
 * no retry can help; the service must take the file in parts. The HTTP layer knows the size alone; the delivery
 * adds which data file it is (`file`; `gzipped` when bds gzipped a plain .jsonl to send it).
 */
export class UploadTooLargeError extends ApiError {
  /** The file's size in bytes. */
  readonly size: number;
  /** The host's limit in bytes, when its answer said it. */
  readonly limit: number | undefined;

  constructor(
    size: number,
    limit: number | undefined,
    request: RequestInfo,
    file?: { path: string; gzipped: boolean },
  ) {
    const what = file ? `${file.path}${file.gzipped ? ', gzipped,' : ''} is` : 'the file is';
    const over = limit === undefined ? "the storage host's limit" : `the storage host's limit of ${limit} bytes`;
    super(
      `${what} ${size} bytes, over ${over} for one upload (${request.status}): ` +
        'the service must accept the file in parts before it can be delivered',
      request,
      {
        code: 'EntityTooLarge',
        hint:
          'bds cannot send a batch in parts: check that the file holds this month alone, or ask the Batch ' +
          'Delivery Service to raise the limit; the batch waits, and delivering again then resumes it',
        ...(file && { about: { code: 'upload_too_large', file: file.path, gzipped: file.gzipped, size, limit } }),
      },
    );
    this.size = size;
    this.limit = limit;
  }

  /** The same refusal, naming the data file it is about. */
  of(file: { path: string; gzipped: boolean }): UploadTooLargeError {
    return new UploadTooLargeError(this.size, this.limit, this.request!, file);
  }
}

/** Network or server failure after retries, or a response that makes no sense. */
export class NetworkError extends BdsError {
  readonly exitCode = EXIT_CODES.network;

  constructor(message: string, request?: RequestInfo, options: Pick<BdsErrorOptions, 'hint' | 'cause' | 'about'> = {}) {
    super(message, { ...options, request });
  }
}

/** Another bds process holds the lock for this delivery. */
export class LockedError extends BdsError {
  readonly exitCode = EXIT_CODES.locked;
}

/**
 * What stopped a run from outside: a signal to the CLI, or a library caller's AbortSignal. SIGBREAK is
 * Windows' Ctrl-Break, Ctrl-C's twin in a console: exit 130 like SIGINT.
 */
export type InterruptReason = 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'SIGBREAK' | 'abort';

const SIGNAL_EXIT_CODES = {
  SIGINT: EXIT_CODES.sigint,
  SIGTERM: EXIT_CODES.sigterm,
  SIGHUP: EXIT_CODES.sighup,
  SIGBREAK: EXIT_CODES.sigint,
};

/**
 * The signals that interrupt the CLI on this system, each with its exit code. On Windows Node emits SIGINT for
 * Ctrl-C, SIGBREAK for Ctrl-Break and SIGHUP when the console window closes; SIGTERM is never sent there, but
 * listening costs nothing. SIGBREAK exists on Windows only.
 */
export function interruptSignals(platform: Platform): Partial<Record<InterruptReason, number>> {
  const { SIGBREAK, ...elsewhere } = SIGNAL_EXIT_CODES;
  return platform === 'win32' ? { ...elsewhere, SIGBREAK } : elsewhere;
}

/** The run was stopped from outside; whatever was in flight was aborted and the record saved. */
export class InterruptedError extends BdsError {
  readonly exitCode: number;
  readonly reason: InterruptReason;

  constructor(reason: InterruptReason, hint?: string) {
    super(reason === 'abort' ? 'aborted' : `interrupted by ${reason}`, { hint });
    this.reason = reason;
    this.exitCode = reason === 'abort' ? EXIT_CODES.sigint : SIGNAL_EXIT_CODES[reason];
  }
}

/** The error an aborted signal stands for: its reason when that is one of ours, else an InterruptedError. */
export function abortError(signal: AbortSignal): BdsError {
  return signal.reason instanceof BdsError ? signal.reason : new InterruptedError('abort');
}

/** Anything thrown, as a BdsError: one of ours as it is; anything else is a bug in bds, with its stack kept. */
export function toBdsError(thrown: unknown): BdsError {
  if (thrown instanceof BdsError) return thrown;
  const wrapped = new InternalError(`internal error: ${thrown instanceof Error ? thrown.message : String(thrown)}`, {
    hint: 'this is a bug in bds; please report it with what led to it',
    about: { code: 'internal' },
  });
  if (thrown instanceof Error && thrown.stack) wrapped.stack = thrown.stack;
  return wrapped;
}
