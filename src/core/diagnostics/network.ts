// doctor's way to the API, one step at a time so that the first one that fails is named: which proxy applies
// (or direct), the extra CA file, the name lookup and the connection (of the proxy, when there is one), then
// TLS with the API's host (through the proxy's tunnel). A proxy's password never appears.

import { promises as dns } from 'node:dns';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { DEFAULT_TUNING, describeTransportError, proxyHint } from '../api/http.js';
import { parseProxyUrl, proxyFor } from '../api/proxy.js';
import { redactUrl } from '../api/redact.js';
import { hostPort } from '../api/url-rules.js';
import { errnoCode } from '../guards.js';
import { abortError, EXIT_CODES } from '../errors.js';
import type { Runtime } from '../runtime.js';
import { fail, ok, warn, type Finding } from './finding.js';
import { counted } from '../plural.js';

export interface NetworkFindings {
  findings: Finding[];
  /** Every step got through: the API can be asked. */
  reached: boolean;
}

const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
]);

/**
 * The steps in order, each one line of doctor's; the first that fails ends them (nothing after it can work).
 * `baseUrlSettings`: where the base URL is set, in the words of the caller's door (settings.ts's baseUrlSettings).
 */
export async function networkFindings(
  runtime: Runtime,
  baseUrl: URL,
  baseUrlSettings: string,
  signal: AbortSignal,
): Promise<NetworkFindings> {
  const findings: Finding[] = [];
  const done = (reached: boolean): NetworkFindings => ({ findings, reached });
  const limits: Limits = { timeoutMs: runtime.http?.connectTimeoutMs ?? DEFAULT_TUNING.connectTimeoutMs, signal };

  const proxy = proxyFinding(baseUrl, runtime.env);
  findings.push(proxy.finding);
  if (proxy.finding.status === 'fail') return done(false);
  findings.push(caFinding(runtime));

  const hop = firstHop(baseUrl, proxy.via);
  const lookedUp = await lookupFinding(hop, baseUrlSettings, limits);
  findings.push(lookedUp.finding);
  if (lookedUp.address === undefined) return done(false);
  const connected = await connectFinding(hop, lookedUp.address, runtime, limits);
  findings.push(connected);
  if (connected.status === 'fail') return done(false);

  if (baseUrl.protocol !== 'https:') {
    findings.push(ok('TLS', `not used: http:// to this machine`));
    return done(true);
  }
  const secured = await tlsFinding(hostPort(baseUrl), proxy.via, limits);
  findings.push(secured);
  return done(secured.status !== 'fail');
}

/** The proxy a request goes through, and the variable that named it. */
interface Via {
  url: URL;
  variable: string;
}

/** Which proxy applies to the API's host, or direct; a proxy variable bds cannot use is a failure. */
function proxyFinding(baseUrl: URL, env: Runtime['env']): { finding: Finding; via?: Via } {
  const choice = proxyFor(baseUrl, env);
  if (!choice) return { finding: ok('proxy', `none: ${baseUrl.host} is reached directly`) };
  const url = parseProxyUrl(choice.url);
  if (!url || !['http:', 'https:'].includes(url.protocol)) {
    return {
      finding: fail(
        'proxy',
        `${choice.variable} is not a proxy URL bds can use`,
        `write it as http://host:port in ${choice.variable}`,
        EXIT_CODES.usage,
      ),
    };
  }
  return {
    finding: ok('proxy', `${shown(url)} (from ${choice.variable}) for ${baseUrl.host}`),
    via: { url, variable: choice.variable },
  };
}

/** A proxy's URL as doctor shows it: without credentials or a trailing slash. */
function shown(proxy: URL): string {
  return redactUrl(proxy).replace(/\/$/, '');
}

/** Where a connection goes: a bare host (IPv6 without brackets) and a port, as url-rules' hostPort gives it. */
type Target = ReturnType<typeof hostPort>;

