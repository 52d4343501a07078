// The .deb (amd64, arm64) and .rpm (x86_64, aarch64) packages of the release binaries, built by Debian's own
// dpkg-deb and rpmbuild (scripts/release.js calls it after the binaries; docs/releasing.md). Each holds:
//
//   /usr/bin/bds                                   release/bds-linux-<arch>, as it is
//   /usr/share/man/man1/bds.1.gz                   bds(1), from --help (scripts/packaging/man.js)
//   /usr/share/bash-completion/completions/bds     `bds completion bash`
//   zsh's _bds: /usr/share/zsh/vendor-completions  `bds completion zsh` (Debian's folder for packages'
//     (.deb), /usr/share/zsh/site-functions (.rpm)  completions; Fedora's)
//   /usr/share/fish/vendor_completions.d/bds.fish  `bds completion fish`
//   the copyright and licences                     .deb: /usr/share/doc/bds/copyright (Debian's machine-readable
//                                                  format) and changelog.gz; .rpm: /usr/share/licenses/bds
//
// Reproducible: every file has the commit's time (SOURCE_DATE_EPOCH) and a fixed mode, root owns all of it,
// the compressors run on one thread, and rpmbuild is told the build host and time instead of reading them.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import zlib from 'node:zlib';
import { manPage } from './man.js';

const HOMEPAGE = 'https://github.com/batch-delivery/bds';
/** No address of the project's own exists yet: `.invalid` (RFC 2606) says so rather than invent one. */
export const MAINTAINER = 'bds contributors <bds@batch-delivery.invalid>';
const SUMMARY = 'deliver scrubbed datasets to the Batch Delivery Service';
const DESCRIPTION = [
  'bds checks the folders a scrubber writes (a report, a schema and the records)',
  'and delivers each month as one batch to the Batch Delivery Service: resumable,',
  'never twice, with the API key kept out of its output. It runs from a terminal,',
  'cron or CI. This package is the standalone binary, with Node.js inside.',
];
/**
 * What lintian says of the .deb and we keep, each with its reason: /usr/share/lintian/overrides/bds, which
 * lintian reads from the package itself. Anything else it reports fails .ci/run.
 */
const LINTIAN_OVERRIDES = `# /usr/bin/bds is Node.js's official build with bds inside (a single executable application): Node.js
# links its own copies of these libraries, as every Node.js does, and bds cannot swap them for Debian's.
embedded-library mbedtls [usr/bin/bds]
embedded-library zlib [usr/bin/bds]
# Node.js's official Linux builds are not position-independent executables; the binary is theirs as built.
hardening-no-pie [usr/bin/bds]
`;
export const ARCHES = {
  x64: { deb: 'amd64', rpm: 'x86_64' },
  arm64: { deb: 'arm64', rpm: 'aarch64' },
};
/**
 * What the binary links (readelf's NEEDED), with the Debian package that provides each and the oldest version
 * it needs: dpkg-shlibdeps's answer for bds-linux-x64 on Debian 12, but for libc6, which it puts at 2.34 only
 * because libdl and libpthread moved into libc.so.6 then: the binary asks for no symbol newer than GLIBC_2.28
 * (Node.js's own baseline), so it installs where it runs. The build fails when the binary links another library.
 */
const LIBRARIES = {
  'libc.so.6': 'libc6 (>= 2.28)',
  'libm.so.6': 'libc6 (>= 2.28)',
  'libdl.so.2': 'libc6 (>= 2.28)',
  'libpthread.so.0': 'libc6 (>= 2.28)',
  'ld-linux-x86-64.so.2': 'libc6 (>= 2.28)',
  'ld-linux-aarch64.so.1': 'libc6 (>= 2.28)',
  'libstdc++.so.6': 'libstdc++6 (>= 10.2)',
  'libgcc_s.so.1': 'libgcc-s1 (>= 4.2)',
  'libatomic.so.1': 'libatomic1 (>= 4.8)',
};

/** The package's files, but for the zsh folder and the licences, which differ between .deb and .rpm. */
async function commonFiles({ root, version, epoch }) {
  const { buildProgram } = await import(pathToFileURL(path.join(root, 'dist', 'cli', 'main.js')).href);
  const { completionScript } = await import(
    pathToFileURL(path.join(root, 'dist', 'cli', 'commands', 'completion.js')).href
  );
  const program = buildProgram(
    { env: {}, stdout: { write: () => true }, stderr: { write: () => true } },
    async () => {},
  );
  return {
    man: gzip(await manPage({ root, version, epoch })),
    bash: completionScript(program, 'bash'),
    zsh: completionScript(program, 'zsh'),
    fish: completionScript(program, 'fish'),
  };
}

/** gzip -9n: no name, no time (Node's zlib writes neither). */
function gzip(text) {
  return zlib.gzipSync(Buffer.from(text), { level: 9 });
}

