// The delivery lock's take-over of a stale lock, under the interleaving that once let two processes hold it.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LockedError } from '../src/errors.js';
import { RecordStore } from '../src/delivery/record.js';
import { tempDir } from './helpers.js';

const KEY = { baseUrl: 'http://127.0.0.1:1/', sourceId: 'src_1', period: '2024-05', product: 'records' };
const owner = (pid: number) => ({ pid, hostname: 'host', startedAt: `2024-06-01T00:00:0${pid % 10}.000Z` });

describe('delivery lock', () => {
  it('two processes taking over the same stale lock: one wins, the other gets LockedError', () => {
    const store = new RecordStore(tempDir());
    store.lock(KEY, owner(1), () => false); // left behind by pid 1, now dead
    let rivalUnlock: (() => void) | undefined;
    // B checks whether pid 1 is alive; at that very moment C takes the stale lock over.
    const takeOverByB = () =>
      store.lock(KEY, owner(2), (pid) => {
        rivalUnlock ??= store.lock(KEY, owner(3), () => false);
        return pid !== 1;
      });
    expect(takeOverByB).toThrow(LockedError);
    expect(takeOverByB).toThrow(/pid 3/);
    const lockFile = readdirSync(store.dir).find((name) => name.endsWith('.lock'))!;
    expect(JSON.parse(readFileSync(path.join(store.dir, lockFile), 'utf8')).pid).toBe(3);
    rivalUnlock!();
    expect(readdirSync(store.dir)).toEqual([]);
  });

  it('a live holder is never taken over; a lock from another host neither', () => {
    const store = new RecordStore(tempDir());
    store.lock(KEY, owner(1), () => false);
    expect(() => store.lock(KEY, owner(2), () => true)).toThrow(/pid 1 on host/);
    const other = new RecordStore(tempDir());
    other.lock(KEY, { ...owner(1), hostname: 'elsewhere' }, () => false);
    expect(() => other.lock(KEY, owner(2), () => false)).toThrow(/pid 1 on elsewhere/);
  });
});
