// The one pass over the data file when the file or the machine misbehaves (issue 13): a file bds cannot read,
// a file that changes while it is read, a temp folder that cannot take the gzipped copy, a byte order mark,
// and gzip data with something after its end.

import { spawn, spawnSync } from 'node:child_process';
import fs, {
  appendFileSync,
  chmodSync,
  copyFileSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { openUpload } from '../src/core/datapass/data-pass.js';
import { stampOf } from '../src/core/datapass/file-stamp.js';
import { leftCopies } from '../src/core/datapass/temp-copy.js';
import { BdsError, deliver, deliverMany, EXIT_CODES } from '../src/index.js';
import {
  BIN,
  collectOutput,
  count,
  deliverTo,
  expectOneReceived,
  makeFolder,
  newSource,
  run,
  sandbox,
  sandboxEnv,
  spawnCli,
  tempDir,
  until,
} from './helpers.js';

const runningAsRoot = process.getuid?.() === 0;

const NOBODY = { uid: 65534, gid: 65534 };

/** This Node, as nobody can run it: CI's Node 22 and 24 live under /root, which nobody cannot enter. */
function nodeForNobody(): string {
  if (spawnSync(process.execPath, ['-e', ''], NOBODY).status === 0) return process.execPath;
  const dir = tempDir('bds-node-');
  chmodSync(dir, 0o755);
  const copy = path.join(dir, 'node');
  copyFileSync(process.execPath, copy);
  chmodSync(copy, 0o755);
  return copy;
}

/** bin/bds.js as another user (nobody), which cannot read a 0600 file of root's. */
function spawnAsNobody(
  argv: string[],
  env: Record<string, string>,
  home: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const node = nodeForNobody();
  return collectOutput(
    spawn(node, [BIN, ...argv], { cwd: home, env: { PATH: process.env.PATH ?? '', HOME: home, ...env }, ...NOBODY }),
  );
}

/** Lines of random hex: they barely compress, so a few MiB of .gz take a moment to make. */
function hexLines(count: number, bad?: { at: number; line: string }): string[] {
  return Array.from({ length: count }, (_, i) =>
    bad && i === bad.at - 1 ? bad.line : JSON.stringify({ id: i, token: randomBytes(48).toString('hex') }),
  );
}

type Callback = (error: NodeJS.ErrnoException | null, ...results: unknown[]) => void;

/**
 * Fails the `at`-th system call (open, write, writev, close) made on a file written in `tmp` with `code`, as a full or
 * failing disk would; passes every other call through. Returns how many such calls were made, and the undo.
 */
function failCallInFolder(tmp: string, at: number, code: string): { calls: () => number; restore: () => void } {
  const fds = new Set<number>();
  let calls = 0;
  const failing = (syscall: string, callback: Callback, file?: string): boolean => {
    if (++calls !== at) return false;
    const error = Object.assign(new Error(`${code}: failed, ${syscall}`), {
      code,
      syscall,
      ...(file ? { path: file } : {}),
    });
    process.nextTick(callback, error);
    return true;
  };
  const original = { open: fs.open, write: fs.write, writev: fs.writev, close: fs.close };
  const spies = [
    vi.spyOn(fs, 'open').mockImplementation(((file: string, ...rest: unknown[]) => {
      const callback = rest.pop() as Callback;
      // A file written there (the upload's read of it comes after the pass).
      const mine = typeof file === 'string' && file.startsWith(tmp + path.sep) && rest[0] !== 'r';
      if (mine && failing('open', callback, file)) return;
      (original.open as (...args: unknown[]) => void)(file, ...rest, (error: Error | null, fd: number) => {
        if (mine && !error) fds.add(fd);
        callback(error, fd);
      });
    }) as typeof fs.open),
    ...(['write', 'writev', 'close'] as const).map((name) =>
      vi.spyOn(fs, name).mockImplementation(((fd: number, ...rest: unknown[]) => {
        const callback = rest.at(-1) as Callback;
        if (fds.has(fd) && failing(name, callback)) return;
        (original[name] as (...args: unknown[]) => void)(fd, ...rest);
      }) as never),
    ),
  ];
  return { calls: () => calls, restore: () => spies.forEach((spy) => spy.mockRestore()) };
}

describe('the data pass over a large file (a thread of its own)', () => {
  it('counts and checks a .gz of more than 4 MiB on its thread, naming the first bad line of the file', async () => {
    const box = await sandbox();
    const good = makeFolder({ lines: hexLines(90_000) });
    expect(statSync(good.dataFile).size).toBeGreaterThan(4 << 20);
    const res = await deliverTo(box, good, { args: ['--json'] });
    expect(res.stderr).not.toContain('bds:');
    expect(res.json()).toMatchObject({ record_count: 90_000, sha256: good.sha256 });
    expectOneReceived(box, good);
    const bad = makeFolder({ lines: hexLines(90_000, { at: 81_234, line: '{"id": 81234, "token": "cut short' }) });
    const refused = await deliverTo(await sandbox(), bad);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`bds: ${bad.dataFile} line 81234 is not valid JSON`);
  });

  it('takes zero padding after the gzip data of a large .gz, hashing every byte of it, and refuses anything after the zeros', async () => {
    // zlib stops at the first zero and takes nothing more: the pass reads and hashes the rest all the same
    // (megabytes of it here, many reads), since the file is sent as it is.
    const gz = gzipSync(`${hexLines(90_000).join('\n')}\n`);
    expect(gz.length).toBeGreaterThan(4 << 20);
    const box = await sandbox();
    const padded = makeFolder({ dataBytes: Buffer.concat([gz, Buffer.alloc(3 << 20)]) });
    const res = await deliverTo(box, padded, { args: ['--json'] });
    expect(res.stderr).not.toContain('bds:');
    expect(res.json()).toMatchObject({ record_count: 90_000, bytes: padded.uploaded.length, sha256: padded.sha256 });
    expectOneReceived(box, padded);
    const tail = makeFolder({ dataBytes: Buffer.concat([gz, Buffer.alloc(3 << 20), Buffer.from('x')]) });
    const refused = await deliverTo(box, tail);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `bds: ${tail.dataFile}: there is data after the end of the gzip data (trailing garbage)`,
    );
  });

  it('checks the CRC-32 and length in the trailer of a large .gz itself: a damaged one is refused as zlib gunzip would, nothing created', async () => {
    const gz = gzipSync(`${hexLines(90_000).join('\n')}\n`);
    expect(gz.length).toBeGreaterThan(4 << 20);
    const box = await sandbox();
    for (const [at, check] of [
      [gz.length - 8, 'data'],
      [gz.length - 3, 'length'],
    ] as const) {
      const damaged = Buffer.from(gz);
      damaged[at] = damaged[at]! ^ 0x01;
      const folder = makeFolder({ dataBytes: damaged });
      const res = await deliverTo(box, folder);
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(`bds: ${folder.dataFile}: corrupt gzip data (incorrect ${check} check)`);
    }
    const cut = makeFolder({ dataBytes: gz.subarray(0, gz.length - 5) });
    const truncated = await deliverTo(box, cut);
    expect(truncated.code).toBe(2);
    expect(truncated.stderr).toContain(`bds: ${cut.dataFile}: the gzip data ends early (the file is truncated)`);
    expect(count(box, 'create')).toBe(0);
  });

  it('takes a large .gz as gzip writes it (its file name in the header) and one of several members', async () => {
    const lines = hexLines(90_000);
    const half = 45_000;
    // gzip's header with FNAME: flags 0x08, then the name and a zero.
    const named = (text: string): Buffer => {
      const gz = gzipSync(text);
      const header = Buffer.from(gz.subarray(0, 10));
      header[3] = 0x08;
      return Buffer.concat([header, Buffer.from('records.jsonl\0'), gz.subarray(10)]);
    };
    const members = Buffer.concat([
      named(`${lines.slice(0, half).join('\n')}\n`),
      gzipSync(`${lines.slice(half).join('\n')}\n`),
    ]);
    const box = await sandbox();
    const folder = makeFolder({ dataBytes: members });
    expect(statSync(folder.dataFile).size).toBeGreaterThan(4 << 20);
    const res = await deliverTo(box, folder, { args: ['--json'] });
    expect(res.stderr).not.toContain('bds:');
    expect(res.json()).toMatchObject({ record_count: 90_000, sha256: folder.sha256 });
    expectOneReceived(box, folder);
  });

  it('gzips a plain .jsonl of more than 4 MiB on every core into one valid gzip member; deliver after check makes the same bytes', async () => {
    const box = await sandbox();
    const lines = hexLines(50_000);
    const folder = makeFolder({ plain: true, lines });
    const home = tempDir();
    const checked = await run(['check', folder.dir, '--period', '2024-05', '--json'], { home });
    expect(checked.code).toBe(0);
    const res = await deliverTo(box, folder, { home, args: ['--json'] });
    expect(res.stderr).toContain('remembered from an earlier pass');
    expect(res.json().sha256).toBe(checked.json().sha256);
    const [batch] = box.store.batches();
    const stored = box.store.uploadedBytes(batch!.id)!;
    expect(createHash('sha256').update(stored).digest('hex')).toBe(res.json().sha256);
    expect(gunzipSync(stored).toString()).toBe(lines.map((l) => `${l}\n`).join(''));
    // A fresh machine (no remembered pass) gzips it into its temp copy to the very same bytes.
    const fresh = await deliverTo(await sandbox(), folder, { args: ['--json', '--force'] });
    expect(fresh.json().sha256).toBe(res.json().sha256);
  });

  it('runs on a thread of its own that an abort stops: exit code 130, no temp copy left, nothing created', async () => {
    const box = await sandbox();
    const folder = makeFolder({ plain: true, lines: hexLines(50_000) });
    expect(statSync(folder.dataFile).size).toBeGreaterThan(4 << 20);
    const tmp = tempDir();
    const controller = new AbortController();
    let read = 0;
    const error = await deliver({
      dir: folder.dir,
      period: '2024-05',
      signal: controller.signal,
      env: { ...sandboxEnv(box), BDS_SOURCE_ID: newSource(box), TMPDIR: tmp, HOME: tempDir() },
      onEvent: (event) => {
        // Progress comes from the pass thread; the first of it proves the copy is being written.
        if (event.type === 'reading' && read++ === 1) controller.abort();
      },
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BdsError);
    expect((error as BdsError).exitCode).toBe(EXIT_CODES.sigint);
    expect(read).toBeGreaterThanOrEqual(2);
    expect(readdirSync(tmp)).toEqual([]);
    expect(count(box, 'create')).toBe(0);
  });

  it('fails, with nothing left behind, when a progress handler throws on the pass thread', async () => {
    const box = await sandbox();
    const folder = makeFolder({ plain: true, lines: hexLines(50_000) });
    const tmp = tempDir();
    const error = await deliver({
      dir: folder.dir,
      period: '2024-05',
      env: { ...sandboxEnv(box), BDS_SOURCE_ID: newSource(box), TMPDIR: tmp, HOME: tempDir() },
      onEvent: (event) => {
        if (event.type === 'reading') throw new Error('the caller broke');
      },
    }).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe('the caller broke');
    expect(readdirSync(tmp)).toEqual([]);
    expect(count(box, 'create')).toBe(0);
  });
});

