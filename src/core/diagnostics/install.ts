// doctor's first line: which bds, on which Node.js and platform, installed how.

import { versionInfo, type InstallKind } from '../version.js';
import { ok, type Finding } from './doctor-check.js';

const INSTALLED: Record<InstallKind, string> = {
  binary: 'the standalone binary',
  tarball: 'installed with npm',
  clone: 'run from a clone',
  unknown: 'installed neither with npm nor as the binary nor from a clone',
};

export function installCheck(): Finding {
  const { version, node, platform, install } = versionInfo();
  return ok('bds', `bds ${version} on Node.js ${node}, ${platform}, ${INSTALLED[install]}`);
}
