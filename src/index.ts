// The library: what a Node pipeline imports from '@batch-delivery/bds'. The CLI is built on the same functions,
// so a script gets the same checks, retries, records, locks and results. Importing this module does nothing by itself:
// it reads no file, sets no V8 flag, installs no signal handler and never exits the process. The process's
// environment, working folder and home are read only when a function is called, and only for what its
// options leave out.

import {
  check as checkUseCase,
  checkMany as checkManyUseCase,
  type CheckManyOptions,
  type CheckManyResult,
  type CheckOptions,
  type CheckResult,
} from './core/delivery/check.js';
import {
  deliverFolder,
  deliverMany as deliverManyUseCase,
  type DeliverManyOptions,
  type DeliverManyResult,
} from './core/delivery/deliver-run.js';
import type { DeliverOptions, DeliverResult, DryRunResult } from './core/delivery/deliver.js';
import type { EventListener } from './core/events.js';
import { abortError } from './core/errors.js';
import { type CallOptions, OPTION_NAMES, validateOptions, type OptionKind } from './core/options.js';
import { Operation } from './core/operation.js';
import type { Env } from './core/runtime.js';
import { processRuntime } from './process-runtime.js';
import * as service from './core/service.js';
import * as review from './core/status/status.js';
import type { StatusOptions, StatusResult, WaitForReviewOptions } from './core/status/status.js';
import type { ListOptions, RegisterSourceOptions, WhoamiResult } from './core/service.js';
import type { BatchListEntry, Source } from './core/api/types.js';

export {
  ApiError,
  AuthError,
  BdsError,
  EXIT_CODES,
  InternalError,
  InterruptedError,
  LockedError,
  NetworkError,
  UploadTooLargeError,
  UsageError,
} from './core/errors.js';
export type { InterruptReason, RequestInfo } from './core/errors.js';
export { RecordNotSavedError } from './core/delivery/delivery.js';
export type {
  CheckFailure,
  CheckManyOptions,
  CheckManyResult,
  CheckOptions,
  CheckResult,
} from './core/delivery/check.js';
export type { DeliverOptions, DeliverResult, DryRunResult, FailedDelivery } from './core/delivery/deliver.js';
export type { DeliverManyOptions, DeliverManyResult, MonthResult } from './core/delivery/deliver-run.js';
export type { FailureData } from './core/failure.js';
export type { SchemaChanges } from './core/delivery/plan.js';
export type { ColumnChange, ColumnDiff, ColumnEntry } from './core/preflight/columns.js';
export type { DeliveryEvent, EventListener, Notice, ReviewEvent, StateChange, Step, StepEvent } from './core/events.js';
export type { ListOptions, RegisterSourceOptions, WhoamiResult } from './core/service.js';
export type { ReviewChoices, StatusOptions, StatusResult, WaitForReviewOptions } from './core/status/status.js';
export type { FailOnState } from './core/status/ledger.js';
export type { Month, MonthState, MonthStatus } from './core/month.js';
/** The former name of Month, kept for callers that use it. */
export type { Month as Subject } from './core/month.js';
export type { BatchListEntry, BatchStatus, MeResponse, Product, Source } from './core/api/types.js';

/** What every function takes: settings not given are resolved as the CLI resolves them. */
export interface LibraryOptions {
  /** Default BDS_API_KEY, BDS_API_KEY_FILE or the config file. */
  apiKey?: string;
  /** Default BDS_BASE_URL or the config file. */
  baseUrl?: string;
  /** A profile of the config file; default BDS_PROFILE or the file's own. */
  profile?: string;
  /** A config file to use instead of searching; default BDS_CONFIG or the search. */
  config?: string;
  /** The environment the settings come from; default process.env. */
  env?: Env;
  /** Where relative paths and the config search start; default process.cwd(). */
  cwd?: string;
  /** Stops the call as Ctrl-C stops the CLI: the record is saved, the promise rejects with exit code 130. */
  signal?: AbortSignal;
  /** Typed events as the work goes: steps, upload progress, notices. */
  onEvent?: EventListener;
}

