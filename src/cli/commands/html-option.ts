// --html <file> of check and deliver: the sign-off page (output/html-report.ts), written from check's result
// whatever it is (a failed check makes a page that says not ready), before deliver sends anything.

import { statSync } from 'node:fs';
import path from 'node:path';
import { Option } from 'commander';
import type { CheckManyResult } from '../../core/delivery/check.js';
import { failureData } from '../../core/failure.js';
import { InterruptedError, toBdsError, UsageError } from '../../core/errors.js';
import { writeFileAtomic } from '../../core/files.js';
import { errnoCode } from '../../core/guards.js';
import type { Operation } from '../../core/operation.js';
import { packageVersion } from '../../core/version.js';
import type { IO } from '../output/io.js';
import type { ReportPage } from '../output/html-report.js';
import { folderOf, type FolderFlags } from './folder-options.js';

export interface HtmlFlags {
  html?: string;
}

export const htmlOption = new Option(
  '--html <file>',
  'also write a one-page HTML report to sign the month off: verdict, counts, schema with roles, scrub figures',
);

/** A check's result, one folder's or several's, or what it threw: the page is written for either. */
export type CheckRun = { result: CheckManyResult } | { thrown: unknown };

/** Runs the core's check (one folder alone or several) and keeps what it threw instead of throwing it. */
export async function runCheck(
  op: Operation,
  folders: string[],
  flags: FolderFlags & { source?: string | undefined },
): Promise<CheckRun> {
  const { checkFolders } = await import('../../core/delivery/check.js');
  try {
    return {
      result: await checkFolders(
        folders.length === 1
          ? folderOf(folders[0]!, flags)
          : { dirs: folders, product: flags.product, sourceId: flags.source },
        op,
      ),
    };
  } catch (thrown) {
    return { thrown };
  }
}

/**
 * Writes the page of `checkRun` to `file` (relative to the working folder), atomically, over any file there (its
 * mode kept; a new file gets 0644 less the umask: it holds no record value and is made to be passed on). An
 * interruption writes nothing (the check did not end) and is thrown. A file that cannot be written is a usage
 * error.
 */
export async function writeReportPage(
  op: Operation,
  io: IO,
  file: string,
  command: 'check' | 'deliver',
  folders: string[],
  checkRun: CheckRun,
): Promise<void> {
  if ('thrown' in checkRun && checkRun.thrown instanceof InterruptedError) throw checkRun.thrown;
  const { renderHtmlReport } = await import('../output/html-report.js');
  const target = path.resolve(op.runtime.cwd, file);
  const html = renderHtmlReport({
    command,
    dirs: folders,
    checked: pageFolders(folders, checkRun),
    at: op.runtime.now(),
    version: packageVersion(),
  });
  try {
    writeFileAtomic(target, html, { platform: op.runtime.platform, mode: existingMode(target) ?? 0o644 });
  } catch (error) {
    throw new UsageError(`cannot write the report page ${target}: ${errnoCode(error) ?? String(error)}`, {
      hint: 'name a file in a folder that exists and that you can write to (--html <file>)',
    });
  }
  io.notice(`wrote the report page ${target}`);
}

function pageFolders(folders: string[], checkRun: CheckRun): ReportPage['checked'] {
  if ('thrown' in checkRun) return { failure: failureData(toBdsError(checkRun.thrown)) };
  return { folders: checkRun.result.checks.map((check, i) => ({ dir: folders[i]!, check })) };
}

function existingMode(file: string): number | undefined {
  try {
    return statSync(file).mode & 0o777;
  } catch {
    return undefined;
  }
}
