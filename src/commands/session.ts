// What a command works with: its output, its settings and, when it needs one, an API client. Heavy modules
// (cosmiconfig, undici) load only here, on first use, so that --help and --version stay quick.

import { randomUUID } from 'node:crypto';
import type { Context } from '../context.js';
import type { ApiClient } from '../api/client.js';
import { IO } from '../output/io.js';
import { formatDuration } from '../output/format.js';
import type { ApiKey, Settings, SettingsFlags } from '../settings/settings.js';
import { clientHeader } from '../version.js';

/** Options every command takes. */
export interface CommonOptions extends SettingsFlags {
  json?: boolean;
  quiet?: boolean;
  verbose?: boolean;
  color?: boolean;
}

export interface Connection {
  api: ApiClient;
  key: ApiKey;
  baseUrl: URL;
  settings: Settings;
}

export class Session {
  readonly ctx: Context;
  readonly io: IO;
  readonly options: CommonOptions;
  private settingsPromise: Promise<Settings> | undefined;
  private api: ApiClient | undefined;

  constructor(ctx: Context, options: CommonOptions) {
    this.ctx = ctx;
    this.options = options;
    this.io = new IO({
      stdout: ctx.stdout,
      stderr: ctx.stderr,
      env: ctx.env,
      now: ctx.now,
      flags: {
        json: options.json === true,
        quiet: options.quiet === true,
        verbose: options.verbose === true,
        color: options.color !== false,
      },
    });
  }

  /** Settings from flags, environment and config file; their warnings are shown once. */
  settings(): Promise<Settings> {
    this.settingsPromise ??= (async () => {
      const { resolveSettings } = await import('../settings/settings.js');
      const settings = await resolveSettings(this.options, {
        env: this.ctx.env,
        cwd: this.ctx.cwd,
        homedir: this.ctx.homedir,
      });
      if (settings.apiKey) this.io.addSecret(settings.apiKey.value);
      for (const warning of settings.warnings) this.io.warn(warning);
      return settings;
    })();
    return this.settingsPromise;
  }

  /** The API client, after the key and base URL have passed their checks (nothing is sent before). */
  async connect(): Promise<Connection> {
    const settings = await this.settings();
    const { requireApiKey, requireBaseUrl } = await import('../settings/settings.js');
    const baseUrl = requireBaseUrl(settings);
    const key = requireApiKey(settings);
    const [{ HttpClient }, { ApiClient }] = await Promise.all([import('../api/http.js'), import('../api/client.js')]);
    const http = new HttpClient({
      baseUrl,
      apiKey: key.key,
      clientHeader: clientHeader(this.ctx.hostname),
      env: this.ctx.env,
      ...(this.ctx.http ? { tuning: this.ctx.http } : {}),
      sleep: this.ctx.sleep,
      random: this.ctx.random,
      now: () => this.ctx.now().getTime(),
      signal: this.ctx.signal,
      log: (line) => this.io.verbose(line),
      onRetry: ({ attempt, maxAttempts, delayMs, reason }) =>
        this.io.notice(`${reason}; retrying in ${formatDuration(delayMs)} (attempt ${attempt} of ${maxAttempts})`),
    });
    this.api = new ApiClient(http);
    return { api: this.api, key, baseUrl, settings };
  }

  newIdempotencyKey(): string {
    return randomUUID();
  }

  async close(): Promise<void> {
    this.io.stopSpinner();
    await this.api?.close();
  }
}
