// What a person at the command line reads about a failure. The core's messages name each option by the names the
// CLI hands in (FLAG_NAMES: flag(), the CLI's one rule); where an error says what it is about (src/core/errors.ts:
// `about`), its words here add what the core cannot say: the command to run, a usage syntax, a folder's failure.

import type { FailureData } from '../../core/failure.js';
import type { DoctorFinding } from '../../core/diagnostics/finding.js';
import type { BdsError, ErrorAbout } from '../../core/errors.js';
import type { NamedOption, OptionNames } from '../../core/option-names.js';
import { formatBytes } from './format.js';

export interface ErrorWords {
  message: string;
  hint: string | undefined;
}

/** The error in the CLI's words: what it is about worded here, else its own message and hint. */
export function errorWords(error: Pick<BdsError, 'message' | 'hint' | 'about'>): ErrorWords {
  const own = { message: error.message, hint: error.hint ?? undefined };
  return error.about ? { ...own, ...aboutWords(error.about) } : own;
}

/** A result's failure in the CLI's words, as a person and `--json` read it (`about` is not shown). */
export function failureWords(failure: FailureData): FailureData {
  if (!failure.about) return failure;
  const { about, ...shown } = failure;
  const words = aboutWords(about);
  return { ...shown, message: words.message ?? failure.message, hint: words.hint ?? failure.hint };
}

/**
 * A command's data in the CLI's words: every failure in it (a month's, a folder's, a dry run's) worded by
 * failureWords. Plain objects and arrays are walked; anything else is kept as it is.
 */
export function inCliWords<T>(data: T): T {
  if (Array.isArray(data)) return data.map(inCliWords) as T;
  if (data === null || typeof data !== 'object' || Object.getPrototypeOf(data) !== Object.prototype) return data;
  const record = data as Record<string, unknown>;
  if ('about' in record && typeof record.message === 'string' && typeof record.exit_code === 'number') {
    return failureWords(record as unknown as FailureData) as T;
  }
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, inCliWords(value)])) as T;
}

/** A doctor's check in the CLI's words, as a person and `--json` read it (`about` is not shown). */
export function findingWords({ name, status, message, hint, about }: DoctorFinding): DoctorFinding {
  const words = about ? aboutWords(about) : {};
  return { name, status, message: words.message ?? message, hint: words.hint ?? hint };
}

/** A library option's flag: `skipDelivered` is `--skip-delivered`, and `sourceId` `--source`. */
function flag(option: NamedOption): string {
  if (option === 'sourceId') return '--source';
  return `--${option.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
}

/** How the core's messages name an option a person gave: by its flag, in either form. */
export const FLAG_NAMES: OptionNames = { name: flagOf, phrase: flagOf };

/** The key has no flag (on a command line it would end up in shell history and `ps`): only login hands one in. */
function flagOf(option: NamedOption): string {
  return option === 'apiKey' ? 'the key bds login was given' : flag(option);
}

/** What the CLI says instead of the message or the hint (either may be kept). */
function aboutWords(about: ErrorAbout): Partial<ErrorWords> {
  switch (about.code) {
    // The message and its hint name the options already, by their flags (FLAG_NAMES): nothing to add.
    case 'option_value':
    case 'options_conflict':
    case 'since_after_until':
    case 'no_period':
    case 'periods_in_name':
    case 'no_data_file':
    case 'no_period_in_name':
    case 'redirected':
    case 'host_not_found':
      return {};
    case 'goes_with':
      return { hint: `add ${flag(about.needs)} to wait for the review of what is delivered` };
    case 'folder_failed': {
      const inner = errorWords(about.error);
      return { message: `${about.dir}: ${inner.message}; nothing was sent`, hint: inner.hint };
    }
    case 'not_started': {
      const inner = errorWords(about.error);
      return { message: `not started: ${inner.message}`, hint: inner.hint };
    }
    case 'folders_failed':
      return {
        message: [
          `${about.failures.length} of ${about.total} folders failed their checks; nothing was sent:`,
          ...about.failures.map((failure) => `  ${failure.dir}: ${errorWords(failure).message}`),
        ].join('\n'),
        hint: 'fix these folders, or leave them out, and run the same command again',
      };
    case 'file_changed':
      return { hint: 'run bds deliver again once the file is final' };
    case 'record_not_saved':
      return { hint: 'free the space or fix the folder, then run the same command again: it resumes this batch' };
    case 'delivered_elsewhere': {
      const force = flag('force');
      return {
        hint: about.alone
          ? `to deliver this file as well, deliver its folder alone with ${force} (bds deliver ${about.alone} ${force}); with several folders, ${force} delivers every one of them again`
          : `to deliver this file as well, run again with ${force} (or ${flag('skipDelivered')} to count it as delivered)`,
      };
    }
    case 'same_file': {
      const force = flag('force');
      return {
        hint:
          `each month has data of its own: check what ${about.dir} holds (a copied folder? a stale one?); if it really is ${about.period}'s, ` +
          (about.several
            ? `deliver that folder alone with ${force} (bds deliver ${about.dir} ${force})`
            : `run again with ${force}`),
      };
    }
    case 'no_first_month':
      return { hint: `name the first month it should have delivered with ${flag('since')} YYYY-MM` };
    case 'earliest_after_until':
      return { hint: `name the first month with ${flag('since')} YYYY-MM` };
    case 'data_files':
      return { hint: `choose one with ${flag('file')} <name>` };
    case 'product_unknown':
      return {
        hint: `records need format "jsonl", episodes "episodes/v1"; environment data needs ${flag('product')} environment`,
      };
    case 'no_source_name':
      return { message: 'missing --name <name> (what the portal shows for this source)' };
    case 'internal':
      return { hint: 'this is a bug in bds; please report it with the output of the same command run with --verbose' };
    case 'upload_too_large': {
      const limit = about.limit === undefined ? '' : ` of ${formatBytes(about.limit)}`;
      return {
        message: `${about.file}${about.gzipped ? ', gzipped,' : ''} is ${formatBytes(about.size)}, over the storage host's limit${limit} for one upload`,
      };
    }
    case 'no_api_key':
      return {
        hint: 'set BDS_API_KEY, or BDS_API_KEY_FILE to a file holding the key, or apiKey in a config file (see bds --help)',
      };
    case 'gave_up':
      return { hint: 'the service or the network is failing; run the same command again later' };
    case 'unknown_source':
      return { hint: `check ${flag('sourceId')}, BDS_SOURCE_ID or sourceId; bds register-source creates a source` };
    case 'unfinished_delivery':
      return { hint: 'run the same bds deliver again: it resumes this delivery' };
    case 'temp_copies_left':
      return { hint: 'the next bds deliver removes them; or remove them: their names start with bds-' };
    case 'not_reachable':
      return {
        hint: 'is the service running there, and is no firewall in the way? (the sandbox: is bds sandbox still running?)',
      };
    case 'no_source':
      return {
        hint: `set ${flag('sourceId')}, BDS_SOURCE_ID or sourceId in a config file (bds register-source creates one)`,
      };
  }
}
