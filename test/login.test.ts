// bds login and bds logout: the key checked (form, then GET /me) before anything is written, the user's config
// file written atomically at 0600 in a 0700 folder with everything else kept, profiles, the files bds does not
// rewrite, the settings that would win over the stored key, and the key in no output. The prompt without echo
// is tried on a real pseudo-terminal (util-linux `script`).

import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuthError } from '../src/core/errors.js';
import { login } from '../src/core/login.js';
import { Operation } from '../src/core/operation.js';
import { processRuntime } from '../src/process-runtime.js';
import type { Sandbox } from '../src/sandbox/emulator.js';
import { BDS_COMMAND, run, sandbox, spawnCli, tempDir, until, type RunOptions } from './helpers.js';
import { OPTION_NAMES } from '../src/core/options.js';

/** A home of its own, with its own user config folder (~/.config/bds). */
function freshHome(): { home: string; configFile: string; env: Record<string, string> } {
  const home = tempDir('bds-login-');
  const config = path.join(home, '.config');
  return { home, configFile: path.join(config, 'bds', 'config.json'), env: { XDG_CONFIG_HOME: config } };
}

function readJson(file: string): any {
  return JSON.parse(readFileSync(file, 'utf8'));
}

async function loginWithKey(
  box: Sandbox,
  key: string,
  where: ReturnType<typeof freshHome>,
  args: string[] = [],
  options: RunOptions = {},
) {
  return run(['login', '--with-key', ...args], {
    home: where.home,
    stdin: `${key}\n`,
    ...options,
    env: { BDS_BASE_URL: box.baseUrl, ...where.env, ...options.env },
  });
}

