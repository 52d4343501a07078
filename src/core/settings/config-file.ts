// Finding and reading the config file: JSON and YAML only, since bds runs unattended with a secret in reach
// and a config file that runs code would run it.
//
// cosmiconfig's loaders parse the files, but bds walks the search places itself. cosmiconfig() reads a
// "meta config" (package.json, .config/config.*) from process.cwd() as soon as it is called, outside any
// error handling (a broken package.json crashed bds with the file's text, key included, in the message),
// and takes its global folder from process.env; bds must read only what its caller hands it.

import { accessSync, constants, promises as fs, readFileSync, lstatSync, statSync, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { errnoCode, isObject, permissionDenied } from '../guards.js';
import { UsageError } from '../errors.js';
import { pathsOf, type Platform } from '../platform.js';
import type { Env } from '../runtime.js';
import { userConfigFolder } from './dirs.js';
import { jsonErrorAt } from './json-error.js';
import { closestName, shownText, type SettingsWarning } from './text.js';

export const CONFIG_KEYS = [
  'apiKey',
  'apiKeyFile',
  'baseUrl',
  'sourceId',
  'pingUrl',
  'metricsFile',
  'limitRate',
] as const;
export type ConfigKey = (typeof CONFIG_KEYS)[number];
export type ConfigValues = Partial<Record<ConfigKey, string>>;
/** What the top level holds besides a profile's settings. */
const TOP_LEVEL_KEYS = [...CONFIG_KEYS, 'profile', 'profiles'];

export interface ConfigFile {
  path: string;
  /**
   * Found by the search in the working folder or above, but not the home folder's own nor in the user's config
   * folder, nor named by the user: such a file may say what is delivered, but not where the key goes or what bds
   * writes (settings.ts).
   */
  found: boolean;
  values: ConfigValues;
  profile: string | undefined;
  profiles: Record<string, ConfigValues>;
  /**
   * Readable by group or others (mode & 0o044). Never on Windows, where Node makes the mode up from the
   * read-only attribute (0o666 or 0o444) and the file's ACL decides: a file under the user's profile
   * (%APPDATA%) is the user's, SYSTEM's and the administrators' only.
   */
  readableByOthers: boolean;
}

/** From the working folder up to the home folder, in each folder in this order. */
const SEARCH_PLACES = [
  'package.json',
  '.bdsrc',
  '.bdsrc.json',
  '.bdsrc.yaml',
  '.bdsrc.yml',
  '.config/bdsrc',
  '.config/bdsrc.json',
  '.config/bdsrc.yaml',
  '.config/bdsrc.yml',
];
const CODE_EXTENSIONS = ['.js', '.mjs', '.cjs', '.ts', '.mts', '.cts'];
/**
 * Then in the user's config folder, $XDG_CONFIG_HOME/bds, where cosmiconfig would also run config.js and the
 * like: such a file there is refused out loud rather than passed over.
 */
const GLOBAL_PLACES = [
  'config',
  'config.json',
  'config.yaml',
  'config.yml',
  ...CODE_EXTENSIONS.map((ext) => `config${ext}`),
];
/**
 * A search place that does not exist is passed over. One that exists but cannot be read (permissions, a folder
 * in its place) is an error: passed over, it would let the next file found, or none, decide silently.
 */
const ABSENT = new Set(['ENOENT', 'ENOTDIR']);

export interface ConfigSearch {
  /** From --config or BDS_CONFIG: names one file and disables the search. */
  explicit: string | undefined;
  cwd: string;
  home: string;
  env: Env;
  platform: Platform;
  /** Who runs bds: a file the search finds that belongs to another user (not root) is passed over. */
  uid: number | undefined;
}

export interface ConfigSearchResult {
  file: ConfigFile | undefined;
  /** Files passed over, settings bds does not know. */
  warnings: SettingsWarning[];
}

export async function loadConfigFile(search: ConfigSearch): Promise<ConfigSearchResult> {
  const warnings: SettingsWarning[] = [];
  if (search.explicit !== undefined) {
    const file = path.resolve(search.cwd, search.explicit);
    if (CODE_EXTENSIONS.includes(path.extname(file))) refuseCode(file);
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (error) {
      throw unreadable(file, error);
    }
    const settings = await parseSettings(file, text);
    return { file: parseConfig(file, settings, { found: false, mode: modeOf(file) }, warnings, search), warnings };
  }
  const ownFiles = new Set(ownPlaces(search));
  for (const file of searchPlaces(search)) {
    const found = !ownFiles.has(file);
    const opened = await openSearched(file, found, search.uid);
    if (opened === 'absent') continue;
    if (CODE_EXTENSIONS.includes(path.extname(file))) refuseCode(file);
    if ('passedOver' in opened) {
      // Passed over unread, as git passes over a repository of someone else's; said, unless it is a
      // package.json that holds nothing of bds's anyway.
      const foreign =
        path.basename(file) === 'package.json' &&
        (opened.text === undefined || (await parseSettings(file, opened.text).catch(() => undefined)) === undefined);
      if (!foreign) warnings.push(opened.passedOver);
      continue;
    }
    const settings = await parseSettings(file, opened.text);
    // An empty file, or a package.json without a "bds" key, is no config file of bds's.
    if (settings === undefined) continue;
    return { file: parseConfig(file, settings, { found, mode: opened.mode }, warnings, search), warnings };
  }
  return { file: undefined, warnings };
}

/** A searched file: read, passed over with a warning (and what it held, if anything), or not there. */
type Searched = { text: string; mode: number } | { passedOver: SettingsWarning; text?: string } | 'absent';

/**
 * Opens a searched file once and judges it by that descriptor, so that it cannot be swapped between the check
 * and the read: a FIFO would block the read while a symbolic link took its place. A found file's link is not
 * followed; the user's config folder may link to a dotfiles repository (stow), as it is the user's own.
 */
async function openSearched(file: string, found: boolean, uid: number | undefined): Promise<Searched> {
  // Windows has neither flag: it has no FIFOs to block on, and its links need a privilege to make.
  const flags = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (found ? (constants.O_NOFOLLOW ?? 0) : 0);
  let handle: FileHandle;
  try {
    handle = await fs.open(file, flags);
  } catch (error) {
    const code = errnoCode(error) ?? '';
    if (ABSENT.has(code)) return 'absent';
    if (code === 'ELOOP')
      return { passedOver: passedOver(file, 'it is a symbolic link, which bds does not follow here') };
    // Another user's file is passed over unread, readable or not; the owner is looked up only to say so.
    const stranger = strangerOf(lstatOwner(file), uid);
    if (stranger === undefined) throw unreadable(file, error);
    return { passedOver: strangerWarning(file, stranger) };
  }
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw unreadable(file, Object.assign(new Error('EISDIR'), { code: 'EISDIR' }));
    const stranger = strangerOf(stat.uid, uid);
    if (!stat.isFile()) return { passedOver: passedOver(file, `it is ${kindOf(stat)}, not a file`) };
    const text = await handle.readFile('utf8');
    if (stranger !== undefined) return { passedOver: strangerWarning(file, stranger), text };
    return { text, mode: stat.mode };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw unreadable(file, error);
  } finally {
    await handle.close();
  }
}

