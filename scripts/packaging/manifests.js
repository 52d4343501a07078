// What package managers other than apt and dnf read, written into release/ by scripts/release.js after the files
// they point at (docs/releasing.md says where each is published):
//
//   bds.rb                                 the Homebrew formula, Formula/bds.rb in our tap: the npm tarball
//                                          installed with Homebrew's Node.js (native on Apple silicon, where
//                                          no bds-darwin-arm64 exists), the bash, zsh and fish completions
//   bds.json                               the Scoop manifest, in our bucket: bds-win-x64.exe as bds.exe
//   BatchDelivery.bds.yaml,                the winget manifests (version, installer, default locale) of
//   BatchDelivery.bds.installer.yaml,      bds-win-x64.exe as a portable install, for
//   BatchDelivery.bds.locale.en-US.yaml    manifests/b/BatchDelivery/bds/<version>/ in winget-pkgs
//
// Every URL is the release's download URL of a file of release/, and every hash that file's SHA-256.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const REPOSITORY = 'https://github.com/batch-delivery/bds';
export const WINGET_ID = 'BatchDelivery.bds';
const DESCRIPTION = 'Deliver scrubbed datasets to the Batch Delivery Service';
const WINGET_MANIFEST_VERSION = '1.6.0';

/** The URL a release file is downloaded from. */
export function downloadUrl(version, file) {
  return `${REPOSITORY}/releases/download/v${version}/${file}`;
}

/** The names of the files writeManifests writes. */
export function manifestFiles() {
  return ['bds.rb', 'bds.json', `${WINGET_ID}.yaml`, `${WINGET_ID}.installer.yaml`, `${WINGET_ID}.locale.en-US.yaml`];
}

/** Writes the manifests into `release`, from its tarball and Windows binary; returns their names. */
export function writeManifests({ release, version }) {
  const sha256 = (file) =>
    createHash('sha256')
      .update(fs.readFileSync(path.join(release, file)))
      .digest('hex');
  const tarball = `batch-delivery-bds-${version}.tgz`;
  const exe = 'bds-win-x64.exe';
  const files = {
    'bds.rb': formula(version, downloadUrl(version, tarball), sha256(tarball)),
    'bds.json': `${JSON.stringify(scoop(version, downloadUrl(version, exe), sha256(exe)), null, 2)}\n`,
    ...winget(version, downloadUrl(version, exe), sha256(exe)),
  };
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(release, name), text);
  return Object.keys(files);
}

function formula(version, url, sha256) {
  return `# Homebrew formula for bds ${version}, written by \`npm run release\`: Formula/bds.rb in batch-delivery/homebrew-tap.
class Bds < Formula
  desc "${DESCRIPTION}"
  homepage "${REPOSITORY}"
  url "${url}"
  sha256 "${sha256}"
  license "MIT"

  depends_on "node"

  def install
    system "npm", "install", *std_npm_args
    bin.install_symlink libexec.glob("bin/*")
    generate_completions_from_executable(bin/"bds", "completion", shells: [:bash, :zsh, :fish])
  end

  test do
    assert_equal version.to_s, shell_output("#{bin}/bds --version").strip
    assert_match "install:  tarball", shell_output("#{bin}/bds --version --verbose")
  end
end
`;
}

function scoop(version, url, sha256) {
  return {
    version,
    description: DESCRIPTION,
    homepage: REPOSITORY,
    license: 'MIT',
    architecture: { '64bit': { url: `${url}#/bds.exe`, hash: sha256 } },
    bin: 'bds.exe',
    notes: [
      'Completion in PowerShell: add this line to your profile (notepad $PROFILE):',
      'bds completion powershell | Out-String | Invoke-Expression',
    ],
    checkver: { github: REPOSITORY },
    autoupdate: {
      architecture: {
        '64bit': { url: `${REPOSITORY}/releases/download/v$version/bds-win-x64.exe#/bds.exe` },
      },
      hash: { url: '$baseurl/SHA256SUMS' },
    },
  };
}

/** The multi-file manifest winget-pkgs takes: version, installer and default locale. */
function winget(version, url, sha256) {
  const header = () =>
    `# winget manifest for bds ${version}, written by \`npm run release\`\nPackageIdentifier: ${WINGET_ID}\nPackageVersion: ${version}\n`;
  const footer = (type) => `ManifestType: ${type}\nManifestVersion: ${WINGET_MANIFEST_VERSION}\n`;
  return {
    [`${WINGET_ID}.yaml`]: `${header()}DefaultLocale: en-US\n${footer('version')}`,
    [`${WINGET_ID}.installer.yaml`]: `${header()}InstallerType: portable
Commands:
  - bds
Installers:
  - Architecture: x64
    InstallerUrl: ${url}
    InstallerSha256: ${sha256.toUpperCase()}
${footer('installer')}`,
    [`${WINGET_ID}.locale.en-US.yaml`]: `${header()}PackageLocale: en-US
Publisher: Batch Delivery Service
PublisherUrl: ${REPOSITORY}
PackageName: bds
PackageUrl: ${REPOSITORY}
License: MIT
LicenseUrl: ${REPOSITORY}/blob/v${version}/LICENSE
ShortDescription: ${DESCRIPTION}
Moniker: bds
Tags:
  - cli
  - dataset
  - upload
ReleaseNotesUrl: ${REPOSITORY}/releases/tag/v${version}
${footer('defaultLocale')}`,
  };
}