/** Where the lookup and the connection go: the proxy when there is one (it looks up the API's name), or the API. */
interface Hop extends Target {
  /** How the messages name it: 'the proxy ' or nothing. */
  what: string;
  via?: Via;
}

function firstHop(baseUrl: URL, via: Via | undefined): Hop {
  return via ? { ...hostPort(via.url), what: 'the proxy ', via } : { ...hostPort(baseUrl), what: '' };
}

async function lookupFinding(
  hop: Hop,
  baseUrlSettings: string,
  limits: Limits,
): Promise<{ finding: Finding; address?: string }> {
  try {
    const addresses = await lookup(hop.host, limits);
    const found = addresses.map((a) => a.address).join(', ');
    return { finding: ok('name lookup', `${hop.what}${hop.host} is ${found}`), address: addresses[0]!.address };
  } catch (error) {
    stopIfAborted(limits.signal);
    const code = errnoCode(error);
    return {
      finding: fail(
        'name lookup',
        `${hop.what}${hop.host}: ${code === 'ENOTFOUND' ? 'no such host' : `lookup failed (${code ?? 'unknown'})`}`,
        hop.via
          ? `check the proxy's name in ${hop.via.variable}`
          : `check the base URL for a typo (${baseUrlSettings})`,
        EXIT_CODES.network,
        hop.via ? undefined : { code: 'host_not_found' },
      ),
    };
  }
}

async function connectFinding(hop: Hop, address: string, runtime: Runtime, limits: Limits): Promise<Finding> {
  const started = runtime.now().getTime();
  try {
    await connect(address, hop.port, limits);
    const took = runtime.now().getTime() - started;
    return ok('connect', `${hop.what}${hop.host}:${hop.port} (${address}) in ${took} ms`);
  } catch (error) {
    stopIfAborted(limits.signal);
    const code = errnoCode(error);
    const why =
      code === 'ECONNREFUSED'
        ? 'connection refused'
        : code === 'ETIMEDOUT'
          ? 'timed out'
          : `failed (${code ?? 'unknown'})`;
    return fail(
      'connect',
      `${hop.what}${hop.host}:${hop.port}: ${why}`,
      hop.via
        ? `is the proxy in ${hop.via.variable} running, and reachable from here?`
        : 'is the service running there, and is no firewall in the way? (the sandbox: is it still running?)',
      EXIT_CODES.network,
      hop.via ? undefined : { code: 'not_reachable' },
    );
  }
}

/** NODE_EXTRA_CA_CERTS, as Node reads it when it starts: a file that cannot be read is ignored by Node. */
function caFinding(runtime: Runtime): Finding {
  const file = runtime.env.NODE_EXTRA_CA_CERTS;
  if (!file) return ok('CA', "Node's own certificate authorities (no NODE_EXTRA_CA_CERTS)");
  let count: number;
  try {
    count = (readFileSync(file, 'utf8').match(/-----BEGIN CERTIFICATE-----/g) ?? []).length;
  } catch (error) {
    return warn(
      'CA',
      `NODE_EXTRA_CA_CERTS names ${file}, which cannot be read (${errnoCode(error) ?? 'unreadable'}): Node ignores it`,
      'point it at a PEM file of your certificate authority',
    );
  }
  if (count === 0)
    return warn(
      'CA',
      `NODE_EXTRA_CA_CERTS names ${file}, which holds no certificate: Node ignores it`,
      'point it at a PEM file (-----BEGIN CERTIFICATE-----)',
    );
  return ok('CA', `${counted(count, 'extra certificate')} from ${file} (NODE_EXTRA_CA_CERTS)`);
}

async function tlsFinding(target: Target, proxy: Via | undefined, limits: Limits): Promise<Finding> {
  let socket: tls.TLSSocket;
  try {
    const tunnel = proxy ? await openTunnel(proxy.url, target, limits) : undefined;
    socket = await handshake(target, tunnel, limits);
  } catch (error) {
    stopIfAborted(limits.signal);
    return handshakeFailure(error, target, proxy);
  }
  const finding = certificateFinding(socket, target, proxy);
  socket.destroy();
  return finding;
}