describe('bds login --with-key', () => {
  it('checks the key with GET /me, stores it with the base URL at 0600 in a 0700 folder, and says what whoami says', async () => {
    const box = await sandbox();
    const where = freshHome();
    const res = await loginWithKey(box, box.keys.test, where);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('Organization:  Sandbox Seller');
    expect(res.stdout).toContain('Key:           key_test_sandbox (test mode)');
    expect(res.stdout).toContain(`Stored in:     ${where.configFile}`);
    expect(res.stderr).toContain('this is a test key: its batches never become billable');
    expect(box.requests.filter((r) => r.route === 'me')).toHaveLength(1);
    expect(readJson(where.configFile)).toEqual({ apiKey: box.keys.test, baseUrl: box.baseUrl });
    expect(statSync(where.configFile).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(where.configFile)).mode & 0o777).toBe(0o700);
    // The next command uses it, with no variable set.
    const whoami = await run(['whoami', '--json'], { home: where.home, env: where.env });
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(whoami.json().keySource).toBe(`config file ${where.configFile}`);
    expect(`${res.stdout}${res.stderr}`).not.toContain(box.keys.test);
  });

  it('--json prints the library object; the key appears nowhere', async () => {
    const box = await sandbox();
    const where = freshHome();
    const res = await loginWithKey(box, box.keys.live, where, ['--json', '--profile', 'live']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.json()).toMatchObject({
      organization: { name: 'Sandbox Seller' },
      key: { id: 'key_live_sandbox', mode: 'live' },
      baseUrl: box.baseUrl,
      configFile: where.configFile,
      profile: 'live',
      madeDefault: true,
      overriddenBy: null,
    });
    expect(`${res.stdout}${res.stderr}`).not.toContain(box.keys.live);
  });

  it('from a real pipe, with comment lines around the key', async () => {
    const box = await sandbox();
    const where = freshHome();
    const res = await spawnCli(['login', '--with-key'], {
      env: { HOME: where.home, BDS_BASE_URL: box.baseUrl, ...where.env },
      input: `# the live key, from the portal\n${box.keys.live}\n`,
    });
    expect(res.code, res.stderr).toBe(0);
    expect(readJson(where.configFile).apiKey).toBe(box.keys.live);
  });

  it('keeps every other setting and profile of the file, and writes profiles.<name> with --profile', async () => {
    const box = await sandbox();
    const where = freshHome();
    mkdirSync(path.dirname(where.configFile), { recursive: true });
    const before = {
      sourceId: 'src_kept',
      apiKey: box.keys.test,
      baseUrl: box.baseUrl,
      profiles: { other: { sourceId: 'src_other' } },
      extra: [1, 2],
    };
    writeFileSync(where.configFile, JSON.stringify(before), { mode: 0o644 });
    const res = await loginWithKey(box, box.keys.live, where, ['--profile', 'live']);
    expect(res.code, res.stderr).toBe(0);
    expect(readJson(where.configFile)).toEqual({
      ...before,
      profiles: { other: { sourceId: 'src_other' }, live: { apiKey: box.keys.live, baseUrl: box.baseUrl } },
    });
    // A key at the top level already: the new profile does not become the default.
    expect(res.stdout).toContain(`Stored in:     ${where.configFile} (profile: live)`);
    // Rewritten, it is 0600 whatever it was.
    expect(statSync(where.configFile).mode & 0o777).toBe(0o600);
  });

  it('two profiles, then logout of one: the other stays, and logout says what it removed', async () => {
    const box = await sandbox();
    const where = freshHome();
    expect((await loginWithKey(box, box.keys.live, where, ['--profile', 'live'])).code).toBe(0);
    const second = await loginWithKey(box, box.keys.test, where, ['--profile', 'test']);
    expect(second.code, second.stderr).toBe(0);
    // The first profile written to a file without a key or default became the default; the second did not.
    expect(readJson(where.configFile)).toEqual({
      profiles: {
        live: { apiKey: box.keys.live, baseUrl: box.baseUrl },
        test: { apiKey: box.keys.test, baseUrl: box.baseUrl },
      },
      profile: 'live',
    });
    const out = await run(['logout', '--profile', 'test'], { home: where.home, env: where.env });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toBe(`Removed the key from ${where.configFile} (profile: test).\n`);
    expect(readJson(where.configFile)).toEqual({
      profiles: { live: { apiKey: box.keys.live, baseUrl: box.baseUrl }, test: { baseUrl: box.baseUrl } },
      profile: 'live',
    });
    // Nothing left to remove is no failure.
    const again = await run(['logout', '--profile', 'test', '--json'], { home: where.home, env: where.env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.json()).toMatchObject({ configFile: where.configFile, profile: 'test', removed: false });
    const whoami = await run(['whoami', '--json'], { home: where.home, env: where.env });
    expect(whoami.json()).toMatchObject({ profile: 'live', key: { mode: 'live' } });
  });

  it('profiles named __proto__, constructor and toString are stored and used like any other, and removed', async () => {
    const box = await sandbox();
    const where = freshHome();
    const names = ['__proto__', 'constructor', 'toString'];
    for (const name of names) {
      const res = await loginWithKey(box, box.keys.live, where, ['--profile', name]);
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toContain(`Stored in:     ${where.configFile} (profile: ${name}`);
    }
    const text = readFileSync(where.configFile, 'utf8');
    const stored = JSON.parse(text);
    expect(Object.keys(stored.profiles)).toEqual(names);
    expect(stored.profile).toBe('__proto__'); // the first, written to a file without a key, became the default
    for (const name of names) {
      expect(Object.getOwnPropertyDescriptor(stored.profiles, name)?.value).toEqual({
        apiKey: box.keys.live,
        baseUrl: box.baseUrl,
      });
      const whoami = await run(['whoami', '--json', '--profile', name], { home: where.home, env: where.env });
      expect(whoami.code, whoami.stderr).toBe(0);
      expect(whoami.json()).toMatchObject({
        profile: name,
        keySource: `config file ${where.configFile} (profile: ${name})`,
        key: { mode: 'live' },
      });
    }
    const out = await run(['logout', '--profile', '__proto__'], { home: where.home, env: where.env });
    expect(out.stdout).toBe(`Removed the key from ${where.configFile} (profile: __proto__).\n`);
    expect(Object.getOwnPropertyDescriptor(readJson(where.configFile).profiles, '__proto__')?.value).toEqual({
      baseUrl: box.baseUrl,
    });
  });

  for (const [what, key, code] of [
    ['a malformed key', 'sk_live_not_a_key_0000', 3],
    ['a key the API refuses', 'svc_live_unknown_0000000000', 3],
  ] as const) {
    it(`${what}: exit ${code}, the config file byte for byte unchanged, the key not echoed`, async () => {
      const box = await sandbox();
      const where = freshHome();
      mkdirSync(path.dirname(where.configFile), { recursive: true });
      const before = '{\n  "sourceId": "src_1",   "apiKey": "svc_test_sandbox_8e2b6d0f4a9c1375"\n}\n';
      writeFileSync(where.configFile, before, { mode: 0o600 });
      const res = await loginWithKey(box, key, where);
      expect(res.code).toBe(code);
      expect(readFileSync(where.configFile, 'utf8')).toBe(before);
      expect(`${res.stdout}${res.stderr}`).not.toContain(key.slice(9));
      // A malformed key is refused before any request.
      expect(box.requests.filter((r) => r.route === 'me')).toHaveLength(key.startsWith('svc_') ? 1 : 0);
    });
  }

  it('a refused key creates no config file where there was none', async () => {
    const box = await sandbox();
    const where = freshHome();
    const res = await loginWithKey(box, 'svc_live_unknown_0000000000', where);
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(/^hint: the API refused this key/m);
    expect(existsSync(where.configFile)).toBe(false);
  });

  it('with no base URL anywhere: exit 2 naming --base-url, nothing read or written', async () => {
    const box = await sandbox();
    const where = freshHome();
    const res = await run(['login', '--with-key'], { home: where.home, env: where.env, stdin: box.keys.live });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^bds: no base URL: with --with-key, name it with --base-url or BDS_BASE_URL$/m);
    expect(existsSync(where.configFile)).toBe(false);
    expect(box.requests).toHaveLength(0);
  });

  it('a key with a space or a control character is told so, not that its prefix is wrong', async () => {
    const box = await sandbox();
    const where = freshHome();
    for (const key of ['svc_live_abc def0000000', 'svc_live_abc\u0007def0000000']) {
      const res = await loginWithKey(box, key, where);
      expect(res.code).toBe(3);
      expect(res.stderr).toMatch(
        /^bds: the API key from standard input is malformed: it holds a space or a control character/m,
      );
      expect(res.stderr).not.toContain('starts with');
      expect(res.stderr).not.toContain('def0000000');
    }
    expect(box.requests).toHaveLength(0);
  });

  it('a base URL ending in /api/v1: the 404 says to leave it out', async () => {
    const box = await sandbox();
    const where = freshHome();
    const res = await loginWithKey(box, box.keys.live, where, [], { env: { BDS_BASE_URL: `${box.baseUrl}/api/v1/` } });
    expect(res.code).toBe(4);
    expect(res.stderr).toContain(`hint: leave /api/v1 out of the base URL, which bds adds itself: ${box.baseUrl}`);
    expect(existsSync(where.configFile)).toBe(false);
  });

  it('an empty BDS_API_KEY_FILE is a warning, not a reason to refuse the key piped in', async () => {
    const box = await sandbox();
    const where = freshHome();
    const keyFile = path.join(tempDir(), 'key');
    writeFileSync(keyFile, '', { mode: 0o600 });
    const res = await loginWithKey(box, box.keys.live, where, [], { env: { BDS_API_KEY_FILE: keyFile } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`warning: the key file ${keyFile} (BDS_API_KEY_FILE) is empty`);
    expect(readJson(where.configFile)).toEqual({ apiKey: box.keys.live, baseUrl: box.baseUrl });
  });

  it('the AuthError of a refused key carries its request', async () => {
    const box = await sandbox();
    const where = freshHome();
    const runtime = processRuntime({
      env: { BDS_BASE_URL: box.baseUrl, HOME: where.home, ...where.env },
      cwd: where.home,
    });
    const op = new Operation(runtime, { names: OPTION_NAMES }, { signal: new AbortController().signal });
    const error = await login(op, { keyText: 'svc_live_unknown_0000000000', keyFrom: 'standard input' }).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(AuthError);
    expect(error.request).toMatchObject({ method: 'GET', status: 401 });
    expect(error.request.url).toContain('/api/v1/me');
  });

  it('several key lines, or none, are refused (exit 3) without showing them', async () => {
    const box = await sandbox();
    const where = freshHome();
    const two = await loginWithKey(box, `${box.keys.live}\n${box.keys.test}`, where);
    expect(two.code).toBe(3);
    expect(two.stderr).toMatch(/^bds: standard input holds 2 lines besides comments; give the key alone$/m);
    expect(two.stderr).not.toContain('sandbox_');
    const none = await loginWithKey(box, '# nothing but a comment', where);
    expect(none.code).toBe(3);
    expect(none.stderr).toMatch(/^bds: no key in standard input$/m);
    expect(existsSync(where.configFile)).toBe(false);
  });
});

