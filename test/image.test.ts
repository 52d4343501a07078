// scripts/build-image.js: the user the OCI image runs as and the folders it writes, unpacked here from the tar
// the image is made of (CI builds the image and runs it with podman as other users: .ci/run).

import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT, tempDir } from './helpers.js';

interface TarEntry {
  path: string;
  type?: 'dir' | 'symlink';
  data?: Buffer;
  mode?: number;
  uid?: number;
  gid?: number;
}
const { USER, layoutIndex, tarOf, userEntries } = (await import(
  pathToFileURL(path.join(ROOT, 'scripts', 'build-image.js')).href
)) as {
  USER: { uid: number; gid: number; home: string };
  layoutIndex: (indexDesc: object, version: string) => { manifests: Array<{ annotations: Record<string, string> }> };
  tarOf: (entries: TarEntry[], mtime: number) => Buffer;
  userEntries: () => TarEntry[];
};

/** The user's entries as the image holds them, unpacked with their owners and modes. */
function unpacked(): string {
  const dir = tempDir('bds-image-');
  chmodSync(dir, 0o755);
  const tar = path.join(tempDir('bds-image-tar-'), 'layer.tar');
  writeFileSync(tar, tarOf(userEntries(), 0));
  execFileSync('tar', ['-xf', tar, '-C', dir, '--same-owner', '--same-permissions']);
  return dir;
}

describe('the OCI image', () => {
  it('runs as bds (10001) in group 0, whose home and XDG folders group 0 may write as bds may', () => {
    expect(USER).toMatchObject({ uid: 10001, gid: 0, home: '/home/bds' });
    const entries = userEntries();
    const passwd = entries.find((e) => e.path === 'etc/passwd')!.data!.toString();
    expect(passwd).toContain('bds:x:10001:0:bds:/home/bds:/sbin/nologin\n');
    for (const folder of [
      'home/bds/',
      'home/bds/.config/',
      'home/bds/.local/',
      'home/bds/.local/state/',
      'home/bds/.cache/',
    ]) {
      expect(entries.find((e) => e.path === folder)).toMatchObject({ type: 'dir', uid: 10001, gid: 0, mode: 0o775 });
    }
  });

  it("writes each entry's gid in its tar header, not its uid", () => {
    const listing = execFileSync('tar', ['-tv', '--numeric-owner'], {
      input: tarOf(userEntries(), 0),
      encoding: 'utf8',
    });
    expect(listing).toMatch(/^drwxrwxr-x 10001\/0 .* home\/bds\/$/m);
    expect(listing).not.toContain('10001/10001');
  });

  it('is named bds:<version> once loaded, not by its bare version', () => {
    const index = layoutIndex({ digest: 'sha256:0', size: 1 }, '1.2.3');
    expect(index.manifests[0]!.annotations).toEqual({ 'org.opencontainers.image.ref.name': 'bds:1.2.3' });
  });

  describe.skipIf(process.getuid?.() !== 0)('as another user', () => {
    // Tests run as root, who writes anything: a process of an arbitrary uid in group 0 (OpenShift's way).
    it('an arbitrary uid in group 0 can create its records folder under the home', () => {
      const root = unpacked();
      const records = path.join(root, 'home/bds/.local/state/bds');
      const write = spawnSync('sh', ['-c', 'mkdir "$1" && echo x >"$1/r"', 'sh', records], {
        uid: 123456,
        gid: 0,
        encoding: 'utf8',
      });
      expect(write.stderr).toBe('');
      expect(write.status).toBe(0);
      expect(readFileSync(path.join(records, 'r'), 'utf8')).toBe('x\n');
    });
  });
});
