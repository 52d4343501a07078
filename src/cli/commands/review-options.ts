// The options that wait for the review: the same for status and deliver (--wait, --timeout, --fail-on), and
// durations as people write them (90s, 10m, 2h, 1h30m).

import { Option } from 'commander';
import { UsageError } from '../../core/errors.js';
import type { ReviewChoices } from '../../core/status/status.js';

export interface ReviewFlags {
  wait?: boolean;
  timeout?: string;
  failOn?: string;
}

export function reviewOptions(waitHelp: string): Option[] {
  return [
    new Option('--wait', waitHelp),
    new Option('--timeout <duration>', 'with --wait: give up after this long, as 90s, 10m or 2h (default 30m)'),
    new Option(
      '--fail-on <states>',
      'exit 7 when a month is in one of these: missing, rejected, unfinished, pending (comma-separated)',
    ),
  ];
}

/** The flags as the core takes them; the core checks what goes with what. */
export function reviewChoices(flags: ReviewFlags): ReviewChoices {
  return {
    wait: flags.wait,
    timeout: flags.timeout === undefined ? undefined : parseDuration(flags.timeout, '--timeout'),
    failOn: flags.failOn,
  };
}

const DURATION = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/** `90s`, `10m`, `2h`, `1h30m` in ms; anything else is a usage error naming the flag. */
export function parseDuration(text: string, flag: string): number {
  const match = DURATION.exec(text.trim());
  if (!match || text.trim() === '') {
    throw new UsageError(`${flag} ${text} is not a duration`, {
      hint: 'write it with its unit: 90s, 10m, 2h or 1h30m',
    });
  }
  const [, hours = '0', minutes = '0', seconds = '0'] = match;
  return ((Number(hours) * 60 + Number(minutes)) * 60 + Number(seconds)) * 1000;
}
