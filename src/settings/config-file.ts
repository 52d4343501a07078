// Finding and reading the config file with cosmiconfig: JSON and YAML only, since bds runs unattended with a
// secret in reach and a config file that runs code would run it.

import { statSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.js';

export const CONFIG_KEYS = ['apiKey', 'apiKeyFile', 'baseUrl', 'sourceId'] as const;
export type ConfigKey = (typeof CONFIG_KEYS)[number];
export type ConfigValues = Partial<Record<ConfigKey, string>>;

export interface ConfigFile {
  path: string;
  values: ConfigValues;
  profile: string | undefined;
  profiles: Record<string, ConfigValues>;
  /** Readable by group or others (mode & 0o044). */
  readableByOthers: boolean;
}

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
 * `explicit` (from --config or BDS_CONFIG) names one file and disables the search. Otherwise the search goes
 * from `cwd` up to `home`, then the user's config folder (`$XDG_CONFIG_HOME/bds/config*` on Linux).
 */
export async function loadConfigFile(options: {
  explicit: string | undefined;
  cwd: string;
  home: string;
}): Promise<ConfigFile | undefined> {
  const { cosmiconfig, defaultLoaders } = await import('cosmiconfig');
  const refuse = (filepath: string): never => {
    throw new UsageError(`refusing to load the config file ${filepath}: bds reads JSON or YAML only`, {
      hint: 'move its settings into a .json or .yaml file',
    });
  };
  const explorer = cosmiconfig('bds', {
    searchStrategy: 'global',
    stopDir: options.home,
    searchPlaces: SEARCH_PLACES,
    loaders: {
      ...Object.fromEntries(CODE_EXTENSIONS.map((ext) => [ext, refuse])),
      '.json': dataOnly(defaultLoaders['.json']),
      '.yaml': dataOnly(defaultLoaders['.yaml']),
      '.yml': dataOnly(defaultLoaders['.yml']),
      noExt: dataOnly(defaultLoaders.noExt),
    },
    cache: false,
  });

  let result: { config: unknown; filepath: string; isEmpty?: boolean } | null;
  if (options.explicit !== undefined) {
    const file = path.resolve(options.cwd, options.explicit);
    if (CODE_EXTENSIONS.includes(path.extname(file))) refuse(file);
    try {
      result = await explorer.load(file);
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`cannot read the config file ${file}: ${describeLoadError(error)}`);
    }
  } else {
    try {
      result = await explorer.search(options.cwd);
    } catch (error) {
      if (error instanceof UsageError) throw error;
      const file = (error as { filepath?: string }).filepath;
      throw new UsageError(`cannot read the config file${file ? ` ${file}` : ''}: ${describeLoadError(error)}`);
    }
  }
  if (!result) return undefined;
  return parseConfig(result.filepath, result.isEmpty ? {} : result.config);
}

type Loader = (filepath: string, content: string) => unknown;

/**
 * cosmiconfig merges files named in `$import`: settings (a key among them) from a file nobody checked for its
 * permissions, or code. One file holds all of bds's settings.
 */
function dataOnly(load: Loader): Loader {
  return async (filepath, content) => {
    const value = await load(filepath, content);
    // In package.json, cosmiconfig takes the "bds" key first and follows its $import.
    const settings = path.basename(filepath) === 'package.json' ? (value as Record<string, unknown> | null)?.bds : value;
    if (settings !== null && typeof settings === 'object' && '$import' in settings) {
      throw new UsageError(`the config file ${filepath} uses $import, which bds does not follow`, {
        hint: 'put all of bds\'s settings in that one file',
      });
    }
    return value;
  };
}

function parseConfig(file: string, config: unknown): ConfigFile {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new UsageError(`the config file ${file} must hold an object of settings`);
  }
  const raw = config as Record<string, unknown>;
  const profiles: Record<string, ConfigValues> = {};
  if (raw.profiles !== undefined) {
    if (raw.profiles === null || typeof raw.profiles !== 'object' || Array.isArray(raw.profiles)) {
      throw new UsageError(`in the config file ${file}: profiles must be an object of named settings`);
    }
    for (const [name, values] of Object.entries(raw.profiles)) {
      profiles[name] = pickValues(file, values, `profiles.${name}.`);
    }
  }
  if (raw.profile !== undefined && typeof raw.profile !== 'string') {
    throw new UsageError(`in the config file ${file}: profile must be a string`);
  }
  let mode = 0;
  try {
    mode = statSync(file).mode;
  } catch {
    // cosmiconfig just read it; a race here is not worth failing for
  }
  return {
    path: file,
    values: pickValues(file, raw, ''),
    profile: raw.profile as string | undefined,
    profiles,
    readableByOthers: (mode & 0o044) !== 0,
  };
}

function pickValues(file: string, raw: unknown, prefix: string): ConfigValues {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new UsageError(`in the config file ${file}: ${prefix.replace(/\.$/, '')} must be an object`);
  }
  const values: ConfigValues = {};
  for (const key of CONFIG_KEYS) {
    const value = (raw as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw new UsageError(`in the config file ${file}: ${prefix}${key} must be a string`);
    values[key] = value;
  }
  return values;
}

function describeLoadError(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'it is a folder';
  // Parser messages quote the offending text, which may be the key itself: keep only where it is.
  const message = error instanceof Error ? error.message : String(error);
  const where = /line (\d+)/i.exec(message) ?? /\((\d+):\d+\)/.exec(message);
  return `not valid JSON or YAML${where ? ` (near line ${where[1]})` : ''}`;
}