function passedOver(file: string, why: string): SettingsWarning {
  return {
    message: `ignoring the config file ${file}: ${why}`,
    hint: 'a config file the search finds must be a plain file of yours; point BDS_CONFIG at the file if you meant it',
  };
}

function strangerWarning(file: string, stranger: string): SettingsWarning {
  return {
    message: `ignoring the config file ${file}: it belongs to ${stranger}, not to you or root`,
    hint: 'a file another user can write must not choose where your key goes; if it is yours, chown it to yourself',
  };
}

function kindOf(stat: Stats): string {
  if (stat.isFIFO()) return 'a named pipe';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  return 'no regular file';
}

/**
 * From the working folder up to the home folder, never above it (a folder above home, such as /srv or /tmp,
 * is anybody's); a working folder outside home is searched alone. Then the user's config folder.
 */
export function* searchPlaces({ cwd, home, env, platform }: ConfigSearch): Generator<string> {
  const paths = pathsOf(platform);
  const stop = paths.resolve(home);
  // The way from home to a folder: '' for home itself; Windows' relative() ignores case, as its names do.
  const fromHome = (dir: string): string => paths.relative(stop, dir);
  const start = paths.resolve(cwd);
  const way = fromHome(start);
  const insideHome = way !== '..' && !way.startsWith(`..${paths.sep}`) && !paths.isAbsolute(way);
  for (let dir = start; ; dir = paths.dirname(dir)) {
    for (const place of SEARCH_PLACES) yield paths.join(dir, place);
    if (!insideHome || fromHome(dir) === '' || paths.dirname(dir) === dir) break;
  }
  yield* userConfigPlaces({ env, home, platform });
}

