#!/usr/bin/env node
// The SHA-256 values action.yml pins for the release binaries, from release/SHA256SUMS:
//
//   node scripts/pin-action.js           writes package.json's version and the sums of release/'s binaries
//                                        into action.yml (after `npm run release`, before the release's tag)
//   node scripts/pin-action.js --check   exits 1 unless action.yml pins exactly those (the release workflow)
//
// The binaries do not hold action.yml, so pinning them in a commit of its own leaves them the same bytes.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ACTION = path.join(ROOT, 'action.yml');
/** The binaries the action installs, by the variable action.yml pins each one's SHA-256 in. */
const PINNED_BINARIES = {
  BDS_SHA256_LINUX_X64: 'bds-linux-x64',
  BDS_SHA256_LINUX_ARM64: 'bds-linux-arm64',
  BDS_SHA256_DARWIN_X64: 'bds-darwin-x64',
  BDS_SHA256_WIN_X64: 'bds-win-x64.exe',
};

/** action.yml with `version` and the sums of `sums` (file name -> hex) pinned. */
export function pinned(text, version, sums) {
  let out = text.replace(/^(\s+BDS_PINNED_VERSION: ).*$/gm, `$1${version}`);
  for (const [variable, file] of Object.entries(PINNED_BINARIES)) {
    if (!sums[file]) throw new Error(`SHA256SUMS has no ${file}`);
    out = out.replace(new RegExp(`^(\\s+${variable}: ).*$`, 'm'), `$1'${sums[file]}'`);
  }
  return out;
}

/** release/SHA256SUMS as file name -> hex. */
export function releaseSums(dir = path.join(ROOT, 'release')) {
  const text = fs.readFileSync(path.join(dir, 'SHA256SUMS'), 'utf8');
  return Object.fromEntries(
    text
      .trim()
      .split('\n')
      .map((line) => line.split(/ {2}/).reverse()),
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const check = process.argv[2] === '--check';
  const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const text = fs.readFileSync(ACTION, 'utf8');
  const want = pinned(text, version, releaseSums());
  if (want === text) {
    process.stdout.write(`action.yml pins bds ${version}'s binaries as release/SHA256SUMS lists them\n`);
  } else if (check) {
    process.stderr.write(
      `action.yml does not pin bds ${version}'s binaries as release/SHA256SUMS lists them: run node scripts/pin-action.js and commit\n`,
    );
    process.exit(1);
  } else {
    fs.writeFileSync(ACTION, want);
    process.stdout.write(`action.yml now pins bds ${version}'s binaries from release/SHA256SUMS\n`);
  }
}
