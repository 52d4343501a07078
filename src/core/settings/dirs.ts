// Where bds keeps things on this machine, by the XDG base directory rules: delivery records and locks under
// $XDG_STATE_HOME/bds, remembered passes under $XDG_CACHE_HOME/bds. A relative value is ignored, as the
// specification says, rather than taken relative to whatever the working folder happens to be.

import path from 'node:path';
import type { Env } from '../runtime.js';

function xdgDir(env: Env, variable: string, fallback: string): string {
  const value = env[variable]?.trim();
  return value && path.isAbsolute(value) ? value : fallback;
}

export function stateDir(env: Env, homedir: string): string {
  return path.join(xdgDir(env, 'XDG_STATE_HOME', path.join(homedir, '.local', 'state')), 'bds');
}

export function cacheDir(env: Env, homedir: string): string {
  return path.join(xdgDir(env, 'XDG_CACHE_HOME', path.join(homedir, '.cache')), 'bds');
}

export function configHome(env: Env, homedir: string): string {
  return xdgDir(env, 'XDG_CONFIG_HOME', path.join(homedir, '.config'));
}
