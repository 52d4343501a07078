#!/usr/bin/env node
// release/bds-<version>-oci.tar: an OCI image layout (an image index for linux/amd64 and linux/arm64) built
// from the release's binaries without a daemon, byte for byte the same from the same commit (scripts/release.js
// calls it after the binaries; `node scripts/build-image.js` builds it from the binaries already in release/).
//
// Each architecture's image is one gzipped layer holding only what the binary needs to run:
//   /usr/local/bin/bds                        release/bds-linux-<arch>
//   /lib/..., /usr/lib/...                    the libraries the binary links (readelf's NEEDED, followed through
//                                             the libraries themselves) and its loader, from Debian's .deb files
//                                             pinned below by version and SHA-256
//   /etc/ssl/certs/ca-certificates.crt        Mozilla's roots from Debian's ca-certificates, one bundle
//   /etc/passwd, /etc/group                   root and bds (10001, in group root), the user the image runs as
//   /home/bds (the volume), /data (WORKDIR), /tmp
// The home and its folders are bds's and group root's, writable by the group as by bds: as OpenShift and Kubernetes'
// runAsUser run an image, any uid in group 0 can keep its records there.
//   /usr/share/doc/...                        bds's licence and third-party licences, the packages' copyright
// No shell, no package manager. The .deb files come from the Debian archive, through the mirrors apt is set up with,
// are checked against the pins before use and kept in the build cache ($BDS_BUILD_CACHE, else
// $XDG_CACHE_HOME/bds-build), so a second build downloads nothing. dpkg-deb unpacks them.
//
// Reproducible: every tar entry has the commit's time (SOURCE_DATE_EPOCH), uid 0 (10001 for bds's folders), gid 0,
// a fixed mode and a fixed order; gzip by Node's zlib with no name and no time in its header; JSON written with
// fixed key order.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { cacheDir } from './node-from-npm.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RELEASE = path.join(ROOT, 'release');
export const USER = { name: 'bds', uid: 10001, gid: 0, home: '/home/bds' };
const PLATFORM = { x64: 'amd64', arm64: 'arm64' };
const TRIPLET = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' };

/**
 * The Debian 12 packages in the image, by the architecture of the binary ('all' for both). To move a pin:
 * `apt-cache show <package>` (with `dpkg --add-architecture arm64` for arm64) gives Version, Filename and SHA256.
 * The archive drops a version when a point release or a security update supersedes it; a cached .deb still builds.
 */
export const DEBIAN_PINS = [
  {
    name: 'libc6',
    version: '2.36-9+deb12u14',
    license: 'LGPL-2.1-or-later',
    pool: 'pool/main/g/glibc',
    sha256: {
      x64: 'ba4f88f73dbc3ae9055f3c20f4523bfdbaf1ad13ff95e258924f77d20b4fbedf',
      arm64: '01f4330719fd4f65580e16ea5a0527f372fca750e8f588d26deaf09f2d3b1cf4',
    },
  },
  {
    name: 'libstdc++6',
    version: '12.2.0-14+deb12u1',
    license: 'GPL-3.0-or-later WITH GCC-exception-3.1',
    pool: 'pool/main/g/gcc-12',
    sha256: {
      x64: '5cd3171216d4ab0fc911cfe9c35509bf2dd8f47761c43b7f6a4296701551a24d',
      arm64: '26e138c677a985775331373828a6c286c551ff397cb735d00e2383cb273d1cb2',
    },
  },
  {
    name: 'libgcc-s1',
    version: '12.2.0-14+deb12u1',
    license: 'GPL-3.0-or-later WITH GCC-exception-3.1',
    pool: 'pool/main/g/gcc-12',
    sha256: {
      x64: '3016e62cb4b7cd8038822870601f5ed131befe942774d0f745622cc77d8a88f7',
      arm64: '576926b283613db80168ddf76380a3bd877602778cf0d226caa7bfbfa71eacf3',
    },
  },
  {
    name: 'libatomic1',
    version: '12.2.0-14+deb12u1',
    license: 'GPL-3.0-or-later WITH GCC-exception-3.1',
    pool: 'pool/main/g/gcc-12',
    sha256: {
      x64: 'fbd4e154a6b444229ea002cc209df099209c0adc09102e5fd21239a3d2b55e2d',
      arm64: '1693aa13ce2b30d061a519fc28b77b9bab8c8e45804ced5969d99821e1bc2159',
    },
  },
  {
    name: 'ca-certificates',
    version: '20250419~deb12u2',
    license: 'MPL-2.0 AND GPL-2.0-or-later',
    pool: 'pool/updates/main/c/ca-certificates',
    sha256: { all: 'b9f76b5271a7ac373fd5e7e1b5b826a71ddd702b42a0d104955ecb1acfffc94b' },
  },
];

