// Settings: flags over environment over the config file; key files; finding, naming and refusing config files;
// profiles; the warning for a config file that others can read.

import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cacheDir, stateDir, userConfigFolder } from '../src/core/settings/dirs.js';
import type { Sandbox } from '../src/sandbox/emulator.js';
import { makeFolder, newSource, run, sandbox, spawnCli, tempDir, type RunResult } from './helpers.js';

/** A value that fails the base URL check at once (exit 2), so that using it by mistake shows. */
const WRONG_URL = 'http://wrong.example.com';

function writeConfig(file: string, content: unknown, mode = 0o600): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  chmodSync(file, mode);
  return file;
}

/** The value of a `Name:   value` line of whoami's text output. */
function field(res: RunResult, name: string): string | undefined {
  return res.stdout
    .split('\n')
    .find((line) => line.startsWith(`${name}:`))
    ?.slice(name.length + 1)
    .trim();
}

function expectUsageError(res: RunResult, ...parts: string[]): void {
  expect(res.code, res.stderr).toBe(2);
  const errors = res.stderr.split('\n').filter((line) => line.startsWith('bds:'));
  expect(errors, res.stderr).toHaveLength(1);
  for (const part of parts) expect(errors[0]).toContain(part);
}

// cosmiconfig reads the user's config folder from process.env; test/setup.ts points it at a private folder.
const globalDir = path.join(process.env.XDG_CONFIG_HOME!, 'bds');
afterEach(() => rmSync(globalDir, { recursive: true, force: true }));

describe('precedence', () => {
  it('base URL: --base-url, then BDS_BASE_URL, then the config file', async () => {
    const box = await sandbox();
    const home = tempDir();
    const key = { BDS_API_KEY: box.keys.live };

    writeConfig(path.join(home, '.bdsrc.json'), { baseUrl: WRONG_URL });
    const flag = await run(['whoami', '--base-url', box.baseUrl], { home, env: { ...key, BDS_BASE_URL: WRONG_URL } });
    expect(flag.code, flag.stderr).toBe(0);
    expect(field(flag, 'Base URL')).toBe(box.baseUrl);

    const env = await run(['whoami'], { home, env: { ...key, BDS_BASE_URL: box.baseUrl } });
    expect(env.code, env.stderr).toBe(0);
    expect(field(env, 'Base URL')).toBe(box.baseUrl);

    writeConfig(path.join(home, '.bdsrc.json'), { baseUrl: box.baseUrl });
    const file = await run(['whoami'], { home, env: key });
    expect(file.code, file.stderr).toBe(0);
    expect(field(file, 'Base URL')).toBe(box.baseUrl);

    // Where a refused value came from is named.
    expectUsageError(await run(['whoami'], { home, env: { ...key, BDS_BASE_URL: WRONG_URL } }), 'BDS_BASE_URL');
    writeConfig(path.join(home, '.bdsrc.json'), { baseUrl: WRONG_URL });
    expectUsageError(await run(['whoami'], { home, env: key }), `config file ${path.join(home, '.bdsrc.json')}`);
  });

  it('source: --source, then BDS_SOURCE_ID, then the config file', async () => {
    const box = await sandbox();
    const [fromFlag, fromEnv, fromFile] = [newSource(box), newSource(box), newSource(box)];
    const home = tempDir();
    writeConfig(path.join(home, '.bdsrc.json'), { baseUrl: box.baseUrl, apiKey: box.keys.live, sourceId: fromFile });
    const { dir } = makeFolder();
    const dryRun = (extra: string[], env: Record<string, string> = {}) =>
      run(['deliver', dir, '--period', '2024-05', '--dry-run', '--json', ...extra], { home, env });

    expect((await dryRun(['--source', fromFlag], { BDS_SOURCE_ID: fromEnv })).json().source_id).toBe(fromFlag);
    expect((await dryRun([], { BDS_SOURCE_ID: fromEnv })).json().source_id).toBe(fromEnv);
    expect((await dryRun([])).json().source_id).toBe(fromFile);
    expect(box.store.batches()).toHaveLength(0);
  });

  it('key: BDS_API_KEY, then BDS_API_KEY_FILE, then apiKey, then apiKeyFile in the config file', async () => {
    const box = await sandbox();
    const home = tempDir();
    const keyFile = writeConfig(path.join(tempDir(), 'key'), `${box.keys.live}\n`);
    const configKeyFile = writeConfig(path.join(home, 'secrets', 'bds.key'), `  ${box.keys.test}\n`);
    const config = path.join(home, '.bdsrc.json');
    const env = { BDS_BASE_URL: box.baseUrl };

    writeConfig(config, { apiKey: 'svc_live_from_config_file_0', apiKeyFile: 'secrets/bds.key' });
    const fromEnv = await run(['whoami'], {
      home,
      env: { ...env, BDS_API_KEY: box.keys.test, BDS_API_KEY_FILE: keyFile },
    });
    expect(field(fromEnv, 'Key from')).toBe('BDS_API_KEY');

    const fromKeyFile = await run(['whoami'], { home, env: { ...env, BDS_API_KEY_FILE: keyFile } });
    expect(fromKeyFile.code, fromKeyFile.stderr).toBe(0);
    expect(field(fromKeyFile, 'Key from')).toBe(`key file ${keyFile} (BDS_API_KEY_FILE)`);
    expect(field(fromKeyFile, 'Key')).toBe('key_live_sandbox (live mode)');

    const fromConfig = await run(['whoami'], { home, env });
    expect(fromConfig.code).toBe(3); // that key is well formed but unknown: it was the one used
    writeConfig(config, { apiKey: box.keys.live, apiKeyFile: 'secrets/bds.key' });
    expect(field(await run(['whoami'], { home, env }), 'Key from')).toBe(`config file ${config}`);

    // apiKeyFile is relative to the config file's folder.
    writeConfig(config, { apiKeyFile: 'secrets/bds.key' });
    const fromConfigKeyFile = await run(['whoami'], { home, env });
    expect(fromConfigKeyFile.code, fromConfigKeyFile.stderr).toBe(0);
    expect(field(fromConfigKeyFile, 'Key')).toBe('key_test_sandbox (test mode)');
    expect(field(fromConfigKeyFile, 'Key from')).toBe(
      `key file ${configKeyFile} (apiKeyFile in config file ${config})`,
    );
  });
});

