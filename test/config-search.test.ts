// What the config search may take its settings from: never a folder above home (a working folder outside home
// is searched alone), never a file another user owns (as git passes over a repository of someone else's since
// CVE-2022-24765); and what a config file or key file may hold: comment lines in a key file, and a warning
// with the nearest known name for a setting bds does not know.

import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS } from '../src/core/settings/config-file.js';
import { run, sandbox, spawnCli, tempDir, trap } from './helpers.js';

/** A home with the user's own config file pointing at the sandbox. */
function homeWithUserConfig(config: object): { home: string; env: Record<string, string> } {
  const home = tempDir('bds-home-');
  const folder = path.join(home, '.config', 'bds');
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, 'config.json'), JSON.stringify(config), { mode: 0o600 });
  return { home, env: { XDG_CONFIG_HOME: path.join(home, '.config') } };
}

describe('the config search never leaves home', () => {
  it("a working folder outside home is searched alone: a .bdsrc.json above it (another user's /srv, /tmp) is never read", async () => {
    const box = await sandbox();
    const stolen = await trap();
    const { home, env } = homeWithUserConfig({ baseUrl: box.baseUrl });
    const shared = tempDir('bds-shared-');
    writeFileSync(path.join(shared, '.bdsrc.json'), JSON.stringify({ baseUrl: stolen.url }));
    const cwd = path.join(shared, 'scrub', 'out');
    mkdirSync(cwd, { recursive: true });
    const res = await run(['whoami', '--json'], { home, cwd, env: { ...env, BDS_API_KEY: box.keys.live } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.json().baseUrl).toBe(box.baseUrl);
    expect(stolen.requests).toEqual([]);
    // The working folder itself still counts.
    writeFileSync(path.join(cwd, '.bdsrc.json'), JSON.stringify({ sourceId: 'src_here' }));
    const here = await run(['doctor', '--json'], { home, cwd, env: { ...env, BDS_API_KEY: box.keys.live } });
    expect(here.json().checks.find((c: { name: string }) => c.name === 'config file').message).toBe(
      path.join(cwd, '.bdsrc.json'),
    );
    expect(stolen.requests).toEqual([]);
  });
});

describe.skipIf(process.getuid?.() !== 0)('a config file another user owns', () => {
  // Tests run as root, so that a file can be given to another uid; bds is told it runs as uid 1000.
  const ME = 1000;
  const STRANGER = 1001;

  it("is passed over with a warning naming it and its owner; the key stays with the user's own settings", async () => {
    const box = await sandbox();
    const stolen = await trap();
    const { home, env } = homeWithUserConfig({ baseUrl: box.baseUrl });
    const project = path.join(home, 'project');
    mkdirSync(project);
    const planted = path.join(home, '.bdsrc.json');
    writeFileSync(planted, JSON.stringify({ baseUrl: stolen.url }));
    chownSync(planted, STRANGER, STRANGER);
    const res = await run(['whoami', '--json'], {
      home,
      cwd: project,
      uid: ME,
      env: { ...env, BDS_API_KEY: box.keys.live },
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(
      `warning: ignoring the config file ${planted}: it belongs to uid ${STRANGER}, not to you or root; `,
    );
    expect(res.json().baseUrl).toBe(box.baseUrl);
    expect(stolen.requests).toEqual([]);
    // The same file is the user's own when it is theirs, or root's.
    for (const owner of [ME, 0]) {
      chownSync(planted, owner, owner);
      writeFileSync(planted, JSON.stringify({ baseUrl: box.baseUrl, sourceId: `src_of_${owner}` }));
      const own = await run(['doctor', '--json'], {
        home,
        cwd: project,
        uid: ME,
        env: { ...env, BDS_API_KEY: box.keys.live },
      });
      expect(own.stderr).not.toContain('ignoring');
      expect(own.json().checks.find((c: { name: string }) => c.name === 'source id').message).toBe(
        `src_of_${owner} (from config file ${planted})`,
      );
    }
  });

  it("another user's package.json without a bds key is passed over silently; a file named by --config is the user's choice", async () => {
    const box = await sandbox();
    const { home, env } = homeWithUserConfig({ baseUrl: box.baseUrl });
    const manifest = path.join(home, 'package.json');
    writeFileSync(manifest, JSON.stringify({ name: 'someone-elses' }));
    chownSync(manifest, STRANGER, STRANGER);
    const res = await run(['whoami'], { home, uid: ME, env: { ...env, BDS_API_KEY: box.keys.live } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).not.toContain('ignoring');
    const named = path.join(tempDir(), 'team.json');
    writeFileSync(named, JSON.stringify({ baseUrl: box.baseUrl, apiKey: box.keys.live }), { mode: 0o600 });
    chownSync(named, STRANGER, STRANGER);
    const chosen = await run(['whoami', '--json', '--config', named], { home, uid: ME });
    expect(chosen.code, chosen.stderr).toBe(0);
    expect(chosen.json().keySource).toBe(`config file ${named}`);
  });
});

describe('a config file that exists but cannot be read', () => {
  it('a folder in its place: exit 2 naming it, never passed over for the next file', async () => {
    const box = await sandbox();
    const { home, env } = homeWithUserConfig({ baseUrl: box.baseUrl });
    const folder = path.join(home, '.bdsrc.json');
    mkdirSync(folder);
    const res = await run(['whoami'], { home, env: { ...env, BDS_API_KEY: box.keys.live } });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(new RegExp(`^bds: cannot read the config file ${folder}: it is a folder$`, 'm'));
    expect(box.requests).toHaveLength(0);
  });

  describe.skipIf(process.getuid?.() !== 0)('as a user who may not read it', () => {
    // Tests run as root, who reads anything: bds is spawned as nobody (uid 65534) to be refused.
    const NOBODY = 65534;
    function homeOfNobody(): { home: string; userConfig: string; env: Record<string, string> } {
      const home = tempDir('bds-nobody-');
      const userConfig = path.join(home, '.config', 'bds', 'config.json');
      mkdirSync(path.dirname(userConfig), { recursive: true });
      writeFileSync(userConfig, JSON.stringify({ baseUrl: 'http://127.0.0.1:9', sourceId: 'src_user' }));
      for (const dir of [home, path.join(home, '.config'), path.dirname(userConfig), userConfig]) {
        chownSync(dir, NOBODY, NOBODY);
      }
      return { home, userConfig, env: { HOME: home, XDG_CONFIG_HOME: path.join(home, '.config') } };
    }

    it('mode 000, or in a folder sudo made: exit 2 naming the file and the reason; a fail line in doctor', async () => {
      const { home, userConfig, env } = homeOfNobody();
      chmodSync(userConfig, 0o000);
      const whoami = await spawnCli(['whoami'], { env, uid: NOBODY });
      expect(whoami.code).toBe(2);
      expect(whoami.stderr).toContain(`bds: cannot read the config file ${userConfig}: permission denied`);
      expect(whoami.stderr).not.toContain('no base URL');
      const doctor = await spawnCli(['doctor', '--json'], { env, uid: NOBODY });
      expect(doctor.code).toBe(2);
      expect(JSON.parse(doctor.stdout).checks).toContainEqual(
        expect.objectContaining({
          status: 'fail',
          message: `cannot read the config file ${userConfig}: permission denied`,
        }),
      );
      // `sudo bds login` on a home without ~/.config/bds: the folder is root's, 0700.
      chmodSync(userConfig, 0o600);
      chownSync(path.dirname(userConfig), 0, 0);
      chmodSync(path.dirname(userConfig), 0o700);
      const sudo = await spawnCli(['whoami'], { env, uid: NOBODY, cwd: home });
      expect(sudo.code).toBe(2);
      expect(sudo.stderr).toContain(
        `bds: cannot look in ${path.dirname(userConfig)} for a config file: permission denied: ${path.dirname(userConfig)} is mode 0700, owned by root and group root (gid 0): only root may read it`,
      );
    });

    it("an unreadable .bdsrc.json is not skipped for the user's own config file", async () => {
      const { home, env } = homeOfNobody();
      const project = path.join(home, 'project');
      mkdirSync(project);
      chownSync(project, NOBODY, NOBODY);
      const nearer = path.join(project, '.bdsrc.json');
      writeFileSync(nearer, JSON.stringify({ sourceId: 'src_project' }), { mode: 0o000 });
      chownSync(nearer, NOBODY, NOBODY);
      const res = await spawnCli(['whoami'], { env, uid: NOBODY, cwd: project });
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(`bds: cannot read the config file ${nearer}: permission denied`);
    });
  });
});

describe('what a config file or key file may hold', () => {
  it('a key file with comment lines: # lines and blank lines are not the key', async () => {
    const box = await sandbox();
    const keyFile = path.join(tempDir(), 'live.key');
    writeFileSync(
      keyFile,
      `# live key of Acme, from the portal 2024-05-01\n\n  ${box.keys.live}  \n# rotate yearly\n`,
      { mode: 0o600 },
    );
    const res = await run(['whoami', '--json'], { env: { BDS_BASE_URL: box.baseUrl, BDS_API_KEY_FILE: keyFile } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.json().key.mode).toBe('live');
  });

  it('a key file with two keys is refused (exit 3) without showing either', async () => {
    const box = await sandbox();
    const keyFile = path.join(tempDir(), 'two.key');
    writeFileSync(keyFile, `${box.keys.live}\n${box.keys.test}\n`, { mode: 0o600 });
    const res = await run(['whoami'], { env: { BDS_BASE_URL: box.baseUrl, BDS_API_KEY_FILE: keyFile } });
    expect(res.code).toBe(3);
    expect(res.stderr).toContain(
      `bds: the key file ${keyFile} (BDS_API_KEY_FILE) holds 2 lines besides comments; it must hold the key alone`,
    );
    expect(res.stderr).not.toContain('sandbox_');
    expect(box.requests).toHaveLength(0);
  });

  it('a setting bds does not know is a warning naming it and the nearest known one; the others still apply', async () => {
    const box = await sandbox();
    const home = tempDir();
    const file = path.join(home, '.bdsrc.json');
    writeFileSync(
      file,
      JSON.stringify({
        apikey: box.keys.live,
        apiKey: box.keys.live,
        sourceID: 'src_1',
        baseUrl: box.baseUrl,
        colour: 'blue',
        profiles: { test: { baseURL: box.baseUrl } },
      }),
    );
    chmodSync(file, 0o600);
    const res = await run(['whoami'], { home });
    expect(res.code, res.stderr).toBe(0);
    const warnings = res.stderr.split('\n').filter((line) => line.startsWith('warning:'));
    expect(warnings).toEqual([
      `warning: the config file ${file} has a setting bds does not know: apikey; did you mean apiKey?`,
      `warning: the config file ${file} has a setting bds does not know: sourceID; did you mean sourceId?`,
      `warning: the config file ${file} has a setting bds does not know: colour; bds knows ${[...CONFIG_KEYS, 'profile', 'profiles'].join(', ')}`,
      `warning: the config file ${file} has a setting bds does not know: profiles.test.baseURL; did you mean profiles.test.baseUrl?`,
    ]);
    expect(`${res.stdout}${res.stderr}`).not.toContain(box.keys.live);
  });

  it('a setting named like a key is never shown', async () => {
    const home = tempDir();
    const secret = 'svc_live_pasted_as_a_name_0000';
    writeFileSync(
      path.join(home, '.bdsrc.json'),
      JSON.stringify({ [secret]: true, profile: secret, profiles: { [secret]: {} } }),
    );
    const res = await run(['whoami'], { home });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('has a setting bds does not know: svc_live_…');
    expect(`${res.stdout}${res.stderr}`).not.toContain('pasted_as_a_name');
  });
});
