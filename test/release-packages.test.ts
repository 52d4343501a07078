// What `npm run release` writes for package managers: the man page bds(1) in the .deb and .rpm packages, made
// from --help, and the Homebrew, Scoop and winget manifests, whose URLs and SHA-256 values must be the release's
// own. The packages themselves are built, linted, installed and removed by .ci/run (they need the release's
// binaries); this file checks what they are made from, on the built program (dist/).

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT, run, tempDir } from './helpers.js';

const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const script = async (name: string) => import(pathToFileURL(path.join(ROOT, 'scripts', 'packaging', name)).href);
const installed = (program: string, args: string[]): boolean =>
  spawnSync(program, args, { stdio: 'ignore' }).status === 0;

/** The man page's text as a reader sees it: roff's escapes undone, the macros' lines dropped. */
function plain(roff: string): string {
  return roff
    .split('\n')
    .filter((line) => !line.startsWith('.'))
    .join('\n')
    .replace(/\\f[BIR]/g, '')
    .replace(/\\-/g, '-')
    .replace(/\\e/g, '\\')
    .replace(/\\&/g, '');
}

describe('the man page bds(1)', () => {
  it('says what bds --help and bds help <command> say: every command, option, variable and exit code', async () => {
    const { manPage } = await script('man.js');
    const page: string = await manPage({ root: ROOT, version: VERSION, epoch: 1767225600 });
    expect(page).toMatch(
      new RegExp(`^\\.TH BDS 1 2026-01-01 "bds ${VERSION.replace(/\./g, '\\.')}" "User Commands"$`, 'm'),
    );
    const text = plain(page);
    const help = await run(['--help']);
    const commands = [...help.stdout.matchAll(/^ {2}([a-z-]+) \[options\]/gm)].map((m) => m[1]!);
    expect(commands.length).toBeGreaterThan(10);
    for (const command of commands) {
      const own = await run(['help', command]);
      const usage = /^Usage: (.*)$/m.exec(own.stdout)![1]!;
      expect(text).toContain(`\n${usage}\n`);
      for (const [, term] of own.stdout.matchAll(/^ {2}(-[^ ].*?)(?: {2,}|$)/gm)) expect(text).toContain(`\n${term}\n`);
    }
    const footer = help.stdout.slice(help.stdout.indexOf('\nSettings'));
    for (const [, term] of footer.matchAll(/^ {2}(\S.*?) {2,}/gm)) expect(text).toContain(`\n${term}\n`);
    expect(page).toMatch(/^\.SH ENVIRONMENT$/m);
    expect(page).toMatch(/^\.SH EXIT STATUS$/m);
  });

  it.skipIf(!installed('man', ['--version']))('renders with no warning from man and groff', async () => {
    const { manPage } = await script('man.js');
    const file = path.join(tempDir(), 'bds.1');
    writeFileSync(file, await manPage({ root: ROOT, version: VERSION, epoch: 1767225600 }));
    const res = spawnSync('man', ['--warnings', '-E', 'UTF-8', '-l', file], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', MANWIDTH: '80', MAN_KEEP_FORMATTING: '0', LANG: 'C.UTF-8' },
    });
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    const shown = res.stdout.replace(/.\x08/g, ''); // bold and underline as overstrikes, off a terminal
    expect(shown).toMatch(/^NAME\n {7}bds - deliver scrubbed datasets/m);
    expect(shown).toContain('bds deliver [options] <dir...>');
  });
});

