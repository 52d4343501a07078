// A failure as results show it (one folder among several): data, not an exception, so the others go on.

import type { BdsError } from '../errors.js';

export interface FailureData {
  message: string;
  hint: string | null;
  exit_code: number;
}

export function failureData(error: BdsError, message = error.message): FailureData {
  return { message, hint: error.hint ?? null, exit_code: error.exitCode };
}
