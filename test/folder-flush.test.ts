// A folder whose flush fails (fsync of the folder: EIO) after a file was renamed into it: the file is whole, but
// whether the rename survives a power cut is not known. A delivery record's write fails with it; the metrics
// file is written and --verbose says so. node:fs is wrapped so that fsync fails for the folders a test names.

import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { deliverTo, makeFolder, sandbox, tempDir } from './helpers.js';

const failing = vi.hoisted(() => ({ folders: new Set<string>(), opened: new Map<number, string>() }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const openSync = (...args: Parameters<typeof fs.openSync>): number => {
    const fd = fs.openSync(...args);
    failing.opened.set(fd, path.resolve(String(args[0])));
    return fd;
  };
  const fsyncSync = (fd: number): void => {
    if (failing.folders.has(failing.opened.get(fd) ?? '')) {
      throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO', errno: -5, syscall: 'fsync' });
    }
    fs.fsyncSync(fd);
  };
  return { ...fs, default: { ...fs, openSync, fsyncSync }, openSync, fsyncSync };
});

describe('a folder that cannot be flushed', () => {
  it("the delivery record's write fails with it: the delivery stops before it creates a batch", async () => {
    const box = await sandbox();
    const home = tempDir();
    const deliveries = path.join(home, '.local', 'state', 'bds', 'deliveries');
    failing.folders.add(deliveries);
    const res = await deliverTo(box, makeFolder(), { home });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`bds: cannot write the delivery records in ${deliveries} (EIO)\n`);
    expect(box.store.batches()).toHaveLength(0);
  });

  it('the metrics file is written, and --verbose says that its folder was not flushed', async () => {
    const box = await sandbox();
    const dir = tempDir();
    failing.folders.add(dir);
    const file = path.join(dir, 'bds.prom');
    const folder = makeFolder();
    const home = tempDir();
    const quiet = await deliverTo(box, folder, { home, args: ['--metrics-file', file] });
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toContain('metrics');
    const verbose = await deliverTo(box, folder, { home, args: ['--metrics-file', file, '--verbose'] });
    expect(verbose.code, verbose.stderr).toBe(0);
    expect(verbose.stderr).toContain(
      `the metrics file ${file} is written, but its folder ${dir} could not be flushed to disk (EIO): ` +
        'whether it survives a power cut is not known',
    );
  });
});
