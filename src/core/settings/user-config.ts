// The user's own config file, $XDG_CONFIG_HOME/bds/config.json (default ~/.config/bds/config.json; on Windows
// %APPDATA%\bds\config.json), as `bds login` and `bds logout` write it: everything else in it kept, written
// atomically with mode 0600 in a folder of mode 0700 (on Windows the profile folder's ACL keeps it private). A YAML file there, or a file named by --config or BDS_CONFIG elsewhere, is the user's to
// edit: bds says what to change in it instead.

import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { errnoCode, isObject } from '../guards.js';
import { UsageError } from '../errors.js';
import { makeFolders, writeFileAtomic, type WriteStep } from '../files.js';
import type { Platform } from '../platform.js';
import { USER_CONFIG_NAMES } from './config-file.js';
import { userConfigFolder, type Place } from './dirs.js';
import { jsonErrorAt } from './json-error.js';

/** Where a key is stored, or why it cannot be: the file exists in a form bds does not rewrite. */
export type UserConfigTarget =
  { file: string; writable: true } | { file: string; writable: false; reason: 'yaml' | 'named' };

/** Where `bds login` stores a key and `bds logout` removes it. `named`: the file --config or BDS_CONFIG names. */
export function userConfigTarget(place: Place, cwd: string, named: string | undefined): UserConfigTarget {
  const folder = userConfigFolder(place);
  const json = path.join(folder, 'config.json');
  if (named !== undefined && path.resolve(cwd, named) !== json)
    return { file: path.resolve(cwd, named), writable: false, reason: 'named' };
  // The search takes the first of these names that holds something, whole: config.json written beside a YAML
  // file in use would either never be read or hide that file's settings.
  const inUse = USER_CONFIG_NAMES.map((name) => path.join(folder, name)).find(holdsSomething);
  return inUse === undefined || inUse === json
    ? { file: json, writable: true }
    : { file: inUse, writable: false, reason: 'yaml' };
}

function holdsSomething(file: string): boolean {
  try {
    const stat = statSync(file);
    return stat.isFile() && stat.size > 0;
  } catch {
    return false;
  }
}

/** Where in the file a key goes: its top level, or a profile. */
export interface KeyPlace {
  profile: string | undefined;
}

/** The settings `bds login` would store, as lines to add by hand to a file it does not rewrite (never the key). */
export function linesToAdd(file: string, place: KeyPlace, baseUrl: string | undefined): string {
  const url = baseUrl ?? '<the base URL of the API>';
  if (path.extname(file) === '.json') {
    const settings = { apiKey: '<your key>', baseUrl: url };
    return JSON.stringify(
      place.profile === undefined ? settings : { profiles: { [place.profile]: settings } },
      null,
      2,
    );
  }
  const indent = place.profile === undefined ? '' : '    ';
  const lines = [`${indent}apiKey: <your key>`, `${indent}baseUrl: ${url}`];
  return (place.profile === undefined ? lines : ['profiles:', `  ${JSON.stringify(place.profile)}:`, ...lines]).join(
    '\n',
  );
}

/** The file as an object of settings: {} when there is none yet. */
export function readUserConfig(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return {};
    throw new UsageError(`cannot read the config file ${file} (${errnoCode(error) ?? 'unreadable'})`);
  }
  const content = text.replace(/^\uFEFF/, '');
  if (!content.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    // Its text may hold a key: never shown, only where it breaks.
    const where = jsonErrorAt(content);
    const at = where ? ` (line ${where.line}, column ${where.column})` : '';
    throw new UsageError(`the config file ${file} is not valid JSON${at}; bds does not rewrite it`, {
      hint: 'fix it (or move it aside) and run the command again',
    });
  }
  if (!isObject(value))
    throw new UsageError(`the config file ${file} must hold an object of settings; bds does not rewrite it`);
  return value;
}

export interface StoredKey {
  /** The profile became the file's default (`profile`): the file had no key at its top level and no default. */
  madeDefault: boolean;
  /** The file's default profile after the change, if it has one. */
  defaultProfile: string | undefined;
}

/** Puts the key and base URL at the top level or under `profiles.<name>`, keeping everything else. */
export function storeKey(
  file: string,
  place: KeyPlace,
  values: { apiKey: string; baseUrl: string },
  platform: Platform,
  onStep?: (step: WriteStep) => void,
): StoredKey {
  const config = readUserConfig(file);
  let madeDefault = false;
  if (place.profile === undefined) {
    Object.assign(config, values);
  } else {
    // A computed key defines the profile as its own property even when it is named "__proto__".
    config.profiles = {
      ...(isObject(config.profiles) ? config.profiles : {}),
      [place.profile]: { ...profileIn(config, place.profile), ...values },
    };
    if (config.apiKey === undefined && config.apiKeyFile === undefined && config.profile === undefined) {
      config.profile = place.profile;
      madeDefault = true;
    }
  }
  writeUserConfig(file, config, platform, onStep);
  return { madeDefault, defaultProfile: typeof config.profile === 'string' ? config.profile : undefined };
}

/** Removes the key (not a key file) of the top level or a profile; false when there was none. */
export function removeKey(
  file: string,
  place: KeyPlace,
  platform: Platform,
  onStep?: (step: WriteStep) => void,
): boolean {
  const config = readUserConfig(file);
  const holder = place.profile === undefined ? config : profileIn(config, place.profile);
  if (!holder || holder.apiKey === undefined) return false;
  delete holder.apiKey;
  writeUserConfig(file, config, platform, onStep);
  return true;
}

function writeUserConfig(
  file: string,
  config: Record<string, unknown>,
  platform: Platform,
  onStep?: (step: WriteStep) => void,
): void {
  try {
    makeFolders(path.dirname(file), 0o700);
    writeFileAtomic(file, `${JSON.stringify(config, null, 2)}\n`, { platform, mode: 0o600, onStep });
  } catch (error) {
    throw new UsageError(`cannot write the config file ${file} (${errnoCode(error) ?? 'unwritable'})`, {
      hint: 'make its folder writable, or set XDG_CONFIG_HOME to a folder you can write',
    });
  }
}

/**
 * The settings of a profile of the file, by its own property only: a profile may be named "__proto__",
 * "constructor" or "toString".
 */
export function profileIn(config: Record<string, unknown>, name: string): Record<string, unknown> | undefined {
  const profiles = config.profiles;
  const values = isObject(profiles) && Object.hasOwn(profiles, name) ? profiles[name] : undefined;
  return isObject(values) ? values : undefined;
}
