// The sign-off page of `check --html` and `deliver --html`: what the portal's reviewers will see, on one page a
// person opens from a ticket or an email, with the verdict at the top. It is built from check's result alone
// (never from the data file), so it holds names, counts and the report's own figures, and no record value.
// One self-contained file: styles and pictures inline (SVG), no script, no URL to fetch, and a
// Content-Security-Policy that forbids them should a name ever slip past the escaping; it prints on A4 and
// follows the reader's light or dark mode.

import type { CheckFailure, CheckResult } from '../../core/delivery/check.js';
import { cleanText } from '../../core/clean-text.js';
import type { FailureData } from '../../core/failure.js';
import { counted, formatBytes } from './format.js';

/** One folder as the user named it, and what checking it gave. */
export interface PageFolder {
  dir: string;
  check: CheckResult | CheckFailure;
}

export interface ReportPage {
  command: 'check' | 'deliver';
  /** The folders as the user named them. */
  dirs: string[];
  /** Each folder's check; or, when the check of them all stopped (a usage error of the command), why. */
  checked: { folders: PageFolder[] } | { failure: FailureData };
  /** When the check ran; shown in the footer. */
  at: Date;
  version: string;
}

/** Bars drawn in the redactions chart at most; the table below a chart holds them all. */
const CHART_BARS = 30;
/** Rows of the per-file table at most: a report of thousands of files keeps the page small. */
const FILE_ROWS = 200;

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

