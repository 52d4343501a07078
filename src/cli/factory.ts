// What one command invocation works with, built once and on first use: its output (io) and the operation
// that the core's use cases run with (settings, API access, events, the interrupt signal). Heavy modules
// (undici, the config loader, ora) load only here, so that --help and --version stay quick.

import type { Command } from 'commander';
import type { Connection } from '../core/connection.js';
import type { DeliveryEvent, EventListener } from '../core/delivery/events.js';
import type { Operation } from '../core/operation.js';
import type { SettingsFlags } from '../core/settings/settings.js';
import type { Context } from './context.js';
import { IO } from './output/io.js';
import { noticeText } from './output/words.js';

/** Options every command takes (and --source, which several do). */
export interface CommonOptions {
  json?: boolean;
  quiet?: boolean;
  verbose?: boolean;
  /** false with --no-color */
  color?: boolean;
  baseUrl?: string;
  config?: string;
  profile?: string;
  source?: string;
}

export class Factory {
  readonly io: IO;
  private connectionPromise: Promise<Connection> | undefined;

  constructor(
    readonly ctx: Context,
    readonly options: CommonOptions,
    /** The whole commander program, for completion scripts. */
    readonly program: Command,
  ) {
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

  /** Settings resolved once; the key, once known, is never printed, whatever prints it. */
  connection(): Promise<Connection> {
    this.connectionPromise ??= (async () => {
      const { Connection } = await import('../core/connection.js');
      const flags: SettingsFlags = {
        baseUrl: this.options.baseUrl,
        source: this.options.source,
        profile: this.options.profile,
        config: this.options.config,
      };
      const connection = new Connection(flags, this.ctx);
      const settings = await connection.settings();
      if (settings.apiKey) this.io.addSecret(settings.apiKey.value);
      return connection;
    })();
    return this.connectionPromise;
  }

  /** The operation a use case runs with; its events go to `onEvent` (by default: notices only). */
  async operation(onEvent: EventListener = this.printNotice): Promise<Operation> {
    await this.io.prepare();
    const { observe } = this.ctx;
    return {
      runtime: this.ctx,
      connection: await this.connection(),
      signal: this.ctx.signal,
      onEvent: observe
        ? (event) => {
            observe(event);
            onEvent(event);
          }
        : onEvent,
      log: (line) => this.io.verbose(line),
    };
  }

  /** For commands without a progress view: notices and warnings, nothing else. */
  readonly printNotice = (event: DeliveryEvent): void => {
    if (event.type !== 'notice') return;
    const { warning, text } = noticeText(event);
    if (warning) this.io.warn(text);
    else this.io.notice(text);
  };

  close(): void {
    this.io.stopSpinner();
  }
}
