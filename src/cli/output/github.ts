// GitHub Actions: an annotation for a failure, and a summary table on the job's page.

import { appendFileSync } from 'node:fs';

export function inGithubActions(env: Readonly<Record<string, string | undefined>>): boolean {
  return env.GITHUB_ACTIONS === 'true';
}

/** `::error::` with GitHub's escaping of the message part. */
export function githubAnnotation(message: string): string {
  return `::error title=bds::${message.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')}\n`;
}

/** Appends a two-column Markdown table to $GITHUB_STEP_SUMMARY. */
export function appendStepSummary(file: string, title: string, rows: Array<[string, string]>): void {
  const markdown = ['### ' + title, '', '| | |', '|---|---|', ...rows.map(([name, value]) => `| ${name} | ${value} |`), ''];
  appendFileSync(file, `${markdown.join('\n')}\n`);
}
