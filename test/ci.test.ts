// CI systems: plain timestamped lines even on a terminal; on GitHub Actions also an ::error:: annotation for a
// failure and a Markdown summary of the delivery in $GITHUB_STEP_SUMMARY.

import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeFolder, newSource, run, sandbox, sandboxEnv, tempDir } from './helpers.js';

const TIMESTAMPED = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ /;
const ANSI = /\u001b\[/;

describe('CI consoles', () => {
  it('CI=true on a terminal gets plain timestamped lines, no spinner, no colour', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', newSource(box)], {
      env: sandboxEnv(box, { CI: 'true' }),
      tty: true,
    });
    expect(res.code).toBe(0);
    expect(res.stderr).not.toMatch(ANSI);
    for (const line of res.stderr.trimEnd().split('\n')) expect(line).toMatch(TIMESTAMPED);
    expect(res.stderr).toMatch(/Z uploading \d+ bytes/);
  });

  it('CI=false on a terminal is not CI', async () => {
    const box = await sandbox();
    const res = await run(['deliver', makeFolder().dir, '--period', '2024-05', '--source', newSource(box)], {
      env: sandboxEnv(box, { CI: 'false' }),
      tty: true,
    });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('✔');
    expect(res.stderr).not.toMatch(TIMESTAMPED);
  });
});

