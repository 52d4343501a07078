// npm run demo (examples/demo.js) runs bds as a user would, against a throw-away sandbox, and leaves nothing in
// the user's own folders: no delivery record, no remembered pass, no config.

import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectOutput, ROOT, tempDir } from './helpers.js';

describe('npm run demo', () => {
  it('delivers the example and leaves nothing in the home folder or the XDG folders it was given', async () => {
    // A developer's shell: a home, and no XDG variables, so that bds would default to ~/.cache/bds and the like.
    const home = tempDir('bds-demo-home-');
    const child = spawn(process.execPath, [path.join(ROOT, 'examples', 'demo.js')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const res = await collectOutput(child);
    expect(res.stderr).not.toContain('demo failed');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('The second deliver found the first and sent nothing');
    expect(readdirSync(home)).toEqual([]);
    expect(existsSync(path.join(home, '.cache', 'bds'))).toBe(false);
  });
});
