// check --html and deliver --html: the sign-off page. What it holds (verdict, counts, roles, the report's figures,
// schema changes, warnings), what it never holds (a record's value, a script, a URL to fetch), names escaped, the
// page written for a failed check too (exit code kept), before deliver sends anything, atomically over an old one.
// How a browser renders it is html-browser.test.ts's.

import { chmodSync, existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InterruptedError } from '../src/core/errors.js';
import { makeFolder, newSource, run, sandbox, sandboxEnv, tempDir, type FolderOptions } from './helpers.js';

const NOW = new Date('2024-06-15T12:00:00Z');
const at = { now: () => NOW };

/** A record value that must never reach the page. */
const SECRET = 'alice@example.org';

function namedFolder(name: string, options: FolderOptions = {}): string {
  const dir = path.join(tempDir(), name);
  renameSync(makeFolder(options).dir, dir);
  return dir;
}

const REPORT = {
  tool: 'scrubkit 3.4.1',
  files: [
    { path: 'records.jsonl.gz', rows_in: 4, rows_out: 3, redactions: 7 },
    { path: 'extra.jsonl.gz', rows_in: 0, rows_out: 0, redactions: 0 },
  ],
  totals: {
    rows_out: 3,
    redactions: { email: 5, phone: 2 },
    reidentification: { method: 'k-anonymity', k: 5, passed: true },
  },
};

function lines(records: number): string[] {
  return Array.from({ length: records }, (_, i) =>
    JSON.stringify({ _object: 'orders', order_id: `o${i}`, amount: i, email: SECRET }),
  );
}

/** What a page must never hold: a script, a URL to fetch, a record's value. */
function expectSelfContained(html: string): void {
  expect(html).not.toMatch(/<script/i);
  expect(html).not.toMatch(/\bhttps?:\/\//i);
  expect(html).not.toMatch(/<[^>]*\b(src|href)=/i);
  expect(html).not.toMatch(/@import|url\(/i);
  expect(html).not.toContain(SECRET);
  expect(html).toContain(
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">`,
  );
}

describe('check --html', () => {
  it('writes one page: the verdict, the facts, the roles drawn, the report figures and chart, the schema', async () => {
    const dir = namedFolder('records-2024-05', { lines: lines(3), report: REPORT });
    const page = path.join(tempDir(), 'month.html');
    const res = await run(['check', dir, '--html', page], at);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(`wrote the report page ${page}`);
    const html = readFileSync(page, 'utf8');
    expectSelfContained(html);
    expect(html).toContain('<h1>Ready to deliver</h1>');
    expect(html).toContain('<span id="records">3</span>');
    expect(html).toMatch(/<code class="hash">[0-9a-f]{64}<\/code>/);
    // The roles at a glance (an SVG bar and its legend) and in the schema's table.
    expect(html).toMatch(/<svg class="roles"[^>]*aria-label="Columns per role: identifier 1, measure 1"/);
    expect(html).toMatch(
      /<td>order_id<\/td><td><span class="role c\d">identifier<\/span><\/td><td>string<\/td><td>keyed hash<\/td>/,
    );
    // The report: re-identification passed, redactions per column drawn, and each file's figures.
    expect(html).toContain('<h4>Re-identification: passed</h4>');
    expect(html).toMatch(/<svg class="chart"[^>]*aria-label="Redactions: email 5, phone 2"/);
    expect(html).toContain('<th>rows_in</th>');
    expect(html).toContain('<td>extra.jsonl.gz</td>');
    expect(html).toContain('<p>None.</p>'); // no warning
    // The page is the same check as the text: the same exit code and stdout as without --html.
    const plain = await run(['check', dir], at);
    expect(res.stdout).toBe(plain.stdout);
  });

  it('a failed check writes the page too: not ready, the first error with its line, exit 2 kept', async () => {
    const dir = namedFolder('2024-05', { lines: ['{"_object": "orders"}', 'not json'] });
    const page = path.join(tempDir(), 'month.html');
    const res = await run(['check', dir, '--html', page, '--json'], at);
    expect(res.code).toBe(2);
    expect(res.json().error.message).toMatch(/line 2/);
    const html = readFileSync(page, 'utf8');
    expectSelfContained(html);
    expect(html).toContain('<h1>Not ready to deliver</h1>');
    expect(html).toMatch(/<p>[^<]*records\.jsonl\.gz line 2 is not a JSON object<\/p>/);
  });

  it('escapes every name from the folder, and says which warnings and schema changes there are', async () => {
    const schema = {
      format: 'jsonl',
      objects: {
        '<b>orders</b>': [{ name: '<img src=x onerror=alert(1)>', role: 'quasi"identifier', kind: 'str&ng' }],
      },
    };
    const report = { tool: '<script>alert(1)</script>', files: [], totals: { '<i>k</i>': '"v"' } };
    const dir = namedFolder('2024-05', { lines: ['{"_object": "<b>orders</b>"}'], schema, report });
    const page = path.join(tempDir(), 'month.html');
    expect((await run(['check', dir, '--html', page], at)).code).toBe(0);
    const html = readFileSync(page, 'utf8');
    expectSelfContained(html);
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<b>orders</b>');
    expect(html).not.toContain('<i>k</i>');
    expect(html).toContain('&#60;img src=x onerror=alert(1)&#62;');
    expect(html).toContain('quasi&#34;identifier');
    expect(html).toContain('str&#38;ng');
  });

  it('several folders: one page, a section each, not ready when one fails', async () => {
    const good = namedFolder('2024-04', { lines: lines(2) });
    const bad = namedFolder('2024-05', { lines: ['[1]'] });
    const page = path.join(tempDir(), 'months.html');
    const res = await run(['check', good, bad, '--html', page], at);
    expect(res.code).toBe(2);
    const html = readFileSync(page, 'utf8');
    expect(html).toContain('<h1>Not ready to deliver</h1>');
    expect(html).toContain('<p>1 of 2 folders failed.</p>');
    expect(html).toContain(`<h2 class="folder">${good}</h2>`);
    expect(html).toContain(`<h2 class="folder">${bad}</h2>`);
    expect(html).toContain('<span id="records">2</span>');
  });

  it('a schema of 500 columns stays under 200 KB', async () => {
    const objects: Record<string, unknown[]> = {};
    for (let o = 0; o < 10; o++) {
      objects[`object_type_${o}`] = Array.from({ length: 50 }, (_, c) => ({
        name: `a_rather_long_column_name_${o}_${c}`,
        role: ['identifier', 'quasi_identifier', 'measure', 'timestamp', 'attribute'][c % 5],
        kind: 'string',
        transform: 'keyed hash (HMAC-SHA256) with the seller key',
      }));
    }
    const totals = { redactions: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`column_${i}`, i])) };
    const dir = namedFolder('2024-05', {
      lines: ['{"_object": "object_type_0"}'],
      schema: { format: 'jsonl', objects },
      report: { tool: 't', files: [], totals },
    });
    const page = path.join(tempDir(), 'month.html');
    expect((await run(['check', dir, '--html', page], at)).code).toBe(0);
    const size = statSync(page).size;
    expect(size).toBeLessThan(200_000);
    expect(readFileSync(page, 'utf8')).toContain('The 30 largest of 500');
  });

  it('writes over an older page atomically, keeping its mode; a folder that is not there is exit 2', async () => {
    const dir = namedFolder('2024-05');
    const out = tempDir();
    const page = path.join(out, 'month.html');
    writeFileSync(page, 'old');
    chmodSync(page, 0o600);
    expect((await run(['check', dir, '--html', page], at)).code).toBe(0);
    expect(readFileSync(page, 'utf8')).toMatch(/^<!DOCTYPE html>/);
    expect(readdirSync(out)).toEqual(['month.html']);
    if (process.platform !== 'win32') expect(statSync(page).mode & 0o777).toBe(0o600);

    const res = await run(['check', dir, '--html', path.join(out, 'missing', 'month.html')], at);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/bds: cannot write the report page .*month\.html: ENOENT/);
  });

  it('a relative path is the working folder’s', async () => {
    const dir = namedFolder('2024-05');
    const cwd = tempDir();
    expect((await run(['check', dir, '--html', 'page.html'], { ...at, cwd })).code).toBe(0);
    expect(existsSync(path.join(cwd, 'page.html'))).toBe(true);
  });
});

