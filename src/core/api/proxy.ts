// Proxies: HTTPS_PROXY, HTTP_PROXY and NO_PROXY from the environment bds was given (never process.env), with
// loopback always direct, and a proxy's refusal explained without its credentials.

import { Agent, EnvHttpProxyAgent, type Dispatcher } from 'undici';
/** The environment's proxy variables (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, lower case too), among others. */
export type ProxyEnv = Readonly<Record<string, string | undefined>>;
import { redactUrl } from './redact.js';
import { isLoopback } from './url-rules.js';

export interface ConnectionTuning {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  idleTimeoutMs: number;
}

/** The dispatchers of one client: through the proxies the environment names, and direct for this machine. */
export class Dispatchers {
  private readonly proxied: Dispatcher;
  private readonly direct: Dispatcher;

  constructor(env: ProxyEnv, tuning: ConnectionTuning) {
    const common = {
      connect: { timeout: tuning.connectTimeoutMs },
      headersTimeout: tuning.headersTimeoutMs,
      bodyTimeout: tuning.idleTimeoutMs,
    };
    // Always pass all three: undici falls back to process.env for a missing one, and bds reads only its context.
    this.proxied = new EnvHttpProxyAgent({ ...proxySettings(env), ...common });
    this.direct = new Agent(common);
  }

  /**
   * Loopback always goes direct, as if it were in NO_PROXY: a corporate proxy cannot reach this machine's
   * sandbox, and a key sent over http:// to localhost must not travel in clear to the proxy.
   */
  for(url: URL): Dispatcher {
    return isLoopback(url.hostname) ? this.direct : this.proxied;
  }

  async close(): Promise<void> {
    await Promise.all([this.proxied.close(), this.direct.close()]);
  }
}

/** The proxy variables, lower case first as with curl; '' for none. */
function proxySettings(env: ProxyEnv): { httpProxy: string; httpsProxy: string; noProxy: string } {
  const pick = (name: string): string => env[name] || env[name.toUpperCase()] || '';
  const httpProxy = pick('http_proxy');
  return { httpProxy, httpsProxy: pick('https_proxy') || httpProxy, noProxy: pick('no_proxy') };
}

/** A proxy that refused the tunnel: named (without credentials) so that the user knows where to look. */
export function proxyFailure(
  error: unknown,
  env: ProxyEnv,
  target: string,
): { message: string; hint: string; status: number } | undefined {
  const match = /Proxy response \((\d+)\)/.exec(error instanceof Error ? error.message : '');
  if (!match) return undefined;
  const status = Number(match[1]);
  const { httpProxy, httpsProxy } = proxySettings(env);
  const proxy = new URL(target).protocol === 'https:' ? httpsProxy : httpProxy;
  const name = proxy ? `the proxy ${redactUrl(proxy)}` : 'the proxy';
  if (status === 407) {
    const hasCredentials = proxy !== '' && URL.canParse(proxy) && new URL(proxy).username !== '';
    return {
      status,
      message: `${name} answered 407 Proxy Authentication Required`,
      hint: hasCredentials
        ? 'the proxy refused the user and password in HTTPS_PROXY/HTTP_PROXY; check them (special characters percent-encoded)'
        : 'put the proxy user and password in HTTPS_PROXY/HTTP_PROXY: http://user:password@host:port',
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
  if (isLoopback(url.hostname)) return undefined;
  const variable = (name: string): string | undefined => [name, name.toUpperCase()].find((n) => env[n]);
  const chosen = url.protocol === 'https:' ? (variable('https_proxy') ?? variable('http_proxy')) : variable('http_proxy');
  if (chosen === undefined) return undefined;
  const { noProxy } = proxySettings(env);
  if (noProxy === '*') return undefined;
  const host = url.host.replace(/:\d*$/, '').toLowerCase();
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  for (const entry of noProxy.split(/[,\s]/).filter(Boolean)) {
    const parsed = /^(.+):(\d+)$/.exec(entry);
    const name = (parsed ? parsed[1]! : entry).replace(/^\*?\./, '').toLowerCase();
    if (parsed && Number(parsed[2]) !== port) continue;
    if (host === name || host.endsWith(`.${name}`)) return undefined;
  }
  return { url: env[chosen]!, variable: chosen };
}