describe('what bds login does not do', () => {
  it('without a terminal and without --with-key: exit 2 naming --with-key', async () => {
    const box = await sandbox();
    const where = freshHome();
    const res = await run(['login'], { home: where.home, env: { BDS_BASE_URL: box.baseUrl, ...where.env } });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^bds: no terminal to ask for the key on: pipe it in with --with-key$/m);
    expect(box.requests).toHaveLength(0);
  });

  it('a key given as an argument or an option is a usage error that does not echo it', async () => {
    const key = 'svc_live_typed_on_the_command_line_0000';
    for (const args of [
      ['login', key],
      ['login', `--key=${key}`],
      ['login', '--json', `--key=${key}`],
    ]) {
      const res = await run(args);
      expect(res.code).toBe(2);
      expect(`${res.stdout}${res.stderr}`).not.toContain('typed_on_the_command_line');
    }
  });

  it('a YAML config file in the user folder is not rewritten: bds says what to add, without the key, exit 2', async () => {
    const box = await sandbox();
    const where = freshHome();
    const yaml = path.join(path.dirname(where.configFile), 'config.yaml');
    mkdirSync(path.dirname(yaml), { recursive: true });
    writeFileSync(yaml, 'sourceId: src_1\n', { mode: 0o600 });
    const res = await loginWithKey(box, box.keys.live, where, ['--profile', 'live']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      `bds: your config file ${yaml} is not JSON, and bds does not rewrite it; nothing was stored`,
    );
    expect(res.stderr).toContain(`profiles:\n  "live":\n    apiKey: <your key>\n    baseUrl: ${box.baseUrl}`);
    expect(res.stderr).not.toContain(box.keys.live);
    expect(readFileSync(yaml, 'utf8')).toBe('sourceId: src_1\n');
    expect(existsSync(where.configFile)).toBe(false);
    expect(box.requests).toHaveLength(0);
  });

  it('a file named by --config or BDS_CONFIG elsewhere is not rewritten', async () => {
    const box = await sandbox();
    const where = freshHome();
    const named = path.join(tempDir(), 'bds.json');
    writeFileSync(named, '{"sourceId": "src_1"}');
    for (const options of [{ args: ['--config', named] }, { env: { BDS_CONFIG: named } }]) {
      const res = await loginWithKey(box, box.keys.live, where, options.args ?? [], { env: options.env ?? {} });
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(`not in ${named} (named by --config or BDS_CONFIG); nothing was stored`);
      expect(res.stderr).toContain('"apiKey": "<your key>"');
      expect(readFileSync(named, 'utf8')).toBe('{"sourceId": "src_1"}');
    }
    // Naming the user's own file is fine.
    mkdirSync(path.dirname(where.configFile), { recursive: true });
    writeFileSync(where.configFile, '{}');
    const own = await loginWithKey(box, box.keys.live, where, ['--config', where.configFile]);
    expect(own.code, own.stderr).toBe(0);
  });
});

