#!/usr/bin/env node
// @ts-check
// The Homebrew, Scoop and winget manifests of a release (scripts/packaging/manifests.js writes them), for CI
// (.ci/steps/30-linux-packages.sh):
//
//   node scripts/ci/check-manifests.js RELEASE VERSION    RELEASE is the release/ folder
//
// bds.rb must name the npm tarball, bds.json and the winget installer bds-win-x64.exe, each by its download URL
// and by the SHA-256 value SHA256SUMS gives it. Exits 1 on the first that does not.

import fs from 'node:fs';
import path from 'node:path';
import { downloadUrl } from '../packaging/manifests.js';

const [dir = '', version = ''] = process.argv.slice(2);
const read = (/** @type {string} */ name) => fs.readFileSync(path.join(dir, name), 'utf8');
/** @type {Record<string, string>} file name -> SHA-256 (hex) */
const sums = Object.fromEntries(
  read('SHA256SUMS')
    .trim()
    .split('\n')
    .map((line) => line.split(/ {2}/).reverse()),
);
const tarball = `batch-delivery-bds-${version}.tgz`;
const binary = 'bds-win-x64.exe';

const formula = read('bds.rb');
if (!formula.includes(`url "${downloadUrl(version, tarball)}"`) || !formula.includes(`sha256 "${sums[tarball]}"`)) {
  throw new Error('bds.rb: not the release tarball');
}
const scoop = JSON.parse(read('bds.json')).architecture['64bit'];
if (scoop.url !== `${downloadUrl(version, binary)}#/bds.exe` || scoop.hash !== sums[binary]) {
  throw new Error(`bds.json: ${JSON.stringify(scoop)}`);
}
const installer = read('BatchDelivery.bds.installer.yaml');
if (
  !installer.includes(`InstallerUrl: ${downloadUrl(version, binary)}\n`) ||
  !installer.includes(`InstallerSha256: ${sums[binary]?.toUpperCase()}\n`)
) {
  throw new Error('BatchDelivery.bds.installer.yaml: not the release binary');
}
console.log(
  `ok: bds.rb, bds.json and the winget installer name ${tarball} and ${binary} by the SHA-256 values of SHA256SUMS`,
);
