// Progress (of an upload, or of the pass over a data file) as text: a bar for a terminal, a throttled line for logs.

import { formatBytes, formatDuration, formatRate } from './format.js';

export interface ProgressSample {
  sent: number;
  total: number;
  elapsedMs: number;
  /** The upload's rate cap (--limit-rate), bytes per second. */
  rateCap?: number | null | undefined;
}

/** What the bytes of a progress line are: read by the pre-flight pass, or sent by the upload. */
export type ProgressVerb = 'read' | 'uploaded';

/**
 * An upload's bytes are counted as they are handed to the connection, not as the storage host takes them in
 * (nothing tells bds that): the last of them can sit in socket buffers while a slow storage host reads them,
 * then stores and answers. So once all are handed over, the upload says that it waits, not a rate or a time.
 */
export const WAITING_FOR_STORAGE = 'waiting for the storage host';

function allUploaded({ sent, total }: ProgressSample, verb: ProgressVerb): boolean {
  return verb === 'uploaded' && total > 0 && sent >= total;
}

export function progressBar(sample: ProgressSample, verb: ProgressVerb, width = 24): string {
  const { sent, total, elapsedMs, rateCap } = sample;
  const ratio = total > 0 ? Math.min(1, sent / total) : 1;
  const filled = Math.round(ratio * width);
  const left = sent > 0 && sent < total ? ((total - sent) * elapsedMs) / sent : undefined;
  const bytes = `${formatBytes(sent)}/${formatBytes(total)}`;
  if (allUploaded(sample, verb)) return `[${'█'.repeat(width)}] 100% ${bytes}, ${WAITING_FOR_STORAGE}`;
  return [
    `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}]`,
    `${Math.floor(ratio * 100)}%`,
    bytes,
    formatRate(sent, elapsedMs, rateCap),
    left === undefined ? '' : `${formatDuration(left)} left`,
  ]
    .filter(Boolean)
    .join(' ');
}

export function progressLine(sample: ProgressSample, verb: ProgressVerb): string {
  const { sent, total, elapsedMs, rateCap } = sample;
  const percent = total > 0 ? Math.floor((Math.min(sent, total) / total) * 100) : 100;
  const rate = formatRate(sent, elapsedMs, rateCap);
  const cap = rateCap ? ` (${capText(rateCap)})` : '';
  const after = allUploaded(sample, verb) ? `; ${WAITING_FOR_STORAGE}` : '';
  return `${verb} ${formatBytes(sent)} of ${formatBytes(total)} (${percent}%)${rate ? `, ${rate}${cap}` : ''}${after}`;
}

/** "capped at 10.5 MB/s": in the same units as the rate shown beside it. */
export function capText(bytesPerSecond: number): string {
  return `capped at ${formatRate(bytesPerSecond, 1000)}`;
}