function userConfigPlaces({ env, home, platform }: Pick<ConfigSearch, 'env' | 'home' | 'platform'>): string[] {
  const folder = userConfigFolder({ env, homedir: home, platform });
  return GLOBAL_PLACES.map((place) => pathsOf(platform).join(folder, place));
}

/**
 * The places that are the user's own: the user's config folder, and the home folder's own dotfiles (as npm takes
 * ~/.npmrc for the user's config and a project's .npmrc for the project's). No clone or shared folder is home.
 */
function ownPlaces(search: Pick<ConfigSearch, 'env' | 'home' | 'platform'>): string[] {
  const paths = pathsOf(search.platform);
  const home = paths.resolve(search.home);
  return [...SEARCH_PLACES.map((place) => paths.join(home, place)), ...userConfigPlaces(search)];
}

/** The names the user's config folder may hold, in the order the search tries them. */
export const USER_CONFIG_NAMES = GLOBAL_PLACES;

/** The owner of a path itself (a link's own), or undefined when it cannot be told. */
function lstatOwner(file: string): number | undefined {
  try {
    return lstatSync(file).uid;
  } catch {
    return undefined;
  }
}

/**
 * The owner of a file that is neither the user running bds nor root, as a person would name them
 * ("user alice (uid 1001)"); undefined for a file of one of those two, or where the system has no uids.
 */
function strangerOf(owner: number | undefined, uid: number | undefined): string | undefined {
  if (uid === undefined || owner === undefined || owner === uid || owner === 0) return undefined;
  const name = userName(owner);
  return name ? `user ${name} (uid ${owner})` : `uid ${owner}`;
}

/** A uid's name from /etc/passwd, where there is one. */
function userName(uid: number): string | undefined {
  try {
    const line = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((entry) => entry.split(':')[2] === String(uid));
    return line ? shownText(line.split(':')[0]!) : undefined;
  } catch {
    return undefined;
  }
}

/** bds's settings in a file: undefined when it holds none (empty, or a package.json without "bds"). */
async function parseSettings(file: string, text: string): Promise<unknown> {
  // A UTF-8 byte order mark is allowed before JSON (RFC 8259 lets a parser ignore it) and YAML.
  const content = text.replace(/^\uFEFF/, '');
  if (!content.trim()) return undefined;
  const { defaultLoaders } = await import('cosmiconfig');
  const extension = path.extname(file);
  let value: unknown;
  try {
    // .json is JSON; .yaml, .yml, no extension or any other (bds.conf) is YAML, of which JSON is a part.
    const load = extension === '.json' ? defaultLoaders['.json'] : defaultLoaders['.yaml'];
    value = await load(file, content);
  } catch (error) {
    throw new UsageError(`cannot read the config file ${file}: ${describeParseError(error, extension, content)}`);
  }
  const settings = path.basename(file) === 'package.json' ? (isObject(value) ? value.bds : undefined) : value;
  // cosmiconfig would merge files named in `$import`: settings (a key among them) from a file nobody checked
  // for its permissions. One file holds all of bds's settings.
  if (isObject(settings) && '$import' in settings) {
    throw new UsageError(`the config file ${file} uses $import, which bds does not follow`, {
      hint: "put all of bds's settings in that one file",
    });
  }
  return settings ?? undefined;
}

function refuseCode(file: string): never {
  throw new UsageError(`refusing to load the config file ${file}: bds reads JSON or YAML only`, {
    hint: 'move its settings into a .json or .yaml file',
  });
}

