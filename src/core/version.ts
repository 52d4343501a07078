// The package version, and its examples/ folder. Read from package.json on first use, not on import (importing
// bds reads no file); a bundled build (the single executable) defines __BDS_VERSION__ instead, since it has no
// package.json beside it, and no examples/ either.

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

declare const __BDS_VERSION__: string | undefined;

let version: string | undefined;

export function packageVersion(): string {
  version ??=
    typeof __BDS_VERSION__ === 'string'
      ? __BDS_VERSION__
      : (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  return version;
}

/** The package's examples/ folder, absolute, where there is one: a clone or an npm install, not the single executable. */
export function examplesFolder(): string | undefined {
  if (typeof __BDS_VERSION__ === 'string') return undefined;
  const folder = fileURLToPath(new URL('../../examples', import.meta.url));
  return existsSync(folder) ? folder : undefined;
}

/** X-Service-Client: bds-cli/<version> <hostname> */
export function clientHeader(hostname: string): string {
  return `bds-cli/${packageVersion()} ${hostname}`;
}