/** Why no TLS connection was made: the proxy refused or dropped the tunnel, or the API's end is no TLS. */
function handshakeFailure(error: unknown, target: Target, proxy: Via | undefined): Finding {
  if (error instanceof ProxyRefusal) {
    return fail(
      'TLS',
      `the proxy ${shown(proxy!.url)} answered ${error.status} to CONNECT ${target.host}:${target.port}`,
      error.status === 407
        ? 'put the proxy user and password in HTTPS_PROXY: http://user:password@host:port'
        : 'the proxy could not or would not reach the API; check HTTPS_PROXY and NO_PROXY',
      EXIT_CODES.network,
    );
  }
  if (error instanceof TunnelFailure) {
    // The proxy took the connection, then closed it (or never answered) before the tunnel was open.
    return fail(
      'TLS',
      `the proxy ${shown(proxy!.url)} (${proxy!.variable}) failed to open a tunnel to ${target.host}:${target.port}: ` +
        describeTransportError(error.cause),
      proxyHint(proxy!.variable),
      EXIT_CODES.network,
    );
  }
  if (errnoCode(error) === 'ERR_SSL_WRONG_VERSION_NUMBER') {
    return fail(
      'TLS',
      `${target.host}:${target.port} did not answer in TLS`,
      'is this an https:// URL for an http:// server? (the sandbox speaks http://)',
      EXIT_CODES.network,
    );
  }
  return fail(
    'TLS',
    `with ${target.host}:${target.port}: ${error instanceof Error ? error.message : String(error)}`,
    'see the proxy and CA lines above',
    EXIT_CODES.network,
  );
}

/** The certificate the API's end presented: trusted, signed by an authority Node does not trust, or not valid. */
function certificateFinding(socket: tls.TLSSocket, target: Target, proxy: Via | undefined): Finding {
  const certificate = socket.getPeerCertificate();
  const issuer = firstOf(certificate.issuer?.O) ?? firstOf(certificate.issuer?.CN) ?? 'an unnamed authority';
  const subject = firstOf(certificate.subject?.CN) ?? target.host;
  const protocol = socket.getProtocol() ?? 'TLS';
  const problem = socket.authorized ? undefined : String(socket.authorizationError ?? 'unverified');
  if (problem === undefined)
    return ok(
      'TLS',
      `${protocol} with ${target.host}: certificate for ${subject} from ${issuer}, valid until ${certificate.valid_to}`,
    );
  if (UNTRUSTED.has(problem)) {
    return fail(
      'TLS',
      `the certificate ${target.host} presents is signed by ${issuer}, which Node does not trust (${problem})`,
      (proxy
        ? 'a proxy or gateway that re-signs TLS needs its certificate authority: '
        : 'if a proxy or gateway re-signs TLS, ') +
        'point NODE_EXTRA_CA_CERTS at that authority (a PEM file); this is not about the key',
      EXIT_CODES.network,
    );
  }
  return fail(
    'TLS',
    `the certificate ${target.host} presents is not valid for it (${problem})`,
    'check the base URL, and any gateway between here and the API',
    EXIT_CODES.network,
  );
}

/** A proxy's certificate names may be arrays; one is enough to show. */
function firstOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

class ProxyRefusal extends Error {
  constructor(readonly status: number) {
    super(`the proxy answered ${status}`);
  }
}

/** The CONNECT request failed without an answer (the proxy closed the connection, or timed out). */
class TunnelFailure extends Error {
  constructor(cause: unknown) {
    super('the proxy failed to open a tunnel', { cause });
  }
}

