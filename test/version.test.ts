// `bds --version --verbose`: what support asks first (README.md, "Install"). Plain `--version` stays the
// version alone (output.test.ts, spawn.test.ts); a spawned run names the install kind in spawn.test.ts, where
// .ci/run also points it at the standalone binary.

import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { installKindOf, packageVersion } from '../src/core/version.js';
import { run, tempDir } from './helpers.js';

describe('bds --version --verbose', () => {
  it('prints the version, the Node.js, the platform and, from this checkout, "clone"', async () => {
    for (const argv of [
      ['--version', '--verbose'],
      ['--verbose', '--version'],
      ['-V', '-v'],
    ]) {
      const res = await run(argv);
      expect(res.code).toBe(0);
      expect(res.stderr).toBe('');
      expect(res.stdout).toBe(
        `bds:      ${packageVersion()}\nnode:     ${process.versions.node}\nplatform: ${process.platform}-${process.arch}\ninstall:  clone\n`,
      );
    }
  });

  it("doctor names the install kind in the same word (the 'bds' check)", async () => {
    const install = /^install: +(\w+)$/m.exec((await run(['--version', '--verbose'])).stdout)![1];
    const doctor = JSON.parse((await run(['doctor', '--json'])).stdout) as {
      checks: { name: string; message: string }[];
    };
    expect(doctor.checks.find((check) => check.name === 'bds')!.message).toMatch(new RegExp(`, install: ${install}$`));
  });

  it('with any other argument it is plain --version: the version alone', async () => {
    const res = await run(['--version', '--verbose', '--json']);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(`${packageVersion()}\n`);
  });
});

describe('the install kind of a package folder', () => {
  const pkg = (...parts: string[]): string => {
    const dir = path.join(tempDir('bds-install-'), ...parts);
    mkdirSync(path.join(dir, 'dist'), { recursive: true });
    writeFileSync(path.join(dir, 'package.json'), '{}');
    return dir;
  };

  it("in a node_modules folder (npm install -g, or a project's dependency): tarball", () => {
    expect(installKindOf(pkg('lib', 'node_modules', '@batch-delivery', 'bds'))).toBe('tarball');
    expect(installKindOf(pkg('node_modules', '@batch-delivery', 'bds'))).toBe('tarball');
  });

  it('a git checkout, or a copy of one with its sources: clone', () => {
    const git = pkg('bds');
    mkdirSync(path.join(git, '.git'));
    expect(installKindOf(git)).toBe('clone');
    const worktree = pkg('wt'); // a git worktree's .git is a file
    writeFileSync(path.join(worktree, '.git'), 'gitdir: elsewhere\n');
    expect(installKindOf(worktree)).toBe('clone');
    const sources = pkg('copy');
    mkdirSync(path.join(sources, 'src'));
    expect(installKindOf(sources)).toBe('clone');
  });

  it('the files alone, outside node_modules: unknown', () => {
    expect(installKindOf(pkg('opt', 'bds'))).toBe('unknown');
  });
});
