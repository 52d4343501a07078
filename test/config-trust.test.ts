// What a config file the search finds (a cloned repository's, a shared folder's) may decide: what is delivered,
// never where the key goes or what bds writes; a found file is opened once, not followed, not waited on; the
// metrics file is a .prom file; a source id holds nothing a shell or a metrics label would act on; and
// NODE_TLS_REJECT_UNAUTHORIZED=0 turns off no certificate check of bds's.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ROOT,
  listenUntilTestEnds,
  makeFolder,
  newSource,
  run,
  sandbox,
  sandboxEnv,
  tempDir,
  trap,
} from './helpers.js';

/** A home with the user's own config file, and a cloned repository under it as the working folder. */
function homeAndClone(userConfig: object = {}): { home: string; clone: string; env: Record<string, string> } {
  const home = tempDir('bds-home-');
  mkdirSync(path.join(home, '.config', 'bds'), { recursive: true });
  writeFileSync(path.join(home, '.config', 'bds', 'config.json'), JSON.stringify(userConfig), { mode: 0o600 });
  const clone = path.join(home, 'src', 'scrub-pipeline');
  mkdirSync(clone, { recursive: true });
  return { home, clone, env: { XDG_CONFIG_HOME: path.join(home, '.config') } };
}

describe("a found config file may not decide where the key goes (a clone's .bdsrc.json, package.json)", () => {
  it('its baseUrl with the key from BDS_API_KEY: exit 2 naming the file, the setting and where to set it; nothing sent', async () => {
    const stolen = await trap();
    const box = await sandbox();
    for (const [name, content] of [
      ['.bdsrc.json', { baseUrl: stolen.url }],
      // A dummy key beside it changes nothing for the key from the environment.
      ['.bdsrc.yaml', { baseUrl: stolen.url, apiKey: 'svc_test_dummy' }],
      ['package.json', { name: 'pipeline', bds: { baseUrl: stolen.url, sourceId: 'src_x' } }],
    ] as const) {
      const { home, clone, env } = homeAndClone({ baseUrl: box.baseUrl });
      const file = path.join(clone, name);
      writeFileSync(file, JSON.stringify(content));
      const res = await run(['whoami'], { home, cwd: clone, env: { ...env, BDS_API_KEY: box.keys.live } });
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toBe(
        `bds: refusing baseUrl from the config file ${file}: a config file found in the working folder or above may not decide where the key goes for a key it does not hold (the key comes from BDS_API_KEY)\n` +
          `hint: set baseUrl with --base-url, BDS_BASE_URL or in your own config file ${path.join(home, '.config', 'bds', 'config.json')}; if you trust this file, name it with --config or BDS_CONFIG\n`,
      );
      // The user's own key file is no different.
      const keyFile = path.join(home, 'key');
      writeFileSync(keyFile, box.keys.live, { mode: 0o600 });
      const fromKeyFile = await run(['whoami'], { home, cwd: clone, env: { ...env, BDS_API_KEY_FILE: keyFile } });
      expect(fromKeyFile.code, fromKeyFile.stderr).toBe(2);
      expect(fromKeyFile.stderr).toContain(`(the key comes from key file ${keyFile} (BDS_API_KEY_FILE))`);
    }
    expect(stolen.requests).toEqual([]);
  });

  it('its baseUrl goes with the key that same file holds; a base URL from the environment or a flag wins as before', async () => {
    const box = await sandbox();
    const { home, clone, env } = homeAndClone();
    writeFileSync(path.join(clone, '.bdsrc.json'), JSON.stringify({ baseUrl: box.baseUrl, apiKey: box.keys.live }), {
      mode: 0o600,
    });
    const own = await run(['whoami', '--json'], { home, cwd: clone, env });
    expect(own.code, own.stderr).toBe(0);
    expect(own.json().baseUrl).toBe(box.baseUrl);
    // The found file's sourceId and a key from the environment, with the base URL from the environment.
    const source = newSource(box);
    writeFileSync(path.join(clone, '.bdsrc.json'), JSON.stringify({ sourceId: source }));
    const delivered = await run(['deliver', makeFolder().dir, '--period', '2024-05', '--dry-run', '--json'], {
      home,
      cwd: clone,
      env: { ...env, ...sandboxEnv(box), BDS_SOURCE_ID: '' },
    });
    expect(delivered.code, delivered.stderr).toBe(0);
    expect(delivered.json().source_id).toBe(source);
  });

  it('its apiKeyFile, pingUrl and metricsFile are refused; the same file named with --config or BDS_CONFIG is the user’s choice', async () => {
    const box = await sandbox();
    const pings = await trap();
    const elsewhere = tempDir();
    const otherKey = path.join(elsewhere, 'root-key');
    writeFileSync(otherKey, box.keys.live, { mode: 0o600 });
    const metrics = path.join(elsewhere, 'bds.prom');
    for (const [setting, value, flag] of [
      ['apiKeyFile', otherKey, 'BDS_API_KEY_FILE'],
      ['pingUrl', pings.url, '--ping-url, BDS_PING_URL'],
      ['metricsFile', metrics, '--metrics-file, BDS_METRICS_FILE'],
    ] as const) {
      const { home, clone, env } = homeAndClone();
      const file = path.join(clone, '.bdsrc.json');
      writeFileSync(file, JSON.stringify({ [setting]: value }));
      const deliver = ['deliver', makeFolder().dir, '--period', '2024-05', '--source', newSource(box)];
      const pinged = pings.requests.length;
      const written = existsSync(metrics);
      const res = await run(deliver, { home, cwd: clone, env: { ...env, ...sandboxEnv(box) } });
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toContain(`bds: refusing ${setting} from the config file ${file}: `);
      expect(res.stderr).toContain(`hint: set ${setting} with ${flag} or in your own config file `);
      expect(pings.requests).toHaveLength(pinged);
      expect(existsSync(metrics)).toBe(written);
      const named = await run([...deliver, '--config', file], {
        home,
        cwd: clone,
        env: { ...env, ...sandboxEnv(box), ...(setting === 'apiKeyFile' ? { BDS_API_KEY: '' } : {}) },
      });
      expect(named.code, named.stderr).toBe(0);
    }
    expect(box.store.batches()).toHaveLength(3);
    // The runs that named the file pinged and wrote.
    expect(pings.requests[0]).toMatch(/^GET \/start /);
    expect(existsSync(metrics)).toBe(true);
  });
});

