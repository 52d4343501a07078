// The upload rate cap (--limit-rate, BDS_LIMIT_RATE, limitRate) as curl writes it: bytes per second, plain or
// with a unit; K, M and G are 1024, 1024² and 1024³ as in curl, in either case. 0 lifts a cap set lower down.

import { UsageError } from '../errors.js';
import type { Settings, Sourced } from './settings.js';
import { shownText } from './text.js';

const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };
const RATE = /^(\d+(?:\.\d+)?)([kmg]?)$/i;

export interface UploadRate {
  /** Bytes per second; null: not capped (a cap of 0 lifts one that a lower setting sets). */
  bytesPerSecond: number | null;
  /** As written: `10M`. */
  written: string;
  from: string;
}

/** Bytes per second, 0 for no cap, or undefined when `text` is not a rate. */
export function parseRate(text: string): number | undefined {
  const match = RATE.exec(text.trim());
  if (!match) return undefined;
  const bytes = Math.floor(Number(match[1]) * UNITS[match[2]!.toLowerCase()]!);
  // A fraction of a byte per second ("0.5") is no rate: only a written 0 means no cap.
  if (bytes === 0 && Number(match[1]) !== 0) return undefined;
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** The cap the settings give, checked; undefined when none is set. An invalid one is a usage error naming its source. */
export function uploadRate(settings: Pick<Settings, 'limitRate'>): UploadRate | undefined {
  const setting: Sourced<string> | undefined = settings.limitRate;
  if (!setting) return undefined;
  const bytes = parseRate(setting.value);
  if (bytes === undefined) {
    throw new UsageError(`the upload rate cap from ${setting.from} is not a rate: ${shownText(setting.value)}`, {
      hint: 'give bytes per second as curl does: 500K, 10M, 1G (K = 1024 bytes) or plain bytes; 0 for no cap',
    });
  }
  return { bytesPerSecond: bytes === 0 ? null : bytes, written: setting.value.trim(), from: setting.from };
}
