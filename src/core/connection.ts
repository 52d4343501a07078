// Settings to API client: resolved once per run (flags > environment > config file), the key and base URL
// checked before anything is sent, and a client built for whoever asks (one per delivery, so that each has
// its own abort signal and retry notices).

import { randomUUID } from 'node:crypto';
import { ApiClient } from './api/client.js';
import { HttpClient } from './api/http.js';
import type { RetryNotice } from './api/retry.js';
import { canonicalApi } from './api/url-rules.js';
import type { Runtime } from './runtime.js';
import {
  requireApiKey,
  requireBaseUrl,
  resolveSettings,
  type ApiKey,
  type Settings,
  type SettingsFlags,
} from './settings/settings.js';
import { clientHeader } from './version.js';

export interface ClientHooks {
  signal: AbortSignal;
  onRetry?: ((notice: RetryNotice) => void) | undefined;
  /** One line per HTTP exchange, already redacted (for --verbose). */
  log?: ((line: string) => void) | undefined;
}

export interface ApiAccess {
  key: ApiKey;
  baseUrl: URL;
  /** The base URL in canonical form: what delivery records and locks are keyed by. */
  api: string;
  settings: Settings;
}

export class Connection {
  private settingsPromise: Promise<Settings> | undefined;
  private access: ApiAccess | undefined;

  constructor(
    private readonly flags: SettingsFlags,
    private readonly runtime: Runtime,
  ) {}

  /** Settings from flags, environment and config file, resolved once. */
  settings(): Promise<Settings> {
    this.settingsPromise ??= resolveSettings(this.flags, this.runtime);
    return this.settingsPromise;
  }

  /** The key and base URL, after their checks (nothing is sent before). */
  async apiAccess(): Promise<ApiAccess> {
    if (!this.access) {
      const settings = await this.settings();
      const baseUrl = requireBaseUrl(settings);
      const key = requireApiKey(settings);
      this.access = { key, baseUrl, api: canonicalApi(baseUrl), settings };
    }
    return this.access;
  }

  /** A new client; the caller closes it. */
  async client(hooks: ClientHooks): Promise<ApiClient> {
    const { key, baseUrl } = await this.apiAccess();
    const { runtime } = this;
    return new ApiClient(
      new HttpClient({
        baseUrl,
        apiKey: key.key,
        clientHeader: clientHeader(runtime.hostname),
        env: runtime.env,
        ...(runtime.http ? { tuning: runtime.http } : {}),
        sleep: runtime.sleep,
        random: runtime.random,
        now: () => runtime.now().getTime(),
        signal: hooks.signal,
        log: hooks.log,
        onRetry: hooks.onRetry,
      }),
    );
  }

  newIdempotencyKey(): string {
    return randomUUID();
  }
}