describe('what takes precedence over the stored key', () => {
  it('BDS_API_KEY, BDS_API_KEY_FILE, or a config file in the working folder: a warning naming it', async () => {
    const box = await sandbox();
    const keyFile = path.join(tempDir(), 'key');
    writeFileSync(keyFile, box.keys.test, { mode: 0o600 });
    const cases: Array<[Record<string, string>, (where: ReturnType<typeof freshHome>) => string]> = [
      [{ BDS_API_KEY: box.keys.test }, () => 'BDS_API_KEY'],
      [{ BDS_API_KEY_FILE: keyFile }, () => `key file ${keyFile} (BDS_API_KEY_FILE)`],
      [
        {},
        (where) => {
          const nearer = path.join(where.home, '.bdsrc.json');
          writeFileSync(nearer, '{"sourceId": "src_here"}');
          return `config file ${nearer}`;
        },
      ],
    ];
    for (const [env, expected] of cases) {
      const where = freshHome();
      const winner = expected(where);
      const res = await loginWithKey(box, box.keys.live, where, ['--json'], { env });
      expect(res.code, res.stderr).toBe(0);
      expect(res.stderr).toContain(
        `warning: ${winner} comes before ${where.configFile}: bds uses that instead of the key just stored`,
      );
      expect(res.json().overriddenBy).toBe(winner);
    }
  });
});

