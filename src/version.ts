// The package version. The standalone binary has no package.json beside it: its build (scripts/build-binary.js)
// writes the version in by defining __BDS_VERSION__ as a string constant. Everywhere else it is read once from
// package.json (one folder above both src/ and dist/).

import { readFileSync } from 'node:fs';

declare const __BDS_VERSION__: string | undefined;

export const VERSION: string =
  typeof __BDS_VERSION__ === 'string'
    ? __BDS_VERSION__
    : (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** X-Service-Client: bds-cli/<version> <hostname> */
export function clientHeader(hostname: string): string {
  return `bds-cli/${VERSION} ${hostname}`;
}
