// .github/workflows/release.yml, which only GitHub can run: read here as text and held to what a release must
// do (docs/releasing.md): every release file attested, the publishing jobs on GitHub-hosted runners,
// each job with the least permissions, every action pinned by commit, no secret on a command line, nothing
// published before the action's pins are checked. docs/releasing.md's verification commands name real files.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

const WORKFLOW = readFileSync(path.join(ROOT, '.github', 'workflows', 'release.yml'), 'utf8');
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

interface Job {
  name: string;
  text: string;
  permissions: Record<string, string>;
  needs: string[];
}

/** The jobs of the workflow: each one's text (its lines under `jobs:`), permissions and needs. */
function jobs(): Job[] {
  const body = WORKFLOW.slice(WORKFLOW.indexOf('\njobs:\n') + 7);
  return [...body.matchAll(/^ {2}([a-z-]+):\n((?: {4}.*\n|\n)*)/gm)].map(([, name, text]) => {
    const block = /^ {4}permissions:\n((?: {6}.*\n)*)/m.exec(text!)?.[1] ?? '';
    const permissions = Object.fromEntries(
      [...block.matchAll(/^ {6}([a-z-]+): (\w+)$/gm)].map(([, scope, level]) => [scope!, level!]),
    );
    const needs = /^ {4}needs: (?:\[(.*)\]|(\S+))$/m.exec(text!);
    return {
      name: name!,
      text: text!,
      permissions,
      needs: needs ? (needs[1] ?? needs[2]!).split(/,\s*/) : [],
    };
  });
}
const job = (name: string): Job => jobs().find((j) => j.name === name)!;
/** Every job a job waits for, directly or not. */
const after = (name: string): string[] => job(name).needs.flatMap((n) => [n, ...after(n)]);

describe('.github/workflows/release.yml', () => {
  it('runs on a tag, with no permission at the top level', () => {
    expect(WORKFLOW).toMatch(/^on:\n {2}push:\n {4}tags: \['v\*'\]\n/m);
    expect(WORKFLOW).toMatch(/^permissions: \{\}$/m);
    expect(jobs().map((j) => j.name)).toEqual(['build', 'attest', 'github-release', 'npm', 'image']);
  });

  it('builds from the tag, checks the version and the action pins, then hands release/ on', () => {
    const { text } = job('build');
    const order = ['npm ci', 'npm run release', 'sha256sum -c SHA256SUMS', 'node scripts/pin-action.js --check'];
    const at = order.map((line) => text.indexOf(line));
    expect(at.every((i) => i > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(text).toContain('[ "$GITHUB_REF_NAME" = "v$version" ]');
    expect(text.indexOf('actions/upload-artifact@')).toBeGreaterThan(at.at(-1)!);
  });

  it('attests every release file, SHA256SUMS included, before anything is published', () => {
    expect(job('attest').text).toMatch(/uses: actions\/attest-build-provenance@[0-9a-f]{40} # v\d/);
    expect(job('attest').text).toMatch(/^ {10}subject-path: release\/\*$/m);
    for (const publisher of ['github-release', 'npm', 'image']) expect(after(publisher)).toContain('attest');
    expect(after('attest')).toContain('build');
  });

  it('publishes from GitHub-hosted runners: npm with provenance, the image by its digest', () => {
    for (const { name, text } of jobs()) expect(text, name).toMatch(/^ {4}runs-on: ubuntu-\d+\.\d+$/m);
    for (const name of ['attest', 'github-release', 'npm', 'image'])
      expect(job(name).text, name).not.toMatch(/^ {4}container:/m);
    expect(job('npm').text).toMatch(/npm publish "release\/batch-delivery-bds-\$\{TAG#v\}\.tgz" --provenance/);
    expect(job('github-release').text).toContain('gh release create "$TAG" release/*');
    expect(job('image').text).toContain('"docker://$image"');
    expect(job('image').text).toContain('image=ghcr.io/batch-delivery/bds:$version');
  });

  it('gives each job only the permissions it uses', () => {
    expect(Object.fromEntries(jobs().map((j) => [j.name, j.permissions]))).toEqual({
      build: { contents: 'read' },
      attest: { 'id-token': 'write', attestations: 'write' },
      'github-release': { contents: 'write' },
      npm: { 'id-token': 'write' },
      image: { packages: 'write' },
    });
  });

  it('pins every action by commit', () => {
    const uses = [...WORKFLOW.matchAll(/uses: (\S+)/g)].map((m) => m[1]!);
    expect(uses.length).toBeGreaterThan(5);
    for (const use of uses) expect(use).toMatch(/^[\w-]+\/[\w-]+@[0-9a-f]{40}$/);
  });

  it('puts no secret on a command line: the registry token goes to skopeo on stdin', () => {
    for (const [, line] of WORKFLOW.matchAll(/^\s*(?:run: )?(.*\$\{\{\s*secrets\.[^}]*\}\}.*)$/gm))
      expect(line).toMatch(/^[A-Z_]+: \$\{\{ secrets\.\w+ \}\}$/);
    expect(WORKFLOW).not.toMatch(/--(?:dest-)?creds|--password[ =]|-p "\$/);
    expect(job('image').text).toContain(
      'printf \'%s\' "$TOKEN" | skopeo login --username "$GITHUB_ACTOR" --password-stdin',
    );
  });
});

describe("docs/releasing.md's verification commands", () => {
  it('name the files the release has', async () => {
    const docs = readFileSync(path.join(ROOT, 'docs', 'releasing.md'), 'utf8');
    const { manifestFiles } = await import(pathToFileURL(path.join(ROOT, 'scripts', 'packaging', 'manifests.js')).href);
    const files = [
      'SHA256SUMS',
      'THIRD-PARTY-LICENSES.txt',
      `batch-delivery-bds-${VERSION}.tgz`,
      `bds-${VERSION}.sbom.cdx.json`,
      `bds-${VERSION}-oci.tar`,
      'bds-linux-x64',
      'bds-linux-arm64',
      'bds-win-x64.exe',
      'bds-darwin-x64',
      `bds_${VERSION}_amd64.deb`,
      `bds_${VERSION}_arm64.deb`,
      `bds-${VERSION}-1.x86_64.rpm`,
      `bds-${VERSION}-1.aarch64.rpm`,
      ...manifestFiles(),
    ];
    const verify = docs.slice(
      docs.indexOf('## Verifying a download'),
      docs.indexOf('\n## ', docs.indexOf('## Verifying a download') + 5),
    );
    const commands = [...verify.matchAll(/^(gh attestation verify|npm audit signatures|skopeo inspect)(.*)$/gm)];
    expect(commands.map((c) => c[1])).toEqual(
      expect.arrayContaining(['gh attestation verify', 'npm audit signatures', 'skopeo inspect']),
    );
    for (const [, tool, rest] of commands) {
      if (tool !== 'gh attestation verify') continue;
      const subject = rest!.trim().split(/\s+/)[0]!;
      expect(files).toContain(subject);
      expect(rest).toContain('--repo batch-delivery/bds');
    }
    expect(commands.filter(([, tool]) => tool === 'gh attestation verify').length).toBeGreaterThan(1);
  });
});
