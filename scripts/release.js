#!/usr/bin/env node
// npm run release: release/ from a clean build, every file of which anyone can rebuild byte for byte from the
// same commit (docs/releasing.md says what a release holds and how to verify a download):
//
//   batch-delivery-bds-<version>.tgz   `npm pack` (its prepack cleans and rebuilds dist/; npm fixes every
//                                      file's time in the tarball)
//   bds-linux-x64, bds-linux-arm64,    the standalone binaries (scripts/build-binary.js); no bds-darwin-arm64:
//   bds-win-x64.exe, bds-darwin-x64    npm has no Node 26 for it
//   bds-<version>-oci.tar              the OCI image of both Linux binaries (scripts/build-image.js)
//   bds_<version>_amd64.deb,           the Linux packages of those binaries, with the man page bds(1) and the
//   bds_<version>_arm64.deb,           completions (scripts/packaging/linux-packages.js, by dpkg-deb and
//   bds-<version>-1.x86_64.rpm,        rpmbuild)
//   bds-<version>-1.aarch64.rpm
//   bds.rb, bds.json,                  the Homebrew formula, the Scoop manifest and the winget manifests,
//   BatchDelivery.bds*.yaml            with the URLs and SHA-256 of the files above (scripts/packaging/manifests.js)
//   THIRD-PARTY-LICENSES.txt           the licences of Node.js and of every package in the binaries
//   bds-<version>.sbom.cdx.json        CycloneDX JSON by @cyclonedx/cyclonedx-npm: the runtime dependencies, flat,
//                                      with their versions and licences, the Node.js the binaries embed and
//                                      the Debian packages in the image
//   SHA256SUMS                         `cd release && sha256sum -c SHA256SUMS`
//
// What would differ between two runs is fixed: the SBOM's time is the commit's (SOURCE_DATE_EPOCH, as
// reproducible-builds.org defines it; taken from `git log` when not set) and its serial number is derived
// from its content; the generator's own reproducible mode orders everything.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_LINE, TARGETS, binaryName, buildBinaries } from './build-binary.js';
import { buildImage } from './build-image.js';
import { pinned, releaseSums } from './pin-action.js';
import { buildLinuxPackages } from './packaging/linux-packages.js';
import { downloadUrl, writeManifests } from './packaging/manifests.js';
import { PINNED, nodePackageFromNpm, nodePackageName } from './node-from-npm.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RELEASE = path.join(ROOT, 'release');
const SBOM_GENERATOR = path.join(ROOT, 'node_modules', '@cyclonedx', 'cyclonedx-npm', 'bin', 'cyclonedx-npm-cli.js');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const started = Date.now();
const step = (text) => process.stdout.write(`release: ${text}\n`);

const { name, version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const epoch = sourceDateEpoch();
const env = {
  ...process.env,
  SOURCE_DATE_EPOCH: String(epoch),
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
};
step(`${name} ${version}, SOURCE_DATE_EPOCH=${epoch} (${new Date(epoch * 1000).toISOString()})`);
const dirty = git(['status', '--porcelain', '--untracked-files=no']);
if (dirty)
  step(`warning: the work tree has changes that are not committed; this release is not the commit's:\n${dirty}`);

fs.rmSync(RELEASE, { recursive: true, force: true });
fs.mkdirSync(RELEASE);

// The tarball. Its prepack script cleans dist/ and builds it again, which the binaries then bundle.
const packed = JSON.parse(run(npm, ['pack', '--json', '--pack-destination', RELEASE], { quiet: true }));
const tarball = packed[0].filename;
step(`${tarball}: ${packed[0].files.length} files, ${kB(fs.statSync(path.join(RELEASE, tarball)).size)}`);

await buildBinaries(TARGETS);
const revision = process.env.SOURCE_REVISION ?? git(['rev-parse', 'HEAD']);
if (!revision) fail('not a git checkout: set SOURCE_REVISION to the commit being built');
let image;
try {
  image = await buildImage({ version, epoch, revision, arches: ['x64', 'arm64'] });
} catch (error) {
  fail(error.message);
}
let packages;
try {
  packages = await buildLinuxPackages({ root: ROOT, release: RELEASE, version, epoch });
} catch (error) {
  fail(`the Linux packages: ${error.stderr?.toString().trim() || error.message}`);
}
step(`${packages.join(', ')}: ${packages.map((file) => kB(fs.statSync(path.join(RELEASE, file)).size)).join(', ')}`);
step(`${writeManifests({ release: RELEASE, version }).join(', ')}: the Homebrew, Scoop and winget manifests`);

// The SBOM.
const sbomFile = path.join(RELEASE, `bds-${version}.sbom.cdx.json`);
const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'bds-release-'));
process.on('exit', () => fs.rmSync(temp, { recursive: true, force: true }));
const generated = path.join(temp, 'sbom.json');
run(
  process.execPath,
  [
    SBOM_GENERATOR,
    '--omit',
    'dev',
    '--flatten-components',
    '--output-reproducible',
    '--spec-version',
    '1.6',
    '--output-format',
    'JSON',
    '--mc-type',
    'application',
    '--validate',
    '--output-file',
    generated,
    path.join(ROOT, 'package.json'),
  ],
  { quiet: true },
);
const sbom = JSON.parse(fs.readFileSync(generated, 'utf8'));
dropDevOnly(sbom);
for (const component of sbom.components) {
  if (!component.version || !component.licenses?.length)
    fail(`the SBOM's ${component.name} has no ${component.version ? 'licence' : 'version'}`);
}
const dependencies = sbom.components.length;
addNode(sbom);
addDebianPackages(sbom, image);
addDistributions(sbom, packages);
sbom.metadata.timestamp = new Date(epoch * 1000).toISOString().replace(/\.000Z$/, 'Z');
delete sbom.serialNumber;
sbom.serialNumber = serialNumberOf(sbom);
fs.writeFileSync(sbomFile, `${JSON.stringify(sbom, null, 2)}\n`);
step(
  `${path.basename(sbomFile)}: ${dependencies} runtime dependencies, Node.js ${PINNED[NODE_LINE].version} (${TARGETS.join(', ')}) and ${new Set(image.debs.map((d) => d.file)).size} Debian packages`,
);