describe('the gzipped copies of processes that are gone', () => {
  it('a copy left by bds killed with SIGKILL mid-pass is counted by doctor and removed by the next delivery of any file', async () => {
    const box = await sandbox();
    const source = newSource(box);
    // Large enough that the pass is still running when its copy appears.
    const folder = makeFolder({ plain: true, lines: hexLines(200_000) });
    const tmp = tempDir('bds-tmp-');
    const env = { ...sandboxEnv(box), HOME: tempDir(), TMPDIR: tmp };
    const argv = ['deliver', folder.dir, '--period', '2024-05', '--source', source];
    // The upload hangs: were the pass over before the kill, the copy would be there all the same.
    box.faults.add({ route: 'upload', hang: true });
    let pid = 0;
    let createdBeforeKill = -1;
    const killed = await spawnCli(argv, {
      env,
      onSpawn: (child) => {
        pid = child.pid!;
        void until(() => readdirSync(tmp).length > 0, 'the gzipped copy').then(() => {
          createdBeforeKill = count(box, 'create');
          child.kill('SIGKILL');
        });
      },
    });
    expect(killed.signal).toBe('SIGKILL');
    expect(createdBeforeKill).toBe(0); // killed during the pass, which comes before the batch is created
    const left = readdirSync(tmp);
    expect(left).toHaveLength(1);
    expect(left[0]).toMatch(new RegExp(`^bds-.+-${pid}-[0-9a-f-]{36}\\.jsonl\\.gz$`));

    const doctor = (): Promise<{ status: string; message: string }> =>
      spawnCli(['doctor', '--json'], { env }).then((res) =>
        (JSON.parse(res.stdout) as { checks: { name: string; status: string; message: string }[] }).checks.find(
          (check) => check.name === 'temp copies',
        )!,
      );
    const counted = await doctor();
    expect(counted.status).toBe('warn');
    expect(counted.message).toMatch(
      new RegExp(
        `^1 gzipped copy of a plain \\.jsonl \\([0-9.]+ MB\\) left in ${tmp} by processes that are gone \\(pid ${pid}\\)$`,
      ),
    );

    box.faults.clear();
    // A .jsonl.gz, which needs no copy of its own.
    const gzipped = makeFolder();
    const again = await spawnCli(['deliver', gzipped.dir, '--period', '2024-05', '--source', source], { env });
    expect(again.stderr).not.toContain('bds:');
    expect(again.code).toBe(0);
    expect(readdirSync(tmp)).toEqual([]);
    expect(await doctor()).toMatchObject({ status: 'ok', message: 'no gzipped copy left by a process that is gone' });
  });

  it('are those of this host whose pid is not running, or runs a process that started after the copy was written', () => {
    const tmp = tempDir();
    const written = Date.parse('2026-11-26T10:00:00Z');
    const names = {
      gone: 'bds-test-host-101-00000000-0000-4000-8000-000000000001.jsonl.gz',
      running: 'bds-test-host-102-00000000-0000-4000-8000-000000000002.jsonl.gz',
      reused: 'bds-test-host-103-00000000-0000-4000-8000-000000000003.jsonl.gz',
      mine: 'bds-test-host-104-00000000-0000-4000-8000-000000000004.jsonl.gz',
      otherHost: 'bds-other-host-101-00000000-0000-4000-8000-000000000005.jsonl.gz',
      notACopy: 'bds-test-host-101-notauuid.jsonl.gz',
    };
    for (const name of Object.values(names)) {
      writeFileSync(path.join(tmp, name), 'x');
      utimesSync(path.join(tmp, name), written / 1000, written / 1000);
    }
    const owner = {
      hostname: 'test-host',
      pid: 104,
      isProcessAlive: (pid: number) => pid === 102 || pid === 103,
      processStartedAt: (pid: number) => (pid === 103 ? written + 60_000 : written - 60_000),
    };
    expect(leftCopies(tmp, owner).map((copy) => [path.basename(copy.path), copy.pid, copy.bytes])).toEqual([
      [names.gone, 101, 1],
      [names.reused, 103, 1],
    ]);
  });
});

