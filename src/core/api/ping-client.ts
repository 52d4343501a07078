// The HTTP of a monitoring ping (core/monitoring/ping.ts says which ping goes where): its own small client,
// since a ping must never carry the API key or bds's client header, goes to any host over http:// or https://,
// gives up quickly, and never fails the run. Proxies as for the API (proxy.ts). The ping URL's path is its secret
// (whoever knows it can ping): logs and messages show only its origin.

import { request, type Dispatcher } from 'undici';
import { UsageError } from '../errors.js';
import { describeTransportError } from './http.js';
import { Dispatchers, proxyRefusal, type ProxyEnv } from './proxy.js';

export interface PingClientSetup {
  env: ProxyEnv;
  /** One ping, both its tries. */
  timeoutMs: number;
  connectTimeoutMs: number;
  userAgent: string;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  now: () => number;
  /** One line per try, the URL's secret left out (for --verbose). */
  log?: ((line: string) => void) | undefined;
}

export type PingResult = { ok: true } | { ok: false; reason: string };

const TRIES = 2;
/** Between the two tries, at most. */
const RETRY_PAUSE_MS = 1_000;

/** The ping URL, checked: any http:// or https:// URL. Never echoed, since its path is a secret. */
export function parsePingUrl(value: string, from: string): URL {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
    throw new UsageError(`the ping URL from ${from} is not an http:// or https:// URL`, {
      hint: 'give the ping URL your monitoring service shows for the check, such as https://hc-ping.com/<uuid>',
    });
  }
  url.hash = '';
  return url;
}

/** The ping URL as bds prints it: its origin, the path (the secret) left out, and what bds adds to it. */
export function shownPingUrl(url: URL, suffix = ''): string {
  return `${url.origin}/…${suffix}`;
}

export class PingClient {
  private readonly dispatchers: Dispatchers;

  constructor(private readonly options: PingClientSetup) {
    const { timeoutMs, connectTimeoutMs } = options;
    this.dispatchers = new Dispatchers(options.env, {
      connectTimeoutMs: Math.min(connectTimeoutMs, timeoutMs),
      headersTimeoutMs: timeoutMs,
      idleTimeoutMs: timeoutMs,
    });
  }

  /**
   * GET (no body) or POST (a body) of the ping URL with `suffix` added to its path; a second try after a network
   * failure, a timeout or a 408, 429 or 5xx, within timeoutMs in all. Never throws.
   */
  async send(base: URL, suffix: string, body?: string, signal?: AbortSignal): Promise<PingResult> {
    const { now, sleep, timeoutMs } = this.options;
    const url = new URL(base);
    url.pathname = `${url.pathname.replace(/\/+$/, '')}${suffix}`;
    const deadline = now() + timeoutMs;
    let result: PingResult & { retry?: boolean } = { ok: false, reason: 'not sent' };
    for (let attempt = 1; attempt <= TRIES; attempt++) {
      // The first try leaves half of the time for the second, so that a host that hangs gets two tries too.
      const budget = attempt < TRIES ? timeoutMs / TRIES : deadline - now();
      if (budget <= 0) break;
      result = await this.attempt(url, shownPingUrl(base, suffix), body, budget, signal);
      if (result.ok || !result.retry || signal?.aborted) break;
      try {
        await sleep(Math.min(RETRY_PAUSE_MS, Math.max(0, (deadline - now()) / 4)), signal);
      } catch {
        break;
      }
    }
    return result.ok ? { ok: true } : { ok: false, reason: result.reason };
  }

  close(): Promise<void> {
    return this.dispatchers.close();
  }

  private async attempt(
    url: URL,
    shown: string,
    body: string | undefined,
    ms: number,
    signal: AbortSignal | undefined,
  ): Promise<{ ok: true } | { ok: false; reason: string; retry: boolean }> {
    const method = body === undefined ? 'GET' : 'POST';
    const headers: Record<string, string> = { 'user-agent': this.options.userAgent };
    if (body !== undefined) {
      headers['content-type'] = 'text/plain; charset=utf-8';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const timeout = AbortSignal.timeout(ms);
    const started = this.options.now();
    const took = (): string => `${this.options.now() - started} ms`;
    try {
      const res = await request(url, {
        method: method as Dispatcher.HttpMethod,
        headers,
        body: body ?? null,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        dispatcher: this.dispatchers.for(url),
        headersTimeout: ms,
        bodyTimeout: ms,
      });
      // What a ping service answers ("OK") says nothing more than its status.
      await res.body.dump();
      this.options.log?.(`${method} ${shown} → ${res.statusCode} (${took()})`);
      if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true };
      const retry = res.statusCode === 408 || res.statusCode === 429 || res.statusCode >= 500;
      return { ok: false, reason: `${shown} answered ${res.statusCode}`, retry };
    } catch (error) {
      const reason = timeout.aborted
        ? `no answer within ${Math.round(ms / 100) / 10} s`
        : (this.proxyRefusal(error, url) ?? describeTransportError(error));
      this.options.log?.(`${method} ${shown} → ${reason} (${took()})`);
      return { ok: false, reason: `${method} ${shown} failed: ${reason}`, retry: true };
    }
  }

  /** A proxy that refused the tunnel, named without its credentials. */
  private proxyRefusal(error: unknown, url: URL): string | undefined {
    try {
      const proxy = this.dispatchers.proxyFor(url);
      return proxy && proxyRefusal(error, proxy)?.message;
    } catch {
      return undefined;
    }
  }
}
