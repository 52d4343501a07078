// The plain API calls as use cases: whoami, listBatches, registerSource. Each resolves settings as the CLI
// does and returns the object the CLI prints with --json.

import type { BatchListEntry, BatchStatus, MeResponse, Product, Source } from './api/types.js';
import { UsageError } from './errors.js';
import { checkPeriodForm } from './preflight/period.js';
import type { Operation } from './operation.js';
import { requireSource } from './settings/settings.js';
import type { ApiClient } from './api/client.js';

/** What `bds whoami --json` prints: the API's answer, and where the settings came from. */
export type WhoamiResult = MeResponse & { baseUrl: string; keySource: string; profile: string | null };

export async function whoami(op: Operation): Promise<WhoamiResult> {
  await op.announceSettings();
  const { key, baseUrl, settings } = await op.apiAccess();
  const me = await withClient(op, (api) => api.me(op.signal));
  if (me.key.mode !== key.mode) {
    op.onEvent({
      type: 'notice',
      code: 'warning',
      message: `the key's prefix says ${key.mode} mode but the API reports ${me.key.mode} mode`,
    });
  }
  // URL.toString() adds a slash to a bare origin; show the base URL as users write it.
  return {
    ...me,
    baseUrl: baseUrl.toString().replace(/\/$/, ''),
    keySource: key.from,
    profile: settings.profile?.value ?? null,
  };
}

export interface ListOptions {
  /** Default BDS_SOURCE_ID or the config file's sourceId. */
  sourceId?: string | undefined;
  period?: string | undefined;
  product?: Product | undefined;
  status?: BatchStatus | undefined;
}

/** The source's batches, newest first; the filters other than the source apply here, on the client. */
export async function listBatches(options: ListOptions, op: Operation): Promise<{ batches: BatchListEntry[] }> {
  if (options.period !== undefined) checkPeriodForm(options.period, op.names);
  await op.announceSettings();
  const sourceId = requireSource(await op.settings());
  const batches = await withClient(op, (api) => api.listBatches(sourceId, op.signal));
  return {
    batches: batches.filter(
      (b) =>
        (options.period === undefined || b.period === options.period) &&
        (options.product === undefined || b.product === options.product) &&
        (options.status === undefined || b.status === options.status),
    ),
  };
}

export interface RegisterSourceOptions {
  name: string;
  description?: string | undefined;
}

export async function registerSource(options: RegisterSourceOptions, op: Operation): Promise<Source> {
  const name = options.name?.trim();
  if (!name) {
    throw new UsageError('missing the name (what the portal shows for this source)', {
      about: { code: 'no_source_name' },
    });
  }
  await op.announceSettings();
  const request = { name, ...(options.description === undefined ? {} : { description: options.description }) };
  return withClient(op, (api) => api.createSource(request, op.newIdempotencyKey(), op.signal));
}

async function withClient<T>(op: Operation, call: (api: ApiClient) => Promise<T>): Promise<T> {
  const api = await op.client();
  try {
    return await call(api);
  } finally {
    await api.close();
  }
}
