// Proxies: HTTPS_PROXY, HTTP_PROXY and NO_PROXY from the environment bds was given (never process.env), with
// loopback always direct. bds decides itself which proxy a request takes, so that a failure can name it: a proxy
// that refuses, drops or will not tunnel is reported as the proxy (its address, never its credentials).

import { Agent, Pool, ProxyAgent, buildConnector, type Dispatcher } from 'undici';
import { UsageError } from '../errors.js';
import { cleanText } from '../clean-text.js';
import { redactUrl } from './redact.js';
import { hostPort, isLoopback } from './url-rules.js';

/** The environment's proxy variables (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, lower case too), among others. */
export type ProxyEnv = Readonly<Record<string, string | undefined>>;

export interface ConnectionTuning {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  idleTimeoutMs: number;
}

/** A proxy a request goes through: the variable that named it, and how it may be shown (no credentials). */
export interface ProxyServer {
  variable: string;
  url: URL;
  shown: string;
}

/**
 * Certificates are checked whatever NODE_TLS_REJECT_UNAUTHORIZED says (Node's default for a connection that does
 * not say): the key must never go to a server that cannot prove its name. A private CA is NODE_EXTRA_CA_CERTS's.
 */
const CHECKED_TLS = { rejectUnauthorized: true } as const;

/** A proxy variable that names no proxy bds can use: an error when a request would go through it. */
type ProxySetting = ProxyServer | UsageError | undefined;

/** The dispatchers of one client: direct, or through the proxy the environment names for a URL. */
export class Dispatchers {
  private readonly direct: Agent;
  private readonly proxied = new Map<string, ProxyAgent>();
  private readonly http: ProxySetting;
  private readonly https: ProxySetting;
  private readonly noProxy: string;

  constructor(
    env: ProxyEnv,
    private readonly tuning: ConnectionTuning,
  ) {
    this.direct = new Agent(this.agentOptions());
    this.http = proxySetting(env, 'http_proxy');
    // As undici and most tools do: https:// requests use HTTP_PROXY when HTTPS_PROXY is not set.
    this.https = proxySetting(env, 'https_proxy') ?? this.http;
    this.noProxy = env.no_proxy || env.NO_PROXY || '';
  }

  /**
   * The proxy a request to `url` goes through, or undefined when it goes direct. Loopback always goes direct,
   * as if it were in NO_PROXY: a corporate proxy cannot reach this machine's sandbox, and a key sent over
   * http:// to localhost must not travel in clear to the proxy. A proxy variable that cannot be used is a
   * UsageError here, so only for a request that would take it.
   */
  proxyFor(url: URL): ProxyServer | undefined {
    if (isLoopback(url.hostname) || bypasses(url, this.noProxy)) return undefined;
    const setting = url.protocol === 'https:' ? this.https : this.http;
    if (setting instanceof UsageError) throw setting;
    return setting;
  }

  for(url: URL): Dispatcher {
    const proxy = this.proxyFor(url);
    if (!proxy) return this.direct;
    let agent = this.proxied.get(proxy.url.href);
    if (!agent) {
      const { connectTimeoutMs, headersTimeoutMs, idleTimeoutMs } = this.tuning;
      agent = new ProxyAgent({
        uri: proxy.url.href,
        ...this.agentOptions(),
        // The connection to the proxy and its answer to CONNECT get bds's timeouts too (undici's are 10 s and 300 s),
        // and its keep-alive once connected, as a direct connection's (agentOptions' connect is not used for it).
        proxyTls: { timeout: connectTimeoutMs, keepAlive: false, ...CHECKED_TLS },
        requestTls: CHECKED_TLS,
        clientFactory: (origin, options: Pool.Options) =>
          new ProxyPool(origin, {
            ...options,
            connect: keepAliveOnceConnected(options.connect as buildConnector.connector),
            headersTimeout: headersTimeoutMs,
            bodyTimeout: idleTimeoutMs,
          }),
      });
      this.proxied.set(proxy.url.href, agent);
    }
    return agent;
  }

  async close(): Promise<void> {
    await Promise.all([this.direct.close(), ...[...this.proxied.values()].map((agent) => agent.close())]);
  }

  private agentOptions(): Agent.Options {
    return {
      connect: keepAliveOnceConnected(
        buildConnector({ timeout: this.tuning.connectTimeoutMs, keepAlive: false, ...CHECKED_TLS }),
      ),
      headersTimeout: this.tuning.headersTimeoutMs,
      bodyTimeout: this.tuning.idleTimeoutMs,
    };
  }
}

/** How long a connection stays idle before TCP keep-alive probes it: undici's own default. */
const KEEP_ALIVE_INITIAL_DELAY_MS = 60_000;

/**
 * A connector that turns TCP keep-alive on once the socket is connected, not while it connects as undici does.
 * Wine (where CI runs bds for Windows) fails the connection with `connect UNKNOWN` when keep-alive is set on a
 * socket still connecting: libuv applies it as the socket is created and gives up on the error of an option
 * Wine lacks. Once connected, that error is ignored, as Node ignores it, and Windows and Linux get the same
 * keep-alive as before.
 */
function keepAliveOnceConnected(connect: buildConnector.connector): buildConnector.connector {
  return (options, callback) =>
    connect(options, (...args) => {
      if (args[1]) args[1].setKeepAlive(true, KEEP_ALIVE_INITIAL_DELAY_MS);
      callback(...args);
    });
}

/** A failure to open a tunnel through a proxy (it refused, dropped or timed out the connection): `cause` says how. */
export class ProxyConnectError extends Error {
  readonly code = 'BDS_PROXY_CONNECT';
}