describe('the pass threads of several months', () => {
  it('run one at a time: with --jobs 2 one month is read while the other uploads, never two at once', async () => {
    const box = await sandbox();
    const root = tempDir();
    const dirs = ['2024-04', '2024-05'].map((period) => {
      const folder = makeFolder({ plain: true, lines: hexLines(50_000) });
      const dir = path.join(root, `records-${period}`);
      renameSync(folder.dir, dir);
      return dir;
    });
    // Whose pass reported progress, in order: one month's reading events, then the other's, not mixed.
    const readers: string[] = [];
    const result = await deliverMany({
      dirs,
      jobs: 2,
      env: { ...sandboxEnv(box), BDS_SOURCE_ID: newSource(box), HOME: tempDir() },
      onEvent: (event) => {
        if (event.type === 'reading' && readers.at(-1) !== event.period) readers.push(event.period);
      },
    });
    expect(result.exit_code).toBe(0);
    expect(readers.sort()).toEqual(['2024-04', '2024-05']);
  });
});

describe('the data pass', () => {
  it.skipIf(!runningAsRoot)(
    'a plain .jsonl that cannot be read is exit 2 with JSON under --json, and leaves no lock',
    async () => {
      const box = await sandbox();
      const source = newSource(box);
      const folder = makeFolder({ plain: true });
      chmodSync(folder.dataFile, 0o600);
      for (const name of readdirSync(folder.dir))
        if (!name.endsWith('.jsonl')) chmodSync(path.join(folder.dir, name), 0o644);
      chmodSync(folder.dir, 0o755);
      const home = tempDir();
      chmodSync(home, 0o777);
      const res = await spawnAsNobody(
        ['deliver', folder.dir, '--period', '2024-05', '--source', source, '--json'],
        sandboxEnv(box),
        home,
      );
      expect(res.stderr).toContain(`bds: ${folder.dataFile}: cannot read it (EACCES)`);
      expect(res.stderr).not.toContain('Unhandled');
      expect(res.code).toBe(2);
      expect(JSON.parse(res.stdout)).toMatchObject({ error: { exit_code: 2 } });
      const records = path.join(home, '.local', 'state', 'bds', 'deliveries');
      expect(readdirSync(records).filter((name) => name.endsWith('.lock'))).toEqual([]);
      expect(count(box, 'create')).toBe(0);
    },
  );

  it('a data file that changes during the pass is refused before anything is created', async () => {
    const box = await sandbox();
    const source = newSource(box);
    // Over 1 MiB, so that the pass reads it in more than one chunk.
    const folder = makeFolder({
      lines: Array.from({ length: 40_000 }, (_, i) => JSON.stringify({ id: `o${i}`, pad: 'x'.repeat(40) })),
      plain: true,
    });
    const home = tempDir();
    let appended = false;
    const error = await deliver({
      dir: folder.dir,
      period: '2024-05',
      env: { ...sandboxEnv(box), BDS_SOURCE_ID: source, HOME: home },
      onEvent: (event) => {
        if (event.type === 'reading' && !appended) {
          appended = true;
          appendFileSync(folder.dataFile, '{"late":true}\n');
        }
      },
    }).catch((e: unknown) => e);
    expect(appended).toBe(true);
    expect(error).toMatchObject({
      exitCode: 2,
      message: `${folder.dataFile} changed while it was being checked; nothing was sent`,
    });
    expect(count(box, 'create')).toBe(0);
  });

  it('a temp folder that cannot take the gzipped copy is exit 2 naming it and TMPDIR', async () => {
    const box = await sandbox();
    const folder = makeFolder({ plain: true });
    const notAFolder = path.join(tempDir(), 'file');
    writeFileSync(notAFolder, '');
    const res = await deliverTo(box, folder, { env: { TMPDIR: path.join(notAFolder, 'tmp') } });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(
      new RegExp(
        `^bds: cannot write the gzipped copy of ${folder.dataFile} in the temp folder ${notAFolder}/tmp \\(ENOTDIR\\)$`,
        'm',
      ),
    );
    expect(res.stderr).toMatch(/^hint: .*TMPDIR/m);
    expect(res.stderr).not.toContain('bug in bds');
    expect(count(box, 'create')).toBe(0);
  });

  it("a full or failing temp folder at any of the copy's calls is exit 2 naming it and TMPDIR, not the data file", async () => {
    // Four gzip blocks (gzip.ts), so that the copy is written more than once.
    const folder = makeFolder({ plain: true, lines: hexLines(20_000) });
    for (const code of ['ENOSPC', 'EIO']) {
      const box = await sandbox();
      const tmp = tempDir();
      for (let at = 1; ; at++) {
        const fault = failCallInFolder(tmp, at, code);
        const res = await deliverTo(box, folder, { env: { TMPDIR: tmp } }).finally(fault.restore);
        if (fault.calls() < at) {
          // Every call was made and none failed: delivered. Open, at least two writes, close.
          expect(res.stderr).not.toContain('bds:');
          expect(at).toBeGreaterThan(4);
          break;
        }
        expect(res.code, `${code} at call ${at}`).toBe(2);
        expect(res.stderr.split('\n').slice(-3)).toEqual([
          `bds: cannot write the gzipped copy of ${folder.dataFile} in the temp folder ${tmp} (${code})`,
          'hint: a plain .jsonl is gzipped there before the upload and needs its gzipped size free: free space, or set TMPDIR to another folder',
          '',
        ]);
        expect(readdirSync(tmp)).toEqual([]);
        expect(count(box, 'create')).toBe(0);
      }
      const received = box.store.batches().filter((batch) => batch.status === 'received');
      expect(received).toHaveLength(1);
      expect(gunzipSync(box.store.uploadedBytes(received[0]!.id)!).equals(readFileSync(folder.dataFile))).toBe(true);
    }
  });

  it('a data file name of 250 bytes gets a temp copy all the same', async () => {
    const box = await sandbox();
    const folder = makeFolder({ plain: true, dataName: `${'n'.repeat(244)}.jsonl` });
    const res = await deliverTo(box, folder, { env: { TMPDIR: tempDir() } });
    expect(res.stderr).not.toContain('bds:');
    expect(res.code).toBe(0);
    expectOneReceived(box, folder);
  });

  it('a UTF-8 byte order mark before the first line is accepted, and the file is sent as it is', async () => {
    const box = await sandbox();
    const text = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}\n{"a":2}\n')]);
    const folder = makeFolder({ dataBytes: gzipSync(text) });
    folder.uploaded = gzipSync(text);
    const res = await deliverTo(box, folder, { args: ['--json'] });
    expect(res.stderr).not.toContain('bds:');
    expect(res.json().record_count).toBe(2);
    expectOneReceived(box, folder);
    const plain = makeFolder({ plain: true, dataBytes: text });
    const checked = await deliverTo(await sandbox(), plain, { args: ['--dry-run', '--json'] });
    expect(checked.code).toBe(0);
    expect(checked.json().record_count).toBe(2);
  });

  it('zero bytes after the gzip data are padding, as gzip -t takes them: accepted, and the file is sent as it is', async () => {
    const box = await sandbox();
    const padded = makeFolder({ dataBytes: Buffer.concat([gzipSync('{"a":1}\n{"a":2}\n'), Buffer.alloc(4096)]) });
    const res = await deliverTo(box, padded, { args: ['--json'] });
    expect(res.stderr).not.toContain('bds:');
    expect(res.code).toBe(0);
    expect(res.json()).toMatchObject({ record_count: 2, bytes: padded.uploaded.length, sha256: padded.sha256 });
    expectOneReceived(box, padded);
  });

  it.each([
    ['right after zeros', Buffer.concat([Buffer.alloc(2), Buffer.from('tail')])],
    // zlib drops the rest of a chunk that starts with a zero; here the bytes are megabytes after the gzip data.
    ['megabytes of zeros later', Buffer.concat([Buffer.alloc(3 * 1024 * 1024), Buffer.from('x')])],
  ])('anything but zeros after the gzip data is refused, %s', async (_, tail) => {
    const box = await sandbox();
    const folder = makeFolder({ dataBytes: Buffer.concat([gzipSync('{"a":1}\n'), tail]) });
    const res = await deliverTo(box, folder);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      `bds: ${folder.dataFile}: there is data after the end of the gzip data (trailing garbage)`,
    );
    expect(count(box, 'create')).toBe(0);
  });

  it('data after the end of the gzip data is named as such; an empty .gz is empty, not truncated', async () => {
    const box = await sandbox();
    const garbage = makeFolder({
      dataBytes: Buffer.concat([gzipSync('{"a":1}\n'), Buffer.from('tail of something else')]),
    });
    const res = await deliverTo(box, garbage);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      `bds: ${garbage.dataFile}: there is data after the end of the gzip data (trailing garbage)`,
    );
    expect(res.stderr).not.toContain('should be named *.jsonl');
    const empty = makeFolder({ dataBytes: Buffer.alloc(0) });
    const emptyRes = await deliverTo(box, empty);
    expect(emptyRes.code).toBe(2);
    expect(emptyRes.stderr).toContain(`bds: ${empty.dataFile}: the file is empty`);
    expect(count(box, 'create')).toBe(0);
  });
});

describe('the stream of the bytes to upload', () => {
  /** How many of this process's file descriptors are open on `file` (Linux: /proc/self/fd). */
  const openOn = (file: string): number =>
    readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`) === file;
      } catch {
        return false; // the descriptor readdir used, closed since
      }
    }).length;

  it.runIf(process.platform === 'linux').each(['as-is', 'gzip'] as const)(
    'closes the data file when destroyed, as an abort or a retry destroys it (%s)',
    async (form) => {
      const file = path.join(tempDir(), 'records.jsonl');
      writeFileSync(file, randomBytes(8 << 20));
      const upload = { source: stampOf(file, statSync(file)), size: 8 << 20, form };
      const stream = openUpload(upload);
      await until(() => openOn(file) === 1, 'the data file to be opened');
      stream.destroy();
      await until(() => openOn(file) === 0, 'the data file to be closed');
    },
  );
});