describe('bds logout', () => {
  it('leaves a key from the environment or a key file alone, and names it', async () => {
    const box = await sandbox();
    const where = freshHome();
    expect((await loginWithKey(box, box.keys.live, where)).code).toBe(0);
    const keyFile = path.join(tempDir(), 'key');
    writeFileSync(keyFile, box.keys.test, { mode: 0o600 });
    const res = await run(['logout'], { home: where.home, env: { ...where.env, BDS_API_KEY_FILE: keyFile } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe(`Removed the key from ${where.configFile}.\n`);
    expect(res.stderr).toContain(
      `warning: bds still has a key, from key file ${keyFile} (BDS_API_KEY_FILE): left alone`,
    );
    expect(readFileSync(keyFile, 'utf8')).toBe(box.keys.test);
    expect(readJson(where.configFile)).toEqual({ baseUrl: box.baseUrl });
    const env = await run(['logout', '--json'], {
      home: where.home,
      env: { ...where.env, BDS_API_KEY: box.keys.test },
    });
    expect(env.code, env.stderr).toBe(0);
    expect(env.json()).toEqual({
      configFile: where.configFile,
      profile: null,
      removed: false,
      remaining: 'BDS_API_KEY',
      remainingIn: null,
    });
    expect(`${env.stdout}${env.stderr}`).not.toContain(box.keys.test);
  });

  it('profiles: which profile of the file wins, and how to use or remove it', async () => {
    const box = await sandbox();
    const where = freshHome();
    expect((await loginWithKey(box, box.keys.test, where, ['--profile', 'test'])).code).toBe(0);
    const top = await loginWithKey(box, box.keys.live, where, ['--json']);
    expect(top.code, top.stderr).toBe(0);
    expect(top.stderr).toContain(
      `warning: the default profile test of ${where.configFile} has a key of its own: bds uses that instead of the key just stored at the file's top level`,
    );
    expect(top.stderr).toContain(
      'to use the new key, remove "profile": "test" from the file, or log in with --profile <name>',
    );
    expect(top.json()).toMatchObject({ overriddenIn: { profile: 'test' }, defaultProfile: 'test' });
    const other = await loginWithKey(box, box.keys.live, where, ['--profile', 'prod']);
    expect(other.code, other.stderr).toBe(0);
    expect(other.stderr).toContain(
      'commands use this key with --profile prod (or BDS_PROFILE=prod); without, the default profile test',
    );
    const res = await run(['logout'], { home: where.home, env: where.env });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe(`Removed the key from ${where.configFile}.\n`);
    expect(res.stderr).toContain(
      `warning: bds still has a key, from the profile test of ${where.configFile}: remove it too with bds logout --profile test`,
    );
    expect(res.stderr).not.toContain('bds did not store it');
  });

  it('with no config file at all: nothing to remove, exit 0, no file made', async () => {
    const where = freshHome();
    const res = await run(['logout'], { home: where.home, env: where.env });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe(`No key to remove in ${where.configFile}.\n`);
    expect(existsSync(path.dirname(where.configFile))).toBe(false);
  });

  it('a YAML file holding the key is not rewritten: exit 2, saying what to remove', async () => {
    const where = freshHome();
    const yaml = path.join(path.dirname(where.configFile), 'config.yml');
    mkdirSync(path.dirname(yaml), { recursive: true });
    writeFileSync(yaml, 'apiKey: svc_live_in_yaml_000000\n', { mode: 0o600 });
    const res = await run(['logout'], { home: where.home, env: where.env });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^hint: remove apiKey from it yourself$/m);
    expect(`${res.stdout}${res.stderr}`).not.toContain('in_yaml');
    expect(readFileSync(yaml, 'utf8')).toBe('apiKey: svc_live_in_yaml_000000\n');
  });
});

const hasScript = (() => {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!hasScript)('bds login on a real terminal', () => {
  /** bds on a pseudo-terminal: `answers` typed (Enter is \r), each once its prompt (a pattern) has appeared. */
  async function onTerminal(
    env: Record<string, string>,
    args: string[],
    answers: Array<[RegExp, string]>,
  ): Promise<{ code: number | null; screen: string }> {
    const command = [...BDS_COMMAND, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: { PATH: process.env.PATH ?? '', TERM: 'xterm', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    child.stdout.on('data', (d: Buffer) => (screen += d.toString()));
    child.stderr.on('data', (d: Buffer) => (screen += d.toString()));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    let seen = 0;
    for (const [prompt, answer] of answers) {
      await until(() => prompt.test(screen.slice(seen)), `the prompt ${prompt}`);
      seen = screen.length;
      child.stdin.write(answer);
    }
    const code = await closed;
    return { code, screen };
  }

  it('asks for the base URL (shown as typed) and the key (never shown), then stores them', async () => {
    const box = await sandbox();
    const where = freshHome();
    const { code, screen } = await onTerminal(
      { HOME: where.home, ...where.env },
      ['login'],
      [
        [/Base URL of the API: /, `${box.baseUrl}\r`],
        [/not shown as you type\): /, `${box.keys.live}\r`],
      ],
    );
    expect(code, screen).toBe(0);
    expect(screen).toContain(box.baseUrl);
    expect(screen).toContain('Organization:  Sandbox Seller');
    // Neither the terminal's echo nor readline's showed a single character of it.
    expect(screen).not.toContain(box.keys.live.slice('svc_live_'.length));
    expect(readJson(where.configFile)).toEqual({ apiKey: box.keys.live, baseUrl: box.baseUrl });
  });

  it('--with-key on a terminal asks for the key without echo', async () => {
    const box = await sandbox();
    const where = freshHome();
    const { code, screen } = await onTerminal(
      { HOME: where.home, BDS_BASE_URL: box.baseUrl, ...where.env },
      ['login', '--with-key'],
      [[/not shown as you type\): /, `${box.keys.live}\r`]],
    );
    expect(code, screen).toBe(0);
    expect(screen).toContain('Organization:  Sandbox Seller');
    expect(screen).not.toContain(box.keys.live.slice('svc_live_'.length));
    expect(readJson(where.configFile)).toEqual({ apiKey: box.keys.live, baseUrl: box.baseUrl });
  });

  it('a base URL that will be refused is said before the key is asked for', async () => {
    const where = freshHome();
    const typed = await onTerminal(
      { HOME: where.home, ...where.env },
      ['login'],
      [[/Base URL of the API: /, 'http://api.example.com\r']],
    );
    expect(typed.code, typed.screen).toBe(2);
    expect(typed.screen).toContain('the base URL from the prompt uses http:// for a host that is not this machine');
    expect(typed.screen).not.toContain('API key (');
    const set = await onTerminal(
      { HOME: where.home, BDS_BASE_URL: 'http://api.example.com', ...where.env },
      ['login'],
      [],
    );
    expect(set.code, set.screen).toBe(2);
    expect(set.screen).toContain('the base URL from BDS_BASE_URL uses http://');
    expect(set.screen).not.toContain('API key (');
    expect(existsSync(where.configFile)).toBe(false);
  });

  it('Ctrl-C at the key prompt: exit 130, nothing written', async () => {
    const box = await sandbox();
    const where = freshHome();
    const { code, screen } = await onTerminal(
      { HOME: where.home, BDS_BASE_URL: box.baseUrl, ...where.env },
      ['login'],
      [[/not shown as you type\): /, '\u0003']],
    );
    expect(code, screen).toBe(130);
    expect(existsSync(where.configFile)).toBe(false);
    expect(box.requests).toHaveLength(0);
  });
});

// The world-readable warning of a stored config file is settings.test.ts's; here, that login's own file never is.
it('a config file made world-readable by hand is made 0600 again by the next login', async () => {
  const box = await sandbox();
  const where = freshHome();
  expect((await loginWithKey(box, box.keys.live, where)).code).toBe(0);
  chmodSync(where.configFile, 0o644);
  const res = await loginWithKey(box, box.keys.test, where);
  expect(res.code, res.stderr).toBe(0);
  expect(statSync(where.configFile).mode & 0o777).toBe(0o600);
});
