// Progress (of an upload, or of the pass over a data file) as text: a bar for a terminal, a throttled line for logs.

import { formatBytes, formatDuration, formatRate } from './format.js';

export interface ProgressSample {
  sent: number;
  total: number;
  elapsedMs: number;
}

export function progressBar({ sent, total, elapsedMs }: ProgressSample, width = 24): string {
  const ratio = total > 0 ? Math.min(1, sent / total) : 1;
  const filled = Math.round(ratio * width);
  const left = sent > 0 && sent < total ? ((total - sent) * elapsedMs) / sent : undefined;
  return [
    `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}]`,
    `${Math.floor(ratio * 100)}%`,
    `${formatBytes(sent)}/${formatBytes(total)}`,
    formatRate(sent, elapsedMs),
    left === undefined ? '' : `${formatDuration(left)} left`,
  ]
    .filter(Boolean)
    .join(' ');
}

/** What the bytes of a progress line are: read by the pre-flight pass, or sent by the upload. */
export type ProgressVerb = 'read' | 'uploaded';

export function progressLine({ sent, total, elapsedMs }: ProgressSample, verb: ProgressVerb): string {
  const percent = total > 0 ? Math.floor((Math.min(sent, total) / total) * 100) : 100;
  const rate = formatRate(sent, elapsedMs);
  return `${verb} ${formatBytes(sent)} of ${formatBytes(total)} (${percent}%)${rate ? `, ${rate}` : ''}`;
}
