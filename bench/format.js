// How the bench writes its figures: sizes, times, rates, ratios, verdicts against a target, and the table.

export function parseSize(text) {
  const match = /^(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|KB|MB|GB|K|M|G)?$/i.exec(String(text).trim());
  if (!match) throw new Error(`not a size: ${text} (try 256MiB or 4GiB)`);
  const unit = (match[2] ?? 'B').toLowerCase();
  const factor = {
    b: 1,
    k: 1024,
    kib: 1024,
    kb: 1e3,
    m: 2 ** 20,
    mib: 2 ** 20,
    mb: 1e6,
    g: 2 ** 30,
    gib: 2 ** 30,
    gb: 1e9,
  }[unit];
  return Math.round(Number(match[1]) * factor);
}

export function sizeLabel(bytes) {
  if (bytes % 2 ** 30 === 0) return `${bytes / 2 ** 30}GiB`;
  if (bytes % 2 ** 20 === 0) return `${bytes / 2 ** 20}MiB`;
  return `${bytes}B`;
}

export const median = (values) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
/** The largest of `values`, NaN for none. */
export const most = (values) => (values.length ? Math.max(...values) : NaN);
export const seconds = (s) => (Number.isFinite(s) ? `${s.toFixed(2)} s` : 'n/a');
export const ms = (s) => (Number.isFinite(s) ? `${(s * 1000).toFixed(0)} ms` : 'n/a');
export const mbps = (bytes, s) => (Number.isFinite(s) && s > 0 ? `${(bytes / 1e6 / s).toFixed(0)} MB/s` : 'n/a');
export const mb = (bytes) => (Number.isFinite(bytes) ? `${(bytes / 1e6).toFixed(1)} MB` : 'n/a');
export const ratio = (r) => (Number.isFinite(r) ? r.toFixed(2) : 'n/a');
export const cores = (n) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');

/** "≤ 1.15: met", "≤ 1.15: MISSED by 12%" (by how much the value is beyond the limit), "≤ 150 MB: met". */
export function verdict(value, limit, { atLeast = false, unit = '' } = {}) {
  const target = `${atLeast ? '≥' : '≤'} ${limit}${unit}`;
  if (!Number.isFinite(value)) return target;
  const ok = atLeast ? value >= limit : value <= limit;
  return `${target}: ${ok ? 'met' : `MISSED by ${Math.abs((value / limit - 1) * 100).toFixed(0)}%`}`;
}

/** "1.08: met"; "1.20: no worse" (than before issue 22, the first target missed); "1.30: WORSE". */
export function ratioVerdict(value, { limit, was }, load) {
  if (!Number.isFinite(value)) return 'n/a';
  const shown = ratio(value);
  if (Number(shown) <= limit) return `${shown}: met`;
  return Number(shown) <= was[load] ? `${shown}: no worse` : `${shown}: WORSE`;
}

/** A Markdown table of `rows`, the first its header, every column as wide as its widest cell. */
export function table(rows) {
  rows = rows.map((row) => row.map((cell) => String(cell ?? '').replace(/\|/g, '\\|')));
  const widths = rows[0].map((_, col) => Math.max(...rows.map((row) => String(row[col] ?? '').length)));
  const line = (row) => `| ${row.map((cell, col) => cell.padEnd(widths[col])).join(' | ')} |`;
  return [line(rows[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

/** `get` of each of `list`'s runs; none when the contender did not run. */
export const pick = (list, get) => (list ?? []).map(get);

/** "≤ 1.15; before: 1.26 quiet, 1.25 busy": a target and the ratios before issue 22, which asks for none worse. */
export const targetAndBefore = (target) =>
  `≤ ${target.limit}; before: ${target.was.quiet} quiet, ${target.was.busy} busy`;

/** "core 1", "cores 2,3": a taskset list of cores, in words. */
export function coreList(list) {
  return `core${list.includes(',') ? 's' : ''} ${list}`;
}
