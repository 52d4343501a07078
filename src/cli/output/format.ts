// Numbers and times as people read them.

import { terminalJson } from '../../core/clean-text.js';

export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${Math.round(bytes)} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = -1;
  do {
    value /= 1000;
    unit++;
  } while (value >= 1000 && unit < units.length - 1);
  return `${value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const minutes = Math.floor(seconds / 60);
  const rest = Math.round(seconds % 60);
  if (minutes < 60) return `${minutes} min ${rest} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** A duration as --timeout takes it (commands/review-options.ts reads it): 30m, 1h30m, 90s. */
export function writtenDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  const [h, m, s] = [Math.floor(seconds / 3600), Math.floor(seconds / 60) % 60, seconds % 60];
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s || seconds === 0 ? `${s}s` : ''}`;
}

export { counted, plural } from '../../core/plural.js';

/**
 * Bytes per second over `ms`. With a cap (--limit-rate), never above it: the cap lets a tenth of a second's
 * bytes go ahead at the start, which over the first second would read as a rate beyond the cap.
 */
export function formatRate(bytes: number, ms: number, cap?: number | null): string {
  if (!(ms > 0)) return '';
  const rate = (bytes * 1000) / ms;
  return `${formatBytes(cap ? Math.min(rate, cap) : rate)}/s`;
}

/** A UTC timestamp to the second, for log lines. */
export function timestamp(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The one JSON document stdout carries when a command fails under --json. */
export function errorDocument(message: string, hint: string | undefined, exitCode: number): string {
  return `${terminalJson({ error: { message, ...(hint ? { hint } : {}), exit_code: exitCode } })}\n`;
}