describe('GitHub Actions', () => {
  const github = (extra: Record<string, string> = {}): Record<string, string> => ({
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    ...extra,
  });

  it('a failure adds an ::error:: annotation on stderr, after the usual error line', async () => {
    const box = await sandbox();
    const res = await run(['deliver', makeFolder().dir, '--period', '2024-05', '--source', 'src_unknown'], {
      env: sandboxEnv(box, github()),
    });
    expect(res.code).toBe(4);
    const lines = res.stderr.trimEnd().split('\n');
    const error = lines.find((l) => l.startsWith('bds: '))!;
    expect(error).toMatch(/404.*src_unknown/);
    expect(lines.filter((l) => l.startsWith('::error'))).toEqual([`::error title=bds::${error.slice('bds: '.length)}`]);
    expect(res.stdout).not.toContain('::error');
  });

  it('escapes the annotation and keeps the key out of it', async () => {
    const box = await sandbox();
    // A file name with a per cent sign and a line break, both of which GitHub needs escaped.
    const folder = makeFolder({ lines: ['{"a":1}', 'not json'], dataName: '100%\nsure.jsonl.gz' });
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', newSource(box)], {
      env: sandboxEnv(box, github()),
    });
    expect(res.code).toBe(2);
    const annotation = res.stderr.split('\n').find((l) => l.startsWith('::error title=bds::'))!;
    expect(annotation).toContain('100%25%0Asure.jsonl.gz line 2 is not a JSON object');
    expect(res.stderr).not.toContain(box.keys.test);

    const auth = await run(['whoami'], {
      env: sandboxEnv(box, github({ BDS_API_KEY: 'svc_test_not-a-real-key-0000' })),
    });
    expect(auth.code).toBe(3);
    expect(auth.stderr).toContain('::error title=bds::');
    expect(auth.stderr).not.toContain('not-a-real-key-0000');
  });

  it('no annotation outside GitHub Actions', async () => {
    const box = await sandbox();
    const res = await run(['deliver', makeFolder().dir, '--period', '2024-05', '--source', 'src_unknown'], {
      env: sandboxEnv(box, { CI: 'true' }),
    });
    expect(res.code).toBe(4);
    expect(res.stderr).not.toContain('::error');
  });

  it('deliver appends a Markdown summary to $GITHUB_STEP_SUMMARY, also for a re-run', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder({ records: 4 });
    const summary = path.join(tempDir(), 'step_summary.md');
    writeFileSync(summary, '## an earlier step\n\n');
    const env = sandboxEnv(box, github({ GITHUB_STEP_SUMMARY: summary }));
    const home = tempDir('bds-home-');

    const first = await run(['deliver', folder.dir, '--period', '2024-05', '--source', source], { env, home });
    expect(first.code).toBe(0);
    const id = box.store.batches()[0]!.id;
    const text = readFileSync(summary, 'utf8');
    expect(text.startsWith('## an earlier step\n\n')).toBe(true);
    const table = text.slice('## an earlier step\n\n'.length);
    expect(table).toMatch(/^### bds deliver\n\n\| \| \|\n\|---\|---\|\n/);
    for (const row of [
      `| Batch | \`${id}\` |`,
      '| Status | received |',
      `| Source | \`${source}\` |`,
      '| Period | 2024-05 |',
      '| Product | records |',
      '| Records | 4 |',
      `| Size | ${folder.uploaded.length} B (${folder.uploaded.length} bytes) |`,
      `| SHA-256 | \`${folder.sha256}\` |`,
    ]) {
      expect(table).toContain(`${row}\n`);
    }
    expect(table).not.toContain(box.keys.test);

    const again = await run(['deliver', folder.dir, '--period', '2024-05', '--source', source], { env, home });
    expect(again.code).toBe(0);
    const both = readFileSync(summary, 'utf8');
    expect(both.match(/### bds deliver/g)).toHaveLength(2);
    expect(both).toContain('| Status | received (already delivered) |');
  });

  it("with --wait the summary shows the review's verdict, one folder or several, beside the exit 7", async () => {
    const box = await sandbox({ review: 'reject', reviewAfter: 0 });
    const source = newSource(box);
    const summary = path.join(tempDir(), 'step_summary.md');
    const env = sandboxEnv(box, github({ GITHUB_STEP_SUMMARY: summary }));

    const one = await run(['deliver', makeFolder().dir, '--period', '2024-05', '--source', source, '--wait'], { env });
    expect(one.code).toBe(7);
    expect(readFileSync(summary, 'utf8')).toContain('| Status | received |\n| Review | rejected |\n');

    writeFileSync(summary, '');
    const parent = tempDir();
    const folders = ['2024-06', '2024-07'].map((period, i) => {
      const dir = path.join(parent, `records-${period}`);
      renameSync(makeFolder({ records: 3 + i }).dir, dir);
      return dir;
    });
    const many = await run(['deliver', ...folders, '--source', source, '--wait'], { env });
    expect(many.code).toBe(7);
    const table = readFileSync(summary, 'utf8');
    expect(table).toContain('| Period | Product | Outcome | Review | Batch | Records | Error |\n');
    expect(table).toMatch(/^\| 2024-06 \| records \| delivered \| rejected \| `bat_\w+` \| 3 \| {2}\|$/m);
    expect(table).toMatch(/^\| 2024-07 \| records \| delivered \| rejected \| `bat_\w+` \| 4 \| {2}\|$/m);
  });

  it('no summary outside GitHub Actions, for --dry-run, or for a failed delivery', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder();
    const summary = path.join(tempDir(), 'step_summary.md');
    writeFileSync(summary, '');
    const notGithub = await run(['deliver', folder.dir, '--period', '2024-05', '--source', source, '--force'], {
      env: sandboxEnv(box, { CI: 'true', GITHUB_STEP_SUMMARY: summary }),
    });
    expect(notGithub.code).toBe(0);
    const dryRun = await run(['deliver', folder.dir, '--period', '2024-05', '--source', source, '--dry-run'], {
      env: sandboxEnv(box, github({ GITHUB_STEP_SUMMARY: summary })),
    });
    expect(dryRun.code).toBe(0);
    const failed = await run(['deliver', folder.dir, '--period', '2024-05', '--source', 'src_unknown'], {
      env: sandboxEnv(box, github({ GITHUB_STEP_SUMMARY: summary })),
    });
    expect(failed.code).toBe(4);
    expect(readFileSync(summary, 'utf8')).toBe('');
  });

  it('a summary file that cannot be written is a warning, not a failed delivery', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', newSource(box)], {
      env: sandboxEnv(box, github({ GITHUB_STEP_SUMMARY: path.join(tempDir(), 'missing', 'summary.md') })),
    });
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(/warning: could not write the GitHub step summary/);
    expect(res.stdout).toContain('Delivered');
  });
});

describe('GitHub Actions usage errors', () => {
  it('an unknown option is annotated too', async () => {
    const res = await run(['deliver', '--frobnicate'], { env: { GITHUB_ACTIONS: 'true' } });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^::error title=bds::unknown option '--frobnicate'/m);
    const outside = await run(['deliver', '--frobnicate']);
    expect(outside.stderr).not.toContain('::error');
  });
});
