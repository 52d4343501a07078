// An old Node.js gets one line and exit 2 from bin/bds.js, before anything of bds loads. A real old Node is
// too slow to fetch for every test run: .ci/run runs bin/bds.js on Node 18 from the npm registry; here the
// check is tested as a function, and bin/bds.js with a Node that reports an old version.
import { spawn } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { collectOutput, ROOT, tempDir } from './helpers.js';

const { nodeTooOld, tooOldMessage } = (await import(pathToFileURL(path.join(ROOT, 'bin', 'node-check.js')).href)) as {
  nodeTooOld: (version: string) => boolean;
  tooOldMessage: (version: string) => string;
};

describe('nodeTooOld', () => {
  it.each(['18.20.4', '20.18.3', '20.0.0', '16.20.2', '12.22.12', '0.10.48', 'v20.18.0'])(
    '%s is too old',
    (version) => {
      expect(nodeTooOld(version)).toBe(true);
    },
  );
  it.each(['20.19.0', '20.20.2', '21.0.0', '22.12.0', '24.1.0-pre', '26.0.0', 'v20.19.0', 'something else'])(
    '%s is not',
    (version) => {
      expect(nodeTooOld(version)).toBe(false);
    },
  );
  it('the message names the Node found and the one needed, on one line', () => {
    expect(tooOldMessage('18.20.4')).toBe('bds: Node.js 18.20.4 is too old; bds needs Node.js 20.19 or newer');
  });
});

/** bin/bds.js run by this Node, which reports `version` as its own (process.versions.node redefined first). */
function runReporting(
  version: string,
  script: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const pretend = `Object.defineProperty(process.versions, 'node', { value: ${JSON.stringify(version)} })`;
  return collectOutput(
    spawn(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(pretend)}`, script, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: tempDir() },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

describe('bin/bds.js on an old Node', () => {
  it('prints one line naming both versions and exits 2, whatever the command', async () => {
    for (const args of [['--version'], ['deliver', 'somewhere', '--period', '2024-05'], []]) {
      const res = await runReporting('18.20.4', path.join(ROOT, 'bin', 'bds.js'), args);
      expect(res.code).toBe(2);
      expect(res.stdout).toBe('');
      expect(res.stderr).toBe('bds: Node.js 18.20.4 is too old; bds needs Node.js 20.19 or newer\n');
    }
  });

  it('loads nothing of bds before the check: a bin/ with no dist/ beside it still gets the message', async () => {
    const dir = tempDir();
    for (const name of ['bds.js', 'answer-quickly.js', 'node-check.js', 'compile-cache.js', 'package.json'])
      copyFileSync(path.join(ROOT, 'bin', name), path.join(dir, name));
    const old = await runReporting('20.18.0', path.join(dir, 'bds.js'), ['--help']);
    expect(old.code).toBe(2);
    expect(old.stderr).toBe('bds: Node.js 20.18.0 is too old; bds needs Node.js 20.19 or newer\n');
    // The same copy on a recent enough Node does try to load dist/, and fails: the check is what stopped it.
    const recent = await runReporting('20.19.0', path.join(dir, 'bds.js'), ['--help']);
    expect(recent.code).not.toBe(0);
    expect(recent.stderr).toMatch(/Cannot find module|ERR_MODULE_NOT_FOUND/);
  });
});