function parseConfig(
  file: string,
  config: unknown,
  { found, mode }: { found: boolean; mode: number },
  warnings: SettingsWarning[],
  { platform }: Pick<ConfigSearch, 'platform'>,
): ConfigFile {
  if (!isObject(config)) throw new UsageError(`the config file ${file} must hold an object of settings`);
  warnUnknown(file, config, TOP_LEVEL_KEYS, '', warnings);
  // Without a prototype: a profile may be named "__proto__" or "toString".
  const profiles: Record<string, ConfigValues> = Object.create(null);
  if (config.profiles !== undefined) {
    if (!isObject(config.profiles)) {
      throw new UsageError(`in the config file ${file}: profiles must be an object of named settings`);
    }
    for (const [name, values] of Object.entries(config.profiles)) {
      profiles[name] = pickValues(file, values, `profiles.${shownText(name)}.`);
      warnUnknown(file, values as Record<string, unknown>, CONFIG_KEYS, `profiles.${shownText(name)}.`, warnings);
    }
  }
  if (config.profile !== undefined && typeof config.profile !== 'string') {
    throw new UsageError(`in the config file ${file}: profile must be a string`);
  }
  return {
    path: file,
    found,
    values: pickValues(file, config, ''),
    profile: config.profile,
    profiles,
    readableByOthers: readableByOthers(mode, platform),
  };
}

/** A named file's mode, for the warning that others can read its key; 0 when it cannot be told. */
function modeOf(file: string): number {
  try {
    return statSync(file).mode;
  } catch {
    return 0;
  }
}

/** Whether a file of this mode can be read by other users; Windows' modes say nothing of that (see ConfigFile). */
export function readableByOthers(mode: number, platform: Platform): boolean {
  return platform !== 'win32' && (mode & 0o044) !== 0;
}

/** A setting bds does not know is most likely a misspelt one (`apikey`, `sourceID`): said, with the nearest name. */
function warnUnknown(
  file: string,
  values: Record<string, unknown>,
  known: readonly string[],
  prefix: string,
  warnings: SettingsWarning[],
): void {
  for (const name of Object.keys(values)) {
    if (known.includes(name)) continue;
    const nearest = closestName(name, known);
    warnings.push({
      message: `the config file ${file} has a setting bds does not know: ${prefix}${shownText(name)}`,
      hint: nearest ? `did you mean ${prefix}${nearest}?` : `bds knows ${known.join(', ')}`,
    });
  }
}

function pickValues(file: string, raw: unknown, prefix: string): ConfigValues {
  if (!isObject(raw))
    throw new UsageError(`in the config file ${file}: ${prefix.replace(/\.$/, '')} must be an object`);
  const values: ConfigValues = {};
  for (const key of CONFIG_KEYS) {
    const value = raw[key];
    if (value === undefined) continue;
    // A rate may be written as a number of bytes per second (`limitRate: 1048576`).
    if (key === 'limitRate' && typeof value === 'number') {
      values[key] = String(value);
      continue;
    }
    if (typeof value !== 'string') {
      const expected = key === 'limitRate' ? 'bytes per second: a number, or a string such as "10M"' : 'a string';
      throw new UsageError(`in the config file ${file}: ${prefix}${key} must be ${expected}`);
    }
    values[key] = value;
  }
  return values;
}

function unreadable(file: string, error: unknown): UsageError {
  const code = errnoCode(error);
  if (code === 'EACCES' && !canLookIn(path.dirname(file))) {
    // Which config file the folder holds cannot be known; whichever it is, it would be skipped. The folder may be
    // the working folder (a container's /data) as well as the user's config folder: named, with who may read it.
    return new UsageError(
      `cannot look in ${path.dirname(file)} for a config file: ${permissionDenied(path.dirname(file))}`,
      { hint: 'run bds as a user who may read it, or make it readable to you (chown it to yourself if sudo made it)' },
    );
  }
  return new UsageError(`cannot read the config file ${file}: ${describeReadError(error)}`, {
    hint:
      code === 'EACCES'
        ? 'make it (and its folder) readable to you, e.g. chown it to yourself if sudo wrote it, or move it aside'
        : code === 'ENOENT' || code === undefined
          ? undefined
          : 'bds takes the first config file it finds: make it a readable file, or move it aside',
  });
}

function canLookIn(dir: string): boolean {
  try {
    accessSync(dir, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function describeReadError(error: unknown): string {
  const code = errnoCode(error);
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'it is a folder';
  return code ?? 'unreadable';
}

/** Parser messages quote the offending text, which may be the key itself: keep only where it is. */
function describeParseError(error: unknown, extension: string, content: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const yaml = /\((\d+):(\d+)\)/.exec(message);
  const where = extension === '.json' ? jsonErrorAt(content) : yaml ? { line: yaml[1], column: yaml[2] } : undefined;
  return `not valid JSON or YAML${where ? ` (line ${where.line}, column ${where.column})` : ''}`;
}