// The checksums, of every other file, by name.
const files = fs
  .readdirSync(RELEASE)
  .filter((file) => file !== 'SHA256SUMS')
  .sort();
const sums = files
  .map(
    (file) =>
      `${createHash('sha256')
        .update(fs.readFileSync(path.join(RELEASE, file)))
        .digest('hex')}  ${file}\n`,
  )
  .join('');
fs.writeFileSync(path.join(RELEASE, 'SHA256SUMS'), sums);
process.stdout.write(`\nrelease/SHA256SUMS:\n${sums}`);
step(`the image's digest (podman load, skopeo inspect): ${image.digest}`);
const action = fs.readFileSync(path.join(ROOT, 'action.yml'), 'utf8');
const actionPins = pinned(action, version, releaseSums(RELEASE)) === action;
step(
  actionPins
    ? `action.yml pins these binaries`
    : `action.yml does not pin these binaries: before tagging, node scripts/pin-action.js and commit (docs/releasing.md)`,
);
step(`release/ written in ${((Date.now() - started) / 1000).toFixed(1)} s`);

/**
 * `npm ls --omit dev`, which the generator reads, keeps a dev dependency that a runtime one names as an
 * optional peer: typescript, through cosmiconfig. It is in neither the binaries (esbuild leaves it out) nor an
 * install of the tarball, which installs no optional peer. The lockfile marks it `devOptional` (what
 * development needs and the runtime may do without), as it marks `dev` what only development needs: both go.
 * No optional dependency of the runtime is a dev dependency too, which would be marked the same way.
 */
function dropDevOnly(bom) {
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'npm-shrinkwrap.json'), 'utf8'));
  const dropped = new Set();
  bom.components = bom.components.filter((component) => {
    const where = component.properties?.find((p) => p.name === 'cdx:npm:package:path')?.value;
    if (!where || !(lock.packages[where]?.dev || lock.packages[where]?.devOptional)) return true;
    dropped.add(component['bom-ref']);
    return false;
  });
  bom.dependencies = (bom.dependencies ?? [])
    .filter((d) => !dropped.has(d.ref))
    .map((d) => (d.dependsOn ? { ...d, dependsOn: d.dependsOn.filter((ref) => !dropped.has(ref)) } : d));
}

/**
 * The Node.js in the binaries, one component per binary: the generator sees only node_modules. Each
 * names the npm package it came from, whose integrity (SHA-512 of the package) scripts/node-from-npm.js pins.
 */
function addNode(bom) {
  const pin = PINNED[NODE_LINE];
  for (const arch of TARGETS) {
    const name = nodePackageName(arch);
    const pkg = JSON.parse(fs.readFileSync(path.join(nodePackageFromNpm(NODE_LINE, arch), 'package.json'), 'utf8'));
    if (pkg.version !== pin.version || pkg.license !== 'MIT')
      fail(`${name}: version ${pkg.version}, licence ${pkg.license}`);
    const ref = `${name}@${pin.version}`;
    bom.components.push({
      type: 'platform',
      'bom-ref': ref,
      name: 'node',
      version: pin.version,
      description: `Node.js, the runtime embedded in release/${binaryName(arch)} (from the npm package ${name})`,
      licenses: [{ license: { id: 'MIT' } }],
      purl: `pkg:npm/${name}@${pin.version}`,
      hashes: [
        { alg: 'SHA-512', content: Buffer.from(pin.integrity[arch].replace(/^sha512-/, ''), 'base64').toString('hex') },
      ],
      externalReferences: [{ type: 'website', url: 'https://nodejs.org/' }],
      properties: [{ name: 'bds:embedded-in', value: binaryName(arch) }],
    });
    const root = bom.dependencies?.find((d) => d.ref === bom.metadata.component['bom-ref']);
    if (root) root.dependsOn = [...(root.dependsOn ?? []), ref].sort();
    bom.dependencies?.push({ ref });
  }
}