/** The options every function takes, and what each must be. */
const LIBRARY_OPTIONS: Record<keyof LibraryOptions, OptionKind> = {
  apiKey: 'string',
  baseUrl: 'string',
  profile: 'string',
  config: 'string',
  env: 'object',
  cwd: 'string',
  signal: 'signal',
  onEvent: 'function',
};

/**
 * deliver's and deliverMany's upload rate cap: bytes per second, or a string as curl writes it ("500K", "10M",
 * "1G"; K = 1024); 0 for none. Default BDS_LIMIT_RATE or the config file's limitRate.
 */
export type UploadRateOption = number | string;

/** What deliver and deliverMany take besides the folder options. */
export interface UploadOptions {
  /** Caps the upload (every month of a deliverMany together). */
  limitRate?: UploadRateOption;
}

/** The options of one folder, for check and deliver. */
const FOLDER_OPTIONS = {
  dir: 'string',
  period: 'string',
  product: 'product',
  file: 'string',
  schema: 'string',
  report: 'string',
  sourceId: 'string',
} as const;

/** deliver's and deliverMany's choices; failOn's states are checked where it is read. */
const DELIVERY_CHOICES = {
  limitRate: 'rate',
  force: 'boolean',
  dryRun: 'boolean',
  skipDelivered: 'boolean',
  wait: 'boolean',
  timeout: 'number',
  failOn: 'states',
} as const;

const STATUS_OPTIONS = {
  sourceId: 'string',
  since: 'string',
  until: 'string',
  period: 'string',
  product: 'product',
  failOn: 'states',
} as const;

/** Each call's options: one description per call, checked at the door besides those every function takes. */
const CALLS = {
  check: { kinds: FOLDER_OPTIONS, required: ['dir'] } satisfies CallOptions<CheckOptions>,
  checkMany: {
    kinds: { dirs: 'folders', product: 'product', sourceId: 'string' },
    required: ['dirs'],
  } satisfies CallOptions<CheckManyOptions>,
  deliver: {
    kinds: { ...FOLDER_OPTIONS, ...DELIVERY_CHOICES },
    required: ['dir'],
  } satisfies CallOptions<DeliverOptions & UploadOptions>,
  deliverMany: {
    kinds: { dirs: 'folders', product: 'product', sourceId: 'string', jobs: 'number', ...DELIVERY_CHOICES },
    required: ['dirs'],
  } satisfies CallOptions<DeliverManyOptions & UploadOptions>,
  whoami: { kinds: {} } satisfies CallOptions<object>,
  listBatches: {
    kinds: { sourceId: 'string', period: 'string', product: 'product', status: 'string' },
  } satisfies CallOptions<ListOptions>,
  registerSource: {
    kinds: { name: 'string', description: 'string' },
    required: ['name'],
  } satisfies CallOptions<RegisterSourceOptions>,
  status: { kinds: STATUS_OPTIONS } satisfies CallOptions<StatusOptions>,
  waitForReview: {
    kinds: { ...STATUS_OPTIONS, timeout: 'number' },
  } satisfies CallOptions<WaitForReviewOptions>,
};

/** The pre-flight of deliver, offline: no key, no base URL, no request. */
export function check(options: CheckOptions & LibraryOptions): Promise<CheckResult> {
  return withOperation('check', options, (op) => checkUseCase(options, op));
}

/**
 * Several folders, as `bds check <dir>...`: each checked in turn, one result per folder; a folder that fails is a
 * result with `ok: false` (told by an 'ended' event), and the others are still checked.
 */
export function checkMany(options: CheckManyOptions & LibraryOptions): Promise<CheckManyResult> {
  return withOperation('checkMany', options, (op) => checkManyUseCase(options, op));
}

/**
 * Checks the folder and delivers it as one batch: the object `bds deliver --json` prints. With `wait`, then waits
 * for the month's review as `waitForReview` does, and the result has `review`.
 */
