// Small checks that many modules need: plain objects from JSON, the errno code of a failed system call, who may
// get at a folder the user may not, and whether the process that wrote a file (a lock, a temp copy) still runs.

import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `ENOENT`, `EACCES`, ... of a failed system call, or undefined for anything else. */
export function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Whether a failed system call was refused for want of permission. */
export function isDenied(error: unknown): boolean {
  const code = errnoCode(error);
  return code === 'EACCES' || code === 'EPERM';
}

/**
 * Why the user was refused `target` (a folder or a file's folder), for a message: the first folder on its way
 * that the user may not enter (or, with `read`, `target` itself if the user may not list it), its mode, its
 * owner and who may read it. Just "permission denied" where no such folder is found: an ACL or a security module
 * refused, or Windows, whose access() checks only that a file exists.
 */
export function permissionDenied(target: string, { read = false } = {}): string {
  const folders: string[] = [];
  for (let at = path.resolve(target); ; at = path.dirname(at)) {
    folders.unshift(at);
    if (path.dirname(at) === at) break;
  }
  const refused = (folder: string, mode: number): boolean => {
    try {
      accessSync(folder, mode);
      return false;
    } catch {
      return true;
    }
  };
  let bits = 0o1;
  let folder = folders.find((f) => refused(f, constants.X_OK));
  if (folder === undefined && read && refused(target, constants.R_OK)) {
    folder = target;
    bits = 0o4;
  }
  if (folder === undefined) return 'permission denied';
  let stat;
  try {
    stat = statSync(folder);
  } catch {
    return `permission denied on ${folder}`;
  }
  const mode = stat.mode & 0o7777;
  const owner = stat.uid === 0 ? 'root' : accountName('/etc/passwd', stat.uid, 'user', 'uid');
  const group = accountName('/etc/group', stat.gid, 'group', 'gid');
  const who = [
    ...((mode >> 6) & bits ? [owner.replace(/ \(uid \d+\)$/, '')] : []),
    ...((mode >> 3) & bits ? [group.replace(/ \(gid \d+\)$/, '')] : []),
  ];
  // Open to others too, yet refused: the user is its owner or in its group, with fewer rights than others.
  const whoMay = mode & bits ? '' : `: ${who.length ? `only ${who.join(' and ')}` : 'nobody but root'} may read it`;
  return `permission denied: ${folder} is mode ${mode.toString(8).padStart(4, '0')}, owned by ${owner} and ${group}${whoMay}`;
}

/** How a person would name a uid or gid: its name in /etc/passwd or /etc/group and its number, or the number. */
function accountName(file: string, id: number, kind: string, idKind: string): string {
  let name: string | undefined;
  try {
    name = readFileSync(file, 'utf8')
      .split('\n')
      .find((entry) => entry.split(':')[2] === String(id))
      ?.split(':')[0]
      ?.replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
  } catch {
    // no such file (a minimal image): the number alone
  }
  return name ? `${kind} ${name} (${idKind} ${id})` : `${idKind} ${id}`;
}

/** Slack for clocks: a process that started this long after a file was written cannot be its writer. */
const START_TIME_SLACK_MS = 2_000;

/**
 * Whether the process `pid` that wrote a file at `writtenAt` (ms since the epoch, or NaN if unknown) still
 * runs. A pid is reused after a reboot (or after many processes): a process with that pid that started after
 * the file was written is not its writer.
 */
export function writerIsRunning(
  pid: number,
  writtenAt: number,
  isProcessAlive: (pid: number) => boolean,
  processStartedAt: ((pid: number) => number | undefined) | undefined,
): boolean {
  if (!isProcessAlive(pid)) return false;
  const started = processStartedAt?.(pid);
  return started === undefined || Number.isNaN(writtenAt) || started <= writtenAt + START_TIME_SLACK_MS;
}