describe('a found config file is opened once, not followed and not waited on', () => {
  it.skipIf(process.platform === 'win32')(
    'a named pipe in its place is passed over with a warning at once',
    async () => {
      const box = await sandbox();
      const { home, clone, env } = homeAndClone({ baseUrl: box.baseUrl });
      const fifo = path.join(clone, '.bdsrc.json');
      execFileSync('mkfifo', [fifo]);
      const res = await run(['whoami', '--json'], { home, cwd: clone, env: { ...env, BDS_API_KEY: box.keys.live } });
      expect(res.code, res.stderr).toBe(0);
      expect(res.stderr).toContain(`warning: ignoring the config file ${fifo}: it is a named pipe, not a file; `);
      expect(res.json().baseUrl).toBe(box.baseUrl);
    },
  );

  it.skipIf(process.platform === 'win32')(
    "a symbolic link is passed over with a warning; in the user's own config folder it is followed",
    async () => {
      const box = await sandbox();
      const stolen = await trap();
      const { home, clone, env } = homeAndClone({ baseUrl: box.baseUrl });
      const target = path.join(mkdtempSync(path.join(os.tmpdir(), 'bds-elsewhere-')), 'evil.json');
      writeFileSync(target, JSON.stringify({ baseUrl: stolen.url }));
      const link = path.join(clone, '.bdsrc.json');
      symlinkSync(target, link);
      const res = await run(['whoami', '--json'], { home, cwd: clone, env: { ...env, BDS_API_KEY: box.keys.live } });
      expect(res.code, res.stderr).toBe(0);
      expect(res.stderr).toContain(
        `warning: ignoring the config file ${link}: it is a symbolic link, which bds does not follow here; `,
      );
      expect(stolen.requests).toEqual([]);
      // A dotfiles manager links the user's own config.
      const dotfiles = path.join(tempDir(), 'config.json');
      writeFileSync(dotfiles, JSON.stringify({ baseUrl: box.baseUrl, sourceId: 'src_dotfiles' }), { mode: 0o600 });
      const own = path.join(home, '.config', 'bds', 'config.json');
      execFileSync('ln', ['-sf', dotfiles, own]);
      const linked = await run(['doctor', '--json'], { home, env: { ...env, BDS_API_KEY: box.keys.live } });
      expect(linked.stderr).not.toContain('ignoring');
      expect(linked.json().checks.find((c: { name: string }) => c.name === 'source id').message).toContain(
        'src_dotfiles',
      );
    },
  );
});

