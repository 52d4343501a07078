// Folder patterns a shell left as typed (cmd.exe and PowerShell never expand them, a quoted one in a POSIX shell
// neither, nor the GitHub Action's `folders` input): deliver and check expand them as a POSIX shell would.

import { mkdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandFolderPatterns } from '../src/cli/commands/folder-patterns.js';
import { makeFolder, newSource, periods, run, sandbox, sandboxEnv, tempDir } from './helpers.js';

/** Folders named `names` in a new folder, each with data of its own; returns that folder. */
function folders(names: string[]): string {
  const root = tempDir('bds-patterns-');
  names.forEach((name, i) => renameSync(makeFolder({ records: 3 + i }).dir, path.join(root, name)));
  return root;
}

/** The folders `bds check --json` checked, in its order, by name. */
async function checked(args: string[], options: Parameters<typeof run>[1] = {}): Promise<string[]> {
  const res = await run(['check', ...args, '--json'], options);
  expect(res.code).toBe(0);
  const json = res.json() as { checks?: Array<{ dir: string }>; period?: string };
  return json.checks ? json.checks.map((c) => path.basename(c.dir)) : [`one: ${json.period}`];
}

describe('a folder pattern the shell left as typed', () => {
  it('deliver expands it, the months oldest first, each delivered once', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const root = folders(['records-2023-02', 'records-2023-01', 'records-2024-01']);
    const res = await run(['deliver', path.join(root, 'records-2023-*'), '--source', source, '--json'], {
      env: sandboxEnv(box),
    });
    expect(res.code).toBe(0);
    const json = res.json() as { deliveries: Array<{ period: string }> };
    expect(json.deliveries.map((d) => d.period)).toEqual(['2023-01', '2023-02']);
    expect(periods(box)).toEqual(['2023-01', '2023-02']);
  });

  it('matches in byte order, as a POSIX shell in the C locale; *, ? and [...] within one segment; no hidden name', async () => {
    const root = folders(['b-2023-03', 'B-2023-01', 'a-2023-02', '.a-2023-04', 'c-2023-05']);
    // Upper case before lower case: byte order, not a locale's.
    expect(await checked(['*-2023-0?'], { cwd: root })).toEqual(['B-2023-01', 'a-2023-02', 'b-2023-03', 'c-2023-05']);
    expect(await checked(['[ab]-2023-*'], { cwd: root })).toEqual(['a-2023-02', 'b-2023-03']);
    expect(await checked(['[!ab]-2023-*'], { cwd: root })).toEqual(['B-2023-01', 'c-2023-05']);
    expect(await checked(['.*'], { cwd: root })).toEqual(['one: 2023-04']);
    // A pattern in a folder's segment too, relative to the working folder.
    const parent = tempDir('bds-patterns-');
    for (const [i, month] of ['2023/records-2023-01', '2023/other-2023-02', '2024/records-2024-01'].entries()) {
      mkdirSync(path.join(parent, path.dirname(month)), { recursive: true });
      renameSync(makeFolder({ records: 3 + i }).dir, path.join(parent, month));
    }
    expect(await checked(['20*/records-*'], { cwd: parent })).toEqual(['records-2023-01', 'records-2024-01']);
  });

  it('a pattern mixed with folders, and a folder whose name holds [ ] is taken as it is', async () => {
    const root = folders(['records-2023-01', 'records-2023-02', 'x[2023-03]']);
    expect(await checked(['x[2023-03]', 'records-*'], { cwd: root })).toEqual([
      'x[2023-03]',
      'records-2023-01',
      'records-2023-02',
    ]);
  });

  it('a pattern matching nothing is an error naming the pattern, exit 2', async () => {
    const root = folders(['records-2023-01']);
    mkdirSync(path.join(root, 'empty'));
    const box = await sandbox();
    for (const command of ['check', 'deliver']) {
      const res = await run([command, 'records-1999-*', '--source', newSource(box)], {
        cwd: root,
        env: sandboxEnv(box),
      });
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(`no such folder: ${path.join(root, 'records-1999-*')}`);
    }
  });

  it("on Windows (cmd.exe, PowerShell) the same, with either separator, and a name's case does not matter", () => {
    const root = folders(['records-2023-02', 'Records-2023-01', 'other-2023-03']);
    const parent = path.dirname(root);
    const typed = `${path.basename(root)}/RECORDS-2023-*`;
    expect(expandFolderPatterns([typed], parent, 'win32')).toEqual([
      `${path.basename(root)}/Records-2023-01`,
      `${path.basename(root)}/records-2023-02`,
    ]);
    expect(expandFolderPatterns([typed], parent, 'linux')).toEqual([typed]);
  });
});
