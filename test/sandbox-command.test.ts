// `bds sandbox` as a person runs it: the addresses it advertises, a broken --data-dir, the last port, and
// Ctrl-C (one JSON document under --json; no "resume" hint where there is nothing to resume).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { shellWord } from '../src/cli/commands/sandbox.js';
import { formatBytes } from '../src/cli/output/format.js';
import { InterruptedError } from '../src/core/errors.js';
import { count, makeFolder, newSource, ROOT, run, sandbox, sandboxEnv, spawnCli, tempDir, until } from './helpers.js';

/** A signal already aborted as Ctrl-C aborts it: `bds sandbox` prints its banner, then stops at once. */
function ctrlC(): AbortSignal {
  const controller = new AbortController();
  controller.abort(new InterruptedError('SIGINT'));
  return controller.signal;
}

/** Whether this machine has an IPv6 loopback address (some containers have none). */
const hasIpv6Loopback = await new Promise<boolean>((resolve) => {
  const server = net.createServer();
  server.once('error', () => resolve(false));
  server.listen(0, '::1', () => server.close(() => resolve(true)));
});

describe('bds sandbox', () => {
  it('listening on 0.0.0.0 advertises 127.0.0.1, in its export line and in its upload URLs', async () => {
    const res = await run(['sandbox', '--host', '0.0.0.0', '--port', '0'], { signal: ctrlC() });
    expect(res.code).toBe(130);
    expect(res.stdout).toMatch(/^ {2}export BDS_BASE_URL=http:\/\/127\.0\.0\.1:\d+ /m);

    // bds sends its key over http:// to loopback only: a delivery to such a sandbox works end to end.
    const box = await sandbox({ host: '0.0.0.0' });
    expect(box.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(box.storageUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const delivered = await run(['deliver', makeFolder().dir, '--period', '2024-05', '--source', newSource(box)], {
      env: sandboxEnv(box),
    });
    expect(delivered.stderr).not.toContain('bds:');
    expect(delivered.code).toBe(0);
  });

  it.skipIf(!hasIpv6Loopback)('listening on :: advertises [::1], and a delivery to it works', async () => {
    const res = await run(['sandbox', '--host', '::', '--port', '0'], { signal: ctrlC() });
    expect(res.stdout).toMatch(/^ {2}export BDS_BASE_URL=http:\/\/\[::1\]:\d+ /m);

    const box = await sandbox({ host: '::' });
    expect(box.baseUrl).toMatch(/^http:\/\/\[::1\]:\d+$/);
    expect(box.storageUrl).toMatch(/^http:\/\/\[::1\]:\d+$/);
    const delivered = await run(['deliver', makeFolder().dir, '--period', '2024-05', '--source', newSource(box)], {
      env: sandboxEnv(box),
    });
    expect(delivered.stderr).not.toContain('bds:');
    expect(delivered.code).toBe(0);
  });

  it('a --data-dir whose state.json is not a sandbox state file is exit 2 naming it', async () => {
    const dataDir = tempDir();
    writeFileSync(path.join(dataDir, 'state.json'), '{"some": "other tool"}');
    const res = await run(['sandbox', '--port', '0', '--data-dir', dataDir]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`bds: ${path.join(dataDir, 'state.json')} is not a sandbox state file`);
    expect(res.stderr).toMatch(/^hint: .*--data-dir/m);

    const notJson = tempDir();
    mkdirSync(path.join(notJson, 'objects'));
    writeFileSync(path.join(notJson, 'state.json'), 'garbage');
    expect((await run(['sandbox', '--port', '0', '--data-dir', notJson])).code).toBe(2);

    const aFolder = tempDir();
    mkdirSync(path.join(aFolder, 'state.json'));
    const folderRes = await run(['sandbox', '--port', '0', '--data-dir', aFolder]);
    expect(folderRes.code).toBe(2);
    expect(folderRes.stderr).toContain(`bds: ${path.join(aFolder, 'state.json')} is not a sandbox state file`);
  });

  it('a --data-dir that is a file, not a folder, is exit 2 naming it', async () => {
    const file = path.join(tempDir(), 'data');
    writeFileSync(file, 'not a folder');
    const res = await run(['sandbox', '--port', '0', '--data-dir', file]);
    expect(res.code).toBe(2);
    expect(res.stderr).toBe(
      `bds: cannot keep the sandbox's data in ${file} (ENOTDIR on ${path.join(file, 'objects')})\nhint: name a folder you can write with --data-dir\n`,
    );
  });

  it('--port 65535 is a port: the storage host takes a free one', async () => {
    const res = await run(['sandbox', '--port', '65535', '--json'], { signal: ctrlC() });
    expect(res.code).toBe(130);
    const { baseUrl, storageUrl } = res.json();
    expect(new URL(baseUrl).port).toBe('65535');
    expect(Number(new URL(storageUrl).port)).toBeGreaterThan(0);
    expect(new URL(storageUrl).port).not.toBe('65535');
  });

  it('--json, then Ctrl-C: stdout holds one JSON document, and no hint about resuming', async () => {
    let stdout = '';
    const stopped = await spawnCli(['sandbox', '--port', '0', '--json'], {
      onSpawn: (child) => {
        child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        void until(() => stdout.trim().endsWith('}'), 'the banner').then(() => child.kill('SIGINT'));
      },
    });
    expect(stopped.code).toBe(130);
    expect(JSON.parse(stopped.stdout)).toMatchObject({ baseUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:/) });
    expect(stopped.stderr).toContain('bds: interrupted by SIGINT');
    expect(stopped.stderr).not.toMatch(/resume/);
  });
});

describe('bds sandbox --max-upload-size', () => {
  it("refuses an upload over it as storage does; bds's delivery ends with exit 4 naming the limit", async () => {
    let stdout = '';
    let delivered: Awaited<ReturnType<typeof run>> | undefined;
    const folder = makeFolder({ records: 500 });
    expect(folder.uploaded.length).toBeGreaterThan(1024);
    await spawnCli(['sandbox', '--port', '0', '--json', '--max-upload-size', '1K'], {
      onSpawn: (child) => {
        child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        void until(() => /^}$/m.test(stdout), 'the banner')
          .then(async () => {
            const banner = JSON.parse(stdout) as { baseUrl: string; keys: { test: string }; sourceId: string };
            delivered = await run(['deliver', folder.dir, '--period', '2024-05', '--source', banner.sourceId], {
              env: { BDS_BASE_URL: banner.baseUrl, BDS_API_KEY: banner.keys.test },
            });
          })
          .finally(() => child.kill('SIGINT'));
      },
    });
    expect(delivered?.code).toBe(4);
    expect(delivered?.stderr).toContain(
      `bds: ${folder.dataFile} is ${formatBytes(folder.uploaded.length)}, over the storage host's limit of 1.02 kB`,
    );
  });

  it('a size that is not one is exit 2', async () => {
    const res = await run(['sandbox', '--port', '0', '--max-upload-size', '5GB'], { signal: ctrlC() });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--max-upload-size 5GB is not a size');
    const empty = await run(['sandbox', '--port', '0', '--max-upload-size', ''], { signal: ctrlC() });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('bds: --max-upload-size is empty');
  });

  it.each(['1.5M', '6T'])('takes %s, as --limit-rate does (one grammar for sizes and rates)', async (size) => {
    const res = await run(['sandbox', '--port', '0', '--max-upload-size', size], { signal: ctrlC() });
    // Listening, then stopped by the Ctrl-C: the size was taken.
    expect(res.code, res.stderr).toBe(130);
    expect(res.stdout).toContain('bds sandbox is listening on');
  });
});