/** The .deb file name of a pin for an architecture of the binary. */
function debFile(pin, arch) {
  const debArch = pin.sha256.all ? 'all' : PLATFORM[arch];
  return `${pin.name}_${pin.version}_${debArch}.deb`;
}

const step = (text) => process.stdout.write(`build:image: ${text}\n`);

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const epoch = Number(process.env.SOURCE_DATE_EPOCH ?? git(['log', '-1', '--format=%ct']));
  const revision = process.env.SOURCE_REVISION ?? git(['rev-parse', 'HEAD']);
  if (!Number.isInteger(epoch) || !revision) fail('set SOURCE_DATE_EPOCH and SOURCE_REVISION outside a git clone');
  try {
    await buildImage({ version, epoch, revision });
  } catch (error) {
    fail(error.message);
  }
}

/**
 * Writes release/bds-<version>-oci.tar from release/bds-linux-{x64,arm64}; returns its file name, the image
 * index's digest and the .deb files used (for the SBOM).
 */
export async function buildImage({ version, epoch, revision, arches = ['x64', 'arm64'] }) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bds-build-image-'));
  try {
    const blobs = new Map(); // digest -> bytes
    const addBlob = (bytes) => {
      const digest = `sha256:${sha256(bytes)}`;
      blobs.set(digest, bytes);
      return { digest, size: bytes.length };
    };
    const manifests = [];
    const debs = [];
    for (const arch of arches) {
      const binary = path.join(RELEASE, `bds-linux-${arch}`);
      if (!fs.existsSync(binary))
        throw new Error(`${path.relative(ROOT, binary)} is missing: build the binaries first`);
      const unpacked = [];
      for (const pin of DEBIAN_PINS) {
        const deb = await debFromArchive(pin, arch);
        debs.push({ pin, arch, file: path.basename(deb), sha256: pin.sha256.all ?? pin.sha256[arch] });
        const dir = path.join(work, arch, pin.name);
        fs.mkdirSync(dir, { recursive: true });
        execFileSync('dpkg-deb', ['-x', deb, dir]);
        unpacked.push({ pin, dir });
      }
      const entries = rootfs(arch, binary, unpacked);
      const tar = tarOf(entries, epoch);
      const layer = zlib.gzipSync(tar, { level: 9 });
      const layerDesc = { mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', ...addBlob(layer) };
      const config = imageConfig({ arch, version, revision, epoch, diffId: `sha256:${sha256(tar)}` });
      const configDesc = { mediaType: 'application/vnd.oci.image.config.v1+json', ...addBlob(json(config)) };
      const manifest = {
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: configDesc,
        layers: [layerDesc],
        annotations: labels(version, revision, epoch),
      };
      manifests.push({
        mediaType: manifest.mediaType,
        ...addBlob(json(manifest)),
        platform: { architecture: PLATFORM[arch], os: 'linux' },
      });
      step(`linux/${PLATFORM[arch]}: ${entries.length} files, layer ${MB(layer.length)} (${MB(tar.length)} unpacked)`);
    }
    // index.json names one image, itself an index of the platforms: `podman load` and `skopeo copy` pick this
    // machine's platform from it, or all of them (skopeo copy --all).
    const imageIndex = {
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.index.v1+json',
      manifests,
      annotations: labels(version, revision, epoch),
    };
    const indexDesc = addBlob(json(imageIndex));
    const files = [
      { path: 'blobs/', type: 'dir' },
      { path: 'blobs/sha256/', type: 'dir' },
      ...[...blobs.keys()].sort().map((digest) => ({
        path: `blobs/sha256/${digest.slice('sha256:'.length)}`,
        data: blobs.get(digest),
      })),
      { path: 'index.json', data: json(layoutIndex(indexDesc, version)) },
      { path: 'oci-layout', data: json({ imageLayoutVersion: '1.0.0' }) },
    ];
    const name = `bds-${version}-oci.tar`;
    fs.writeFileSync(path.join(RELEASE, name), tarOf(files, epoch));
    step(`release/${name}: image ${indexDesc.digest} (${arches.map((a) => `linux/${PLATFORM[a]}`).join(', ')})`);
    return { file: name, digest: indexDesc.digest, debs };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The layout's index.json: the one image, named bds:<version>. podman load names the image by its ref.name
 * (localhost/bds:<version>; a bare version would be a repository of its own, localhost/0.1.0), and so does docker
 * load from 25 on.
 */
export function layoutIndex(indexDesc, version) {
  return {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests: [
      {
        mediaType: 'application/vnd.oci.image.index.v1+json',
        ...indexDesc,
        annotations: { 'org.opencontainers.image.ref.name': `bds:${version}` },
      },
    ],
  };
}

/**
 * The archive URIs apt is set up with (/etc/apt/sources.list and sources.list.d, one-line and deb822 forms), in
 * their order: the .debs come from where this machine's apt gets its packages, whichever mirror that is.
 * BDS_DEBIAN_MIRRORS (URIs separated by spaces) replaces them on a machine whose apt is not Debian's.
 */
function aptMirrors() {
  const given = process.env.BDS_DEBIAN_MIRRORS?.trim();
  if (given) return given.split(/\s+/).map((uri) => uri.replace(/\/+$/, ''));
  const folder = '/etc/apt/sources.list.d';
  const files = ['/etc/apt/sources.list'];
  if (fs.existsSync(folder)) {
    for (const name of fs.readdirSync(folder).sort()) {
      if (name.endsWith('.list') || name.endsWith('.sources')) files.push(path.join(folder, name));
    }
  }
  const uris = [];
  for (const file of files.filter((f) => fs.existsSync(f))) {
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
      const oneLine = /^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)/.exec(line);
      const deb822 = /^URIs:\s*(.+)$/i.exec(line.trim());
      for (const uri of oneLine ? [oneLine[1]] : deb822 ? deb822[1].split(/\s+/) : []) {
        const bare = uri.replace(/\/+$/, '');
        if (/^https?:\/\//.test(bare) && !uris.includes(bare)) uris.push(bare);
      }
    }
  }
  if (!uris.length) throw new Error('apt names no http(s) archive in /etc/apt/sources.list or sources.list.d');
  return uris;
}

/** The cached .deb of a pin, downloaded from the Debian archive first when missing; its SHA-256 checked. */
async function debFromArchive(pin, arch) {
  const expected = pin.sha256.all ?? pin.sha256[arch];
  const file = debFile(pin, arch);
  const cached = path.join(cacheDir(), 'debian', file);
  if (fs.existsSync(cached)) {
    if (sha256(fs.readFileSync(cached)) === expected) return cached;
    fs.rmSync(cached);
  }
  const tried = [];
  for (const mirror of aptMirrors()) {
    const url = `${mirror}/${pin.pool}/${encodeURIComponent(file)}`;
    let response;
    try {
      response = await fetch(url);
    } catch (error) {
      tried.push(`${url}: ${error.cause?.message ?? error.message}`);
      continue;
    }
    if (!response.ok) {
      tried.push(`${url}: HTTP ${response.status}`);
      continue;
    }
    const bytes = Buffer.from(await response.arrayBuffer());
    const got = sha256(bytes);
    if (got !== expected) throw new Error(`${url} has SHA-256 ${got}, not the pinned ${expected}`);
    fs.mkdirSync(path.dirname(cached), { recursive: true });
    fs.writeFileSync(`${cached}.partial`, bytes);
    fs.renameSync(`${cached}.partial`, cached);
    step(`${file} downloaded from ${mirror} (SHA-256 as pinned)`);
    return cached;
  }
  throw new Error(`${file} could not be downloaded:\n  ${tried.join('\n  ')}`);
}

/** The entries of an architecture's root file system, in order. */
function rootfs(arch, binary, unpacked) {
  const entries = new Map();
  const dir = (p, mode = 0o755) => entries.set(p, { path: `${p}/`, type: 'dir', mode, uid: 0 });
  const parents = (p) => {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++)
      if (!entries.has(parts.slice(0, i).join('/'))) dir(parts.slice(0, i).join('/'));
  };
  const file = (p, data, mode = 0o644) => {
    parents(p);
    entries.set(p, { path: p, data, mode, uid: 0 });
  };
  const link = (p, target) => {
    parents(p);
    entries.set(p, { path: p, type: 'symlink', target, mode: 0o777, uid: 0 });
  };

  // The libraries: the loader and every NEEDED library, followed through each, found in the unpacked packages.
  const libDirs = [`lib/${TRIPLET[arch]}`, `usr/lib/${TRIPLET[arch]}`];
  const interpreter = /\[Requesting program interpreter: \/(.+)\]/.exec(readelf(['-l', binary]))?.[1];
  if (!interpreter) throw new Error(`${path.basename(binary)} names no program interpreter`);
  const used = new Set();
  const take = (relative) => {
    for (const { pin, dir: root } of unpacked) {
      const full = path.join(root, relative);
      let stat;
      try {
        stat = fs.lstatSync(full);
      } catch {
        continue;
      }
      used.add(pin);
      if (stat.isSymbolicLink()) {
        const target = fs.readlinkSync(full);
        link(relative, target);
        take(
          path.posix.normalize(
            target.startsWith('/') ? target.slice(1) : path.posix.join(path.posix.dirname(relative), target),
          ),
        );
      } else {
        file(relative, fs.readFileSync(full), stat.mode & 0o111 ? 0o755 : 0o644);
      }
      return full;
    }
    return undefined;
  };
  take(interpreter);
  const pending = needed(arch, binary);
  const seen = new Set();
  while (pending.length) {
    const soname = pending.shift();
    if (seen.has(soname)) continue;
    seen.add(soname);
    const found = libDirs.map((d) => take(`${d}/${soname}`)).find(Boolean);
    if (!found) throw new Error(`${soname}, which bds-linux-${arch} links, is in none of the pinned packages`);
    pending.push(...needed(arch, fs.realpathSync(found)));
  }

  // CA certificates: Mozilla's roots as one bundle, as update-ca-certificates makes it.
  const certs = unpacked.find((u) => u.pin.name === 'ca-certificates').dir;
  const mozilla = path.join(certs, 'usr/share/ca-certificates/mozilla');
  const bundle = fs
    .readdirSync(mozilla)
    .filter((f) => f.endsWith('.crt'))
    .sort()
    .map((f) => fs.readFileSync(path.join(mozilla, f), 'utf8').trimEnd() + '\n')
    .join('');
  file('etc/ssl/certs/ca-certificates.crt', Buffer.from(bundle));
  used.add(unpacked.find((u) => u.pin.name === 'ca-certificates').pin);

  // The licences: bds's, the binaries' third-party notices, and each package's copyright.
  file('usr/share/doc/bds/LICENSE', fs.readFileSync(path.join(ROOT, 'LICENSE')));
  const notices = path.join(RELEASE, 'THIRD-PARTY-LICENSES.txt');
  if (fs.existsSync(notices)) file('usr/share/doc/bds/THIRD-PARTY-LICENSES.txt', fs.readFileSync(notices));
  for (const { pin, dir: root } of unpacked) {
    const copyright = [pin.name, 'gcc-12-base']
      .map((n) => path.join(root, 'usr/share/doc', n, 'copyright'))
      .find((f) => fs.existsSync(f) && fs.statSync(f).isFile());
    if (copyright) file(`usr/share/doc/${pin.name}/copyright`, fs.readFileSync(copyright));
  }
  if (used.size !== DEBIAN_PINS.length) {
    const unused = DEBIAN_PINS.filter((p) => !used.has(p)).map((p) => p.name);
    throw new Error(`pinned but not used by bds-linux-${arch}: ${unused.join(', ')}`);
  }

  file('usr/local/bin/bds', fs.readFileSync(binary), 0o755);
  dir('root', 0o700);
  dir('tmp', 0o1777);
  for (const entry of userEntries()) {
    parents(entry.path.replace(/\/$/, ''));
    entries.set(entry.path.replace(/\/$/, ''), entry);
  }
  return [...entries.keys()].sort().map((p) => entries.get(p));
}

