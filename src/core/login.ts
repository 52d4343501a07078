// bds login and bds logout as use cases: a key checked (its form, then GET /me) before anything is written to
// the user's config file, and removed from it again. The key itself comes from the caller (the CLI's prompt
// or standard input); it is never an argument and never shown.

import type { MeResponse } from './api/types.js';
import { AuthError, UsageError } from './errors.js';
import type { OptionNames } from './option-names.js';
import type { Operation } from './operation.js';
import { loadConfigFile } from './settings/config-file.js';
import { requireHomeFor } from './settings/dirs.js';
import {
  keyLines,
  requireApiKey,
  requireBaseUrl,
  resolveSettings,
  type Settings,
  type Sourced,
} from './settings/settings.js';
import {
  linesToAdd,
  profileIn,
  readUserConfig,
  removeKey,
  storeKey,
  userConfigTarget,
  type KeyPlace,
} from './settings/user-config.js';

/** Where a login would store the key, and the base URL the usual settings give (else the CLI asks for one). */
export interface LoginPlan {
  file: string;
  profile: string | undefined;
  baseUrl: Sourced<string> | undefined;
  /** What the caller calls the settings, for messages. */
  names: OptionNames;
}

/** Checks that the key can be stored (before anyone types it); a file bds does not rewrite is exit 2. */
export async function planLogin(op: Operation): Promise<LoginPlan> {
  const place = keyPlace(op);
  const current = op.withFlags({ newProfile: true, keyFileWarns: true });
  await current.announceSettings();
  const settings = await current.settings();
  const target = targetOf(op);
  if (!target.writable) {
    throw new UsageError(`${notRewritten(target.file, target.reason, settings.names)}; nothing was stored`, {
      hint: `add these settings to it yourself, with your key:\n${linesToAdd(target.file, place, settings.baseUrl?.value)}`,
    });
  }
  requireHomeFor(target.file, op.runtime);
  return { file: target.file, profile: place.profile, baseUrl: settings.baseUrl, names: settings.names };
}

export interface LoginOptions {
  /** What was typed or piped in: the key, on a line of its own (lines starting with # are comments). */
  keyText: string;
  /** Where it came from, for messages: `standard input`, `the prompt`. */
  keyFrom: string;
  /** When the usual settings give none (typed at the prompt). */
  baseUrl?: string | undefined;
  /** planLogin's answer, when the caller asked it first (before asking for the key). */
  plan?: LoginPlan | undefined;
}

/** What `bds login --json` prints: what whoami shows, and where the key was stored. */
export type LoginResult = MeResponse & {
  baseUrl: string;
  configFile: string;
  profile: string | null;
  /** The profile became the file's default one. */
  madeDefault: boolean;
  /** Where a key comes from that wins over the stored one (BDS_API_KEY, a key file, a nearer config file), if any. */
  overriddenBy: string | null;
  /** When that key is in the same file (its default profile's, say): where in it; else null. */
  overriddenIn: KeyIn | null;
  /** The file's default profile (`profile`) after the login; null for none. */
  defaultProfile: string | null;
};

/** A place in the user's config file: its top level (profile null) or a profile. */
export interface KeyIn {
  profile: string | null;
}

/**
 * The base URL a login will use, checked (the CLI does so before asking for the key): the one typed at the
 * prompt, else the usual settings'.
 */
export function checkBaseUrl(typed: string | undefined, plan: LoginPlan): URL {
  const setting =
    typed?.trim() && typed.trim() !== plan.baseUrl?.value ? { value: typed.trim(), from: 'the prompt' } : plan.baseUrl;
  return requireBaseUrl({ baseUrl: setting, names: plan.names });
}

export async function login(op: Operation, options: LoginOptions): Promise<LoginResult> {
  const plan = options.plan ?? (await planLogin(op));
  const lines = keyLines(options.keyText);
  if (lines.length !== 1) {
    throw new AuthError(
      lines.length === 0
        ? `no key in ${options.keyFrom}`
        : `${options.keyFrom} holds ${lines.length} lines besides comments; give the key alone`,
      { hint: 'copy the key from the portal (Settings, API keys)' },
    );
  }
  // The key's form first, then the base URL, then the API: nothing is written until all three agree.
  const key = requireApiKey({ apiKey: { value: lines[0]!, from: options.keyFrom }, names: op.names });
  const baseUrl = checkBaseUrl(options.baseUrl, plan);
  const checked = op.withFlags({ apiKey: key.key, baseUrl: baseUrl.href, newProfile: true });
  const api = await checked.client();
  let me: MeResponse;
  try {
    me = await api.me(op.signal);
  } catch (error) {
    // The usual hint names the settings the key came from; this one was just typed or piped in.
    if (error instanceof AuthError) {
      throw new AuthError(error.message, {
        hint: `the API refused this key: copy it again from the portal, and check that it is for ${baseUrl.origin}`,
        cause: error,
        request: error.request,
      });
    }
    throw error;
  } finally {
    await api.close();
  }
  const shownUrl = baseUrl.toString().replace(/\/$/, '');
  const place = { profile: plan.profile };
  const { madeDefault, defaultProfile } = storeKey(
    plan.file,
    place,
    { apiKey: key.key, baseUrl: shownUrl },
    op.runtime.platform,
  );
  const after = await settingsNow(op);
  const overriddenBy = overriding(after, plan.file, place);
  return {
    ...me,
    baseUrl: shownUrl,
    configFile: plan.file,
    profile: plan.profile ?? null,
    madeDefault,
    overriddenBy,
    overriddenIn: overriddenBy === null ? null : keyIn(after, plan.file),
    defaultProfile: defaultProfile ?? null,
  };
}

