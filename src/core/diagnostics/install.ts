// doctor's first line: which bds, on which Node.js and platform, installed how (in the word that
// `bds --version --verbose` uses, so that support reads one name for it).

import { versionInfo } from '../version.js';
import { ok, type Finding } from './finding.js';

export function installFindings(): Finding {
  const { version, node, platform, install } = versionInfo();
  return ok('bds', `bds ${version} on Node.js ${node}, ${platform}, install: ${install}`);
}
