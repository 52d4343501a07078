// deliver's monitoring around the command's run (run-command.ts): the start ping before its work, then, once its
// result or error is printed, the metrics file and the end ping with the exit code and the end of the log. The
// core does the work (core/monitoring/, core/api/ping-client.ts); this says what failed, in one warning each, and never
// changes the exit code.

import { LogTail } from '../core/monitoring/log-tail.js';
import type { MonthRun } from '../core/monitoring/metrics.js';
import { updateMetricsFile } from '../core/monitoring/metrics-file.js';
import { RunPings } from '../core/monitoring/ping.js';
import type { Operation } from '../core/operation.js';
import type { Runtime } from '../core/runtime.js';
import { monitoringSettings, type Settings, type SettingsFlags } from '../core/settings/settings.js';
import { packageVersion } from '../core/version.js';
import type { IO } from './output/io.js';

export class RunMonitor {
  /** What the IO logs once a ping URL is known, for the end ping's body. */
  private readonly tail = new LogTail();
  private pings: RunPings | undefined;
  private metricsFile: string | undefined;
  /** What the command's run was about; none when it failed before it returned. */
  private months: MonthRun[] = [];

  /** `delivers`: false for a run that delivers nothing (a dry run), which leaves the metrics file alone. */
  constructor(private readonly delivers: boolean) {}

  /**
   * Before the command's work: the ping URL and metrics file from the settings (from flags and environment
   * alone when the config file cannot be read, whose error the run then reports), and the start ping. A ping
   * URL that is no http(s) URL is a usage error.
   */
  async start(op: Operation, io: IO, flags: SettingsFlags): Promise<void> {
    let settings: Pick<Settings, 'pingUrl' | 'metricsFile'>;
    try {
      settings = await op.settings();
    } catch {
      settings = monitoringSettings(flags, op.runtime);
    }
    this.metricsFile = settings.metricsFile?.value;
    if (!settings.pingUrl) return;
    // The HTTP layer (undici, 10 MB of memory) loads only for a run that pings: a check or a delivery without a
    // ping URL loads it at its first request to the service, if any.
    const [{ parsePingUrl, PingClient }, { DEFAULT_TUNING }] = await Promise.all([
      import('../core/api/ping-client.js'),
      import('../core/api/http.js'),
    ]);
    const url = parsePingUrl(settings.pingUrl.value, settings.pingUrl.from);
    // Its path is the secret: whoever knows it can ping.
    io.addSecret(url.pathname, '/…');
    io.keepLog(this.tail);
    const { runtime } = op;
    const tuning = { ...DEFAULT_TUNING, ...runtime.http };
    const client = new PingClient({
      env: runtime.env,
      timeoutMs: tuning.pingTimeoutMs,
      connectTimeoutMs: tuning.connectTimeoutMs,
      userAgent: `bds-cli/${packageVersion()}`,
      sleep: runtime.sleep,
      now: () => runtime.now().getTime(),
      log: op.log,
    });
    this.pings = new RunPings(url, client);
    this.pings.start(op.signal);
  }

  /** The months the command's run was about (months.ts: a run that failed once months began names them too). */
  delivered(months: MonthRun[]): void {
    this.months = months;
  }

  /** After the result or the error is printed: the metrics file, then the end ping (its body tells of the file). */
  async finish(exitCode: number, io: IO, runtime: Runtime): Promise<void> {
    const { months } = this;
    if (this.metricsFile && this.delivers && months.length > 0) {
      try {
        const { pid, hostname, platform, isProcessAlive, processStartedAt } = runtime;
        const { folderNotFlushed } = await updateMetricsFile({
          file: this.metricsFile,
          runs: months,
          at: runtime.now(),
          sleep: (ms) => runtime.sleep(ms),
          self: { pid, hostname, platform, isProcessAlive, processStartedAt },
        });
        if (folderNotFlushed) {
          io.verbose(
            `the metrics file ${this.metricsFile} is written, but its folder ${folderNotFlushed.dir} could not be ` +
              `flushed to disk (${folderNotFlushed.code}): whether it survives a power cut is not known`,
          );
        }
      } catch (error) {
        io.warn(`could not write the metrics file ${this.metricsFile}: ${(error as Error).message}`);
      }
    }
    if (!this.pings) return;
    const failures = await this.pings.end(exitCode, this.tail.text());
    if (failures.length > 0) io.warn(`the monitoring ping failed (the exit code stands): ${failures.join('; ')}`);
  }
}