/**
 * The Debian packages in the image, one component per .deb: the package URL of purl-spec's deb type, the .deb's
 * SHA-256 as pinned in scripts/build-image.js, and the licence of what the image takes from it.
 */
function addDebianPackages(bom, { file, debs }) {
  const root = bom.dependencies?.find((d) => d.ref === bom.metadata.component['bom-ref']);
  for (const { pin, file: deb, sha256 } of debs) {
    const arch = /_([a-z0-9]+)\.deb$/.exec(deb)[1];
    const ref = `deb:${pin.name}@${pin.version}?arch=${arch}`;
    if (bom.components.some((c) => c['bom-ref'] === ref)) continue; // an 'all' package, in both images
    bom.components.push({
      type: 'library',
      'bom-ref': ref,
      name: pin.name,
      version: pin.version,
      description: `from the Debian 12 package ${deb}, in release/${file}`,
      licenses: [{ expression: pin.license }],
      purl: `pkg:deb/debian/${encodeURIComponent(pin.name)}@${encodeURIComponent(pin.version)}?arch=${arch}&distro=debian-12`,
      hashes: [{ alg: 'SHA-256', content: sha256 }],
      properties: [{ name: 'bds:embedded-in', value: file }],
    });
    if (root) root.dependsOn = [...(root.dependsOn ?? []), ref].sort();
    bom.dependencies?.push({ ref });
  }
}

/**
 * The release's Linux packages, as distributions of bds itself (each with its download URL and SHA-256), and
 * in the embedded-in properties of the Node.js each one's binary holds.
 */
function addDistributions(bom, files) {
  bom.metadata.component.externalReferences = [
    ...(bom.metadata.component.externalReferences ?? []),
    ...files.map((file) => ({
      type: 'distribution',
      url: downloadUrl(version, file),
      comment: `release/${file}`,
      hashes: [
        {
          alg: 'SHA-256',
          content: createHash('sha256')
            .update(fs.readFileSync(path.join(RELEASE, file)))
            .digest('hex'),
        },
      ],
    })),
  ];
  for (const component of bom.components) {
    const binary = component.properties?.find((p) => p.name === 'bds:embedded-in')?.value;
    const arch = /^bds-linux-(x64|arm64)$/.exec(binary ?? '')?.[1];
    if (!arch) continue;
    const names = { x64: ['_amd64.deb', '.x86_64.rpm'], arm64: ['_arm64.deb', '.aarch64.rpm'] }[arch];
    for (const file of files.filter((f) => names.some((end) => f.endsWith(end))))
      component.properties.push({ name: 'bds:embedded-in', value: file });
  }
}

/** A urn:uuid that is the same for the same SBOM: RFC 9562's version 8 (custom), from a SHA-256 of it. */
function serialNumberOf(bom) {
  const hash = createHash('sha256').update(JSON.stringify(bom)).digest();
  hash[6] = (hash[6] & 0x0f) | 0x80;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `urn:uuid:${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** SOURCE_DATE_EPOCH when set (a rebuild outside git), else the time of the commit. */
function sourceDateEpoch() {
  const given = process.env.SOURCE_DATE_EPOCH;
  if (given !== undefined) {
    if (!/^\d+$/.test(given)) fail(`SOURCE_DATE_EPOCH is ${JSON.stringify(given)}, not a number of seconds`);
    return Number(given);
  }
  const time = git(['log', '-1', '--format=%ct']);
  if (time === undefined) fail('not a git checkout: set SOURCE_DATE_EPOCH to the time of the commit being built');
  return Number(time);
}

/** git's output, trimmed; undefined when git or the repository is not there. */
function git(args) {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trimEnd();
  } catch {
    return undefined;
  }
}

/** Runs a program; its stdout is returned when `quiet`, else shown. Its output is shown when it fails. */
function run(file, args, { quiet = false } = {}) {
  try {
    return execFileSync(file, args, {
      cwd: ROOT,
      env,
      encoding: 'utf8',
      stdio: ['ignore', quiet ? 'pipe' : 'inherit', 'pipe'],
      maxBuffer: 64 << 20,
    });
  } catch (error) {
    const output = `${error.stdout ?? ''}${error.stderr ?? ''}`.trim();
    return fail(`${path.basename(file)} ${args.join(' ')} failed${output ? `:\n${output}` : `: ${error.message}`}`);
  }
}

function kB(bytes) {
  return `${(bytes / 1000).toFixed(0)} kB`;
}

function fail(message) {
  process.stderr.write(`release: ${message}\n`);
  process.exit(1);
}
