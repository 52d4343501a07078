// Settings, highest first: flags, environment, the config file (its profile over its top level), defaults.
// Every value remembers where it came from, for `whoami`, for error messages and for hints.

import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { AuthError, UsageError } from '../errors.js';
import { KEY_PREFIXES, type KeyMode } from '../api/types.js';
import { loadConfigFile, readableByOthers, type ConfigFile, type ConfigValues } from './config-file.js';
import { shownText, withoutKeys, type SettingsWarning } from './text.js';
import { travelsSafely } from '../api/url-rules.js';
import { userConfigFolder } from './dirs.js';
import type { OptionNames } from '../option-names.js';
import type { Platform } from '../platform.js';
import type { Env } from '../runtime.js';

export type { SettingsWarning } from './text.js';

/** The names podman and docker give a container for its host: http:// to them is refused, a sandbox is reached otherwise. */
const CONTAINER_HOSTS = new Set(['host.containers.internal', 'host.docker.internal']);

export interface SettingsFlags {
  /** Only from the library's options: on the command line a key would end up in shell history and `ps`. */
  apiKey?: string | undefined;
  baseUrl?: string | undefined;
  sourceId?: string | undefined;
  profile?: string | undefined;
  config?: string | undefined;
  /** deliver's monitoring: where to ping, and the metrics file. */
  pingUrl?: string | undefined;
  metricsFile?: string | undefined;
  /** deliver's upload rate cap as written (`10M`). */
  limitRate?: string | undefined;
  /**
   * A profile the config file does not hold yet is no error: its settings are the file's top level (`bds login
   * --profile <new>`, which is about to write it).
   */
  newProfile?: boolean | undefined;
  /** A key file that cannot be used is a warning, not an error (`bds login`, which brings its own key). */
  keyFileWarns?: boolean | undefined;
  /** How the door that hands these in names its options (core/option-names.ts). */
  names: OptionNames;
}

export interface SettingsEnvironment {
  env: Env;
  cwd: string;
  homedir: string;
  platform: Platform;
  /** Who runs bds, for the config search (see Runtime). */
  uid?: number | undefined;
}

export interface Sourced<T> {
  value: T;
  /** `the baseUrl option` (or the CLI's flag), `BDS_BASE_URL`, `config file /path (profile: live)`, ... */
  from: string;
}

export interface Settings {
  baseUrl: Sourced<string> | undefined;
  sourceId: Sourced<string> | undefined;
  profile: Sourced<string> | undefined;
  configFile: string | undefined;
  apiKey: Sourced<string> | undefined;
  /** deliver's monitoring ping URL (a secret of its own: never printed whole). */
  pingUrl: Sourced<string> | undefined;
  /** deliver's metrics file, an absolute path. */
  metricsFile: Sourced<string> | undefined;
  /** deliver's upload rate cap as written, checked by rate.ts's uploadRate (only deliver fails on a bad one). */
  limitRate: Sourced<string> | undefined;
  warnings: SettingsWarning[];
  /** How the caller's door names its options (the CLI: its flags). */
  names: OptionNames;
}

export interface ApiKey {
  key: string;
  mode: KeyMode;
  /** Where it came from, for humans: BDS_API_KEY, key file /path (BDS_API_KEY_FILE), config file /path */
  from: string;
}