describe('BDS_API_KEY_FILE', () => {
  it('is trimmed of its trailing newline', async () => {
    const box = await sandbox();
    const keyFile = writeConfig(path.join(tempDir(), 'key'), `${box.keys.test}\r\n\n`);
    const res = await run(['whoami', '--json'], { env: { BDS_BASE_URL: box.baseUrl, BDS_API_KEY_FILE: keyFile } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.json().keySource).toBe(`key file ${keyFile} (BDS_API_KEY_FILE)`);
    expect(box.requests[0]!.headers.authorization).toBe(`Bearer ${box.keys.test}`);
  });

  it('that is missing or empty exits 3 naming it', async () => {
    const box = await sandbox();
    const missing = path.join(tempDir(), 'no-such-key');
    const res = await run(['whoami'], { env: { BDS_BASE_URL: box.baseUrl, BDS_API_KEY_FILE: missing } });
    expect(res.code, res.stderr).toBe(3);
    expect(res.stderr).toMatch(
      new RegExp(`^bds: cannot read the key file ${missing} \\(BDS_API_KEY_FILE\\): no such file`, 'm'),
    );

    const empty = writeConfig(path.join(tempDir(), 'key'), '\n');
    const blank = await run(['whoami'], { env: { BDS_BASE_URL: box.baseUrl, BDS_API_KEY_FILE: empty } });
    expect(blank.code, blank.stderr).toBe(3);
    expect(blank.stderr).toContain(`the key file ${empty} (BDS_API_KEY_FILE) is empty`);
    expect(box.requests).toHaveLength(0);
  });

  it('that others can read gets a warning', async () => {
    const box = await sandbox();
    const keyFile = writeConfig(path.join(tempDir(), 'key'), box.keys.live, 0o644);
    const res = await run(['whoami'], { env: { BDS_BASE_URL: box.baseUrl, BDS_API_KEY_FILE: keyFile } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(
      `warning: the key file ${keyFile} can be read by other users; fix with: chmod 600 ${keyFile}`,
    );
  });
});

describe('finding the config file', () => {
  async function whoamiFrom(box: Sandbox, home: string, cwd = home): Promise<RunResult> {
    const res = await run(['whoami', '--json'], { home, cwd, env: { BDS_BASE_URL: box.baseUrl } });
    expect(res.code, res.stderr).toBe(0);
    return res;
  }

  it('.bdsrc.json in the working folder', async () => {
    const box = await sandbox();
    const home = tempDir();
    const file = writeConfig(path.join(home, '.bdsrc.json'), { apiKey: box.keys.live });
    expect((await whoamiFrom(box, home)).json().keySource).toBe(`config file ${file}`);
  });

  it('.bdsrc.json in a parent folder, up to HOME', async () => {
    const box = await sandbox();
    const home = tempDir();
    const cwd = path.join(home, 'projects', 'orders');
    mkdirSync(cwd, { recursive: true });
    const file = writeConfig(path.join(home, 'projects', '.bdsrc.json'), { apiKey: box.keys.live });
    expect((await whoamiFrom(box, home, cwd)).json().keySource).toBe(`config file ${file}`);
  });

  it('.bdsrc.yaml', async () => {
    const box = await sandbox();
    const home = tempDir();
    const file = writeConfig(path.join(home, '.bdsrc.yaml'), `# bds settings\napiKey: ${box.keys.live}\n`);
    expect((await whoamiFrom(box, home)).json().keySource).toBe(`config file ${file}`);
  });

  it('the bds key of package.json', async () => {
    const box = await sandbox();
    const home = tempDir();
    const file = writeConfig(path.join(home, 'package.json'), { name: 'pipeline', bds: { apiKey: box.keys.live } });
    expect((await whoamiFrom(box, home)).json().keySource).toBe(`config file ${file}`);
  });

  it('the user config folder, $XDG_CONFIG_HOME/bds/config.json', async () => {
    const box = await sandbox();
    const file = writeConfig(path.join(globalDir, 'config.json'), { apiKey: box.keys.live });
    expect((await whoamiFrom(box, tempDir())).json().keySource).toBe(`config file ${file}`);
  });

  it('the nearest file wins over the user config folder', async () => {
    const box = await sandbox();
    writeConfig(path.join(globalDir, 'config.json'), { apiKey: 'svc_live_global_0000000000' });
    const home = tempDir();
    const file = writeConfig(path.join(home, '.bdsrc.json'), { apiKey: box.keys.live });
    expect((await whoamiFrom(box, home)).json().keySource).toBe(`config file ${file}`);
  });
});

describe('naming the config file', () => {
  it('--config and BDS_CONFIG name one file and disable the search', async () => {
    const box = await sandbox();
    const home = tempDir();
    writeConfig(path.join(home, '.bdsrc.json'), { apiKey: 'svc_live_not_this_one_00000' });
    const named = writeConfig(path.join(tempDir(), 'bds.yaml'), `apiKey: ${box.keys.live}\nbaseUrl: ${box.baseUrl}\n`);

    const flag = await run(['whoami', '--json', '--config', named], {
      home,
      env: { BDS_CONFIG: path.join(home, '.bdsrc.json') },
    });
    expect(flag.code, flag.stderr).toBe(0);
    expect(flag.json().keySource).toBe(`config file ${named}`);

    const env = await run(['whoami', '--json'], { home, env: { BDS_CONFIG: named } });
    expect(env.code, env.stderr).toBe(0);
    expect(env.json().keySource).toBe(`config file ${named}`);
  });

  it('a relative --config is relative to the working folder', async () => {
    const box = await sandbox();
    const home = tempDir();
    const named = writeConfig(path.join(home, 'conf', 'bds.json'), { apiKey: box.keys.live, baseUrl: box.baseUrl });
    const res = await run(['whoami', '--json', '--config', 'conf/bds.json'], { home });
    expect(res.code, res.stderr).toBe(0);
    expect(res.json().keySource).toBe(`config file ${named}`);
  });

  it('that is missing is a usage error naming it', async () => {
    const missing = path.join(tempDir(), 'absent.json');
    expectUsageError(await run(['whoami', '--config', missing]), missing, 'no such file');
    expectUsageError(await run(['whoami'], { env: { BDS_CONFIG: missing } }), missing);
  });

  it('that does not parse is a usage error naming it, without echoing its content', async () => {
    const secret = 'svc_live_leaked_secret_9f8e7d6c';
    const broken = [
      [
        'broken.json',
        `{\n  "baseUrl": "https://bds.example.com",\n  "apiKey": "${secret}"\n  "sourceId": "src_1"\n}\n`,
      ],
      ['broken.yaml', `baseUrl: https://bds.example.com\napiKey: "${secret}\nprofiles: [\n`],
      ['.bdsrc', `apiKey: ${secret}\n  - : [\n`],
    ];
    for (const [name, text] of broken) {
      const home = tempDir();
      const file = writeConfig(path.join(home, name!), text!);
      for (const res of [
        await run(['whoami', '--config', file], { home }),
        await run(['whoami'], { home, env: { BDS_CONFIG: file } }),
      ]) {
        expectUsageError(res, file, 'not valid JSON or YAML');
        expect(`${res.stdout}${res.stderr}`).not.toContain('leaked_secret');
      }
    }
    // Found by the search, too.
    const home = tempDir();
    const file = writeConfig(path.join(home, '.bdsrc.json'), broken[0]![1]!);
    const found = await run(['whoami'], { home });
    expectUsageError(found, file, 'not valid JSON or YAML');
    expect(found.stderr).not.toContain('leaked_secret');
  });

  it('a JSON syntax error names its line and column, as YAML does; the text around it is never shown', async () => {
    const secret = 'svc_live_leaked_secret_0a1b2c3d4e5f';
    const cases: Array<[string, string, string]> = [
      ['a.json', `{\n  "apiKey": "${secret}",\n  "baseUrl": x\n}\n`, '(line 3, column 14)'],
      ['b.json', `{\n  "apiKey": "${secret}",\n}\n`, '(line 3, column 1)'],
      ['c.json', `{\n  "apiKey": "${secret}"\n  "sourceId": "src_1"\n}\n`, '(line 3, column 3)'],
      ['d.yaml', `apiKey: "${secret}\nbaseUrl: [\n`, '(line 3, column 1)'],
    ];
    for (const [name, text, where] of cases) {
      const file = writeConfig(path.join(tempDir(), name), text);
      const res = await run(['whoami', '--config', file]);
      expectUsageError(res, `cannot read the config file ${file}: not valid JSON or YAML ${where}`);
      expect(`${res.stdout}${res.stderr}`).not.toContain('leaked_secret');
    }
  });

  it('found by the search and broken: exit 2 naming it, and no text of it in any output, --json and --verbose included', async () => {
    const secret = 'svc_live_leaked_secret_0a1b2c3d4e5f';
    const home = tempDir();
    const broken: [string, string][] = [
      [path.join(home, 'package.json'), `{ "name": "pipeline", "bds": { "apiKey": "${secret}", }, }`],
      [path.join(home, '.bdsrc.yaml'), `apiKey: "${secret}\nbaseUrl: [\n`],
      [path.join(globalDir, 'config'), `apiKey: ${secret}\n  - : [\n`],
    ];
    for (const [file, text] of broken) {
      writeConfig(file, text);
      for (const args of [
        ['whoami', '--json'],
        ['whoami', '--verbose'],
      ]) {
        const res = await run(args, { home });
        expectUsageError(res, `cannot read the config file ${file}: not valid JSON or YAML`);
        expect(`${res.stdout}${res.stderr}`).not.toContain('leaked_secret');
        if (args.includes('--json')) expect(res.json().error.message).toContain(file);
      }
      rmSync(file);
    }
  });

  it('that holds no object of settings is a usage error', async () => {
    const home = tempDir();
    const file = writeConfig(path.join(home, '.bdsrc.json'), ['svc_live_x']);
    expectUsageError(await run(['whoami'], { home }), file, 'must hold an object');
    writeConfig(file, { baseUrl: 8787 });
    expectUsageError(await run(['whoami'], { home }), file, 'baseUrl must be a string');
  });
});

describe('$import in a config file', () => {
  it('is refused, naming the file: one file holds all settings', async () => {
    const dir = tempDir();
    writeConfig(path.join(dir, 'key.yaml'), 'apiKey: svc_test_imported_key_000000\n', 0o644);
    const file = writeConfig(path.join(dir, 'bds.json'), { $import: 'key.yaml', baseUrl: 'http://127.0.0.1:1' });
    const res = await run(['whoami', '--config', file]);
    expectUsageError(res, file, '$import');
    expect(res.stderr).not.toContain('svc_test_imported');
    const searched = writeConfig(path.join(dir, '.bdsrc.json'), { $import: 'key.yaml' });
    expectUsageError(await run(['whoami'], { cwd: dir, home: dir }), searched, '$import');
  });

  it('is refused under package.json\'s "bds" key too, and a top-level $import there is not bds\'s business', async () => {
    const dir = tempDir();
    writeConfig(path.join(dir, 'key.yaml'), 'apiKey: svc_test_imported_key_000000\n', 0o644);
    const pkg = writeConfig(path.join(dir, 'package.json'), {
      name: 'x',
      bds: { $import: 'key.yaml', sourceId: 'src_1' },
    });
    expectUsageError(await run(['whoami'], { cwd: dir, home: dir }), pkg, '$import');
    writeConfig(pkg, { name: 'x', $import: 'elsewhere.json', bds: { baseUrl: 'http://wrong.example.com' } });
    expectUsageError(await run(['whoami'], { cwd: dir, home: dir }), 'http://');
  });
});

describe('a config file that runs code', () => {
  const code = (marker: string) =>
    `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran');\nmodule.exports = {};\n`;

  it('named with --config is refused', async () => {
    const dir = tempDir();
    const marker = path.join(dir, 'ran');
    for (const name of ['bds.config.js', 'bds.config.cjs', 'bds.config.mjs', 'bds.config.ts']) {
      const file = writeConfig(path.join(dir, name), code(marker));
      const res = await run(['whoami', '--config', file]);
      expectUsageError(res, file, 'JSON or YAML only');
    }
    expect(existsSync(marker)).toBe(false);
  });

  it('in the user config folder is refused', async () => {
    const marker = path.join(tempDir(), 'ran');
    const file = writeConfig(path.join(globalDir, 'config.js'), code(marker));
    expectUsageError(await run(['whoami']), file, 'JSON or YAML only');
    expect(existsSync(marker)).toBe(false);
  });

  it('in the working folder is not loaded', async () => {
    const box = await sandbox();
    const home = tempDir();
    const marker = path.join(home, 'ran');
    writeConfig(path.join(home, '.bdsrc.js'), code(marker));
    writeConfig(path.join(home, 'bds.config.js'), code(marker));
    const res = await run(['whoami'], { home, env: { BDS_BASE_URL: box.baseUrl, BDS_API_KEY: box.keys.live } });
    expect(res.code, res.stderr).toBe(0);
    expect(existsSync(marker)).toBe(false);
  });
});

describe("other tools' files in the working folder", () => {
  // cosmiconfig read a "meta config" (package.json, .config/config.*) from the process's own working folder as
  // soon as bds set it up, outside bds's error handling: these run bin/bds.js in that folder.
  const secret = 'svc_live_leaked_secret_5a4b3c2d1e0f';

  it('a package.json that does not parse is exit 2 naming it; its key is never shown, --json and --verbose included', async () => {
    const dir = tempDir();
    const file = writeConfig(
      path.join(dir, 'package.json'),
      `{\n  "name": "pipeline",\n  "bds": {\n    "apiKey": "${secret}",\n  },\n}\n`,
    );
    for (const args of [['whoami'], ['whoami', '--json'], ['list', '--verbose']]) {
      const res = await spawnCli(args, { cwd: dir, env: { HOME: dir } });
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toMatch(new RegExp(`^bds: cannot read the config file ${file}: not valid JSON or YAML`, 'm'));
      expect(res.stderr).not.toContain('a bug in bds');
      expect(`${res.stdout}${res.stderr}`).not.toContain('leaked_secret');
      if (args.includes('--json'))
        expect(JSON.parse(res.stdout).error).toMatchObject({ exit_code: 2, message: expect.stringContaining(file) });
    }
  });

  it('.config/config.json with a "bds" key is no config place of bds', async () => {
    const box = await sandbox();
    const dir = tempDir();
    writeConfig(path.join(dir, '.config', 'config.json'), { bds: { apiKey: box.keys.live, baseUrl: box.baseUrl } });
    const res = await spawnCli(['whoami'], { cwd: dir, env: { HOME: dir, BDS_BASE_URL: box.baseUrl } });
    expect(res.code, res.stderr).toBe(3);
    expect(res.stderr).toMatch(/^bds: no API key/m);
    expect(box.requests).toHaveLength(0);
  });

  it("another tool's .config/config.js is neither run nor in the way", async () => {
    const box = await sandbox();
    const dir = tempDir();
    const marker = path.join(dir, 'ran');
    writeConfig(
      path.join(dir, '.config', 'config.js'),
      `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran');\nthrow new Error('this file is for another tool');\n`,
    );
    const res = await spawnCli(['whoami'], {
      cwd: dir,
      env: { HOME: dir, BDS_BASE_URL: box.baseUrl, BDS_API_KEY: box.keys.live },
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('Sandbox Seller');
    expect(existsSync(marker)).toBe(false);
  });
});

describe('XDG folders', () => {
  // The XDG base directory specification: a relative path in these variables is invalid and must be ignored.
  it('a relative XDG_STATE_HOME, XDG_CACHE_HOME or XDG_CONFIG_HOME is ignored', () => {
    const on = (env: Record<string, string>) => ({ env, homedir: '/home/me', platform: 'linux' as const });
    const relative = on({ XDG_STATE_HOME: 'state', XDG_CACHE_HOME: './cache', XDG_CONFIG_HOME: 'conf' });
    expect(stateDir(relative)).toBe('/home/me/.local/state/bds');
    expect(cacheDir(relative)).toBe('/home/me/.cache/bds');
    expect(userConfigFolder(relative)).toBe('/home/me/.config/bds');
    const absolute = on({ XDG_STATE_HOME: '/var/state', XDG_CACHE_HOME: '/var/cache', XDG_CONFIG_HOME: '/etc/xdg' });
    expect(stateDir(absolute)).toBe('/var/state/bds');
    expect(cacheDir(absolute)).toBe('/var/cache/bds');
    expect(userConfigFolder(absolute)).toBe('/etc/xdg/bds');
  });

  it('a relative XDG_STATE_HOME keeps the delivery records in ~/.local/state, not in the working folder', async () => {
    const box = await sandbox();
    const home = tempDir();
    const cwd = tempDir();
    const { dir } = makeFolder();
    const res = await run(['deliver', dir, '--period', '2024-05', '--source', newSource(box)], {
      home,
      cwd,
      env: { BDS_BASE_URL: box.baseUrl, BDS_API_KEY: box.keys.test, XDG_STATE_HOME: 'state' },
    });
    expect(res.code, res.stderr).toBe(0);
    expect(readdirSync(cwd)).toEqual([]);
    expect(
      readdirSync(path.join(home, '.local', 'state', 'bds', 'deliveries')).filter((f) => f.endsWith('.json')),
    ).toHaveLength(1);
  });

  it('a HOME that does not exist is never created: one line naming HOME and the XDG variables', async () => {
    const box = await sandbox();
    const home = path.join(tempDir(), 'nonexistent');
    const cwd = tempDir();
    const { dir } = makeFolder();
    const env = { BDS_BASE_URL: box.baseUrl, BDS_API_KEY: box.keys.test };
    const args = ['deliver', dir, '--period', '2024-05', '--source', newSource(box)];
    const refused = await run(args, { home, cwd, env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `bds: the home folder ${home} (HOME) does not exist, and bds does not create it: set HOME to an existing ` +
        'folder, or XDG_STATE_HOME, XDG_CACHE_HOME and XDG_CONFIG_HOME to folders bds may write\n',
    );
    expect(existsSync(home)).toBe(false);
    const login = await run(['login', '--with-key'], {
      home,
      cwd,
      env: { BDS_BASE_URL: box.baseUrl, XDG_CONFIG_HOME: '' },
      stdin: box.keys.test,
    });
    expect(login.code).toBe(2);
    expect(login.stderr).toContain(`bds: the home folder ${home} (HOME) does not exist`);
    expect(existsSync(home)).toBe(false);
    // check remembers its pass in the cache folder, when it can make one without making a home.
    const checked = await run(['check', dir, '--period', '2024-05'], { home, cwd });
    expect(checked.code, checked.stderr).toBe(0);
    expect(existsSync(home)).toBe(false);
    // With the XDG folders elsewhere, bds works and still makes no home.
    const xdg = tempDir();
    const elsewhere = { XDG_STATE_HOME: path.join(xdg, 'state'), XDG_CACHE_HOME: path.join(xdg, 'cache') };
    const delivered = await run(args, { home, cwd, env: { ...env, ...elsewhere } });
    expect(delivered.code, delivered.stderr).toBe(0);
    expect(existsSync(home)).toBe(false);
    expect(existsSync(path.join(xdg, 'state', 'bds', 'deliveries'))).toBe(true);
  });

  it('a folder that cannot be made is reported with the error of the level that failed, not ENOENT', async () => {
    const box = await sandbox();
    const xdg = tempDir();
    // A link to nowhere where the folder should be: mkdir says EEXIST; Node's recursive mkdir said ENOENT.
    symlinkSync(path.join(xdg, 'gone'), path.join(xdg, 'state'));
    symlinkSync(path.join(xdg, 'gone'), path.join(xdg, 'config'));
    const { dir } = makeFolder();
    const res = await run(['deliver', dir, '--period', '2024-05', '--source', newSource(box)], {
      home: tempDir(),
      env: { BDS_BASE_URL: box.baseUrl, BDS_API_KEY: box.keys.test, XDG_STATE_HOME: path.join(xdg, 'state') },
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      `bds: cannot write the delivery records in ${path.join(xdg, 'state', 'bds', 'deliveries')} (EEXIST)`,
    );
    const login = await run(['login', '--with-key'], {
      home: tempDir(),
      env: { BDS_BASE_URL: box.baseUrl, XDG_CONFIG_HOME: path.join(xdg, 'config') },
      stdin: box.keys.test,
    });
    expect(login.code).toBe(2);
    expect(login.stderr).toContain(
      `bds: cannot write the config file ${path.join(xdg, 'config', 'bds', 'config.json')} (EEXIST)`,
    );
  });

  it('a relative XDG_CONFIG_HOME is not searched; ~/.config/bds is', async () => {
    const box = await sandbox();
    const home = tempDir();
    const cwd = tempDir();
    writeConfig(path.join(cwd, 'conf', 'bds', 'config.json'), { apiKey: 'svc_live_from_the_working_folder_0' });
    const file = writeConfig(path.join(home, '.config', 'bds', 'config.json'), { apiKey: box.keys.live });
    const res = await run(['whoami', '--json'], {
      home,
      cwd,
      env: { BDS_BASE_URL: box.baseUrl, XDG_CONFIG_HOME: 'conf' },
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.json().keySource).toBe(`config file ${file}`);
  });
});

describe('profiles', () => {
  async function withProfiles(box: Sandbox): Promise<{ home: string; file: string }> {
    const home = tempDir();
    const file = writeConfig(path.join(home, '.bdsrc.json'), {
      baseUrl: box.baseUrl,
      profile: 'staging',
      profiles: {
        staging: { apiKey: box.keys.test },
        production: { apiKey: box.keys.live },
        broken: { apiKey: box.keys.live, baseUrl: WRONG_URL },
      },
    });
    return { home, file };
  }

  it('the file names the default one; its settings sit over the top level', async () => {
    const box = await sandbox();
    const { home, file } = await withProfiles(box);
    const res = await run(['whoami'], { home });
    expect(res.code, res.stderr).toBe(0);
    expect(field(res, 'Profile')).toBe('staging');
    expect(field(res, 'Key')).toBe('key_test_sandbox (test mode)');
    expect(field(res, 'Key from')).toBe(`config file ${file} (profile: staging)`);
    // A profile's baseUrl replaces the top-level one, and a refusal names the profile.
    expectUsageError(
      await run(['whoami', '--profile', 'broken'], { home }),
      `config file ${file} (profile: broken)`,
      'http://',
    );
  });

  it("a profile's apiKeyFile replaces the top level's apiKey: key and key file are one setting", async () => {
    const box = await sandbox();
    const home = tempDir();
    writeConfig(path.join(home, 'live.key'), `${box.keys.live}\n`);
    const file = writeConfig(path.join(home, '.bdsrc.json'), {
      baseUrl: box.baseUrl,
      apiKey: box.keys.test,
      profiles: { live: { apiKeyFile: 'live.key' } },
    });
    const res = await run(['whoami', '--profile', 'live'], { home });
    expect(res.code, res.stderr).toBe(0);
    expect(field(res, 'Key')).toBe('key_live_sandbox (live mode)');
    expect(field(res, 'Key from')).toBe(
      `key file ${path.join(home, 'live.key')} (apiKeyFile in config file ${file} (profile: live))`,
    );
  });

  it('--profile and BDS_PROFILE choose one, the flag first', async () => {
    const box = await sandbox();
    const { home, file } = await withProfiles(box);
    const env = await run(['whoami', '--json'], { home, env: { BDS_PROFILE: 'production' } });
    expect(env.code, env.stderr).toBe(0);
    expect(env.json()).toMatchObject({
      key: { mode: 'live' },
      profile: 'production',
      keySource: `config file ${file} (profile: production)`,
    });
    const flag = await run(['whoami', '--json', '--profile', 'staging'], { home, env: { BDS_PROFILE: 'production' } });
    expect(flag.json()).toMatchObject({ key: { mode: 'test' }, profile: 'staging' });
  });

  it('an unknown one is a usage error listing the known ones', async () => {
    const box = await sandbox();
    const { home, file } = await withProfiles(box);
    for (const res of [
      await run(['whoami', '--profile', 'prod'], { home }),
      await run(['whoami'], { home, env: { BDS_PROFILE: 'prod' } }),
    ]) {
      expectUsageError(res, 'no profile "prod"', file);
      expect(res.stderr).toContain('hint: its profiles: staging, production, broken');
    }
    expect(box.requests).toHaveLength(0);
  });

  it('one named without any config file is a usage error', async () => {
    const box = await sandbox();
    const res = await run(['whoami', '--profile', 'production'], {
      env: { BDS_BASE_URL: box.baseUrl, BDS_API_KEY: box.keys.live },
    });
    expectUsageError(res, 'no profile "production"', 'no config file');
  });

  it('none in use: no Profile line, profile null', async () => {
    const box = await sandbox();
    const home = tempDir();
    const file = writeConfig(path.join(home, '.bdsrc.json'), {
      baseUrl: box.baseUrl,
      apiKey: box.keys.live,
      profiles: { x: {} },
    });
    const text = await run(['whoami'], { home });
    expect(field(text, 'Profile')).toBeUndefined();
    expect(field(text, 'Key from')).toBe(`config file ${file}`);
    expect((await run(['whoami', '--json'], { home })).json().profile).toBeNull();
  });
});

describe('a config file holding a key', () => {
  it('that others can read gets a warning naming it and chmod 600', async () => {
    const box = await sandbox();
    const home = tempDir();
    const file = writeConfig(path.join(home, '.bdsrc.json'), { baseUrl: box.baseUrl, apiKey: box.keys.live }, 0o644);
    const res = await run(['whoami'], { home });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(
      `warning: the config file ${file} holds an API key and other users can read it; fix with: chmod 600 ${file}`,
    );

    // A key in a profile counts too.
    writeConfig(file, { baseUrl: box.baseUrl, profile: 'p', profiles: { p: { apiKey: box.keys.live } } }, 0o640);
    expect((await run(['whoami'], { home })).stderr).toContain(`chmod 600 ${file}`);
  });

  it('at 0600, or without a key, gets none', async () => {
    const box = await sandbox();
    const home = tempDir();
    const file = writeConfig(path.join(home, '.bdsrc.json'), { baseUrl: box.baseUrl, apiKey: box.keys.live }, 0o600);
    const res = await run(['whoami'], { home });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toBe('');

    writeConfig(file, { baseUrl: box.baseUrl }, 0o644);
    const keyless = await run(['whoami'], { home, env: { BDS_API_KEY: box.keys.live } });
    expect(keyless.code, keyless.stderr).toBe(0);
    expect(keyless.stderr).toBe('');
  });
});

describe('the base URL', () => {
  it('"//" in its path never sends the key to another host', async () => {
    const box = await sandbox();
    const other = await sandbox();
    const otherHost = new URL(other.baseUrl).host.replace('127.0.0.1', 'localhost');
    const res = await run(['whoami', '--base-url', `${box.baseUrl}//${otherHost}/`], {
      env: { BDS_API_KEY: box.keys.test },
    });
    expect(other.requests).toHaveLength(0);
    expect(box.requests[0]!.path).toBe(`/${otherHost}/api/v1/me`);
    expect(res.code).toBe(4);
  });
});
