// The delivery lock's take-over of a stale lock, under the interleaving that once let two processes hold it.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LockedError } from '../src/core/errors.js';
import { takeLock, type LockOwner } from '../src/core/delivery/lock.js';
import { tempDir } from './helpers.js';

const owner = (pid: number) => ({ pid, hostname: 'host', startedAt: `2024-06-01T00:00:0${pid % 10}.000Z` });
const lock = (
  dir: string,
  holder: LockOwner,
  isProcessAlive: (pid: number) => boolean,
  processStartedAt?: (pid: number) => number | undefined,
) =>
  takeLock({
    file: path.join(dir, 'src_1-2024-05-records.lock'),
    subject: 'src_1 2024-05 records',
    owner: holder,
    platform: process.platform,
    isProcessAlive,
    processStartedAt,
  });

describe('delivery lock', () => {
  it('two processes taking over the same stale lock: one wins, the other gets LockedError', () => {
    const dir = tempDir();
    lock(dir, owner(1), () => false); // left behind by pid 1, now dead
    let rivalUnlock: (() => void) | undefined;
    // B checks whether pid 1 is alive; at that very moment C takes the stale lock over.
    const takeOverByB = () =>
      lock(dir, owner(2), (pid) => {
        rivalUnlock ??= lock(dir, owner(3), () => false);
        return pid !== 1;
      });
    expect(takeOverByB).toThrow(LockedError);
    expect(takeOverByB).toThrow(/pid 3/);
    const lockFile = readdirSync(dir).find((name) => name.endsWith('.lock'))!;
    expect(JSON.parse(readFileSync(path.join(dir, lockFile), 'utf8')).pid).toBe(3);
    rivalUnlock!();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a live holder is never taken over; a lock from another host neither', () => {
    const dir = tempDir();
    lock(dir, owner(1), () => false);
    expect(() => lock(dir, owner(2), () => true)).toThrow(/pid 1 on host/);
    const other = tempDir();
    lock(other, { ...owner(1), hostname: 'elsewhere' }, () => false);
    expect(() => lock(other, owner(2), () => false)).toThrow(/pid 1 on elsewhere/);
  });

  it('a pid reused by a process that started after the lock was written (a reboot) is not its holder', () => {
    const dir = tempDir();
    lock(dir, owner(1), () => false);
    const startedLater = () => Date.parse(owner(1).startedAt) + 3_600_000;
    const startedBefore = () => Date.parse(owner(1).startedAt) - 1_000;
    expect(() => lock(dir, owner(2), () => true, startedBefore)).toThrow(/pid 1 on host/);
    const unlock = lock(dir, owner(2), () => true, startedLater);
    expect(JSON.parse(readFileSync(path.join(dir, 'src_1-2024-05-records.lock'), 'utf8')).pid).toBe(2);
    unlock();
  });
});
