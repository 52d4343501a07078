// A failure as results show it (one folder among several): data, not an exception, so the others go on.

import type { BdsError, ErrorAbout, ErrorText } from './errors.js';

export interface FailureData {
  message: string;
  hint: string | null;
  exit_code: number;
  /** What it is about, as data (BdsError's `about`); the CLI's --json leaves it out. */
  about?: ErrorAbout;
}

/** `message`: other words than the error's own, which its `about` then no longer describes. */
export function failureData(error: BdsError, message = error.message): FailureData {
  const about = message === error.message ? error.about : undefined;
  return { message, hint: error.hint ?? null, exit_code: error.exitCode, ...(about && { about }) };
}

/** An error's words and what it is about, as data. */
export function errorText(error: BdsError): ErrorText {
  return { message: error.message, hint: error.hint, about: error.about };
}
