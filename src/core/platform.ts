// The system bds runs on, as the Runtime names it (process.platform): where it differs, paths are spelt and
// split by that system's rules rather than the host's, so that a test on Linux can pass 'win32' or 'darwin'.

import path from 'node:path';

export type Platform = NodeJS.Platform;

/** The path functions of the system: Windows' (`\` and drive letters, `/` accepted too) or POSIX's. */
export function pathsOf(platform: Platform): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}
