// What earlier versions of bds left in the deliveries folder, read as this version's records are: bds 0.1's
// records (version 1, named by the base URL as written, without the report and schema), and a test record under
// the live record's name (from before each key mode had a file of its own). record-store.ts alone uses them.

import { linkSync } from 'node:fs';
import { errnoCode, isObject } from '../guards.js';

/** What bds 0.1's record of a completed delivery tells: all but the report and schema it was delivered with. */
export interface Version1Fields {
  idempotencyKey: string;
  batchId: string;
  dataFile: string;
  bytes: number;
  recordCount: number;
  updatedAt: string;
}

/** A record of bds 0.1, as parsed JSON; undefined for anything else. */
export function parseVersion1(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) && value.version === 1 ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What bds 0.1's record tells of a completed delivery of the file `sha256`. An unfinished one is not taken over:
 * its report and schema are not known, so it could not be resumed safely.
 */
export function completedVersion1(text: string, sha256: string): Version1Fields | undefined {
  const value = parseVersion1(text);
  if (
    value?.sha256 !== sha256 ||
    value.step !== 'completed' ||
    typeof value.idempotencyKey !== 'string' ||
    typeof value.batchId !== 'string'
  ) {
    return undefined;
  }
  const { idempotencyKey, batchId, dataFile, bytes, recordCount, updatedAt } = value as Record<string, never>;
  return { idempotencyKey, batchId, dataFile, bytes, recordCount, updatedAt };
}

/**
 * The records of the live and the test file by mode: a test record under the live name (the old shared one)
 * counts as the test record, unless one is already under its own name.
 */
export function byMode<R extends { keyMode?: string | undefined }>(
  live: R | undefined,
  test: R | undefined,
): { live: R | undefined; test: R | undefined } {
  return live?.keyMode === 'test' ? { live: undefined, test: test ?? live } : { live, test };
}

/**
 * A test record under the shared name, linked to its own name before a live record takes that name; one already
 * under its own name is kept (the old one is then a stale copy).
 */
export function keepOldTestRecord(sharedFile: string, testFile: string): void {
  try {
    linkSync(sharedFile, testFile);
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') throw error;
  }
}
