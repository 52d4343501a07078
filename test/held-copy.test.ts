// The gzipped copy of a plain .jsonl, removed when its delivery ends, while another process holds it for a moment
// (on Windows a virus scanner or the search indexer opens a file just written: EBUSY). node:fs is wrapped so that
// removing a file the test names fails with EBUSY a given number of times.

import { existsSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it, vi } from 'vitest';
import { removeCopy, type UploadFile } from '../src/core/datapass/data-pass.js';
import { stampOf } from '../src/core/datapass/file-stamp.js';
import { tempDir } from './helpers.js';

/** How many more removals of each file fail. */
const held = vi.hoisted(() => new Map<string, number>());

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const busy = (file: unknown): Error | undefined => {
    const left = held.get(String(file)) ?? 0;
    if (left === 0) return undefined;
    held.set(String(file), left - 1);
    return Object.assign(new Error(`EBUSY: resource busy or locked, unlink '${String(file)}'`), {
      code: 'EBUSY',
      syscall: 'unlink',
      path: String(file),
    });
  };
  const rmSync = (...args: Parameters<typeof fs.rmSync>): void => {
    const error = busy(args[0]);
    if (error) throw error;
    fs.rmSync(...args);
  };
  const rm = async (...args: Parameters<typeof fs.promises.rm>): Promise<void> => {
    const error = busy(args[0]);
    if (error) throw error;
    await fs.promises.rm(...args);
  };
  const promises = { ...fs.promises, rm };
  return { ...fs, default: { ...fs, rmSync, promises }, rmSync, promises };
});

/** A gzipped copy in a temp folder, as the pass leaves it for the upload. */
function copyFile(): { file: string; upload: UploadFile } {
  const file = path.join(tempDir(), 'bds-host-1-00000000-0000-4000-8000-000000000001.jsonl.gz');
  writeFileSync(file, 'gzipped');
  return { file, upload: { source: stampOf(file, statSync(file)), size: 7, form: 'copy' } };
}

it('on Windows a copy held for a moment is removed once it is let go; the delivery does not fail on it', () => {
  const { file, upload } = copyFile();
  held.set(file, 3);
  removeCopy(upload, 'win32');
  expect(existsSync(file)).toBe(false);
  expect(held.get(file)).toBe(0);
});

it('elsewhere EBUSY means what it says: the first error stands', () => {
  const { file, upload } = copyFile();
  held.set(file, 1);
  expect(() => removeCopy(upload, 'linux')).toThrow(/EBUSY/);
  expect(existsSync(file)).toBe(true);
});