/**
 * The pool of connections to a proxy, whose failures to open a tunnel become ProxyConnectErrors. Besides saying
 * that the proxy failed, this stops a loop: a proxy that closes the connection on CONNECT fails it with undici's
 * "socket closed" error, which undici takes as a reason to connect again at once, keeping the request queued:
 * thousands of connections a second, for ever, and a client that cannot be closed.
 */
class ProxyPool extends Pool {
  override connect(options: Dispatcher.ConnectOptions): Promise<Dispatcher.ConnectData>;
  override connect(
    options: Dispatcher.ConnectOptions,
    callback: (err: Error | null, data: Dispatcher.ConnectData) => void,
  ): void;
  override connect(
    options: Dispatcher.ConnectOptions,
    callback?: (err: Error | null, data: Dispatcher.ConnectData) => void,
  ): Promise<Dispatcher.ConnectData> | void {
    const wrap = (error: unknown) => new ProxyConnectError('the tunnel through the proxy failed', { cause: error });
    if (callback) return super.connect(options, (err, data) => callback(err && wrap(err), data));
    return super.connect(options).catch((error: unknown) => {
      throw wrap(error);
    });
  }
}

/**
 * A proxy variable's value as a URL, or undefined when it is none: without a scheme (proxy.corp:3128) it is
 * http://, as curl and wget take it.
 */
export function parseProxyUrl(value: string): URL | undefined {
  const written = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  return URL.canParse(written) ? new URL(written) : undefined;
}

/** A proxy variable (lower case first, as curl reads them), parsed by parseProxyUrl. */
function proxySetting(env: ProxyEnv, lower: string): ProxySetting {
  const upper = lower.toUpperCase();
  const variable = env[lower] ? lower : env[upper] ? upper : undefined;
  const value = variable === undefined ? '' : env[variable]!.trim();
  if (variable === undefined || value === '') return undefined;
  const unusable = (why: string) =>
    new UsageError(`${variable} is not a proxy bds can use: ${why}`, {
      hint: `write it as http://host:port (with a user: http://user:password@host:port, special characters percent-encoded), or unset ${variable}`,
    });
  const url = parseProxyUrl(value);
  if (!url) return unusable(`${showUnparsed(value)} is not a URL`);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return unusable(
      `${redactUrl(url)} is a ${url.protocol.slice(0, -1)} proxy; bds speaks to http:// and https:// proxies`,
    );
  }
  if (!url.hostname) return unusable(`${redactUrl(url)} names no host`);
  return { variable, url, shown: redactUrl(url) };
}

/** A value that is no URL, shown without what may be credentials (anything up to an @). */
function showUnparsed(value: string): string {
  return `"${cleanText(value.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/]*@/i, '$1REDACTED@'), 100)}"`;
}

/** Whether NO_PROXY sends `url` direct: `*`, or an entry that is its host or a domain above it (with a port: only that port). */
function bypasses(url: URL, noProxy: string): boolean {
  if (noProxy.trim() === '*') return true;
  // Brackets kept around an IPv6 address, as NO_PROXY writes them.
  const host = url.host.replace(/:\d*$/, '').toLowerCase();
  const { port } = hostPort(url);
  return noProxy.split(/[,\s]/).some((entry) => {
    if (!entry) return false;
    const match = /^(.+):(\d+)$/.exec(entry);
    const name = (match ? match[1]! : entry).replace(/^\*?\./, '').toLowerCase();
    if (match && Number(match[2]) !== port) return false;
    return host === name || host.endsWith(`.${name}`);
  });
}

/** A proxy that refused the tunnel (it answered CONNECT with another status than 200): named, without credentials. */
export function proxyRefusal(
  error: unknown,
  proxy: ProxyServer,
): { message: string; hint: string; status: number } | undefined {
  const match = /Proxy response \((\d+)\)/.exec(error instanceof Error ? error.message : '');
  if (!match) return undefined;
  const status = Number(match[1]);
  const name = `the proxy ${proxy.shown} (${proxy.variable})`;
  if (status === 407) {
    return {
      status,
      message: `${name} answered 407 Proxy Authentication Required`,
      hint: proxy.url.username
        ? `the proxy refused the user and password in ${proxy.variable}; check them (special characters percent-encoded)`
        : `put the proxy user and password in ${proxy.variable}: http://user:password@host:port`,
    };
  }
  return {
    status,
    message: `${name} answered ${status} instead of connecting`,
    hint: 'the proxy could not or would not reach the host; check HTTPS_PROXY, HTTP_PROXY and NO_PROXY',
  };
}

/** The proxy a request to `url` goes through, as the dispatchers choose it, and the variable that named it. */
export interface ProxyChoice {
  /** As the variable holds it, credentials included: redact before showing. */
  url: string;
  variable: string;
}

/**
 * Which proxy a request to `url` goes through (undefined: direct), by the rules undici's EnvHttpProxyAgent
 * applies: loopback always direct; NO_PROXY entries (`*`, a host, `.domain` or `*.domain`, each with an
 * optional port) match the host or a subdomain of it.
 */
export function proxyFor(url: URL, env: ProxyEnv): ProxyChoice | undefined {
  if (isLoopback(url.hostname) || bypasses(url, env.no_proxy || env.NO_PROXY || '')) return undefined;
  const named = (lower: string): string | undefined => [lower, lower.toUpperCase()].find((name) => env[name]?.trim());
  const variable = url.protocol === 'https:' ? (named('https_proxy') ?? named('http_proxy')) : named('http_proxy');
  return variable === undefined ? undefined : { url: env[variable]!.trim(), variable };
}