/**
 * The user bds and its folders: /etc/passwd and /etc/group, the home with the XDG folders, and /data. Group root
 * has the owner's rights on each folder (OpenShift's convention), so that an arbitrary uid in group 0 can write them.
 */
export function userEntries() {
  const account = (p, text) => ({ path: p, data: Buffer.from(text), mode: 0o644, uid: 0, gid: 0 });
  const folder = (p) => ({ path: `${p}/`, type: 'dir', mode: 0o775, uid: USER.uid, gid: USER.gid });
  const home = USER.home.slice(1);
  return [
    account(
      'etc/passwd',
      `root:x:0:0:root:/root:/sbin/nologin\n${USER.name}:x:${USER.uid}:${USER.gid}:bds:${USER.home}:/sbin/nologin\n`,
    ),
    account('etc/group', 'root:x:0:\n'),
    folder('data'),
    ...['', '/.config', '/.local', '/.local/state', '/.cache'].map((sub) => folder(`${home}${sub}`)),
  ];
}

function imageConfig({ arch, version, revision, epoch, diffId }) {
  return {
    created: new Date(epoch * 1000).toISOString().replace(/\.000Z$/, 'Z'),
    architecture: PLATFORM[arch],
    os: 'linux',
    config: {
      User: `${USER.uid}:${USER.gid}`,
      Env: [
        'PATH=/usr/local/bin',
        `HOME=${USER.home}`,
        `XDG_CONFIG_HOME=${USER.home}/.config`,
        `XDG_STATE_HOME=${USER.home}/.local/state`,
        `XDG_CACHE_HOME=${USER.home}/.cache`,
        // The gzipped copies of plain .jsonl files: in the volume, writable when the root file system is not.
        `TMPDIR=${USER.home}`,
        'SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt',
      ],
      Entrypoint: ['bds'],
      WorkingDir: '/data',
      Volumes: { [USER.home]: {} },
      Labels: labels(version, revision, epoch),
    },
    rootfs: { type: 'layers', diff_ids: [diffId] },
    history: [
      { created: new Date(epoch * 1000).toISOString().replace(/\.000Z$/, 'Z'), created_by: 'scripts/build-image.js' },
    ],
  };
}

