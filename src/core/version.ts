// The package version, and its examples/ folder. Read from package.json on first use, not on import (importing
// bds reads no file); a bundled build (the single executable) defines __BDS_VERSION__ instead, since it has no
// package.json beside it, and no examples/ either.

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

declare const __BDS_VERSION__: string | undefined;

let version: string | undefined;

export function packageVersion(): string {
  version ??=
    typeof __BDS_VERSION__ === 'string'
      ? __BDS_VERSION__
      : (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
          .version;
  return version;
}

/** The package's examples/ folder, absolute, where there is one: a clone or an npm install, not the single executable. */
export function examplesFolder(): string | undefined {
  if (typeof __BDS_VERSION__ === 'string') return undefined;
  const folder = fileURLToPath(new URL('../../examples', import.meta.url));
  return existsSync(folder) ? folder : undefined;
}

/** X-Service-Client: bds-cli/<version> <hostname>. The product name stays `bds-cli` whatever the npm package is called. */
export function clientHeader(hostname: string): string {
  return `bds-cli/${packageVersion()} ${hostname}`;
}

/**
 * How this bds was installed: `binary`, a standalone executable; `tarball`, an npm install (of the release
 * tarball or from the registry), whose package folder sits in a node_modules folder; `clone`, a git checkout
 * (`npm link` to one resolves to the checkout); `unknown`, a copy of the files that is none of these.
 */
export type InstallKind = 'binary' | 'tarball' | 'clone' | 'unknown';

export interface VersionInfo {
  version: string;
  /** The Node.js that runs bds, without the "v". */
  node: string;
  /** As Node names them: `linux-x64`, `linux-arm64`, `darwin-arm64`, ... */
  platform: string;
  install: InstallKind;
}

/** For `bds --version --verbose`: read when asked, like packageVersion(). */
export function versionInfo(): VersionInfo {
  const sea = process.getBuiltinModule('node:sea')?.isSea() ?? false;
  return {
    version: packageVersion(),
    node: process.versions.node,
    platform: `${process.platform}-${process.arch}`,
    // A standalone binary has no package folder: import.meta is empty in its bundle, so it is not read there.
    install: sea ? 'binary' : installKindOf(fileURLToPath(new URL('../..', import.meta.url))),
  };
}

/** The install kind of a package folder that is not a standalone binary. */
export function installKindOf(root: string): InstallKind {
  if (path.resolve(root).split(path.sep).includes('node_modules')) return 'tarball';
  if (existsSync(path.join(root, '.git')) || existsSync(path.join(root, 'src'))) return 'clone';
  return 'unknown';
}
