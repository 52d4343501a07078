#!/usr/bin/env node
// @ts-check
// The release's SBOM (scripts/release.js writes it), for CI (.ci/steps/23-release-sums.sh):
//
//   node scripts/ci/check-sbom.js SBOM    SBOM is release/bds-<version>.sbom.cdx.json
//
// A CycloneDX document with a serial number and a time, whose main component is @batch-delivery/bds; its
// components flat, each with a version and a licence: exactly the runtime packages npm-shrinkwrap.json locks,
// the Node.js the four binaries embed, and the nine Debian packages of the image. Prints what it found, or
// each problem and exits 1.

import fs from 'node:fs';

const bom = JSON.parse(fs.readFileSync(process.argv[2] ?? '', 'utf8'));
const problems = [];
if (bom.bomFormat !== 'CycloneDX' || !/^urn:uuid:/.test(bom.serialNumber ?? '') || !bom.metadata?.timestamp) {
  problems.push('not a CycloneDX document with serial number and time');
}
if (bom.metadata?.component?.name !== 'bds' || bom.metadata.component.group !== '@batch-delivery') {
  problems.push('the main component is not @batch-delivery/bds');
}
for (const c of bom.components) {
  if (c.components) problems.push(`${c.name} has nested components`);
  if (!c.version || !c.licenses?.length) problems.push(`${c.name} has no version or licence`);
}
const lock = JSON.parse(fs.readFileSync('npm-shrinkwrap.json', 'utf8'));
/** @type {string[]} */
const runtime = Object.entries(lock.packages)
  .filter(([where, p]) => where && !p.dev && !p.devOptional)
  .map(([where]) => where.replace(/^.*node_modules\//, ''))
  .sort();
/** @type {any[]} */
const debian = bom.components.filter((/** @type {any} */ c) => c.purl?.startsWith('pkg:deb/debian/'));
if (debian.length !== 9 || debian.some((c) => !c.hashes?.[0]?.content || !c.licenses?.length)) {
  problems.push(`the image's Debian packages: ${debian.map((c) => c.purl)}`);
}
/** @type {string[]} */
const listed = bom.components
  .filter((/** @type {any} */ c) => c.name !== 'node' && !debian.includes(c))
  .map((/** @type {any} */ c) => (c.group ? `${c.group}/${c.name}` : c.name))
  .sort();
if (JSON.stringify(listed) !== JSON.stringify(runtime)) {
  problems.push(`components ${listed} are not the lockfile's runtime packages ${runtime}`);
}
/** @type {any[]} */
const node = bom.components.filter((/** @type {any} */ c) => c.name === 'node');
if (node.length !== 4 || node.some((c) => c.licenses[0].license.id !== 'MIT' || !c.purl || !c.hashes?.length)) {
  problems.push('the embedded Node.js is not there');
}
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
const targets = node.map((c) => c.purl.replace(/^pkg:npm\/node-|@.*$/g, '')).join(', ');
console.log(
  `ok: ${listed.length} runtime dependencies with versions and licences, flat; node ${node[0].version} for ${targets}; ${debian.length} Debian packages of the image`,
);