/**
 * Writes release/bds_<version>_<arch>.deb and release/bds-<version>-1.<arch>.rpm for each of `arches` ('x64',
 * 'arm64'), from release/bds-linux-<arch>; returns their names.
 */
export async function buildLinuxPackages({ root, release, version, epoch, arches = ['x64', 'arm64'] }) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bds-linux-packages-'));
  try {
    const common = await commonFiles({ root, version, epoch });
    const licence = fs.readFileSync(path.join(root, 'LICENSE'), 'utf8');
    const thirdParty = fs.readFileSync(path.join(release, 'THIRD-PARTY-LICENSES.txt'), 'utf8');
    const written = [];
    for (const arch of arches) {
      const binary = path.join(release, `bds-linux-${arch}`);
      const depends = dependsOf(binary);
      const files = {
        'usr/bin/bds': { data: fs.readFileSync(binary), mode: 0o755 },
        'usr/share/man/man1/bds.1.gz': { data: common.man },
        'usr/share/bash-completion/completions/bds': { data: common.bash },
        'usr/share/fish/vendor_completions.d/bds.fish': { data: common.fish },
      };
      const deb = path.join(work, `deb-${arch}`);
      stage(deb, {
        ...files,
        'usr/share/zsh/vendor-completions/_bds': { data: common.zsh },
        'usr/share/doc/bds/copyright': { data: copyright(licence, epoch) },
        'usr/share/doc/bds/THIRD-PARTY-LICENSES.txt.gz': { data: gzip(thirdParty) },
        'usr/share/doc/bds/changelog.gz': { data: gzip(debianChangelog(version, epoch)) },
        'usr/share/lintian/overrides/bds': { data: LINTIAN_OVERRIDES },
      });
      written.push(debPackage({ staged: deb, release, version, arch: ARCHES[arch].deb, depends, epoch }));
      const rpm = path.join(work, `rpm-${arch}`);
      stage(rpm, {
        ...files,
        'usr/share/zsh/site-functions/_bds': { data: common.zsh },
        'usr/share/licenses/bds/LICENSE': { data: licence },
        'usr/share/licenses/bds/THIRD-PARTY-LICENSES.txt': { data: thirdParty },
      });
      written.push(rpmPackage({ staged: rpm, work, release, version, arch: ARCHES[arch].rpm, epoch }));
    }
    return written;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** Writes `files` (path -> {data, mode}) under `dir`; modes are set whatever the umask. */
function stage(dir, files) {
  for (const [name, { data, mode = 0o644 }] of Object.entries(files)) {
    const file = path.join(dir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, data);
    fs.chmodSync(file, mode);
  }
}

/** Every file and folder under `dir` (the folder itself included): mode set for folders, time `epoch`. */
function settle(dir, epoch) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    if (entry.isDirectory()) fs.chmodSync(full, 0o755);
    fs.utimesSync(full, epoch, epoch);
  }
  fs.chmodSync(dir, 0o755);
  fs.utimesSync(dir, epoch, epoch);
}

/** The Depends of a binary: the packages of the libraries it links, in a fixed order. */
function dependsOf(binary) {
  const libraries = [
    ...execFileSync('readelf', ['-W', '-d', binary], { encoding: 'utf8' }).matchAll(
      /\(NEEDED\)\s+Shared library: \[(.+?)\]/g,
    ),
  ].map((m) => m[1]);
  const unknown = libraries.filter((library) => !LIBRARIES[library]);
  if (unknown.length) throw new Error(`${path.basename(binary)} links ${unknown.join(', ')}: add it to LIBRARIES`);
  return [...new Set(libraries.map((library) => LIBRARIES[library]))].sort();
}