describe('what bds writes and labels', () => {
  it('a metrics file that is not a .prom file is refused before anything is sent, and not written', async () => {
    const box = await sandbox();
    const script = path.join(tempDir(), 'profile.d', 'bds.sh');
    mkdirSync(path.dirname(script));
    for (const [args, env, from] of [
      [['--metrics-file', script], {}, '--metrics-file'],
      [[], { BDS_METRICS_FILE: script }, 'BDS_METRICS_FILE'],
    ] as const) {
      const deliver = ['deliver', makeFolder().dir, '--period', '2024-05', '--source', newSource(box)];
      const res = await run([...deliver, ...args], { env: sandboxEnv(box, env) });
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toBe(
        `bds: the metrics file ${script} from ${from} is not a .prom file\n` +
          "hint: bds writes metrics only to a file whose name ends in .prom, as node_exporter's textfile collector reads them\n",
      );
    }
    expect(existsSync(script)).toBe(false);
    expect(box.store.batches()).toEqual([]);
  });

  it('a source id holding white space, a quote, $, a backtick or a control character is refused where it enters', async () => {
    const box = await sandbox();
    const planted = tempDir();
    for (const [id, what] of [
      ['src_$(touch x)', 'white space'],
      ['src_$HOME', 'a $ or backslash'],
      ['src_`id`', 'a quote or backtick'],
      ['src_"x', 'a quote or backtick'],
      ['src_\u009b2J', 'a control character'],
    ] as const) {
      const env = sandboxEnv(box, { BDS_SOURCE_ID: id });
      const deliver = ['deliver', makeFolder().dir, '--period', '2024-05'];
      const res = await run([...deliver, '--metrics-file', path.join(planted, 'bds.prom')], { env });
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toContain(`bds: the source id from BDS_SOURCE_ID holds ${what}, which no source id holds\n`);
      const flag = await run(['list', '--source', id], { env: sandboxEnv(box) });
      expect(flag.code, flag.stderr).toBe(2);
      expect(flag.stderr).toContain(`bds: the source id from --source holds ${what}`);
    }
    expect(box.store.batches()).toEqual([]);
    expect(existsSync(path.join(planted, 'bds.prom'))).toBe(false);
  });
});

describe('certificate checks', () => {
  it('NODE_TLS_REJECT_UNAUTHORIZED=0 is refused, naming it and NODE_EXTRA_CA_CERTS', async () => {
    const box = await sandbox();
    const res = await run(['whoami'], { env: sandboxEnv(box, { NODE_TLS_REJECT_UNAUTHORIZED: '0' }) });
    expect(res.code).toBe(2);
    expect(res.stderr).toBe(
      'bds: NODE_TLS_REJECT_UNAUTHORIZED=0 turns off certificate checks, which bds never does\n' +
        'hint: unset it; for a private certificate authority, point NODE_EXTRA_CA_CERTS at its certificate (a PEM file)\n',
    );
  });

  it("bds checks certificates itself: Node's own NODE_TLS_REJECT_UNAUTHORIZED=0 lets no unknown CA through", async () => {
    const tls = path.join(ROOT, 'test', 'fixtures', 'tls');
    const keys: string[] = [];
    const server = https.createServer(
      { key: readFileSync(path.join(tls, 'bds-test.key')), cert: readFileSync(path.join(tls, 'bds-test.crt')) },
      (req, res) => {
        keys.push(req.headers.authorization ?? '');
        res.end('{}');
      },
    );
    const baseUrl = `https://127.0.0.1:${await listenUntilTestEnds(server)}`;
    // Node reads the variable from its own process environment when a connection does not say.
    const before = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    try {
      const res = await run(['whoami'], { env: { BDS_BASE_URL: baseUrl, BDS_API_KEY: 'svc_test_0123456789' } });
      expect(res.code, res.stderr).toBe(5);
      expect(res.stderr).toContain('self-signed certificate');
    } finally {
      if (before === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = before;
    }
    expect(keys).toEqual([]);
  });
});