export async function resolveSettings(flags: SettingsFlags, where: SettingsEnvironment): Promise<Settings> {
  const { env } = where;
  refuseUncheckedTls(env);
  const { names } = flags;
  const nonEmpty = (value: string | undefined): string | undefined => (value?.trim() ? value.trim() : undefined);
  const explicitConfig = nonEmpty(flags.config) ?? nonEmpty(env.BDS_CONFIG);
  const search = await loadConfigFile({
    explicit: explicitConfig,
    cwd: where.cwd,
    home: where.homedir,
    env,
    platform: where.platform,
    uid: where.uid,
  });
  const { file } = search;

  const profile = pick<string>(
    [nonEmpty(flags.profile), names.phrase('profile')],
    [nonEmpty(env.BDS_PROFILE), 'BDS_PROFILE'],
    [nonEmpty(file?.profile), `config file ${file?.path}`],
  );
  const fromFile = configValues(file, profile?.value, flags.newProfile === true, names);
  const warnings: SettingsWarning[] = [...search.warnings];
  const keyFile = (name: string | undefined, relativeTo: string, named: string): Sourced<string> | undefined => {
    try {
      return readKeyFile(name, relativeTo, named, where.platform, warnings);
    } catch (error) {
      if (!flags.keyFileWarns || !(error instanceof AuthError)) throw error;
      warnings.push({
        message: error.message,
        hint: `other commands fail on it until ${named} is fixed or removed`,
      });
      return undefined;
    }
  };

  const apiKey =
    pick<string>(
      [flags.apiKey?.trim() || undefined, names.phrase('apiKey')],
      [env.BDS_API_KEY?.trim() || undefined, 'BDS_API_KEY'],
    ) ??
    keyFile(nonEmpty(env.BDS_API_KEY_FILE), where.cwd, 'BDS_API_KEY_FILE') ??
    (fromFile.values.apiKey?.trim() ? { value: fromFile.values.apiKey.trim(), from: fromFile.from } : undefined) ??
    keyFile(
      nonEmpty(fromFile.values.apiKeyFile),
      file ? path.dirname(file.path) : where.cwd,
      `apiKeyFile in ${fromFile.from}`,
    );
  const early = monitoringSettings(flags, where);
  if (file?.found) refuseWhatFoundFilesMayNotSet(file, fromFile, names, where);
  const configMetrics = nonEmpty(fromFile.values.metricsFile);
  if (file?.readableByOthers && (file.values.apiKey || Object.values(file.profiles).some((p) => p.apiKey))) {
    warnings.push({
      message: `the config file ${file.path} holds an API key and other users can read it`,
      hint: `fix with: chmod 600 ${file.path}`,
    });
  }

  const baseUrl = pick<string>(
    [nonEmpty(flags.baseUrl), names.phrase('baseUrl')],
    [nonEmpty(env.BDS_BASE_URL), 'BDS_BASE_URL'],
    [nonEmpty(fromFile.values.baseUrl), fromFile.from],
  );
  if (file?.found && apiKey && baseUrl?.from === fromFile.from && apiKey.from !== fromFile.from) {
    throw refusal(file, 'baseUrl', ` for a key it does not hold (the key comes from ${apiKey.from})`, names, where);
  }
  const sourceId = pick<string>(
    [nonEmpty(flags.sourceId), names.phrase('sourceId')],
    [nonEmpty(env.BDS_SOURCE_ID), 'BDS_SOURCE_ID'],
    [nonEmpty(fromFile.values.sourceId), fromFile.from],
  );
  if (sourceId) checkSourceId(sourceId);

  return {
    baseUrl,
    sourceId,
    profile,
    configFile: file?.path,
    apiKey,
    pingUrl: early.pingUrl ?? pick<string>([nonEmpty(fromFile.values.pingUrl), fromFile.from]),
    // Like apiKeyFile, a relative metricsFile in a config file is relative to that file.
    metricsFile:
      early.metricsFile ??
      (configMetrics === undefined
        ? undefined
        : metricsFileSetting(path.resolve(file ? path.dirname(file.path) : where.cwd, configMetrics), fromFile.from)),
    // Kept when empty: a cap written as nothing is a mistake to name (rate.ts), not a cue to take the next one.
    limitRate: pick<string>(
      [flags.limitRate, names.phrase('limitRate')],
      [env.BDS_LIMIT_RATE, 'BDS_LIMIT_RATE'],
      [fromFile.values.limitRate, fromFile.from],
    ),
    warnings,
    names,
  };
}

/**
 * deliver's ping URL and metrics file as flags and environment give them, which no config file overrides: what
 * is known even when the config file cannot be read, so that such a run can still report its failure.
 */
