// A folder whose flush fails (fsync of the folder: EIO) after a file was renamed into it: the file is whole, but
// whether the rename survives a power cut is not known. A delivery record's write fails with it, with a hint that
// fits the failure; the metrics file is written and --verbose says so. node:fs is wrapped so that fsync fails
// for the folders a test names, with the code it names.

import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { deliverTo, makeFolder, sandbox, tempDir } from './helpers.js';

const failing = vi.hoisted(() => ({ folders: new Map<string, string>(), opened: new Map<number, string>() }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const openSync = (...args: Parameters<typeof fs.openSync>): number => {
    const fd = fs.openSync(...args);
    failing.opened.set(fd, path.resolve(String(args[0])));
    return fd;
  };
  const fsyncSync = (fd: number): void => {
    const code = failing.folders.get(failing.opened.get(fd) ?? '');
    if (code) throw Object.assign(new Error(`${code}: failed, fsync`), { code, syscall: 'fsync' });
    fs.fsyncSync(fd);
  };
  return { ...fs, default: { ...fs, openSync, fsyncSync }, openSync, fsyncSync };
});

describe('a folder that cannot be flushed', () => {
  // A fault of the disk, not of permissions: the hint does not say to make the folder writable.
  it.each([
    [
      'EIO',
      'an I/O error is a fault of the disk or its file system, not of permissions: check the disk ' +
        '(the system log says more), or set XDG_STATE_HOME to a folder on another disk',
    ],
    ['ENOSPC', 'the disk is full: free some space, or set XDG_STATE_HOME to a folder on another disk'],
  ])(
    "(%s) the delivery record's write fails with it, with a hint that fits: nothing is created",
    async (code, hint) => {
      const box = await sandbox();
      const home = tempDir();
      const deliveries = path.join(home, '.local', 'state', 'bds', 'deliveries');
      failing.folders.set(deliveries, code);
      const res = await deliverTo(box, makeFolder(), { home });
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(
        `bds: cannot write the delivery records in ${deliveries} (${code})\nhint: ${hint}\n`,
      );
      expect(box.store.batches()).toHaveLength(0);
    },
  );

  it('the metrics file is written, and --verbose says that its folder was not flushed', async () => {
    const box = await sandbox();
    const dir = tempDir();
    failing.folders.set(dir, 'EIO');
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