function labels(version, revision, epoch) {
  return {
    'org.opencontainers.image.created': new Date(epoch * 1000).toISOString().replace(/\.000Z$/, 'Z'),
    'org.opencontainers.image.description': 'bds: deliver scrubbed datasets to the Batch Delivery Service',
    'org.opencontainers.image.licenses': 'MIT',
    'org.opencontainers.image.revision': revision,
    'org.opencontainers.image.source': 'https://github.com/batch-delivery/bds',
    'org.opencontainers.image.title': 'bds',
    'org.opencontainers.image.version': version,
  };
}

/** The NEEDED libraries of an ELF file. */
function needed(arch, file) {
  return [...readelf(['-d', file]).matchAll(/\(NEEDED\)\s+Shared library: \[(.+?)\]/g)].map((m) => m[1]);
}

function readelf(args) {
  return execFileSync('readelf', ['-W', ...args], { encoding: 'utf8', maxBuffer: 16 << 20 });
}

/**
 * A POSIX ustar archive of `entries` ({path, data} files, {path, type: 'dir'}, {path, type: 'symlink',
 * target}; each with its mode, uid and gid, default 0), in the order given, every time `mtime`.
 */
export function tarOf(entries, mtime) {
  const blocks = [];
  for (const entry of entries) {
    const header = Buffer.alloc(512);
    let name = entry.path;
    let prefix = '';
    if (Buffer.byteLength(name) > 100) {
      const cut = name.lastIndexOf('/', name.length - 2);
      prefix = name.slice(0, cut);
      name = name.slice(cut + 1);
      if (cut < 0 || Buffer.byteLength(name) > 100 || Buffer.byteLength(prefix) > 155)
        throw new Error(`${entry.path}: too long a path for a tar header`);
    }
    const type = entry.type === 'dir' ? '5' : entry.type === 'symlink' ? '2' : '0';
    const size = type === '0' ? entry.data.length : 0;
    const mode = entry.mode ?? (type === '5' ? 0o755 : type === '2' ? 0o777 : 0o644);
    header.write(name, 0, 100);
    header.write(octal(mode, 8), 100);
    header.write(octal(entry.uid ?? 0, 8), 108);
    header.write(octal(entry.gid ?? 0, 8), 116);
    header.write(octal(size, 12), 124);
    header.write(octal(mtime, 12), 136);
    header.write('        ', 148);
    header.write(type, 156);
    if (type === '2') header.write(entry.target, 157, 100);
    header.write('ustar\x0000', 257);
    header.write(prefix, 345, 155);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(header);
    if (size) {
      blocks.push(entry.data);
      if (size % 512) blocks.push(Buffer.alloc(512 - (size % 512)));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

function octal(value, width) {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function json(value) {
  return Buffer.from(JSON.stringify(value));
}

function sha256(bytes) {
  return createHash('sha256').update(bytes).digest('hex');
}

function git(args) {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

function MB(bytes) {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

function fail(message) {
  process.stderr.write(`build:image: ${message}\n`);
  process.exit(1);
}