describe('Ctrl-C outside a delivery', () => {
  it.each([
    ['whoami', 'me'],
    ['list', 'list'],
  ] as const)('%s: exit 130 without a hint about resuming a delivery', async (command, route) => {
    const box = await sandbox();
    box.faults.add({ route, hang: true });
    const controller = new AbortController();
    const running = run([command], {
      env: sandboxEnv(box, { BDS_SOURCE_ID: newSource(box) }),
      signal: controller.signal,
    });
    await until(() => count(box, route) >= 1, `the ${route} request`);
    controller.abort(new InterruptedError('SIGINT'));
    const res = await running;
    expect(res.code).toBe(130);
    expect(res.stderr).toContain('bds: interrupted by SIGINT');
    expect(res.stderr).not.toMatch(/resume/);
  });
});

describe("the sandbox's banner", () => {
  const deliverLines = (stdout: string) => stdout.split('\n').filter((line) => /^ {2}(cd|bds|npx bds) /.test(line));

  it('names the examples by their absolute path, which exists, for `bds` from any folder', async () => {
    const res = await run(['sandbox', '--port', '0'], { signal: ctrlC() });
    const folder = path.join(ROOT, 'examples', 'records-2024-05');
    expect(deliverLines(res.stdout)).toEqual([`  bds deliver ${folder} --period 2024-05`]);
    expect(existsSync(folder)).toBe(true);
  });

  it('on Windows: the settings for PowerShell and for cmd.exe, which have no export', async () => {
    const res = await run(['sandbox', '--port', '0'], { signal: ctrlC(), platform: 'win32' });
    expect(res.stdout).not.toMatch(/export /);
    expect(res.stdout).toMatch(
      /^ {2}\$env:BDS_BASE_URL='http:\/\/127\.0\.0\.1:\d+'; \$env:BDS_API_KEY='svc_test_\w+'; \$env:BDS_SOURCE_ID='src_\w+'$/m,
    );
    expect(res.stdout).toMatch(
      /^ {2}set "BDS_BASE_URL=http:\/\/127\.0\.0\.1:\d+" & set "BDS_API_KEY=svc_test_\w+" & set "BDS_SOURCE_ID=src_\w+"$/m,
    );
    expect(deliverLines(res.stdout)).toEqual([
      `  bds deliver ${path.win32.join(ROOT, 'examples', 'records-2024-05')} --period 2024-05`,
    ]);
  });

  it("a folder's path that a shell would split is quoted for the system's shells", () => {
    expect(shellWord('C:\\Users\\John Smith\\bds\\examples', 'win32')).toBe('"C:\\Users\\John Smith\\bds\\examples"');
    expect(shellWord('C:\\bds\\examples\\records-2024-05', 'win32')).toBe('C:\\bds\\examples\\records-2024-05');
    expect(shellWord("/home/o'neil/my bds", 'linux')).toBe("'/home/o'\\''neil/my bds'");
    expect(shellWord('/opt/bds/examples/records-2024-05', 'darwin')).toBe('/opt/bds/examples/records-2024-05');
    expect(shellWord('/srv/a\\b', 'linux')).toBe("'/srv/a\\b'");
  });

  it('run with npx in a clone: `npx bds` from the clone, where it works', async () => {
    const env = { npm_command: 'exec', npm_config_local_prefix: ROOT };
    const res = await run(['sandbox', '--port', '0'], { signal: ctrlC(), env });
    expect(deliverLines(res.stdout)).toEqual([
      `  cd ${ROOT}`,
      '  npx bds deliver examples/records-2024-05 --period 2024-05',
    ]);
    // npx run elsewhere (npx <package> sandbox): `npx bds` there would be another package; bds and the path.
    const elsewhere = await run(['sandbox', '--port', '0'], {
      signal: ctrlC(),
      env: { ...env, npm_config_local_prefix: tempDir() },
    });
    expect(deliverLines(elsewhere.stdout)).toEqual([
      `  bds deliver ${path.join(ROOT, 'examples', 'records-2024-05')} --period 2024-05`,
    ]);
  });

  it('as a user runs it (the standalone binary too, which holds no examples/: it says where they are)', async () => {
    let stdout = '';
    const stopped = await spawnCli(['sandbox', '--port', '0'], {
      onSpawn: (child) => {
        child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        void until(() => stdout.includes('Stop it with Ctrl-C.'), 'the banner').then(() => child.kill('SIGINT'));
      },
    });
    expect(stopped.code).toBe(130);
    if (process.env.BDS_TEST_BIN) {
      expect(deliverLines(stdout)).toEqual(['  bds deliver <a folder your scrubber wrote> --period YYYY-MM']);
      expect(stdout).toContain('examples/ is in the release tarball and the repository');
    } else {
      expect(deliverLines(stdout)).toEqual([
        `  bds deliver ${path.join(ROOT, 'examples', 'records-2024-05')} --period 2024-05`,
      ]);
    }
  });
});
