// Rules about URLs shared by the settings (base URL) and the API client (upload URLs).

/** This machine: the only hosts plain http:// may go to, since nothing on the way can read it. */
function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** https://, or http:// to this machine: where a key, a signed URL or a dataset may be sent. */
export function travelsSafely(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url.hostname));
}
