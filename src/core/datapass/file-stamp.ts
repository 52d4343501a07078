// What a data file was when bds looked at it, and the one check that it is still that file: the pass checks it
// when it ends (a file still being written is not checked), the pass cache before it trusts an entry, and the
// upload before and after it sends the file.

import type { Stats } from 'node:fs';
import path from 'node:path';

export interface FileStamp {
  /** Absolute. */
  path: string;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  dev: number;
}

export function stampOf(file: string, stat: Stats): FileStamp {
  return {
    path: path.resolve(file),
    size: stat.size,
    mtimeMs: stat.mtimeMs,
    ctimeMs: stat.ctimeMs,
    ino: stat.ino,
    dev: stat.dev,
  };
}

/**
 * What changed since the stamp, in words for an error ("changed (…)"), or undefined when nothing did. `now` is
 * what a stat of the file finds now; undefined when it is gone.
 */
export function changeSince(
  stamp: FileStamp,
  now: Pick<Stats, 'size' | 'mtimeMs' | 'ctimeMs' | 'ino' | 'dev'> | undefined,
): string | undefined {
  if (!now) return 'it disappeared';
  if (now.size !== stamp.size || now.mtimeMs !== stamp.mtimeMs) return 'its size or modification time';
  // Written in place with its modification time set back (a copy that keeps times, say): only ctime moves.
  if (now.ctimeMs !== stamp.ctimeMs) return 'its change time: it was rewritten in place';
  if (now.ino !== stamp.ino || now.dev !== stamp.dev) return 'another file took its name';
  return undefined;
}
