#!/usr/bin/env node
// @ts-check
// The layer of one architecture's image in the release's OCI image layout, for CI (.ci/steps/52-image.sh):
//
//   node scripts/ci/image-layer.js LAYOUT ARCH    LAYOUT is bds-<version>-oci.tar unpacked, ARCH amd64 or
//                                                 arm64; prints the path of the linux/ARCH image's layer
//
// The image's config must be bds's: user 10001 in group 0, entrypoint bds, working folder /data, a volume
// /home/bds, and package.json's version as its version label. Exits 1 if not, or if there is no linux/ARCH.

import fs from 'node:fs';

const [dir = '', arch = ''] = process.argv.slice(2);
const { version } = JSON.parse(fs.readFileSync('package.json', 'utf8'));
const blob = (/** @type {{ digest: string }} */ descriptor) =>
  JSON.parse(fs.readFileSync(`${dir}/blobs/sha256/${descriptor.digest.slice(7)}`, 'utf8'));
const index = blob(JSON.parse(fs.readFileSync(`${dir}/index.json`, 'utf8')).manifests[0]);
const manifest = blob(
  index.manifests.find(
    (/** @type {{ platform: { architecture: string, os: string } }} */ m) =>
      m.platform.architecture === arch && m.platform.os === 'linux',
  ),
);
const { config } = blob(manifest.config);
if (
  config.User !== '10001:0' ||
  config.Entrypoint.join() !== 'bds' ||
  config.WorkingDir !== '/data' ||
  !config.Volumes['/home/bds'] ||
  config.Labels['org.opencontainers.image.version'] !== version
) {
  throw new Error(`the ${arch} image's config: ${JSON.stringify(config)}`);
}
console.log(`${dir}/blobs/sha256/${manifest.layers[0].digest.slice(7)}`);