export function renderHtmlReport(page: ReportPage): string {
  const verdict = pageVerdict(page);
  const title = `${verdict.title}: ${page.dirs.map((dir) => cleanText(dir)).join(', ')} (bds ${page.command})`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="color-scheme" content="light dark">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="bds ${escapeHtml(page.version)}">
<title>${escapeHtml(cleanText(title))}</title>
<style>${STYLE}</style>
</head>
<body>
<header class="verdict ${verdict.ready ? 'ready' : 'not-ready'}" id="verdict">
<p class="mark">${verdict.ready ? '✔' : '✖'}</p>
<div><h1>${escapeHtml(verdict.title)}</h1>
${verdict.lines.map((line) => `<p>${escapeHtml(line)}</p>`).join('\n')}</div>
</header>
<main>
${
  'failure' in page.checked
    ? `<p class="checked">${page.dirs.length > 1 ? 'Folders' : 'Folder'}: ${page.dirs.map((dir) => `<code>${escapeHtml(cleanText(dir))}</code>`).join(', ')}</p>`
    : page.checked.folders.map((folder) => folderSection(folder, page.dirs.length > 1)).join('\n')
}
</main>
<footer>Written by bds ${escapeHtml(page.version)} (<code>bds ${page.command}</code>) on ${escapeHtml(
    page.at.toISOString().replace(/\.\d{3}Z$/, 'Z'),
  )}, from the folder's schema, scrub report and one pass over its data file. This page holds names, counts and
the report's own figures, never a record's value.</footer>
</body>
</html>
`;
}

interface Verdict {
  ready: boolean;
  title: string;
  lines: string[];
}

/** Ready when every folder passed; otherwise the first failure's words (its message names the line). */
function pageVerdict({ command, checked }: ReportPage): Verdict {
  if ('failure' in checked) {
    return { ready: false, title: 'Not ready to deliver', lines: errorLines(checked.failure, undefined) };
  }
  const { folders } = checked;
  const failed = folders.filter((f): f is PageFolder & { check: CheckFailure } => !f.check.ok);
  if (failed.length > 0) {
    const first = failed[0]!;
    return {
      ready: false,
      title: 'Not ready to deliver',
      lines: [
        ...(folders.length > 1 ? [`${failed.length} of ${counted(folders.length, 'folder')} failed.`] : []),
        ...errorLines(first.check.error, folders.length > 1 ? first.dir : undefined),
      ],
    };
  }
  const checks = folders.map((f) => f.check as CheckResult);
  const noPeriod = checks.some((c) => c.period === null);
  if (noPeriod && command === 'deliver') {
    return {
      ready: false,
      title: 'Not ready to deliver',
      lines: ['No period: give --period YYYY-MM, or name the folder for its month (records-2024-05).'],
    };
  }
  const warnings = checks.reduce((n, c) => n + c.warnings.length + (c.schema_changes ? 1 : 0), 0);
  const one = checks.length === 1 ? checks[0]! : undefined;
  return {
    ready: true,
    title: noPeriod ? 'Ready to deliver once given a period' : 'Ready to deliver',
    lines: [
      one
        ? `${one.period ?? 'no period'}, ${one.product}: ${counted(one.record_count, 'record')}, ${formatBytes(one.bytes)}.`
        : `All ${counted(checks.length, 'folder')} passed ${command === 'deliver' ? "deliver's pre-flight" : 'the check'}.`,
      ...(noPeriod ? ["No --period was given and none is in the folder's name: the period rules were skipped."] : []),
      ...(warnings > 0 ? [`${counted(warnings, 'warning')}: read them below before signing off.`] : []),
    ],
  };
}

function errorLines(error: FailureData, dir: string | undefined): string[] {
  return [
    `${dir === undefined ? '' : `${cleanText(dir)}: `}${cleanText(error.message)}`,
    ...(error.hint ? [`Hint: ${cleanText(error.hint)}`] : []),
  ];
}

function folderSection({ dir, check }: PageFolder, heading: boolean): string {
  const title = heading ? `<h2 class="folder">${escapeHtml(cleanText(dir))}</h2>` : '';
  if (!check.ok) {
    return `<section class="failed">${title}
<p class="error">${errorLines(check.error, undefined).map(escapeHtml).join('<br>')}</p>
</section>`;
  }
  return `<section>${title}
${facts(check)}
${rolesSection(check)}
${reportSection(check)}
${schemaSection(check)}
${changesSection(check)}
${warningsSection(check)}
</section>`;
}

function facts(check: CheckResult): string {
  const rows: Array<[string, string]> = [
    ['Folder', escapeHtml(cleanText(check.dir))],
    ['Data file', escapeHtml(cleanText(check.data_file))],
    ['Product', escapeHtml(check.product)],
    ['Period', escapeHtml(check.period ?? 'not checked (no --period, and none in the folder’s name)')],
    ['Records', `<span id="records">${number(check.record_count)}</span>`],
    [
      'Size',
      `${number(check.bytes)} bytes (${formatBytes(check.bytes)}${check.data_file.endsWith('.gz') ? '' : ', gzipped by bds for the upload'})`,
    ],
    ['SHA-256', `<code class="hash">${escapeHtml(check.sha256)}</code>`],
  ];
  return `<dl class="facts">${rows.map(([term, value]) => `<dt>${term}</dt><dd>${value}</dd>`).join('')}</dl>`;
}

/** The roles in order of count (most first), each with its colour: the bar, the legend and the table agree. */
function roleColours(check: CheckResult): Map<string, number> {
  const roles = Object.entries(check.roles).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  return new Map(roles.map(([role], i) => [role, i % PALETTE_SIZE]));
}

function rolesSection(check: CheckResult): string {
  const total = check.columns.length;
  if (total === 0) return '<h3>Column roles</h3><p>None: an environment schema lists no columns.</p>';
  const colours = roleColours(check);
  const objects = new Set(check.columns.map((c) => c.object)).size;
  let x = 0;
  const rects = [...colours].map(([role, colour]) => {
    const count = check.roles[role]!;
    const width = (count / total) * 1000;
    const rect = `<rect class="c${colour}" x="${round(x)}" y="0" width="${round(width)}" height="28"><title>${escapeHtml(cleanText(role))}: ${count}</title></rect>`;
    x += width;
    return rect;
  });
  const label = [...colours].map(([role]) => `${cleanText(role)} ${check.roles[role]}`).join(', ');
  return `<h3>Column roles</h3>
<p>${counted(total, 'column')} ${check.product === 'episodes' ? 'per step' : `in ${counted(objects, 'object type')}`}.</p>
<svg class="roles" viewBox="0 0 1000 28" preserveAspectRatio="none" role="img" aria-label="${escapeHtml(`Columns per role: ${label}`)}">${rects.join('')}</svg>
<ul class="legend">${[...colours]
    .map(
      ([role, colour]) =>
        `<li><span class="swatch c${colour}"></span>${escapeHtml(cleanText(role))} <b>${check.roles[role]}</b></li>`,
    )
    .join('')}</ul>`;
}

function reportSection(check: CheckResult): string {
  const { report } = check;
  const totals = Object.entries(report.totals);
  const reidentification = totals.filter(([key]) => REIDENTIFICATION.test(key));
  return `<h3>Scrub report</h3>
<p>${escapeHtml(cleanText(report.tool))}, ${counted(report.files, 'file')}.</p>
${reidentification.length ? reidentificationBox(reidentification) : ''}
${redactionsChart(check)}
<h4>Totals</h4>
${totals.length ? pairsTable(totals) : '<p>None.</p>'}
${perFileTable(report.per_file)}`;
}

const REIDENTIFICATION = /re-?_?identif/i;
const REDACTION = /redact/i;

/** The re-identification figures in a box of their own, green or red when the report says passed or not. */
function reidentificationBox(pairs: Array<[string, unknown]>): string {
  const passed = pairs.find(([key, value]) => /(^|\.)(passed|pass|ok)$/i.test(key) && typeof value === 'boolean');
  const state = passed === undefined ? 'unknown' : passed[1] ? 'passed' : 'failed';
  const word = { passed: 'passed', failed: 'failed', unknown: 'result' }[state];
  return `<div class="reid ${state}"><h4>Re-identification: ${word}</h4>${pairsTable(pairs)}</div>`;
}

/**
 * Redactions drawn as bars: the totals' redaction figures when there are several (per column or per object, as
 * the report nests them), else each file's.
 */
function redactionsChart(check: CheckResult): string {
  const numeric = (pairs: Array<[string, unknown]>) =>
    pairs.filter((pair): pair is [string, number] => REDACTION.test(pair[0]) && isCount(pair[1]));
  const totals = numeric(Object.entries(check.report.totals));
  if (totals.length >= 2) return barChart('Redactions', withoutCommonPrefix(totals));
  const perFile = check.report.per_file.flatMap((file, i): Array<[string, number]> => {
    const figure = numeric(Object.entries(file))[0];
    return figure ? [[fileName(file, i), figure[1]]] : [];
  });
  return perFile.length >= 2 ? barChart('Redactions per file', perFile) : '';
}

function barChart(title: string, bars: Array<[string, number]>): string {
  const shown = [...bars].sort(([, a], [, b]) => b - a).slice(0, CHART_BARS);
  const max = Math.max(1, ...shown.map(([, value]) => value));
  const row = 22;
  const height = shown.length * row;
  const label = shown.map(([name, value]) => `${cleanText(name)} ${value}`).join(', ');
  const bar = ([name, value]: [string, number], i: number) => {
    const y = i * row;
    const width = Math.max(1, (value / max) * 420);
    return (
      `<text class="label" x="255" y="${y + 15}" text-anchor="end">${escapeHtml(cleanText(name, 40))}</text>` +
      `<rect class="bar" x="262" y="${y + 3}" width="${round(width)}" height="${row - 6}"><title>${escapeHtml(cleanText(name))}: ${value}</title></rect>` +
      `<text class="value" x="${round(268 + width)}" y="${y + 15}">${number(value)}</text>`
    );
  };
  return `<h4>${title}</h4>
<svg class="chart" viewBox="0 0 760 ${height}" width="760" height="${height}" role="img" aria-label="${escapeHtml(`${title}: ${label}`)}">${shown.map(bar).join('')}</svg>
${bars.length > shown.length ? `<p class="note">The ${CHART_BARS} largest of ${bars.length}; every figure is in the tables.</p>` : ''}`;
}

function perFileTable(files: Array<Record<string, unknown>>): string {
  if (files.length === 0) return '';
  const keys = [...new Set(files.flatMap((file) => Object.keys(file)))];
  const shown = files.slice(0, FILE_ROWS);
  return `<h4>Per file</h4>
<table class="grid"><thead><tr>${keys.map((key) => `<th>${escapeHtml(cleanText(key))}</th>`).join('')}</tr></thead>
<tbody>${shown.map((file) => `<tr>${keys.map((key) => `<td>${key in file ? shownValue(file[key]) : ''}</td>`).join('')}</tr>`).join('\n')}</tbody></table>
${files.length > shown.length ? `<p class="note">The first ${FILE_ROWS} of ${counted(files.length, 'file')}.</p>` : ''}`;
}

function schemaSection(check: CheckResult): string {
  if (check.columns.length === 0) return '';
  const colours = roleColours(check);
  const episodes = check.product === 'episodes';
  const rows = check.columns.map((c, i) => {
    const first = c.object !== check.columns[i - 1]?.object;
    const objectCell = episodes ? '' : `<td>${first ? `<b>${escapeHtml(cleanText(c.object))}</b>` : ''}</td>`;
    return `<tr${first && i > 0 ? ' class="group"' : ''}>${objectCell}<td>${escapeHtml(cleanText(c.name))}</td><td><span class="role c${colours.get(c.role)}">${escapeHtml(cleanText(c.role))}</span></td><td>${escapeHtml(cleanText(c.kind))}</td><td>${c.transform === null ? '' : escapeHtml(cleanText(c.transform))}</td></tr>`;
  });
  return `<h3>Schema</h3>
<table class="grid schema"><thead><tr>${episodes ? '' : '<th>Object</th>'}<th>Column</th><th>Role</th><th>Kind</th><th>Transform</th></tr></thead>
<tbody>${rows.join('\n')}</tbody></table>`;
}

function changesSection(check: CheckResult): string {
  const changes = check.schema_changes;
  if (!changes) {
    return '<h3>Schema changes</h3><p>None: the schema is the one last delivered from this machine for this product, or bds knows no earlier delivery of it.</p>';
  }
  const column = (c: { object: string; name: string }) => escapeHtml(cleanText(`${c.object}.${c.name}`));
  const shown = (value: string | null) => (value === null ? '(none)' : `“${escapeHtml(cleanText(value))}”`);
  const items = [
    ...changes.added.map(
      (c) =>
        `<li><b>added</b> ${column(c)}: role ${escapeHtml(cleanText(c.role))}, kind ${escapeHtml(cleanText(c.kind))}</li>`,
    ),
    ...changes.removed.map((c) => `<li><b>removed</b> ${column(c)}</li>`),
    ...changes.changed.map((c) => `<li><b>changed</b> ${column(c)}: ${c.field} ${shown(c.from)} → ${shown(c.to)}</li>`),
  ];
  const since = `${escapeHtml(changes.since.period)}${changes.since.batch_id ? ` (${escapeHtml(changes.since.batch_id)})` : ''}`;
  return `<h3>Schema changes</h3>
<div class="warn"><p>Against the delivery of ${since}:</p><ul>${items.join('')}</ul></div>`;
}

function warningsSection(check: CheckResult): string {
  return `<h3>Warnings</h3>
${check.warnings.length ? `<ul class="warn">${check.warnings.map((w) => `<li>${escapeHtml(cleanText(w))}</li>`).join('')}</ul>` : '<p>None.</p>'}`;
}

function pairsTable(pairs: Array<[string, unknown]>): string {
  return `<table class="pairs">${pairs.map(([key, value]) => `<tr><th>${escapeHtml(cleanText(key))}</th><td>${shownValue(value)}</td></tr>`).join('')}</table>`;
}

/** A report's value as the check's text shows it: strings as they are, anything else as JSON. */
function shownValue(value: unknown): string {
  if (typeof value === 'number') return number(value);
  return escapeHtml(cleanText(typeof value === 'string' ? value : String(JSON.stringify(value))));
}

/** A file entry's name: its path (or name, or file) when it has one, else its place in the report. */
function fileName(file: Record<string, unknown>, index: number): string {
  const name = file.path ?? file.name ?? file.file;
  return typeof name === 'string' ? name : `file ${index + 1}`;
}

/** Keys without the dotted prefix they all share: `redactions.email`, `redactions.phone` are `email`, `phone`. */
function withoutCommonPrefix(pairs: Array<[string, number]>): Array<[string, number]> {
  const first = pairs[0]![0].split('.');
  let shared = 0;
  while (shared < first.length - 1 && pairs.every(([key]) => key.split('.')[shared] === first[shared])) shared++;
  return pairs.map(([key, value]) => [key.split('.').slice(shared).join('.'), value]);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function number(value: number): string {
  return value.toLocaleString('en-US');
}

function round(value: number): string {
  return String(Math.round(value * 10) / 10);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const PALETTE_SIZE = 8;

// Colours readable on white and on the dark background; printed as they are (print-color-adjust).
const STYLE = `
:root{--bg:#fff;--fg:#1b1f24;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--ok:#1a7f37;--ok-bg:#dafbe1;--bad:#cf222e;--bad-bg:#ffebe9;--warn:#9a6700;--warn-bg:#fff8c5;--bar:#0969da}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;--soft:#151b23;--ok:#3fb950;--ok-bg:#12261e;--bad:#f85149;--bad-bg:#25171c;--warn:#d29922;--warn-bg:#272115;--bar:#4493f8}}
@media print{:root{--bg:#fff;--fg:#000;--muted:#444;--line:#bbb;--soft:#f3f3f3;--ok:#1a7f37;--ok-bg:#dafbe1;--bad:#cf222e;--bad-bg:#ffebe9;--warn:#9a6700;--warn-bg:#fff8c5;--bar:#0969da}}
@page{size:A4;margin:14mm 12mm}
*{box-sizing:border-box;-webkit-print-color-adjust:exact;print-color-adjust:exact}
html{background:var(--bg);color:var(--fg)}
body{margin:0 auto;max-width:60rem;padding:1.5rem;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",Arial,sans-serif}
h1{font-size:1.6rem;margin:0}h2{font-size:1.3rem;margin:2rem 0 .5rem;border-bottom:2px solid var(--line)}
h3{font-size:1.1rem;margin:1.6rem 0 .4rem}h4{font-size:1rem;margin:1rem 0 .3rem}
p{margin:.3rem 0}code{font:12.5px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.verdict{display:flex;gap:1rem;align-items:center;padding:1rem 1.2rem;border-radius:8px;border:2px solid}
.verdict .mark{font-size:2.2rem;margin:0;line-height:1}
.ready{background:var(--ok-bg);border-color:var(--ok)}.ready .mark,.ready h1{color:var(--ok)}
.not-ready{background:var(--bad-bg);border-color:var(--bad)}.not-ready .mark,.not-ready h1{color:var(--bad)}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1.2rem;margin:1rem 0}
.facts dt{color:var(--muted)}.facts dd{margin:0;overflow-wrap:anywhere}
.hash{overflow-wrap:anywhere}
table{border-collapse:collapse;margin:.3rem 0}
th,td{text-align:left;padding:.25rem .6rem;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:anywhere}
thead th{background:var(--soft)}
.pairs th{font-weight:normal;color:var(--muted)}
.grid{width:100%}.schema tr.group td{border-top:2px solid var(--line)}
thead{display:table-header-group}tr{break-inside:avoid}
.roles{width:100%;height:28px;display:block;border-radius:4px}
.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.3rem 1.2rem;margin:.5rem 0}
.swatch{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin-right:.35em;vertical-align:-.05em}
.role{padding:0 .45em;border-radius:3px;color:#fff;white-space:nowrap}
.c0{fill:#0969da;background:#0969da}.c1{fill:#bf3989;background:#bf3989}.c2{fill:#1a7f37;background:#1a7f37}
.c3{fill:#bc4c00;background:#bc4c00}.c4{fill:#8250df;background:#8250df}.c5{fill:#0a7e8c;background:#0a7e8c}
.c6{fill:#6e7781;background:#6e7781}.c7{fill:#9a6700;background:#9a6700}
.chart{max-width:100%;height:auto;display:block}.chart .bar{fill:var(--bar)}
.chart text{fill:var(--fg);font-size:12px}.chart .value{fill:var(--muted)}
.reid{border:2px solid var(--line);border-radius:8px;padding:.4rem .8rem;margin:.6rem 0}
.reid.passed{border-color:var(--ok);background:var(--ok-bg)}.reid.passed h4{color:var(--ok)}
.reid.failed{border-color:var(--bad);background:var(--bad-bg)}.reid.failed h4{color:var(--bad)}
.warn{background:var(--warn-bg);border-left:4px solid var(--warn);padding:.4rem .8rem .4rem 1.8rem;margin:.4rem 0}
div.warn{padding-left:.8rem}div.warn ul{padding-left:1.2rem;margin:.2rem 0}
.error{background:var(--bad-bg);border-left:4px solid var(--bad);padding:.5rem .8rem}
.note,footer{color:var(--muted);font-size:12.5px}
footer{margin:2rem 0 0;border-top:1px solid var(--line);padding-top:.6rem}
.checked{margin-top:1rem}
`
  .trim()
  .replace(/\n/g, '');
