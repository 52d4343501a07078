// The upload rate cap (--limit-rate, BDS_LIMIT_RATE, limitRate) as curl writes it: bytes per second, plain or
// with a unit (size.ts: the grammar of every size bds reads). 0 lifts a cap set lower down. A cap under 1K is
// refused: no upload is meant to crawl at a few bytes a second, so `500` or `1.5` is a unit left out.

import { UsageError } from '../errors.js';
import type { Settings, Sourced } from './settings.js';
import { parseSize } from './size.js';
import { shownText } from './text.js';

/** The lowest cap: 1K, below which a rate is taken for a missing unit. */
const MIN_BYTES_PER_SECOND = 1024;

export interface UploadRate {
  /** Bytes per second; null: not capped (a cap of 0 lifts one that a lower setting sets). */
  bytesPerSecond: number | null;
  /** As written: `10M`. */
  written: string;
  from: string;
}

/** Bytes per second, 0 for no cap, or undefined when `text` is not a rate (a size, see size.ts). */
export function parseRate(text: string): number | undefined {
  return parseSize(text);
}

/** The cap the settings give, checked; undefined when none is set. An invalid one is a usage error naming its source. */
export function uploadRate(settings: Pick<Settings, 'limitRate'>): UploadRate | undefined {
  const setting: Sourced<string> | undefined = settings.limitRate;
  if (!setting) return undefined;
  const written = setting.value.trim();
  const hint = 'give bytes per second as curl does: 500K, 10M, 1G (K = 1024 bytes) or plain bytes; 0 for no cap';
  if (written === '') {
    throw new UsageError(`the upload rate cap from ${setting.from} is empty`, {
      hint: `${hint}; or leave ${setting.from} out`,
    });
  }
  const bytes = parseRate(written);
  if (bytes === undefined) {
    throw new UsageError(`the upload rate cap from ${setting.from} is not a rate: ${shownText(setting.value)}`, {
      hint,
    });
  }
  const noCap = /^0+(?:\.0+)?[kmgt]?$/i.test(written);
  if (!noCap && bytes < MIN_BYTES_PER_SECOND) {
    const shown = shownText(written);
    throw new UsageError(`the upload rate cap from ${setting.from}, ${shown}, is under 1K (1024 bytes/s)`, {
      hint: /^[\d.]+$/.test(written)
        ? `rates are bytes per second: did you mean ${shown}K or ${shown}M? 0 for no cap`
        : 'rates are bytes per second: the lowest cap is 1K; 0 for no cap',
    });
  }
  return { bytesPerSecond: bytes === 0 ? null : bytes, written, from: setting.from };
}
