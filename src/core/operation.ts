// What one call of the core (deliver, check, whoami, ...) carries: the machine it runs on (the Runtime), the
// settings it resolves once (flags > environment > config file), API access checked before anything is sent,
// where its events go, and the signal that stops it. The CLI makes one per command, the library one per call.

import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { ApiClient } from './api/client.js';
import type { HttpTuning } from './api/http.js';
import { canonicalApi } from './api/url-rules.js';
import type { EventListener } from './events.js';
import type { Month } from './month.js';
import type { OptionNames } from './option-names.js';
import type { Runtime } from './runtime.js';
import {
  baseUrlSettings,
  requireApiKey,
  requireBaseUrl,
  resolveSettings,
  type ApiKey,
  type Settings,
  type SettingsFlags,
} from './settings/settings.js';
import { clientHeader } from './version.js';

export interface ApiAccess {
  key: ApiKey;
  baseUrl: URL;
  /** The base URL in canonical form: what delivery records and locks are keyed by. */
  api: string;
  settings: Settings;
}

export interface OperationSetup {
  /** Stops the operation: Ctrl-C in the CLI, the caller's AbortSignal in the library. */
  signal: AbortSignal;
  onEvent?: EventListener | undefined;
  /** One line per HTTP exchange, already redacted (--verbose). */
  log?: ((line: string) => void) | undefined;
  /** Sees every event as well, whatever listener a derived operation has (the benchmark times phases with it). */
  observe?: EventListener | undefined;
  /** Told the key as soon as the settings name one, so that whatever prints can hide it. */
  onSecret?: ((secret: string) => void) | undefined;
}

/** What operations derived from one another share: the settings are resolved once. */
interface Resolved {
  settings?: Promise<Settings>;
  access?: ApiAccess;
}

export class Operation {
  readonly signal: AbortSignal;
  readonly onEvent: EventListener;
  readonly log: ((line: string) => void) | undefined;

  constructor(
    readonly runtime: Runtime,
    /** The settings given by the caller (flags, library options); the rest comes from environment and config file. */
    readonly flags: SettingsFlags,
    private readonly options: OperationSetup,
    private readonly resolved: Resolved = {},
  ) {
    this.signal = options.signal;
    const { onEvent = () => {}, observe } = options;
    this.onEvent = observe
      ? (event) => {
          observe(event);
          onEvent(event);
        }
      : onEvent;
    this.log = options.log;
  }

  /** What the caller calls the settings and options it gives, for messages. */
  get names(): OptionNames {
    return this.flags.names;
  }

  /** The same call with other settings flags, resolved afresh (`bds login`: the key just typed). */
  withFlags(flags: Omit<SettingsFlags, 'names'>): Operation {
    return new Operation(this.runtime, { ...this.flags, ...flags }, this.options);
  }

  /** The same operation (settings, signal) with another listener or log: a month of several, say. */
  with(changes: Pick<OperationSetup, 'onEvent' | 'log'>): Operation {
    return new Operation(this.runtime, this.flags, { ...this.options, ...changes }, this.resolved);
  }

  /** Settings from flags, environment and config file, resolved once. */
  settings(): Promise<Settings> {
    this.resolved.settings ??= resolveSettings(this.flags, this.runtime).then((settings) => {
      if (settings.apiKey) this.options.onSecret?.(settings.apiKey.value);
      return settings;
    });
    return this.resolved.settings;
  }

  /** The settings' warnings, as events: said once, by the use case that resolved them. */
  async announceSettings(): Promise<void> {
    for (const { message, hint } of (await this.settings()).warnings) {
      this.onEvent({ type: 'notice', code: 'warning', message: `${message}; ${hint}` });
    }
  }

  /** The key and base URL, after their checks (nothing is sent before). */
  async apiAccess(): Promise<ApiAccess> {
    if (!this.resolved.access) {
      const settings = await this.settings();
      const baseUrl = requireBaseUrl(settings);
      const key = requireApiKey(settings);
      this.resolved.access = { key, baseUrl, api: canonicalApi(baseUrl), settings };
    }
    return this.resolved.access;
  }

  /**
   * A new API client whose retries become notices about `subject` (a delivery's period and product); the caller
   * closes it. `tuning` shortens the retries where waiting is not worth it (doctor). The HTTP layer (undici, 20 MB
   * of memory) loads here, at the first request: a check never loads it, and a delivery only after the pass over
   * its data file.
   */
  async client(subject: Partial<Month> = {}, tuning: Partial<HttpTuning> = {}): Promise<ApiClient> {
    const { key, baseUrl } = await this.apiAccess();
    const [{ ApiClient }, { HttpClient }] = await Promise.all([import('./api/client.js'), import('./api/http.js')]);
    const { runtime } = this;
    return new ApiClient(
      new HttpClient({
        baseUrl,
        baseUrlSettings: baseUrlSettings(this.names),
        apiKey: key.key,
        clientHeader: clientHeader(runtime.hostname),
        env: runtime.env,
        tuning: { ...tuning, ...runtime.http },
        sleep: runtime.sleep,
        random: runtime.random,
        now: () => runtime.now().getTime(),
        signal: this.signal,
        log: this.log,
        onRetry: ({ request, attempt, maxAttempts, delayMs, reason }) =>
          this.onEvent({
            type: 'notice',
            code: 'retry',
            ...subject,
            method: request.method,
            url: request.url,
            attempt,
            maxAttempts,
            delayMs,
            reason,
          }),
      }),
    );
  }

  newIdempotencyKey(): string {
    return randomUUID();
  }

  /**
   * Where a gzipped copy of a plain .jsonl goes: TMPDIR on every system, else where os.tmpdir() looks, read
   * from the Runtime's environment (on Windows TEMP, then TMP).
   */
  tempDir(): string {
    const { env, platform } = this.runtime;
    return env.TMPDIR || (platform === 'win32' ? env.TEMP || env.TMP : undefined) || os.tmpdir();
  }
}
