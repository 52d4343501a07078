// The package version, read once from package.json (one folder above both src/ and dist/).

import { readFileSync } from 'node:fs';

export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** X-Service-Client: bds-cli/<version> <hostname> */
export function clientHeader(hostname: string): string {
  return `bds-cli/${VERSION} ${hostname}`;
}
