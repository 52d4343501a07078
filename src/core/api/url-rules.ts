// Rules about URLs shared by the settings (base URL), the API client (upload URLs) and the delivery records.

/** A URL's hostname as a lookup or a socket takes it: an IPv6 address without its brackets. */
export function bareHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '');
}

/** Where a connection to `url` goes: its bare host, and its port or the scheme's default. */
export function hostPort(url: URL): { host: string; port: number } {
  return { host: bareHost(url.hostname), port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80) };
}

/** This machine: the only hosts plain http:// may go to, since nothing on the way can read it. */
export function isLoopback(hostname: string): boolean {
  const host = bareHost(hostname).toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** https://, or http:// to this machine: where a key, a signed URL or a dataset may be sent. */
export function travelsSafely(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url.hostname));
}

/**
 * One spelling per API, for what records and locks are keyed by: scheme, lower-case host (every loopback name
 * and address as one), the port unless it is the scheme's default, the path without a trailing slash.
 */
export function canonicalApi(url: URL): string {
  const host = isLoopback(url.hostname) ? 'loopback' : url.hostname.toLowerCase();
  // URL drops a default port already; the path keeps an API mounted below the root apart from another.
  return `${url.protocol}//${host}${url.port ? `:${url.port}` : ''}${url.pathname.replace(/\/+$/, '')}`;
}