export function monitoringSettings(
  flags: SettingsFlags,
  { env, cwd }: Pick<SettingsEnvironment, 'env' | 'cwd'>,
): Pick<Settings, 'pingUrl' | 'metricsFile'> {
  const nonEmpty = (value: string | undefined): string | undefined => (value?.trim() ? value.trim() : undefined);
  const { names } = flags;
  const metricsFile = pick<string>(
    [nonEmpty(flags.metricsFile), names.phrase('metricsFile')],
    [nonEmpty(env.BDS_METRICS_FILE), 'BDS_METRICS_FILE'],
  );
  return {
    pingUrl: pick<string>(
      [nonEmpty(flags.pingUrl), names.phrase('pingUrl')],
      [nonEmpty(env.BDS_PING_URL), 'BDS_PING_URL'],
    ),
    metricsFile: metricsFile && metricsFileSetting(path.resolve(cwd, metricsFile.value), metricsFile.from),
  };
}

/**
 * The metrics file, checked: a `.prom` file, what node_exporter's textfile collector reads. Any other name is
 * most likely a mistake, or a file that something else runs (/etc/profile.d/bds.sh).
 */
function metricsFileSetting(file: string, from: string): Sourced<string> {
  if (path.extname(file) !== '.prom') {
    throw new UsageError(`the metrics file ${shownText(file)} from ${from} is not a .prom file`, {
      hint: "bds writes metrics only to a file whose name ends in .prom, as node_exporter's textfile collector reads them",
    });
  }
  return { value: file, from };
}