describe('deliver --html', () => {
  it('writes the pre-flight page before anything is sent: an unwritable page sends nothing', async () => {
    const box = await sandbox({ now: () => NOW.getTime() });
    const dir = namedFolder('2024-05', { lines: lines(3) });
    const env = sandboxEnv(box, { BDS_SOURCE_ID: newSource(box) });
    const res = await run(['deliver', dir, '--html', path.join(tempDir(), 'no', 'page.html')], { ...at, env });
    expect(res.code).toBe(2);
    expect(box.requests).toEqual([]);

    const page = path.join(tempDir(), 'month.html');
    const delivered = await run(['deliver', dir, '--html', page, '--json'], { ...at, env });
    expect(delivered.code).toBe(0);
    expect(delivered.json().batch.status).toBe('received');
    const html = readFileSync(page, 'utf8');
    expectSelfContained(html);
    expect(html).toContain('<h1>Ready to deliver</h1>');
    expect(html).toContain('<code>bds deliver</code>');
  });

  it('--dry-run writes it too; a failed pre-flight writes not ready and exits as deliver does', async () => {
    const box = await sandbox({ now: () => NOW.getTime() });
    const env = sandboxEnv(box, { BDS_SOURCE_ID: newSource(box) });
    const page = path.join(tempDir(), 'month.html');
    const dir = namedFolder('2024-05', { lines: lines(2) });
    expect((await run(['deliver', dir, '--dry-run', '--html', page], { ...at, env })).code).toBe(0);
    expect(readFileSync(page, 'utf8')).toContain('<h1>Ready to deliver</h1>');

    const bad = namedFolder('2024-05', { lines: ['[1]'] });
    const before = box.requests.length;
    const res = await run(['deliver', bad, '--html', page], { ...at, env });
    expect(res.code).toBe(2);
    expect(readFileSync(page, 'utf8')).toContain('<h1>Not ready to deliver</h1>');
    expect(box.requests.length).toBe(before);

    // deliver needs a period; check does not.
    const noPeriod = namedFolder('orders', { lines: lines(1) });
    expect((await run(['deliver', noPeriod, '--html', page], { ...at, env })).code).toBe(2);
    expect(readFileSync(page, 'utf8')).toMatch(/<h1>Not ready to deliver<\/h1>\n<p>No period/);
  });

  it('an interruption during its check writes no page, and delivers nothing', async () => {
    const box = await sandbox({ now: () => NOW.getTime() });
    const env = sandboxEnv(box, { BDS_SOURCE_ID: newSource(box) });
    const page = path.join(tempDir(), 'month.html');
    const controller = new AbortController();
    controller.abort(new InterruptedError('SIGINT'));
    const res = await run(['deliver', namedFolder('2024-05', { lines: lines(2) }), '--html', page], {
      ...at,
      env,
      signal: controller.signal,
    });
    expect(res.code).toBe(130);
    expect(existsSync(page)).toBe(false);
    expect(box.requests).toEqual([]);
  });
});
