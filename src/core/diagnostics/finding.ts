// What doctor finds, one finding per thing it looks at: data, one line's worth. The CLI owns how it is shown.

import type { ErrorAbout } from '../errors.js';

export type FindingStatus = 'ok' | 'warn' | 'fail';

/** One line of `bds doctor`, as `--json` prints it: a hint for a warn or a fail, null for an ok. */
export interface DoctorFinding {
  name: string;
  status: FindingStatus;
  message: string;
  hint: string | null;
  /** What it is about, as data (as an error's `about`), for the CLI's words; not printed. */
  about?: ErrorAbout | undefined;
}

/** A finding as doctor's parts return it: a failure also says which exit code its kind is (2, 3, 4, 5). */
export interface Finding extends DoctorFinding {
  exitCode?: number;
}

export function ok(name: string, message: string, about?: ErrorAbout): Finding {
  return { name, status: 'ok', message, hint: null, ...(about && { about }) };
}

export function warn(name: string, message: string, hint: string, about?: ErrorAbout): Finding {
  return { name, status: 'warn', message, hint, ...(about && { about }) };
}

export function fail(name: string, message: string, hint: string, exitCode: number, about?: ErrorAbout): Finding {
  return { name, status: 'fail', message, hint, exitCode, ...(about && { about }) };
}