/**
 * What the next command will take its key from instead of the one just stored: BDS_API_KEY, a key file, a
 * config file the search finds first (in the working folder or above), which wins whole, key or not, or the
 * same file's default profile.
 */
function overriding(after: Settings | undefined, file: string, place: KeyPlace): string | null {
  if (!after) return null;
  if (after.apiKey && after.apiKey.from !== storedFrom(file, place)) return after.apiKey.from;
  return after.configFile !== undefined && after.configFile !== file ? `config file ${after.configFile}` : null;
}

/** Where in the user's config file `file` the key the settings use is stored; null when it comes from elsewhere. */
function keyIn(settings: Settings | undefined, file: string): KeyIn | null {
  const from = settings?.apiKey?.from;
  const top = storedFrom(file, { profile: undefined });
  if (from === undefined || (from !== top && !from.startsWith(`${top} (profile: `))) return null;
  // A profile without a key of its own takes the top level's, under the profile's name.
  const profile = settings?.profile?.value;
  const own = profile !== undefined && 'apiKey' in (profileIn(readUserConfig(file), profile) ?? {});
  return { profile: own ? profile : null };
}

/** What `bds logout --json` prints. */
export interface LogoutResult {
  configFile: string;
  profile: string | null;
  /** A key was removed from the file. */
  removed: boolean;
  /** Where the key bds would use now comes from (the environment, a key file, another file), left alone; null for none. */
  remaining: string | null;
  /** When that key is in the same file (another profile, or its top level): where in it; else null. */
  remainingIn: KeyIn | null;
}

export async function logout(op: Operation): Promise<LogoutResult> {
  const place = keyPlace(op);
  const target = targetOf(op);
  let removed = false;
  if (target.writable) {
    removed = removeKey(target.file, place, op.runtime.platform);
  } else {
    // Read, never rewritten: a key in it is the user's to remove.
    const holds = await holdsKey(op, target.file, place);
    if (holds) {
      throw new UsageError(`${notRewritten(target.file, target.reason, op.flags.names)}; nothing was removed`, {
        hint: `remove apiKey${place.profile === undefined ? '' : ` under profiles.${place.profile}`} from it yourself`,
      });
    }
  }
  const after = await settingsNow(op);
  return {
    configFile: target.file,
    profile: place.profile ?? null,
    removed,
    remaining: after?.apiKey?.from ?? null,
    remainingIn: target.writable ? keyIn(after, target.file) : null,
  };
}

/** The profile named by --profile (or the library's option), else BDS_PROFILE; none is the top level. */
function keyPlace(op: Operation): KeyPlace {
  const profile = op.flags.profile?.trim() || op.runtime.env.BDS_PROFILE?.trim() || undefined;
  return { profile };
}

function targetOf(op: Operation): ReturnType<typeof userConfigTarget> {
  const named = op.flags.config?.trim() || op.runtime.env.BDS_CONFIG?.trim() || undefined;
  return userConfigTarget(op.runtime, op.runtime.cwd, named);
}

function notRewritten(file: string, reason: 'yaml' | 'named', names: OptionNames): string {
  return reason === 'yaml'
    ? `your config file ${file} is not JSON, and bds does not rewrite it`
    : `bds stores keys only in your own config file, not in ${file} (named by ${names.phrase('config')} or BDS_CONFIG)`;
}

/** How settings name a key stored in the file at `place`. */
function storedFrom(file: string, place: KeyPlace): string {
  return place.profile === undefined ? `config file ${file}` : `config file ${file} (profile: ${place.profile})`;
}

/** The settings as the next command will resolve them, with the profile just written; undefined if they fail. */
async function settingsNow(op: Operation): Promise<Settings | undefined> {
  const place = keyPlace(op);
  try {
    return await resolveSettings(
      { config: op.flags.config, profile: place.profile, newProfile: true, keyFileWarns: true, names: op.flags.names },
      op.runtime,
    );
  } catch {
    return undefined;
  }
}

async function holdsKey(op: Operation, file: string, place: KeyPlace): Promise<boolean> {
  const { file: config } = await loadConfigFile({
    explicit: file,
    cwd: op.runtime.cwd,
    home: op.runtime.homedir,
    env: op.runtime.env,
    platform: op.runtime.platform,
    uid: op.runtime.uid,
  });
  const values = place.profile === undefined ? config?.values : config?.profiles[place.profile];
  return values?.apiKey !== undefined;
}
