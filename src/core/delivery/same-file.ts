// The same data file as another month: a copied folder (`cp -r out/2010-01 out/2010-02`) or a stale ./out
// delivered with another --period would put one month's data into two batches. A data file whose SHA-256
// another folder of the same run has, or that this machine's records show delivered for another period of the
// same API, source and product, is refused before its batch is created (exit 2); --force delivers it anyway.
// A file without records would be exempt (an empty month's file repeats), but the pass refuses such a file
// first, so every file that gets here has records.

import path from 'node:path';
import { UsageError } from '../errors.js';
import type { OptionNames } from '../option-names.js';
import type { MonthFolder } from '../preflight/folder.js';

/** The other month whose data file this one has. */
export interface SameFile {
  period: string;
  /** Its folder: of the run, or recorded with its delivery (the data file's folder, for older records). */
  dir: string;
  /** Its batch, when a delivery recorded here made it; none for a month of the same run. */
  batchId: string | undefined;
  inRun: boolean;
}

/**
 * The checksums of a run's data files, as each month's pass finds them. A month asks before its batch is
 * created, and waits for the earlier months of its product (which all started before it) to find theirs, so
 * that the later month in period order is the one refused, however the passes interleave.
 */
export class RunChecksums {
  private readonly checksums: Array<Promise<string | undefined>>;
  private readonly settle: Array<(sha256: string | undefined) => void> = [];

  constructor(private readonly folders: readonly MonthFolder[]) {
    this.checksums = folders.map((_, index) => new Promise((resolve) => (this.settle[index] = resolve)));
  }

  /** Month `index`'s checksum; undefined when its pass failed or never ran. Only the first call counts. */
  found(index: number, sha256: string | undefined): void {
    this.settle[index]!(sha256);
  }

  /** Says month `index`'s checksum, then names the earliest month before it in the run with the same one, if any. */
  async sameFileBefore(index: number, sha256: string): Promise<SameFile | undefined> {
    this.found(index, sha256);
    const { product } = this.folders[index]!;
    for (let earlier = 0; earlier < index; earlier++) {
      const folder = this.folders[earlier]!;
      if (folder.product === product && (await this.checksums[earlier]) === sha256) {
        return { period: folder.period, dir: folder.dir, batchId: undefined, inRun: true };
      }
    }
    return undefined;
  }
}

/** The refusal: names the other month and its folder, and how to deliver the file anyway. */
export function sameFileError(
  same: SameFile,
  about: { dataName: string; period: string; sha256: string; dir: string; many: boolean },
  names: OptionNames,
): UsageError {
  const force = names.name('force');
  const other = same.inRun
    ? `the one for ${same.period} in ${same.dir}`
    : `the one delivered for ${same.period} from ${same.dir}${same.batchId ? ` as ${same.batchId}` : ''}`;
  return new UsageError(
    `${about.dataName} is the same file as ${other} (sha256 ${about.sha256}); nothing was sent for ${about.period}`,
    {
      hint:
        `each month has data of its own: check what ${about.dir} holds (a copied folder? a stale one?); if it really is ${about.period}'s, ` +
        (about.many ? `deliver that folder alone with ${force}` : `deliver again with ${force}`),
      about: { code: 'same_file', dir: about.dir, period: about.period, several: about.many },
    },
  );
}

/** Where a recorded delivery's folder was: recorded with it, or (older records) its data file's folder. */
export function recordedDir(record: { dir?: string | undefined; dataFile: string }): string {
  return record.dir ?? path.dirname(record.dataFile);
}