export function deliver(
  options: DeliverOptions & UploadOptions & LibraryOptions & { dryRun?: false },
): Promise<DeliverResult>;
export function deliver(
  options: DeliverOptions & UploadOptions & LibraryOptions & { dryRun: true },
): Promise<DryRunResult>;
export function deliver(
  options: DeliverOptions & UploadOptions & LibraryOptions,
): Promise<DeliverResult | DryRunResult>;
export function deliver(
  options: DeliverOptions & UploadOptions & LibraryOptions,
): Promise<DeliverResult | DryRunResult> {
  return withOperation('deliver', options, async (op) => {
    const result = await deliverFolder(options, op);
    // A wait the signal stopped: the call rejects, as deliverMany's does.
    if ('review' in result && result.review === null) throw abortError(op.signal);
    return result;
  });
}

/**
 * Several folders, one per month (or per product), as `bds deliver <dir>...`: the quick checks of all first (a
 * failure rejects with a UsageError and nothing is sent), then oldest first, `jobs` at a time (default 2). A
 * month that fails does not stop the others: the result has its error, and `exit_code` is the first failed
 * month's. The signal stops every month (records saved) and rejects as `deliver` does.
 */
export async function deliverMany(
  options: DeliverManyOptions & UploadOptions & LibraryOptions,
): Promise<DeliverManyResult> {
  return withOperation('deliverMany', options, async (op) => {
    const result = await deliverManyUseCase(options, op);
    if (op.signal.aborted) throw abortError(op.signal);
    return result;
  });
}

export function whoami(options: LibraryOptions = {}): Promise<WhoamiResult> {
  return withOperation('whoami', options, (op) => service.whoami(op));
}

export function listBatches(options: ListOptions & LibraryOptions = {}): Promise<{ batches: BatchListEntry[] }> {
  return withOperation('listBatches', options, (op) => service.listBatches(options, op));
}

export function registerSource(options: RegisterSourceOptions & LibraryOptions): Promise<Source> {
  return withOperation('registerSource', options, (op) => service.registerSource(options, op));
}

/**
 * Where each month stands: the object `bds status --json` prints. A rejected or missing month does not reject:
 * `exit_code` is 7 when a month is in a state `failOn` names.
 */
export function status(options: StatusOptions & LibraryOptions = {}): Promise<StatusResult> {
  return withOperation('status', options, (op) => review.status(options, op));
}

/**
 * The same after waiting until no month shown is received or in review (`bds status --wait`): polls every 15 s,
 * backing off to 60 s, for at most `timeout` ms (default 30 minutes). `exit_code` is 7 when a month ended in a
 * state `failOn` names (default rejected), or is still pending at the timeout.
 */
export function waitForReview(options: WaitForReviewOptions & LibraryOptions = {}): Promise<StatusResult> {
  return withOperation('waitForReview', options, (op) => review.waitForReview(options, op));
}

/**
 * One call of the library: its options checked at the door (as CALLS describes them, besides those every function
 * takes), then `work` with an Operation of its own. A wrong option rejects, as every failure does, with a UsageError.
 */
async function withOperation<T>(
  call: keyof typeof CALLS,
  options: LibraryOptions & { sourceId?: string | undefined; limitRate?: UploadRateOption | undefined },
  work: (op: Operation) => Promise<T>,
): Promise<T> {
  const described: { kinds: Record<string, OptionKind>; required?: readonly string[] } = CALLS[call];
  validateOptions(call, options, { ...LIBRARY_OPTIONS, ...described.kinds }, described.required);
  const runtime = processRuntime(options);
  // Inside, an abort always carries a BdsError (exit code 130), whatever reason the caller gave.
  const controller = new AbortController();
  const outer = options.signal;
  const onAbort = (): void => controller.abort(abortError(outer!));
  if (outer?.aborted) onAbort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  try {
    const flags = {
      apiKey: options.apiKey,
      baseUrl: options.baseUrl,
      profile: options.profile,
      config: options.config,
      sourceId: options.sourceId,
      // Checked as the CLI's --limit-rate is, with BDS_LIMIT_RATE and the config file's limitRate under it.
      limitRate: options.limitRate === undefined ? undefined : String(options.limitRate),
      names: OPTION_NAMES,
    };
    return await work(new Operation(runtime, flags, { signal: controller.signal, onEvent: options.onEvent }));
  } finally {
    outer?.removeEventListener('abort', onAbort);
  }
}
