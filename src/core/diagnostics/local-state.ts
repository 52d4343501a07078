// doctor's local state: the folders bds writes to (without making them: doctor changes nothing), free space
// for the gzipped copy of a plain .jsonl, deliveries left half-way, and locks and gzipped copies left by
// processes that are gone.

import { accessSync, constants, existsSync, statfsSync, statSync } from 'node:fs';
import path from 'node:path';
import { EXIT_CODES } from '../errors.js';
import { leftCopies } from '../datapass/temp-copy.js';
import { staleLockHolder } from '../delivery/lock.js';
import { Journal, type DeliveryRecord } from '../delivery/journal.js';
import type { Runtime } from '../runtime.js';
import { cacheDir, stateDir } from '../settings/dirs.js';
import { fail, ok, warn, type Finding } from './finding.js';

/** Below this much free space in the temp folder, a warning: a large .jsonl's gzipped copy may not fit. */
const LOW_SPACE_BYTES = 1e9;

export function localStateFindings(runtime: Runtime, tempDir: string): Finding[] {
  const state = stateDir(runtime);
  const journal = new Journal(state, runtime.platform);
  const temp = folderFinding('temp folder', tempDir, 'gzipped copies of plain .jsonl files', 'TMPDIR');
  return [
    folderFinding('state folder', state, 'delivery records and locks', 'XDG_STATE_HOME'),
    folderFinding('cache folder', cacheDir(runtime), 'remembered passes over data files', 'XDG_CACHE_HOME'),
    temp,
    // A temp folder that cannot be made has no free space to speak of.
    ...(temp.status === 'fail' ? [] : [freeSpace(tempDir)]),
    ...unfinished(journal.all()),
    ...staleLocks(journal, runtime),
    leftTempCopies(tempDir, runtime),
  ];
}

function folderFinding(name: string, dir: string, holds: string, variable: string): Finding {
  const hint = `bds keeps ${holds} there: make it writable, or set ${variable} to a folder you can write`;
  const existing = nearestExisting(dir);
  let isFolder: boolean;
  try {
    isFolder = statSync(existing).isDirectory();
  } catch {
    isFolder = false;
  }
  if (!isFolder) return fail(name, `${dir} cannot be made: ${existing} is not a folder`, hint, EXIT_CODES.usage);
  try {
    accessSync(existing, constants.W_OK | constants.X_OK);
  } catch {
    return fail(
      name,
      existing === dir ? `${dir} is not writable` : `${dir} cannot be made: ${existing} is not writable`,
      hint,
      EXIT_CODES.usage,
    );
  }
  return ok(name, existing === dir ? `${dir}, writable` : `${dir}, not there yet; bds can make it`);
}

function nearestExisting(dir: string): string {
  let existing = path.resolve(dir);
  while (!existsSync(existing) && path.dirname(existing) !== existing) existing = path.dirname(existing);
  return existing;
}

function freeSpace(tempDir: string): Finding {
  const where = nearestExisting(tempDir);
  let free: number;
  try {
    const stats = statfsSync(where);
    free = stats.bavail * stats.bsize;
  } catch {
    return ok('free space', `unknown in ${tempDir}: the system does not tell`);
  }
  // Not there yet: the space is that of the folder it would be made in.
  const amount = `${(free / 1e9).toFixed(1)} GB free in ${where === path.resolve(tempDir) ? tempDir : `${where}, where bds would make ${tempDir}`}`;
  return free < LOW_SPACE_BYTES
    ? warn(
        'free space',
        amount,
        'a plain .jsonl is gzipped there before its upload: free space, or set TMPDIR to a roomier folder',
      )
    : ok('free space', amount);
}

function unfinished(records: DeliveryRecord[]): Finding[] {
  const left = records.filter((record) => record.step !== 'completed').sort((a, b) => a.period.localeCompare(b.period));
  if (left.length === 0) return [ok('deliveries', 'no unfinished delivery in the records')];
  return left.map((record) =>
    warn(
      'deliveries',
      `unfinished: ${record.period} ${record.product} of ${record.sourceId}, step ${record.step}, ` +
        `${record.batchId ? `batch ${record.batchId}` : 'no batch yet'} (${shownApi(record)})`,
      'deliver that folder again: it resumes this delivery',
      { code: 'unfinished_delivery' },
    ),
  );
}

/**
 * The API a record is for, as the user wrote it; a record of before that was kept has the canonical form alone,
 * whose `loopback` (every loopback name as one) is no host anybody types: shown as localhost.
 */
function shownApi(record: DeliveryRecord): string {
  return record.baseUrl ?? record.api.replace(/^(\w+:\/\/)loopback(?=[:/]|$)/, '$1localhost');
}

function staleLocks(journal: Journal, runtime: Runtime): Finding[] {
  const stale = journal.lockFiles().flatMap((file) => {
    const holder = staleLockHolder(file, runtime.hostname, runtime.isProcessAlive, runtime.processStartedAt);
    return holder ? [{ file, holder }] : [];
  });
  if (stale.length === 0) return [ok('locks', 'no lock left by a process that is gone')];
  return stale.map(({ file, holder }) =>
    warn(
      'locks',
      `${file} was left by pid ${holder.pid} (since ${holder.startedAt}), which is gone`,
      'the next delivery of that month takes it over; or remove the file',
    ),
  );
}

function leftTempCopies(tempDir: string, runtime: Runtime): Finding {
  const left = leftCopies(tempDir, runtime);
  if (left.length === 0) return ok('temp copies', 'no gzipped copy left by a process that is gone');
  const megabytes = (left.reduce((sum, copy) => sum + copy.bytes, 0) / 1e6).toFixed(1);
  return warn(
    'temp copies',
    `${left.length} gzipped ${left.length === 1 ? 'copy' : 'copies'} of a plain .jsonl (${megabytes} MB) left in ` +
      `${tempDir} by processes that are gone (pid ${left.map((copy) => copy.pid).join(', ')})`,
    'the next delivery removes them; or remove them: their names start with bds-',
    { code: 'temp_copies_left' },
  );
}