/** A CONNECT tunnel to `target` through the proxy, with the proxy's credentials as undici would send them. */
function openTunnel(proxy: URL, target: Target, { timeoutMs, signal }: Limits): Promise<net.Socket> {
  const authority = `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
  const headers: Record<string, string> = { host: authority };
  if (proxy.username) {
    const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
    headers['proxy-authorization'] = `Basic ${Buffer.from(credentials).toString('base64')}`;
  }
  return new Promise((resolve, reject) => {
    const request = (proxy.protocol === 'https:' ? https : http).request({
      ...hostPort(proxy),
      method: 'CONNECT',
      path: authority,
      headers,
      agent: false,
      timeout: timeoutMs,
      signal,
    });
    request.once('connect', (response, socket) => {
      request.setTimeout(0);
      socket.on('error', () => {});
      if (response.statusCode === 200) resolve(socket);
      else {
        socket.destroy();
        reject(new ProxyRefusal(response.statusCode ?? 0));
      }
    });
    request.once('timeout', () =>
      request.destroy(Object.assign(new Error(`timed out after ${timeoutMs} ms`), { code: 'ETIMEDOUT' })),
    );
    request.once('error', (error) => reject(signal.aborted ? signal.reason : new TunnelFailure(error)));
    request.end();
  });
}

/** The TLS handshake; the certificate is judged by the caller (so that an untrusted one can be named). */
function handshake(target: Target, tunnel: net.Socket | undefined, limits: Limits): Promise<tls.TLSSocket> {
  const servername = net.isIP(target.host) ? undefined : target.host;
  const socket = tls.connect({
    ...(tunnel ? { socket: tunnel } : { host: target.host, port: target.port }),
    ...(servername ? { servername } : {}),
    rejectUnauthorized: false,
  });
  return settled(socket, 'secureConnect', limits, (secured) => secured);
}

function connect(host: string, port: number, limits: Limits): Promise<void> {
  return settled(net.connect({ host, port }), 'connect', limits, (socket) => {
    socket.destroy();
  });
}

interface Limits {
  timeoutMs: number;
  signal: AbortSignal;
}

/**
 * Waits for `event` on a socket, at most `timeoutMs`; a timeout, an error or Ctrl-C destroys the socket.
 * `done` gets the socket once the event came.
 */
function settled<S extends net.Socket, T>(
  socket: S,
  event: string,
  { timeoutMs, signal }: Limits,
  done: (socket: S) => T,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const stop = (error: unknown): void => {
      cleanUp();
      socket.destroy();
      reject(error);
    };
    const onAbort = (): void => stop(signal.reason);
    const onError = (error: Error): void => stop(error);
    const onTimeout = (): void =>
      stop(Object.assign(new Error(`timed out after ${timeoutMs} ms`), { code: 'ETIMEDOUT' }));
    const cleanUp = (): void => {
      signal.removeEventListener('abort', onAbort);
      socket.setTimeout(0);
      socket.off('timeout', onTimeout);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    socket.setTimeout(timeoutMs, onTimeout);
    socket.once('error', onError);
    socket.once(event, () => {
      cleanUp();
      socket.off('error', onError);
      // Whatever happens to it after this is no longer news.
      socket.on('error', () => {});
      resolve(done(socket));
    });
  });
}

/** A name lookup cannot be cancelled: after `timeoutMs`, or on Ctrl-C, it is given up on. */
function lookup(host: string, { timeoutMs, signal }: Limits): Promise<Array<{ address: string }>> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => finish(() => reject(signal.reason));
    const timer = setTimeout(
      () => finish(() => reject(Object.assign(new Error(`timed out after ${timeoutMs} ms`), { code: 'ETIMEDOUT' }))),
      timeoutMs,
    );
    const finish = (settle: () => void): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      settle();
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    dns.lookup(host, { all: true }).then(
      (found) => finish(() => resolve(found)),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}

/** Ctrl-C is no failed check: it stops doctor. */
function stopIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortError(signal);
}