function debPackage({ staged, release, version, arch, depends, epoch }) {
  const md5sums = [];
  let kib = 0;
  for (const entry of fs.readdirSync(staged, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    kib += entry.isDirectory() ? 1 : Math.ceil(fs.statSync(full).size / 1024);
    if (entry.isFile())
      md5sums.push(`${createHash('md5').update(fs.readFileSync(full)).digest('hex')}  ${path.relative(staged, full)}`);
  }
  const control = [
    'Package: bds',
    `Version: ${version}`,
    `Architecture: ${arch}`,
    `Maintainer: ${MAINTAINER}`,
    `Installed-Size: ${kib}`,
    `Depends: ${depends.join(', ')}`,
    'Section: utils',
    'Priority: optional',
    `Homepage: ${HOMEPAGE}`,
    `Description: ${SUMMARY}`,
    ...DESCRIPTION.map((line) => ` ${line}`),
  ];
  stage(staged, {
    'DEBIAN/control': { data: `${control.join('\n')}\n` },
    'DEBIAN/md5sums': { data: `${md5sums.sort().join('\n')}\n` },
  });
  settle(staged, epoch);
  const file = `bds_${version}_${arch}.deb`;
  execFileSync('dpkg-deb', ['--root-owner-group', '-Zgzip', '-z9', '--build', staged, path.join(release, file)], {
    env: { ...process.env, SOURCE_DATE_EPOCH: String(epoch) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return file;
}

function rpmPackage({ staged, work, release, version, arch, epoch }) {
  settle(staged, epoch);
  const files = fs
    .readdirSync(staged, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => `/${path.relative(staged, path.join(entry.parentPath, entry.name))}`)
    .sort()
    .map((file) => (file.startsWith('/usr/share/licenses/') ? `%license ${file}` : file));
  const date = new Date(epoch * 1000).toUTCString().replace(/^(\w+), (\d+) (\w+) (\d+).*$/, '$1 $3 $2 $4');
  const spec = [
    'Name: bds',
    `Version: ${version}`,
    'Release: 1',
    `Summary: ${SUMMARY.replace(/^\w/, (c) => c.toUpperCase())}`,
    // bds's own code is MIT; so is Node.js, with the licences of what it bundles in THIRD-PARTY-LICENSES.txt.
    'License: MIT',
    `Packager: ${MAINTAINER}`,
    'Group: Applications/Internet',
    `URL: ${HOMEPAGE}`,
    // The binary is the release's, already stripped: nothing to rebuild, strip or split into debuginfo.
    '%global debug_package %{nil}',
    '%global __os_install_post %{nil}',
    '',
    '%description',
    ...DESCRIPTION,
    '',
    '%install',
    `cp -a ${staged}/. %{buildroot}/`,
    '',
    '%files',
    ...files,
    '',
    '%changelog',
    `* ${date} ${MAINTAINER} - ${version}-1`,
    `- bds ${version}: ${HOMEPAGE}/releases/tag/v${version}`,
  ];
  const top = path.join(work, `rpmbuild-${arch}`);
  const specFile = path.join(work, `bds-${arch}.spec`);
  fs.writeFileSync(specFile, `${spec.join('\n')}\n`);
  const define = (name, value) => ['--define', `${name} ${value}`];
  execFileSync(
    'rpmbuild',
    [
      '-bb',
      '--target',
      `${arch}-linux`,
      ...define('_topdir', top),
      ...define('_rpmdir', release),
      ...define('_rpmfilename', '%{NAME}-%{VERSION}-%{RELEASE}.%{ARCH}.rpm'),
      ...define('_buildhost', 'reproducible'),
      ...define('source_date_epoch_from_changelog', '0'),
      ...define('use_source_date_epoch_as_buildtime', '1'),
      ...define('clamp_mtime_to_source_date_epoch', '1'),
      ...define('_build_id_links', 'none'),
      ...define('_binary_payload', 'w9.gzdio'),
      specFile,
    ],
    { env: { ...process.env, SOURCE_DATE_EPOCH: String(epoch) }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return `bds-${version}-1.${arch}.rpm`;
}

/**
 * /usr/share/doc/bds/copyright in Debian's machine-readable format. The licences of Node.js and the npm packages
 * inside the binary are in THIRD-PARTY-LICENSES.txt.gz beside it (lintian wants no full Apache or GPL text here).
 */
function copyright(licence, epoch) {
  const year = new Date(epoch * 1000).getUTCFullYear();
  const holder = /^Copyright \(c\) \d+ (.+)$/m.exec(licence)?.[1] ?? 'bds contributors';
  const body = (text) =>
    text
      .trimEnd()
      .split('\n')
      .map((line) => (line.trim() ? ` ${line}` : ' .'))
      .join('\n');
  return `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: bds
Upstream-Contact: ${HOMEPAGE}/issues
Source: ${HOMEPAGE}
Comment: /usr/bin/bds is a Node.js single executable application: Node.js with bds and its npm
 dependencies inside. Their copyright notices and licences are in
 /usr/share/doc/bds/THIRD-PARTY-LICENSES.txt.gz, as the release's THIRD-PARTY-LICENSES.txt has them.

Files: *
Copyright: ${year} ${holder}
License: MIT

License: MIT
${body(licence.replace(/^MIT License\s*\n\s*\nCopyright.*\n\s*\n/, ''))}
`;
}

/** A native package's changelog.gz: one entry, dated by the commit, pointing at the release's notes. */
function debianChangelog(version, epoch) {
  const date = new Date(epoch * 1000).toUTCString().replace('GMT', '+0000');
  return `bds (${version}) stable; urgency=medium

  * bds ${version}: ${HOMEPAGE}/releases/tag/v${version}
    (CHANGELOG.md in the source has what changed).

 -- ${MAINTAINER}  ${date}
`;
}
