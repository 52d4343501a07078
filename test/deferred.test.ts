import { describe, expect, it } from 'vitest';
import { withDeferred } from '../src/core/deferred.js';

describe('withDeferred', () => {
  it('releases what was deferred, the last first, after the work', async () => {
    const seen: string[] = [];
    const result = await withDeferred(async (defer) => {
      defer(() => seen.push('lock'));
      defer(async () => seen.push('copy'));
      seen.push('work');
      return 42;
    });
    expect(result).toBe(42);
    expect(seen).toEqual(['work', 'copy', 'lock']);
  });

  it('releases everything when the work fails, and the work fails as it did', async () => {
    const seen: string[] = [];
    const work = withDeferred(async (defer) => {
      defer(() => seen.push('lock'));
      throw new Error('the pass failed');
    });
    await expect(work).rejects.toThrow('the pass failed');
    expect(seen).toEqual(['lock']);
  });

  it('a release that throws keeps none before it from running; its error is the one that leaves', async () => {
    const seen: string[] = [];
    const work = withDeferred(async (defer) => {
      defer(() => seen.push('lock'));
      defer(() => {
        throw new Error('close failed');
      });
      defer(() => seen.push('client'));
      return 'done';
    });
    await expect(work).rejects.toThrow('close failed');
    expect(seen).toEqual(['client', 'lock']);
  });
});
