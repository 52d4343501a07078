// doctor's settings: where each comes from (flags, environment, config file), never the key itself, and the
// warnings the settings give (a config file or key file others can read, a file passed over, a misspelt name).

import { KEY_PREFIXES } from '../api/types.js';
import { BdsError } from '../errors.js';
import type { Operation } from '../operation.js';
import { uploadRate } from '../settings/rate.js';
import { requireApiKey, requireBaseUrl, type ApiKey, type Settings } from '../settings/settings.js';
import { withoutKeys } from '../settings/text.js';
import { fail, ok, warn, type Finding } from './finding.js';

export interface SettingsFindings {
  findings: Finding[];
  settings?: Settings;
  /** Checked: present and usable. */
  baseUrl?: URL;
  key?: ApiKey;
}

export async function settingsFindings(op: Operation): Promise<SettingsFindings> {
  let settings: Settings;
  try {
    settings = await op.settings();
  } catch (error) {
    return { findings: [failure('settings', error)] };
  }
  const findings = [
    ok('config file', settings.configFile ?? 'none found; settings come from flags and the environment'),
    ...settings.warnings.map(({ message, hint }) => warn('settings', message, hint)),
  ];
  const result: SettingsFindings = { findings, settings };
  try {
    result.baseUrl = requireBaseUrl(settings);
    findings.push(ok('base URL', `${result.baseUrl.toString().replace(/\/$/, '')} (from ${settings.baseUrl!.from})`));
  } catch (error) {
    findings.push(failure('base URL', error));
  }
  try {
    result.key = requireApiKey(settings);
    findings.push(ok('key', `${KEY_PREFIXES[result.key.mode]}… (${result.key.mode} mode) from ${result.key.from}`));
  } catch (error) {
    findings.push(failure('key', error));
  }
  const { profile, sourceId } = settings;
  // Shown without anything shaped like a key: a key pasted into the wrong setting is still a key.
  findings.push(ok('profile', profile ? `${withoutKeys(profile.value)} (from ${profile.from})` : 'none'));
  // Not a failure (doctor, whoami and register-source need none), but deliver and list cannot run without one.
  findings.push(
    sourceId
      ? ok('source id', `${withoutKeys(sourceId.value)} (from ${sourceId.from})`)
      : warn(
          'source id',
          'none set: deliver and list need one',
          `set ${settings.names.phrase('sourceId')}, BDS_SOURCE_ID or sourceId in a config file (register-source creates one)`,
          { code: 'no_source' },
        ),
  );
  try {
    const rate = uploadRate(settings);
    findings.push(
      ok(
        'upload rate',
        rate?.bytesPerSecond
          ? `capped at ${rate.bytesPerSecond} bytes/s (${rate.written}, from ${rate.from})`
          : `not capped${rate ? ` (${rate.written}, from ${rate.from})` : ''}`,
      ),
    );
  } catch (error) {
    findings.push(failure('upload rate', error));
  }
  return result;
}

/** A failed check from one of bds's errors; anything else is a bug, and stays one. */
export function failure(name: string, error: unknown): Finding {
  if (!(error instanceof BdsError)) throw error;
  return fail(name, error.message, error.hint ?? 'see docs/troubleshooting.md', error.exitCode, error.about);
}
