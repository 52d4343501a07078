// The one pass over the data file when the file or the machine misbehaves (issue 13): a file bds cannot read,
// a file that changes while it is read, a temp folder that cannot take the gzipped copy, a byte order mark,
// and gzip data with something after its end.

import { spawn } from 'node:child_process';
import { appendFileSync, chmodSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { deliver } from '../src/index.js';
import { BIN, count, deliverTo, expectOneReceived, makeFolder, newSource, sandbox, sandboxEnv, tempDir } from './helpers.js';

const runningAsRoot = process.getuid?.() === 0;

/** bin/bds.js as another user (nobody), which cannot read a 0600 file of root's. */
function spawnAsNobody(argv: string[], env: Record<string, string>, home: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...argv], { cwd: home, env: { PATH: process.env.PATH ?? '', HOME: home, ...env }, uid: 65534, gid: 65534 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the data pass', () => {
  it.skipIf(!runningAsRoot)('a plain .jsonl that cannot be read is exit 2 with JSON under --json, and leaves no lock', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder({ plain: true });
    chmodSync(folder.dataFile, 0o600);
    for (const name of readdirSync(folder.dir)) if (!name.endsWith('.jsonl')) chmodSync(path.join(folder.dir, name), 0o644);
    chmodSync(folder.dir, 0o755);
    const home = tempDir();
    chmodSync(home, 0o777);
    const res = await spawnAsNobody(['deliver', folder.dir, '--period', '2024-05', '--source', source, '--json'], sandboxEnv(box), home);
    expect(res.stderr).toContain(`bds: ${folder.dataFile}: cannot read it (EACCES)`);
    expect(res.stderr).not.toContain('Unhandled');
    expect(res.code).toBe(2);
    expect(JSON.parse(res.stdout)).toMatchObject({ error: { exit_code: 2 } });
    const records = path.join(home, '.local', 'state', 'bds', 'deliveries');
    expect(readdirSync(records).filter((name) => name.endsWith('.lock'))).toEqual([]);
    expect(count(box, 'create')).toBe(0);
  });

  it('a data file that changes during the pass is refused before anything is created', async () => {
    const box = await sandbox();
    const source = newSource(box);
    // Over 1 MiB, so that the pass reads it in more than one chunk.
    const folder = makeFolder({ lines: Array.from({ length: 40_000 }, (_, i) => JSON.stringify({ id: `o${i}`, pad: 'x'.repeat(40) })), plain: true });
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
    expect(error).toMatchObject({ exitCode: 2, message: `${folder.dataFile} changed while it was being checked; nothing was sent` });
    expect(count(box, 'create')).toBe(0);
  });

  it('a temp folder that cannot take the gzipped copy is exit 2 naming it and TMPDIR', async () => {
    const box = await sandbox();
    const folder = makeFolder({ plain: true });
    const notAFolder = path.join(tempDir(), 'file');
    writeFileSync(notAFolder, '');
    const res = await deliverTo(box, folder, { env: { TMPDIR: path.join(notAFolder, 'tmp') } });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(new RegExp(`^bds: cannot write the gzipped copy of ${path.basename(folder.dataFile)} in the temp folder ${notAFolder}/tmp \\(ENOTDIR\\)$`, 'm'));
    expect(res.stderr).toMatch(/^hint: .*TMPDIR/m);
    expect(res.stderr).not.toContain('bug in bds');
    expect(count(box, 'create')).toBe(0);
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

  it('data after the end of the gzip data is named as such; an empty .gz is empty, not truncated', async () => {
    const box = await sandbox();
    const garbage = makeFolder({ dataBytes: Buffer.concat([gzipSync('{"a":1}\n'), Buffer.from('tail of something else')]) });
    const res = await deliverTo(box, garbage);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`bds: ${garbage.dataFile}: there is data after the end of the gzip data (trailing garbage)`);
    expect(res.stderr).not.toContain('should be named *.jsonl');
    const empty = makeFolder({ dataBytes: Buffer.alloc(0) });
    const emptyRes = await deliverTo(box, empty);
    expect(emptyRes.code).toBe(2);
    expect(emptyRes.stderr).toContain(`bds: ${empty.dataFile}: the file is empty`);
    expect(count(box, 'create')).toBe(0);
  });
});