describe('the Homebrew, Scoop and winget manifests', () => {
  /** A release folder with a tarball and a Windows binary of made-up bytes, and its SHA256SUMS. */
  async function release(): Promise<{ dir: string; sums: Record<string, string> }> {
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `batch-delivery-bds-${VERSION}.tgz`), 'the tarball');
    writeFileSync(path.join(dir, 'bds-win-x64.exe'), 'MZ the Windows binary');
    const { writeManifests, manifestFiles } = await script('manifests.js');
    expect(writeManifests({ release: dir, version: VERSION })).toEqual(manifestFiles());
    const sums: Record<string, string> = {};
    for (const file of [`batch-delivery-bds-${VERSION}.tgz`, 'bds-win-x64.exe'])
      sums[file] = createHash('sha256')
        .update(readFileSync(path.join(dir, file)))
        .digest('hex');
    return { dir, sums };
  }
  const base = `https://github.com/batch-delivery/bds/releases/download/v${VERSION}`;

  it("the formula installs the release's tarball, by its SHA-256, with Homebrew's Node.js, and tests bds --version", async () => {
    const { dir, sums } = await release();
    const formula = readFileSync(path.join(dir, 'bds.rb'), 'utf8');
    expect(formula).toContain(`  url "${base}/batch-delivery-bds-${VERSION}.tgz"\n`);
    expect(formula).toContain(`  sha256 "${sums[`batch-delivery-bds-${VERSION}.tgz`]}"\n`);
    expect(formula).toMatch(/^class Bds < Formula$/m);
    expect(formula).toMatch(/^ {2}depends_on "node"$/m);
    expect(formula).toMatch(/^ {4}system "npm", "install", \*std_npm_args$/m);
    expect(formula).toMatch(/^ {2}test do\n(?: {4}.*\n)*? {4}.*shell_output\("#\{bin\}\/bds --version"\)/m);
  });

  it.skipIf(!installed('ruby', ['--version']))('the formula is valid Ruby (ruby -c)', async () => {
    const { dir } = await release();
    const res = spawnSync('ruby', ['-c', path.join(dir, 'bds.rb')], { encoding: 'utf8' });
    expect(res.stderr).toBe('');
    expect(res.stdout).toBe('Syntax OK\n');
  });

  it("Scoop and winget install the release's bds-win-x64.exe, by its SHA-256, as bds", async () => {
    const { dir, sums } = await release();
    const scoop = JSON.parse(readFileSync(path.join(dir, 'bds.json'), 'utf8'));
    expect(scoop).toMatchObject({
      version: VERSION,
      license: 'MIT',
      bin: 'bds.exe',
      architecture: { '64bit': { url: `${base}/bds-win-x64.exe#/bds.exe`, hash: sums['bds-win-x64.exe'] } },
    });
    expect(scoop.notes.join('\n')).toContain('bds completion powershell | Out-String | Invoke-Expression');

    const yaml = (name: string): string => readFileSync(path.join(dir, `BatchDelivery.bds.${name}`), 'utf8');
    const field = (text: string, name: string): string | undefined =>
      new RegExp(`^ *(?:- )?${name}: (.*)$`, 'm').exec(text)?.[1];
    for (const [name, type] of [
      ['yaml', 'version'],
      ['installer.yaml', 'installer'],
      ['locale.en-US.yaml', 'defaultLocale'],
    ] as const) {
      const text = yaml(name);
      expect(field(text, 'PackageIdentifier')).toBe('BatchDelivery.bds');
      expect(field(text, 'PackageVersion')).toBe(VERSION);
      expect(field(text, 'ManifestType')).toBe(type);
      expect(field(text, 'ManifestVersion')).toBe('1.6.0');
    }
    const installer = yaml('installer.yaml');
    expect(field(installer, 'InstallerType')).toBe('portable');
    expect(field(installer, 'Architecture')).toBe('x64');
    expect(field(installer, 'InstallerUrl')).toBe(`${base}/bds-win-x64.exe`);
    expect(field(installer, 'InstallerSha256')).toBe(sums['bds-win-x64.exe']!.toUpperCase());
    expect(installer).toMatch(/^Commands:\n {2}- bds$/m);
    expect(field(yaml('yaml'), 'DefaultLocale')).toBe('en-US');
    expect(field(yaml('locale.en-US.yaml'), 'License')).toBe('MIT');
  });
});
