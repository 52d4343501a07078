// Folder arguments that name no path but hold a pattern (`out/records-2023-*`): cmd.exe and PowerShell pass a
// pattern on as typed, and so do a quoted one in a POSIX shell and the GitHub Action's `folders` input. bds expands
// it as a POSIX shell would: `*`, `?` and `[...]` (`[!...]` negated) within one path segment, a leading dot only
// matched by a dot, the matches in byte order (the C locale's). A pattern matching nothing is left as typed, so
// that the error names it. The core gets folders.

import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Platform } from '../../core/platform.js';

const WILDCARD = /[*?[]/;

/** The folder arguments with each pattern that names no path replaced by its matches. */
export function expandFolderPatterns(args: string[], cwd: string, platform: Platform): string[] {
  return args.flatMap((arg) => {
    if (!WILDCARD.test(arg) || existsSync(path.resolve(cwd, arg))) return [arg];
    const matches = matchPattern(arg, cwd, platform);
    return matches.length > 0 ? matches.sort(byteOrder) : [arg];
  });
}

/** The paths `pattern` matches, spelt as it is (its separators kept), segment by segment. */
function matchPattern(pattern: string, cwd: string, platform: Platform): string[] {
  // Windows takes `\` and `/` (and its names are not case-sensitive); a segment, then the separator after it.
  const parts = pattern.split(platform === 'win32' ? /([\\/]+)/ : /(\/+)/);
  let found = [''];
  for (let i = 0; i < parts.length; i += 2) {
    const segment = parts[i]!;
    const separator = parts[i + 1] ?? '';
    const matcher = WILDCARD.test(segment) ? segmentMatcher(segment, platform === 'win32') : undefined;
    found = found.flatMap((prefix) =>
      matcher
        ? namesIn(path.resolve(cwd, prefix))
            .filter(matcher)
            .map((name) => prefix + name + separator)
        : [prefix + segment + separator],
    );
  }
  return found.filter((match) => existsSync(path.resolve(cwd, match)));
}

function namesIn(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return []; // not a folder, or not readable: no match there, as in a shell
  }
}

/** Whether a name matches one segment of a pattern; a leading dot is matched only by a dot. */
function segmentMatcher(segment: string, ignoreCase: boolean): (name: string) => boolean {
  let source = '';
  for (let i = 0; i < segment.length; i++) {
    const char = segment[i]!;
    const close = char === '[' ? bracketEnd(segment, i) : -1;
    if (char === '*') source += '.*';
    else if (char === '?') source += '.';
    else if (close > 0) {
      const negated = segment[i + 1] === '!' || segment[i + 1] === '^';
      const set = segment.slice(negated ? i + 2 : i + 1, close).replace(/[\\\]^[]/g, '\\$&');
      source += `[${negated ? '^' : ''}${set}]`;
      i = close;
    } else source += char.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
  }
  let regExp: RegExp;
  try {
    regExp = new RegExp(`^${source}$`, ignoreCase ? 'isu' : 'su');
  } catch {
    return () => false; // a range such as [z-a] matches nothing
  }
  return (name) => (!name.startsWith('.') || segment.startsWith('.')) && regExp.test(name);
}

/** Where the `[...]` opened at `at` ends (a `]` first in the set is one of its characters); -1 if it does not. */
function bracketEnd(segment: string, at: number): number {
  let from = at + 1;
  if (segment[from] === '!' || segment[from] === '^') from++;
  return segment.indexOf(']', from + 1);
}

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
