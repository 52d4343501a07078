// A run's pings in healthchecks.io's protocol (which Cronitor, Uptime Kuma and others accept too): GET <url>/start
// as the run starts, then POST <url> on exit 0, or POST <url>/<exit code> on any other, with the end of the run's
// log as the body. The HTTP is core/api/ping-client.ts's. A ping that fails is told, never thrown: it never changes the
// run's outcome.

import type { PingClient, PingResult } from '../api/ping-client.js';

export class RunPings {
  private started: Promise<PingResult> | undefined;
  private startStopped = false;

  constructor(
    private readonly url: URL,
    private readonly client: PingClient,
  ) {}

  /** Sent at once, and not waited for: only the end ping waits for it (stopped if the run is). */
  start(signal: AbortSignal): void {
    this.started = this.client.send(this.url, '/start', undefined, signal).then((result) => {
      this.startStopped = signal.aborted;
      return result;
    });
  }

  /**
   * The end ping, once the start ping is over (so that the service sees them in order). Returns why each ping
   * that failed did; a start ping the run's interruption cut short is none of them.
   */
  async end(exitCode: number, log: string): Promise<string[]> {
    const started = await this.started;
    const ended = await this.client.send(this.url, exitCode === 0 ? '' : `/${exitCode}`, log);
    await this.client.close();
    const failed = [...(this.startStopped ? [] : [started]), ended].filter(
      (result) => result !== undefined && !result.ok,
    );
    return failed.map((result) => (result as { reason: string }).reason);
  }
}