/** What no source id holds, and what would let one escape a metrics label or a shell line. */
const NOT_IN_SOURCE_IDS: Array<[RegExp, string]> = [
  [/\s/u, 'white space'],
  [/["'`]/, 'a quote or backtick'],
  [/[$\\]/, 'a $ or backslash'],
  [/[\x00-\x1f\x7f-\x9f]/, 'a control character'],
];

function checkSourceId({ value, from }: Sourced<string>): void {
  const found = NOT_IN_SOURCE_IDS.find(([pattern]) => pattern.test(value));
  if (found) {
    throw new UsageError(`the source id from ${from} holds ${found[1]}, which no source id holds`, {
      hint: 'copy the id again from the portal, or from where the source was registered',
    });
  }
}

/** What a config file the search found may not set, each with what it would decide. */
const NOT_FROM_FOUND_FILES = {
  baseUrl: 'where the key goes',
  apiKeyFile: 'which key file is read',
  pingUrl: 'where bds pings',
  metricsFile: 'which file bds writes',
} as const;

/** A refused setting of a found config file, with where the user sets it instead. */
function refusal(
  file: ConfigFile,
  setting: keyof typeof NOT_FROM_FOUND_FILES,
  why: string,
  names: OptionNames,
  where: SettingsEnvironment,
): UsageError {
  const elsewhere = {
    baseUrl: `${names.phrase('baseUrl')}, BDS_BASE_URL`,
    apiKeyFile: 'BDS_API_KEY_FILE',
    pingUrl: `${names.phrase('pingUrl')}, BDS_PING_URL`,
    metricsFile: `${names.phrase('metricsFile')}, BDS_METRICS_FILE`,
  }[setting];
  const own = path.join(
    userConfigFolder({ env: where.env, homedir: where.homedir, platform: where.platform }),
    'config.json',
  );
  return new UsageError(
    `refusing ${setting} from the config file ${file.path}: a config file found in the working folder or above may not decide ${NOT_FROM_FOUND_FILES[setting]}${why}`,
    {
      hint: `set ${setting} with ${elsewhere} or in your own config file ${own}; if you trust this file, name it with ${names.phrase('config')} or BDS_CONFIG`,
    },
  );
}

/**
 * A config file the search found may be a cloned repository's or a shared folder's: it may say what is
 * delivered, not name a key file on this machine, a ping URL or a file to write.
 */
function refuseWhatFoundFilesMayNotSet(
  file: ConfigFile,
  { values }: { values: ConfigValues },
  names: OptionNames,
  where: SettingsEnvironment,
): void {
  for (const setting of ['apiKeyFile', 'pingUrl', 'metricsFile'] as const) {
    if (values[setting]?.trim()) throw refusal(file, setting, '', names, where);
  }
}

/**
 * Node turns certificate checks off for every connection with NODE_TLS_REJECT_UNAUTHORIZED=0, and says so only in a
 * warning: the key would go to whoever answers. bds checks certificates whatever it says (api/proxy.ts), and
 * refuses to run with it rather than fail every request on what the variable was meant to allow.
 */
function refuseUncheckedTls(env: Env): void {
  if (env.NODE_TLS_REJECT_UNAUTHORIZED === '0') {
    throw new UsageError('NODE_TLS_REJECT_UNAUTHORIZED=0 turns off certificate checks, which bds never does', {
      hint: 'unset it; for a private certificate authority, point NODE_EXTRA_CA_CERTS at its certificate (a PEM file)',
    });
  }
}

/** The key, checked: present and with a known prefix. Never echoes the value. */
export function requireApiKey(settings: Pick<Settings, 'apiKey' | 'names'>): ApiKey {
  if (!settings.apiKey) {
    const { names } = settings;
    throw new AuthError('no API key', {
      hint: `give ${names.phrase('apiKey')}, or set BDS_API_KEY, BDS_API_KEY_FILE to a file holding the key, or apiKey in a config file`,
      about: { code: 'no_api_key' },
    });
  }
  const { value, from } = settings.apiKey;
  const mode = (Object.keys(KEY_PREFIXES) as KeyMode[]).find(
    (m) => value.startsWith(KEY_PREFIXES[m]) && value.length > KEY_PREFIXES[m].length,
  );
  if (!mode) {
    throw new AuthError(`the API key from ${from} is malformed: a key starts with svc_live_ or svc_test_`, {
      hint: 'copy the key again from the portal (Settings, API keys)',
    });
  }
  // Only printable ASCII without spaces can go into a header; anything else is not a key.
  if (!/^[\x21-\x7e]+$/.test(value)) {
    throw new AuthError(
      `the API key from ${from} is malformed: it holds a space or a control character, which no key has`,
      { hint: 'copy the key again from the portal (Settings, API keys), on one line and nothing else' },
    );
  }
  return { key: value, mode, from };
}

/** Where the base URL is set, in the words of the caller's door: `the baseUrl option, BDS_BASE_URL or baseUrl`. */
export function baseUrlSettings(names: OptionNames): string {
  return `${names.phrase('baseUrl')}, BDS_BASE_URL or baseUrl`;
}

/** The base URL, checked: http:// only for loopback hosts, since the key would travel in clear. */
export function requireBaseUrl({ baseUrl, names }: Pick<Settings, 'baseUrl' | 'names'>): URL {
  if (!baseUrl) throw new UsageError('no base URL', { hint: `set ${baseUrlSettings(names)} in a config file` });
  const { value, from } = baseUrl;
  // A key pasted into the wrong setting would travel in every URL and show in every message.
  if (withoutKeys(value) !== value) {
    throw new UsageError(`the base URL from ${from} holds what looks like an API key`, {
      hint: "the key goes in BDS_API_KEY, a key file or apiKey; the base URL is the API's address",
    });
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`the base URL from ${from} is not a URL: ${shownText(value)}`);
  }
  if (url.username || url.password) {
    throw new UsageError(`the base URL from ${from} must not carry credentials; the key comes from BDS_API_KEY`);
  }
  if (!travelsSafely(url)) {
    throw url.protocol === 'http:'
      ? new UsageError(`the base URL from ${from} uses http:// for a host that is not this machine`, {
          hint: CONTAINER_HOSTS.has(url.hostname.toLowerCase())
            ? "a container reaches a sandbox on its host only on the host's network (podman or docker run's network host), at http://127.0.0.1:<port>"
            : 'use https://, so that the key does not travel in clear',
        })
      : new UsageError(`the base URL from ${from} must start with https://`);
  }
  url.search = '';
  url.hash = '';
  // One spelling per API ("https://h/api/", "https://h//api"), since the base URL keys the delivery records.
  url.pathname = url.pathname.replace(/\/{2,}/g, '/').replace(/\/$/, '') || '/';
  return url;
}

export function requireSource(settings: Settings): string {
  if (!settings.sourceId) {
    throw new UsageError('no source id', {
      hint: `set ${settings.names.phrase('sourceId')}, BDS_SOURCE_ID or sourceId in a config file (registerSource() creates one)`,
      about: { code: 'no_source' },
    });
  }
  return settings.sourceId.value;
}

function pick<T>(...candidates: Array<[T | undefined, string]>): Sourced<T> | undefined {
  for (const [value, from] of candidates) if (value !== undefined) return { value, from };
  return undefined;
}

function configValues(
  file: ConfigFile | undefined,
  profile: string | undefined,
  newProfile: boolean,
  names: OptionNames,
): { values: ConfigValues; from: string } {
  if (!file) {
    // A named profile with nothing to take it from is as unknown as one missing from the file.
    if (profile !== undefined && !newProfile) {
      throw new UsageError(`no profile "${shownText(profile)}": no config file was found`, {
        hint: `put it under "profiles" in .bdsrc.json or ~/.config/bds/config.json, or name the file with ${names.phrase('config')}`,
      });
    }
    return { values: {}, from: 'config file' };
  }
  if (profile === undefined) return { values: file.values, from: `config file ${file.path}` };
  const values = Object.hasOwn(file.profiles, profile) ? file.profiles[profile] : undefined;
  if (!values) {
    if (newProfile) return { values: file.values, from: `config file ${file.path}` };
    const known = Object.keys(file.profiles).map(shownText);
    throw new UsageError(`no profile "${shownText(profile)}" in the config file ${file.path}`, {
      hint: known.length ? `its profiles: ${known.join(', ')}` : 'add it under "profiles" in that file',
    });
  }
  // The key and the key file are one setting: a profile that names either replaces both of the top level's.
  const inherited = { ...file.values };
  if (values.apiKey !== undefined || values.apiKeyFile !== undefined) {
    delete inherited.apiKey;
    delete inherited.apiKeyFile;
  }
  return { values: { ...inherited, ...values }, from: `config file ${file.path} (profile: ${shownText(profile)})` };
}

function readKeyFile(
  file: string | undefined,
  relativeTo: string,
  named: string,
  platform: Platform,
  warnings: SettingsWarning[],
): Sourced<string> | undefined {
  if (file === undefined) return undefined;
  const resolved = path.resolve(relativeTo, file);
  // The path is shown in messages: a key pasted in as the path is not.
  const shown = withoutKeys(resolved);
  let text: string;
  try {
    text = readFileSync(resolved, 'utf8');
    if (readableByOthers(statSync(resolved).mode, platform)) {
      warnings.push({
        message: `the key file ${shown} can be read by other users`,
        hint: `fix with: chmod 600 ${shown}`,
      });
    }
  } catch (error) {
    const code = (error as { code?: string }).code ?? 'unreadable';
    throw new AuthError(`cannot read the key file ${shown} (${named}): ${code === 'ENOENT' ? 'no such file' : code}`);
  }
  const lines = keyLines(text);
  if (lines.length === 0) throw new AuthError(`the key file ${shown} (${named}) is empty`);
  if (lines.length > 1) {
    throw new AuthError(
      `the key file ${shown} (${named}) holds ${lines.length} lines besides comments; it must hold the key alone`,
      {
        hint: 'put the key on a line of its own; lines starting with # are comments',
      },
    );
  }
  return { value: lines[0]!, from: `key file ${shown} (${named})` };
}

/**
 * The lines of a key file (or of a key piped to `bds login --with-key`) that are not blank and not comments:
 * a line whose first character other than white space is `#` is a comment, since no key holds one.
 */
export function keyLines(text: string): string[] {
  return text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}
