// What a person at the command line reads about a failure: the core's errors name the library's options; where
// an error says what it is about (src/core/errors.ts: `about`), its words here name the flags and commands instead.

import type { DoctorCheck } from '../../core/diagnostics/doctor-check.js';
import type { BdsError, ErrorAbout } from '../../core/errors.js';

export interface ErrorWords {
  message: string;
  hint: string | undefined;
}

/** The error in the CLI's words: what it is about worded here, else its own message and hint. */
export function errorWords(error: Pick<BdsError, 'message' | 'hint' | 'about'>): ErrorWords {
  const own = { message: error.message, hint: error.hint ?? undefined };
  return error.about ? { ...own, ...aboutWords(error.about, own) } : own;
}

/** A doctor's check in the CLI's words, as a person and `--json` read it (`about` is not shown). */
export function checkWords({ name, status, message, hint, about }: DoctorCheck): DoctorCheck {
  const words = about ? aboutWords(about, { message, hint: hint ?? undefined }) : {};
  return { name, status, message: words.message ?? message, hint: words.hint ?? hint };
}

/** A library option's flag: `skipDelivered` is `--skip-delivered`. */
export function flag(option: string): string {
  return `--${option.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
}

/** What the CLI says instead of the message or the hint (either may be kept). */
function aboutWords(about: ErrorAbout, own: ErrorWords): Partial<ErrorWords> {
  switch (about.code) {
    case 'option_value':
      return { message: `${flag(about.option)}${own.message.slice(about.option.length)}` };
    case 'goes_with':
      return {
        message: `${about.options.map(flag).join(' and ')} ${about.options.length > 1 ? 'go' : 'goes'} with ${flag(about.needs)}`,
        hint: `add ${flag(about.needs)} to wait for the review of what is delivered`,
      };
    case 'options_conflict':
      return {
        message: `${flag(about.option)} cannot be given with ${about.with.map(flag).join(' or ')}`,
        ...(about.option === 'period' && { hint: '--period is one month; --since and --until name a range' }),
      };
    case 'since_after_until':
      return { message: `--since ${about.since} is after --until ${about.until}` };
    case 'no_first_month':
      return { hint: 'name the first month it should have delivered with --since YYYY-MM' };
    case 'earliest_after_until':
      return {
        message: `the source's earliest batch is of ${about.earliest}, after --until ${about.until}`,
        hint: 'name the first month with --since YYYY-MM',
      };
    case 'no_period':
      return {
        message: "missing --period YYYY-MM (the month the data covers), and the folder's name holds none",
        hint: "name it with --period, or put it in the folder's name (out/2024-05)",
      };
    case 'periods_in_name':
      return { hint: 'name the month with --period' };
    case 'no_data_file':
      return { hint: 'expected one *.jsonl.gz or *.jsonl file, or name it with --file' };
    case 'data_files':
      return { hint: 'choose one with --file <name>' };
    case 'product_unknown':
      return {
        hint: 'records need format "jsonl", episodes "episodes/v1"; environment data needs --product environment',
      };
    case 'no_source_name':
      return { message: 'missing --name <name> (what the portal shows for this source)' };
    case 'internal':
      return { hint: 'this is a bug in bds; please report it with the output of the same command run with --verbose' };
    case 'no_api_key':
      return {
        hint: 'set BDS_API_KEY, or BDS_API_KEY_FILE to a file holding the key, or apiKey in a config file (see bds --help)',
      };
    case 'redirected':
      return { hint: 'check the base URL (--base-url, BDS_BASE_URL or baseUrl): it should be the API address itself' };
    case 'gave_up':
      return { hint: 'the service or the network is failing; run the same command again later' };
    case 'unknown_source':
      return { hint: 'check --source, BDS_SOURCE_ID or sourceId; bds register-source creates a source' };
    case 'unfinished_delivery':
      return { hint: 'run the same bds deliver again: it resumes this delivery' };
    case 'temp_copies_left':
      return { hint: 'the next bds deliver removes them; or remove them: their names start with bds-' };
    case 'host_not_found':
      return { hint: 'check the base URL for a typo (--base-url, BDS_BASE_URL or baseUrl)' };
    case 'not_reachable':
      return {
        hint: 'is the service running there, and is no firewall in the way? (the sandbox: is bds sandbox still running?)',
      };
    case 'no_source':
      return {
        hint: `set ${about.setting}, BDS_SOURCE_ID or sourceId in a config file (bds register-source creates one)`,
      };
  }
}
