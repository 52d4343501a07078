// GitHub Actions: an annotation for a failure, and a summary table on the job's page.

import { appendFileSync } from 'node:fs';
import { cleanLines } from '../../core/clean-text.js';

export function inGithubActions(env: Readonly<Record<string, string | undefined>>): boolean {
  return env.GITHUB_ACTIONS === 'true';
}

/**
 * `::error::` with GitHub's escaping of the message part (% and LF, so that a line break in it cannot start
 * another workflow command), cleaned first of escape sequences and control characters, CR among them.
 */
export function githubAnnotation(message: string): string {
  const data = cleanLines(message).replace(/%/g, '%25').replace(/\n/g, '%0A');
  return `::error title=bds::${data}\n`;
}

/** Appends a Markdown table to $GITHUB_STEP_SUMMARY; an empty header makes a name-value table without one. */
export function appendStepSummary(file: string, title: string, rows: string[][], header: string[] = ['', '']): void {
  const row = (cells: string[]) => `| ${cells.map((cell) => cell.replace(/\|/g, '\\|')).join(' | ')} |`;
  const markdown = [
    '### ' + title,
    '',
    row(header).replace(/ {2}/g, ' '),
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map(row),
    '',
  ];
  appendFileSync(file, `${markdown.join('\n')}\n`);
}
