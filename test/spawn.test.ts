// bin/bds.js as a user runs it: a real process, real stdout/stderr pipes, real exit codes.
import { execFile, spawn } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import nodeModule from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { packageVersion } from '../src/core/version.js';
import {
  BIN,
  collectOutput,
  makeFolder,
  newSource,
  ROOT,
  run,
  sandbox,
  sandboxEnv,
  spawnCli,
  tempDir,
  until,
} from './helpers.js';

describe('bin/bds.js', () => {
  it('--version and --help', async () => {
    const version = await spawnCli(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe(packageVersion());
    const help = await spawnCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('deliver');
    expect(help.stdout).toContain('Exit codes');
  });

  it('--version --verbose names the install kind: a clone here, or the standalone binary under BDS_TEST_BIN', async () => {
    const res = await spawnCli(['--version', '--verbose']);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(
      new RegExp(`^bds: +${packageVersion().replaceAll('.', '\\.')}\nnode: +\\d+\\.\\d+\\.\\d+\\n`),
    );
    expect(res.stdout).toContain(`platform: ${process.platform}-${process.arch}\n`);
    expect(res.stdout).toMatch(new RegExp(`^install: +${process.env.BDS_TEST_BIN ? 'binary' : 'clone'}$`, 'm'));
  });

  it('answers --version, -V, --help and -h as the program does, without loading it (start-up)', async () => {
    // bin/ and the answers `npm run build` wrote, nothing else: no dist/cli/main.js, no commander.
    const dir = tempDir();
    mkdirSync(path.join(dir, 'bin'));
    mkdirSync(path.join(dir, 'dist', 'cli'), { recursive: true });
    for (const name of ['bds.js', 'answer-quickly.js', 'node-check.js', 'compile-cache.js', 'package.json'])
      copyFileSync(path.join(ROOT, 'bin', name), path.join(dir, 'bin', name));
    copyFileSync(
      path.join(ROOT, 'dist', 'cli', 'quick-answers.json'),
      path.join(dir, 'dist', 'cli', 'quick-answers.json'),
    );
    const alone = (arg: string) =>
      collectOutput(
        spawn(process.execPath, [path.join(dir, 'bin', 'bds.js'), arg], {
          env: { PATH: process.env.PATH ?? '', HOME: tempDir() },
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
      );
    const program = await run(['--help']);
    expect(program.code).toBe(0);
    for (const arg of ['--help', '-h'])
      expect(await alone(arg)).toMatchObject({ code: 0, stdout: program.stdout, stderr: '' });
    for (const arg of ['--version', '-V'])
      expect(await alone(arg)).toMatchObject({ code: 0, stdout: `${packageVersion()}\n`, stderr: '' });
    // Anything else needs the program, which is not there.
    const other = await alone('--json');
    expect(other.code).not.toBe(0);
    expect(other.stderr).toMatch(/Cannot find module|ERR_MODULE_NOT_FOUND/);
  });

  it.skipIf(process.env.BDS_TEST_BIN)(
    'answers --help where fstat of stdout fails (EBADF, as under Wine), instead of crashing',
    async () => {
      const preload = path.join(tempDir(), 'fstat-fails.cjs');
      writeFileSync(
        preload,
        `const fs = require('fs');
const fstatSync = fs.fstatSync;
fs.fstatSync = (fd, ...rest) => {
  if (fd === 1) throw Object.assign(new Error('EBADF: bad file descriptor, fstat'), { code: 'EBADF', syscall: 'fstat' });
  return fstatSync(fd, ...rest);
};
`,
      );
      const program = await run(['--help']);
      const res = await collectOutput(
        spawn(process.execPath, ['--require', preload, BIN, '--help'], {
          env: { PATH: process.env.PATH ?? '', HOME: tempDir() },
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
      );
      expect(res).toMatchObject({ code: 0, stdout: program.stdout, stderr: '' });
    },
  );

  // Node 22 and later; not the standalone binary, whose program is no file the cache could know.
  it.skipIf(!('enableCompileCache' in nodeModule) || process.env.BDS_TEST_BIN)(
    "keeps Node's compile cache under $XDG_CACHE_HOME/bds, or where NODE_COMPILE_CACHE says",
    async () => {
      const cache = tempDir();
      expect((await spawnCli(['help'], { env: { XDG_CACHE_HOME: cache } })).code).toBe(0);
      expect(readdirSync(path.join(cache, 'bds', 'compile-cache')).length).toBeGreaterThan(0);
      const chosen = tempDir();
      const elsewhere = tempDir();
      expect((await spawnCli(['help'], { env: { XDG_CACHE_HOME: elsewhere, NODE_COMPILE_CACHE: chosen } })).code).toBe(
        0,
      );
      expect(readdirSync(chosen).length).toBeGreaterThan(0);
      expect(existsSync(path.join(elsewhere, 'bds'))).toBe(false);
    },
  );

  // Node's module hooks see every module bds imports; the binary has no modules to see.
  it.skipIf(process.env.BDS_TEST_BIN)(
    'a check loads no HTTP layer: undici (10 MB of memory) waits for a request',
    async () => {
      const dir = tempDir();
      writeFileSync(
        path.join(dir, 'hooks.mjs'),
        `import { appendFileSync } from 'node:fs';
let log;
export function initialize(data) { log = data.log; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(log, resolved.url + '\\n');
  return resolved;
}
`,
      );
      const log = path.join(dir, 'modules.txt');
      writeFileSync(log, '');
      writeFileSync(
        path.join(dir, 'preload.mjs'),
        `import { register } from 'node:module';
register('./hooks.mjs', import.meta.url, { data: { log: ${JSON.stringify(log)} } });
`,
      );
      const folder = makeFolder({ records: 3 });
      const res = await collectOutput(
        spawn(
          process.execPath,
          [
            '--import',
            pathToFileURL(path.join(dir, 'preload.mjs')).href,
            BIN,
            'check',
            folder.dir,
            '--period',
            '2024-05',
          ],
          {
            env: { PATH: process.env.PATH ?? '', HOME: tempDir() },
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        ),
      );
      expect(res.code, res.stderr).toBe(0);
      const modules = readFileSync(log, 'utf8');
      expect(modules).toContain('/dist/core/datapass/data-pass.js');
      expect(modules).not.toContain('/undici/');
    },
  );

  it('delivers, with X-Service-Client naming this machine, and prints JSON', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder({ records: 12 });
    const res = await spawnCli(['deliver', folder.dir, '--period', '2024-05', '--source', source, '--json'], {
      env: sandboxEnv(box),
    });
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ record_count: 12, sha256: folder.sha256, skipped: false });
    const [batch] = box.store.batches();
    expect(batch!.status).toBe('received');
    expect(batch!.client).toBe(`bds-cli/${packageVersion()} ${os.hostname()}`);
    expect(box.store.uploadedBytes(batch!.id)!.equals(folder.uploaded)).toBe(true);
    // Not a terminal: plain timestamped lines, no ANSI codes.
    expect(res.stderr).not.toMatch(/\u001b\[/);
    expect(res.stderr).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ creating/m);
  });

  it('exits 2 on bad input and 3 without a key, creating nothing', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder({ lines: ['{"a":1}', '[1,2]'] });
    const bad = await spawnCli(['deliver', folder.dir, '--period', '2024-05', '--source', source], {
      env: sandboxEnv(box),
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^bds: .*line 2 is not a JSON object$/m);
    const noKey = await spawnCli(['whoami'], { env: { BDS_BASE_URL: box.baseUrl } });
    expect(noKey.code).toBe(3);
    expect(noKey.stderr).toMatch(/BDS_API_KEY/);
    expect(box.store.batches()).toHaveLength(0);
  });

  it('exits 2 on an unknown command', async () => {
    const res = await spawnCli(['nope']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^bds: unknown command 'nope'/m);
  });

  it('bds sandbox: its printed export line and deliver command work as written; Ctrl-C stops it with 130', async () => {
    let sandboxOut = '';
    let child: import('node:child_process').ChildProcess | undefined;
    const running = spawnCli(['sandbox', '--port', '0'], { onSpawn: (c) => (child = c) });
    child!.stdout!.on('data', (d: Buffer) => (sandboxOut += d.toString()));
    await until(() => /Stop it with Ctrl-C/.test(sandboxOut), "the sandbox's banner");
    const exported = /export (BDS_BASE_URL=\S+ BDS_API_KEY=\S+ BDS_SOURCE_ID=\S+)/.exec(sandboxOut)![1]!;
    const env = Object.fromEntries(exported.split(' ').map((pair) => pair.split('=') as [string, string]));
    // The standalone binary holds no examples/: its line names a folder of the user's own, here the repository's.
    const command = /^ {2}bds (deliver .*)$/m
      .exec(sandboxOut)![1]!
      .replace('<a folder your scrubber wrote>', path.join(ROOT, 'examples', 'records-2024-05'))
      .replace('YYYY-MM', '2024-05')
      .split(' ');
    const delivered = await spawnCli(command, { env, cwd: ROOT });
    expect(delivered.code, delivered.stderr).toBe(0);
    expect(delivered.stdout).toMatch(/^Delivered bat_\w+ \(received\)/);
    child!.kill('SIGINT');
    const stopped = await running;
    expect(stopped.code).toBe(130);
  });

  it('bds sandbox on a port in use is exit 2 with a hint', async () => {
    const box = await sandbox();
    const port = new URL(box.baseUrl).port;
    const res = await spawnCli(['sandbox', '--port', port]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^bds: port \d+ or \d+ is already in use/m);
    expect(res.stderr).toMatch(/--port/);
  });

  it('a reader that closes the pipe early is no crash: the command carries on and exits 0', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder();
    const res = await spawnCli(['deliver', folder.dir, '--period', '2024-05', '--source', source], {
      env: sandboxEnv(box),
      onSpawn: (child) => child.stdout!.destroy(),
    });
    expect(res.stderr).not.toMatch(/Unhandled|EPIPE/);
    expect(res.code).toBe(0);
    expect(box.store.batches()[0]!.status).toBe('received');
  });

  it('`bds list` into a pipe closed early (| head -1) still exits 0', async () => {
    const box = await sandbox();
    const source = newSource(box);
    // A line to print, so that the write meets the closed pipe.
    box.store.createBatch({
      ...{ source_id: source, product: 'records', period: '2024-05', record_count: 1, schema: {} },
      ...{ report: { tool: 't', files: [], totals: {} }, client: null, key_id: 'k', idempotency_key: null },
    });
    const res = await spawnCli(['list', '--source', source], {
      env: sandboxEnv(box),
      onSpawn: (child) => child.stdout!.destroy(),
    });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
  });

  it.skipIf(!existsSync('/dev/full'))(
    'a result that cannot be written (stdout on a full disk) is exit 2 with a message',
    async () => {
      const box = await sandbox();
      const source = newSource(box);
      const full = openSync('/dev/full', 'w');
      try {
        const res = await spawnCli(['list', '--source', source, '--json'], { env: sandboxEnv(box), stdoutFd: full });
        expect(res.code).toBe(2);
        expect(res.stderr).toBe('bds: cannot write the result to stdout: ENOSPC: no space left on device, write\n');
      } finally {
        closeSync(full);
      }
    },
  );

  it('a working folder deleted under the shell is one line and exit 2, and --version still works', async () => {
    const box = await sandbox();
    const inDeletedFolder = async (...argv: string[]) => {
      const dir = path.join(tempDir(), 'gone');
      mkdirSync(dir);
      // The shell stands in the folder, removes it, then runs bds there.
      const script = 'cd "$1" && rmdir "$1" && shift && exec "$@"';
      return promisify(execFile)('sh', ['-c', script, 'sh', dir, process.execPath, BIN, ...argv], {
        env: { PATH: process.env.PATH ?? '', HOME: tempDir(), ...sandboxEnv(box) },
      }).then(
        ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
    };
    const res = await inDeletedFolder('whoami');
    expect(res.code).toBe(2);
    expect(res.stderr).toBe(
      'bds: the working folder no longer exists (it was deleted or moved)\nhint: cd to an existing folder and run the command again\n',
    );
    expect(box.requests).toHaveLength(0);
    const version = await inDeletedFolder('--version');
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe(packageVersion());
  });
});
