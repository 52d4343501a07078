// What a library caller passes, checked at the door: an option of the wrong kind is a UsageError naming the
// call, the option and what it must be, never a TypeError from deep inside; an option the call does not take
// is one too (a misspelt `perod` ignored would check by other rules). The value itself is never shown: it
// could be the key.

import { PRODUCTS } from './api/types.js';
import { UsageError } from './errors.js';
import type { OptionNames } from './option-names.js';
import { closestName, shownText } from './settings/text.js';

/** How the library's messages name its options: `period`, or `the period option`. */
export const OPTION_NAMES: OptionNames = {
  name: (option) => option,
  phrase: (option) => `the ${option} option`,
};

export type OptionKind =
  'string' | 'boolean' | 'number' | 'function' | 'object' | 'signal' | 'folders' | 'product' | 'rate' | 'states';

const EXPECTED: Record<OptionKind, string> = {
  string: 'a string',
  boolean: 'true or false',
  number: 'a number',
  function: 'a function',
  object: 'an object',
  signal: 'an AbortSignal',
  folders: 'an array of folders (strings)',
  rate: 'bytes per second: a number, or a string such as "10M"',
  states: 'a string or an array of strings',
  product: PRODUCTS.map((product) => `"${product}"`)
    .join(', ')
    .replace(/, ([^,]*)$/, ' or $1'),
};

/**
 * What one library call takes: the kind of every option of its type `Options` (no other is taken), and the options
 * it needs. Typed against the call's options, so an option added to them without a kind here does not compile.
 */
export interface CallOptions<Options> {
  kinds: { readonly [Name in keyof Options]-?: OptionKind };
  required?: readonly (keyof Options & string)[];
}

/**
 * Checks `options` of the library function `call`: it names no option but those in `kinds`, each undefined or
 * of its kind, and those in `required` are given (a string not blank).
 */
export function validateOptions(
  call: string,
  options: unknown,
  kinds: Record<string, OptionKind>,
  required: readonly string[] = [],
): void {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new UsageError(`${call}() takes an object of options, not ${describe(options)}`);
  }
  const given = options as Record<string, unknown>;
  const known = Object.keys(kinds);
  const unknown = Object.keys(given).find((name) => !known.includes(name));
  if (unknown !== undefined) {
    const near = closestName(unknown, known);
    throw new UsageError(`${call}() takes no option "${shownText(unknown)}"`, {
      hint: near ? `did you mean "${near}"?` : `it takes ${known.map((name) => `"${name}"`).join(', ')}`,
    });
  }
  for (const [name, kind] of Object.entries(kinds)) {
    const value = given[name];
    // A blank string names nothing, as a flag given as '' on the command line.
    if (value === undefined || (required.includes(name) && typeof value === 'string' && !value.trim())) {
      if (required.includes(name)) throw new UsageError(`${call}() needs the option "${name}" (${EXPECTED[kind]})`);
    } else if (!isKind(value, kind)) {
      throw new UsageError(
        `${call}(): "${name}" must be ${EXPECTED[kind]}, not ${kind === 'product' && typeof value === 'string' ? 'another string' : describe(value)}`,
      );
    }
  }
}

function isKind(value: unknown, kind: OptionKind): boolean {
  switch (kind) {
    case 'folders':
      return isStrings(value);
    case 'states':
      return typeof value === 'string' || isStrings(value);
    case 'product':
      return (PRODUCTS as readonly unknown[]).includes(value);
    case 'signal':
      // By its shape: a signal of another realm (a vm context, a polyfill) is one too.
      return (
        typeof (value as AbortSignal | null)?.aborted === 'boolean' &&
        typeof (value as AbortSignal).addEventListener === 'function'
      );
    case 'rate':
      return typeof value === 'string' || typeof value === 'number';
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
    default:
      return typeof value === kind;
  }
}

function isStrings(value: unknown): boolean {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/** What a value is, in words, without the value. */
function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    const odd = value.find((item) => typeof item !== 'string');
    return odd === undefined ? 'an array' : `an array holding ${describe(odd)}`;
  }
  const type = typeof value;
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}
