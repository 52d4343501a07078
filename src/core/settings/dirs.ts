// Where bds keeps things on this machine. Linux and macOS (as gh and the Stripe CLI do there): by the XDG base
// directory rules, delivery records and locks under $XDG_STATE_HOME/bds (default ~/.local/state/bds),
// remembered passes under $XDG_CACHE_HOME/bds (~/.cache/bds), the user's config file under
// $XDG_CONFIG_HOME/bds (~/.config/bds). Windows: the config under %APPDATA%\bds (the roaming profile), state
// and cache under %LOCALAPPDATA%\bds (this machine's: records name its pids and paths). An XDG variable wins
// on every system where it is set. A relative value is ignored, as the specification says, rather than taken
// relative to whatever the working folder happens to be.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.js';
import { pathsOf } from '../platform.js';
import type { Runtime } from '../runtime.js';

/** What the folders depend on. */
export type Place = Pick<Runtime, 'env' | 'homedir' | 'platform'>;

/** The folder a variable names, when it is an absolute path; else the fallback. */
function namedDir({ env, platform }: Place, variable: string, fallback: () => string): string {
  const value = env[variable]?.trim();
  return value && pathsOf(platform).isAbsolute(value) ? value : fallback();
}

/** The base folder: the XDG variable, else on Windows the profile's folder, else the XDG default under home. */
function baseDir(place: Place, xdg: string, windows: 'APPDATA' | 'LOCALAPPDATA', posixDefault: string[]): string {
  const paths = pathsOf(place.platform);
  return namedDir(place, xdg, () =>
    place.platform === 'win32'
      ? namedDir(place, windows, () =>
          paths.join(place.homedir, 'AppData', windows === 'APPDATA' ? 'Roaming' : 'Local'),
        )
      : paths.join(place.homedir, ...posixDefault),
  );
}

export function stateDir(place: Place): string {
  return pathsOf(place.platform).join(baseDir(place, 'XDG_STATE_HOME', 'LOCALAPPDATA', ['.local', 'state']), 'bds');
}

export function cacheDir(place: Place): string {
  return pathsOf(place.platform).join(baseDir(place, 'XDG_CACHE_HOME', 'LOCALAPPDATA', ['.cache']), 'bds');
}

/** The user's config folder, where the search ends and `bds login` writes. */
export function userConfigFolder(place: Place): string {
  return pathsOf(place.platform).join(baseDir(place, 'XDG_CONFIG_HOME', 'APPDATA', ['.config']), 'bds');
}

/**
 * Refuses to make `dir` where that would make the home folder too: HOME=/nonexistent is how Debian gives a
 * service user no home, and bds must not create one there. The variable named is the one the home folder comes
 * from: USERPROFILE on Windows, HOME elsewhere.
 */
export function requireHomeFor(dir: string, { homedir, platform }: Pick<Place, 'homedir' | 'platform'>): void {
  const home = path.resolve(homedir);
  const inside = path.relative(home, path.resolve(dir));
  if (inside.startsWith('..') || path.isAbsolute(inside) || existsSync(home)) return;
  const variable = platform === 'win32' ? 'USERPROFILE' : 'HOME';
  throw new UsageError(
    `the home folder ${home} (${variable}) does not exist, and bds does not create it: set ${variable} to an existing folder, ` +
      'or XDG_STATE_HOME, XDG_CACHE_HOME and XDG_CONFIG_HOME to folders bds may write',
  );
}

/** Whether `dir` can be made without making a home folder that does not exist (see requireHomeFor). */
export function homeAllows(dir: string, place: Pick<Place, 'homedir' | 'platform'>): boolean {
  try {
    requireHomeFor(dir, place);
    return true;
  } catch {
    return false;
  }
}
