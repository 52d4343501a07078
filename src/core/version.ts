// The package version. Read from package.json on first use, not on import (importing bds reads no file); a
// bundled build (the single executable) defines __BDS_VERSION__ instead, since it has no package.json beside it.

import { readFileSync } from 'node:fs';

declare const __BDS_VERSION__: string | undefined;

let version: string | undefined;

export function packageVersion(): string {
  version ??=
    typeof __BDS_VERSION__ === 'string'
      ? __BDS_VERSION__
      : (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  return version;
}

/** X-Service-Client: bds-cli/<version> <hostname> */
export function clientHeader(hostname: string): string {
  return `bds-cli/${packageVersion()} ${hostname}`;
}
