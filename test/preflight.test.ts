// Bad input, bad keys and bad base URLs: exit 2 or 3 with one `bds: ...` line, and nothing created on the server.
// API refusals (404, 422) exit 4 with the API's message.

import { renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../src/sandbox/emulator.js';
import {
  REPORT,
  RECORDS_SCHEMA,
  count,
  makeFolder,
  newSource,
  run,
  sandbox,
  sandboxEnv,
  tempDir,
  type FolderOptions,
  type RunOptions,
  type RunResult,
} from './helpers.js';

const NOW = new Date('2024-06-15T12:00:00Z');

/** `bds deliver <dir> --period 2024-05 --source <new source>` against the sandbox, at NOW. */
async function deliver(box: Sandbox, dir: string, args: string[] = [], options: RunOptions = {}): Promise<RunResult> {
  const argv = [
    'deliver',
    dir,
    ...(args.includes('--period') ? [] : ['--period', '2024-05']),
    '--source',
    newSource(box),
    ...args,
  ];
  return run(argv, { env: sandboxEnv(box), now: () => NOW, ...options });
}

async function deliverFolder(
  folder: FolderOptions,
  args: string[] = [],
): Promise<{ box: Sandbox; res: RunResult; dir: string }> {
  const box = await sandbox();
  const { dir } = makeFolder(folder);
  return { box, res: await deliver(box, dir, args), dir };
}

function errorLines(res: RunResult): string[] {
  return res.stderr.split('\n').filter((line) => line.startsWith('bds:'));
}

/** Exit `code`, exactly one `bds:` line matching every pattern, and no create, upload or complete request. */
function expectRefused(box: Sandbox, res: RunResult, code: number, ...patterns: Array<string | RegExp>): void {
  expect(res.code, res.stderr).toBe(code);
  const lines = errorLines(res);
  expect(lines, res.stderr).toHaveLength(1);
  for (const pattern of patterns) {
    if (typeof pattern === 'string') expect(lines[0]).toContain(pattern);
    else expect(lines[0]).toMatch(pattern);
  }
  expect(count(box, 'create') + count(box, 'upload') + count(box, 'complete')).toBe(0);
  expect(box.store.batches()).toHaveLength(0);
}

/** Usage errors come before any request at all. */
function expectUsageError(box: Sandbox, res: RunResult, ...patterns: Array<string | RegExp>): void {
  expectRefused(box, res, 2, ...patterns);
  expect(box.requests).toHaveLength(0);
}

describe('period', () => {
  it('is required', async () => {
    const box = await sandbox();
    const { dir } = makeFolder();
    const res = await run(['deliver', dir, '--source', newSource(box)], { env: sandboxEnv(box), now: () => NOW });
    expectUsageError(box, res, '--period');
  });

  it.each([
    ['2024-5', /not of the form YYYY-MM/],
    ['May 2024', /not of the form YYYY-MM/],
    ['2024-13', /month 13 is not between 01 and 12/],
    ['2024-00', /month 00 is not between 01 and 12/],
    ['0000-05', /^bds: --period 0000-05: there is no year 0000$/m],
    ['2024-07', /2024-07 is in the future/],
    ['2025-01', /in the future/],
  ])('refuses %s', async (period, message) => {
    const box = await sandbox();
    const res = await deliver(box, makeFolder().dir, ['--period', period]);
    expectUsageError(box, res, message);
  });

  it("says a --period that is no month is none, before comparing it with the folder's name", async () => {
    const box = await sandbox();
    const dir = path.join(tempDir(), 'records-2024-05');
    renameSync(makeFolder().dir, dir);
    const res = await run(['deliver', dir, '--period', '2024-13', '--source', newSource(box)], {
      env: sandboxEnv(box),
      now: () => NOW,
    });
    expectUsageError(box, res, /^bds: --period 2024-13: month 13 is not between 01 and 12$/m);
    expect(res.stderr).not.toContain('contradicts');
  });

  it("refuses year 0000 in the folder's name too, in deliver and in check", async () => {
    const box = await sandbox();
    const dir = path.join(tempDir(), 'records-0000-05');
    renameSync(makeFolder().dir, dir);
    const res = await run(['deliver', dir, '--source', newSource(box)], { env: sandboxEnv(box), now: () => NOW });
    expectUsageError(box, res, "the period 0000-05 in the folder's name records-0000-05: there is no year 0000");
    const checked = await run(['check', dir], { now: () => NOW });
    expect(checked.code).toBe(2);
    expect(checked.stderr).toContain('there is no year 0000');
  });

  it('warns about the current month and delivers', async () => {
    const box = await sandbox();
    const res = await deliver(box, makeFolder().dir, ['--period', '2024-06']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/warning: --period 2024-06 is the current month/);
    expect(box.store.batches()[0]!.status).toBe('received');
  });
});

describe('folder', () => {
  it('must exist', async () => {
    const box = await sandbox();
    const missing = path.join(tempDir(), 'nope');
    expectUsageError(box, await deliver(box, missing), `no such folder: ${missing}`);
  });

  it('must not be empty', async () => {
    const box = await sandbox();
    const empty = tempDir();
    expectUsageError(box, await deliver(box, empty), `the folder ${empty} is empty`);
  });

  it('must hold a data file', async () => {
    const { box, res, dir } = await deliverFolder({ dataName: 'notes.txt' });
    expectUsageError(box, res, `no data file in ${dir}`);
    expect(res.stderr).toContain('--file');
  });

  it('with two data files lists them and points at --file', async () => {
    const box = await sandbox();
    const folder = makeFolder({ records: 2 });
    writeFileSync(path.join(folder.dir, 'more.jsonl'), '{"a":1}\n');
    const res = await deliver(box, folder.dir);
    expectUsageError(box, res, 'more than one data file', 'more.jsonl', 'records.jsonl.gz');
    expect(res.stderr).toMatch(/hint: .*--file/);

    const chosen = await deliver(box, folder.dir, ['--file', folder.dataFile, '--json']);
    expect(chosen.code, chosen.stderr).toBe(0);
    expect(chosen.json()).toMatchObject({ record_count: 2, sha256: folder.sha256 });
  });
});

describe('report.json', () => {
  it('must exist', async () => {
    const { box, res, dir } = await deliverFolder({ report: null });
    expectUsageError(box, res, path.join(dir, 'report.json'), 'missing');
  });

  it('must be JSON', async () => {
    const box = await sandbox();
    const { dir } = makeFolder();
    writeFileSync(path.join(dir, 'report.json'), '{"tool": "scrubkit",');
    expectUsageError(box, await deliver(box, dir), path.join(dir, 'report.json'), 'not valid JSON');
  });

  it('must be an object', async () => {
    const { box, res } = await deliverFolder({ report: ['scrubkit'] });
    expectUsageError(box, res, 'report.json', 'must be a JSON object');
  });

  it.each([
    ['tool', /"tool" \(a string\)/],
    ['files', /"files" \(an array\)/],
    ['totals', /"totals" \(an object\)/],
  ])('must have %s', async (field, message) => {
    const report: Record<string, unknown> = { ...REPORT };
    delete report[field];
    const { box, res } = await deliverFolder({ report });
    expectUsageError(box, res, 'report.json', 'lacks', message);
  });

  /** A report whose totals hold arrays nested so that the whole is `depth` levels deep. */
  function deepReport(depth: number): string {
    return `{"tool":"scrubkit","files":[],"totals":{"deep":${'['.repeat(depth - 2)}${']'.repeat(depth - 2)}}}`;
  }

  it('nested 5,000 levels deep: exit 2 naming the file and the depth bds accepts, in deliver and in check', async () => {
    const box = await sandbox();
    const { dir } = makeFolder();
    writeFileSync(path.join(dir, 'report.json'), deepReport(5_000));
    const message = `bds: ${path.join(dir, 'report.json')}: nested 5000 levels deep; bds accepts at most 100`;
    const delivered = await deliver(box, dir);
    expectUsageError(box, delivered, message);
    expect(delivered.stderr).toContain('hint: the scrub report is sent as it is: check what wrote it\n');
    const checked = await run(['check', dir, '--period', '2024-05'], { now: () => NOW });
    expect(checked.code).toBe(2);
    expect(errorLines(checked)).toEqual([message]);
  });

  it('nested 100 levels deep is delivered as it is; 101 is refused', async () => {
    const { dir } = makeFolder();
    writeFileSync(path.join(dir, 'report.json'), deepReport(101));
    expect(errorLines(await run(['check', dir, '--period', '2024-05'], { now: () => NOW }))).toEqual([
      `bds: ${path.join(dir, 'report.json')}: nested 101 levels deep; bds accepts at most 100`,
    ]);
    writeFileSync(path.join(dir, 'report.json'), deepReport(100));
    const box = await sandbox();
    const res = await deliver(box, dir);
    expect(res.code, res.stderr).toBe(0);
    expect(box.store.batches()[0]!.report).toEqual(JSON.parse(deepReport(100)));
  });

  it('can be elsewhere, with --report', async () => {
    const box = await sandbox();
    const { dir } = makeFolder({ report: null });
    const elsewhere = path.join(tempDir(), 'scrub-report.json');
    writeFileSync(elsewhere, JSON.stringify(REPORT));
    const res = await deliver(box, dir, ['--report', elsewhere]);
    expect(res.code, res.stderr).toBe(0);
    expect(box.store.batches()[0]!.report).toEqual(REPORT);

    const missing = path.join(tempDir(), 'absent.json');
    const other = await sandbox();
    expectUsageError(other, await deliver(other, makeFolder().dir, ['--report', missing]), missing, 'missing');
  });
});

describe('schema.json', () => {
  it('must exist', async () => {
    const box = await sandbox();
    const { dir } = makeFolder();
    unlinkSync(path.join(dir, 'schema.json'));
    expectUsageError(box, await deliver(box, dir), path.join(dir, 'schema.json'), 'missing');
  });

  it('must be JSON', async () => {
    const box = await sandbox();
    const { dir } = makeFolder();
    writeFileSync(path.join(dir, 'schema.json'), 'format: jsonl');
    expectUsageError(box, await deliver(box, dir), path.join(dir, 'schema.json'), 'not valid JSON');
  });

  it('nested deeper than 100 levels is refused, naming the file', async () => {
    const box = await sandbox();
    const { dir } = makeFolder();
    const schema = JSON.stringify(RECORDS_SCHEMA).replace(/}$/, `,"notes":${'['.repeat(5_000)}${']'.repeat(5_000)}}`);
    writeFileSync(path.join(dir, 'schema.json'), schema);
    expectUsageError(
      box,
      await deliver(box, dir),
      `bds: ${path.join(dir, 'schema.json')}: nested 5001 levels deep; bds accepts at most 100`,
    );
  });

  const column = { name: 'id', role: 'identifier', kind: 'string' };
  it.each([
    ['records without objects', { format: 'jsonl' }, /records need "objects"/],
    ['empty objects', { format: 'jsonl', objects: {} }, /records need "objects"/],
    [
      'an object type with no columns',
      { format: 'jsonl', objects: { orders: [] } },
      /objects\.orders must be a non-empty list/,
    ],
    [
      'a column that is not an object',
      { format: 'jsonl', objects: { orders: ['id'] } },
      /objects\.orders\[0\] must be an object/,
    ],
    [
      'a column without name',
      { format: 'jsonl', objects: { orders: [{ role: 'r', kind: 'k' }] } },
      /objects\.orders\[0\]\.name/,
    ],
    [
      'a column without role',
      { format: 'jsonl', objects: { orders: [column, { name: 'n', kind: 'k' }] } },
      /objects\.orders\[1\]\.role/,
    ],
    [
      'a column with an empty kind',
      { format: 'jsonl', objects: { orders: [{ ...column, kind: '' }] } },
      /objects\.orders\[0\]\.kind/,
    ],
    [
      'a transform that is not a string',
      { format: 'jsonl', objects: { orders: [{ ...column, transform: 1 }] } },
      /\.transform must be a string/,
    ],
    ['episodes without steps', { format: 'episodes/v1' }, /steps must be a non-empty list/],
    ['episodes with empty steps', { format: 'episodes/v1', steps: [] }, /steps must be a non-empty list/],
  ])('refuses %s', async (_name, schema, message) => {
    const { box, res } = await deliverFolder({ schema });
    expectUsageError(box, res, 'schema.json', message);
  });

  it('can be elsewhere, with --schema', async () => {
    const box = await sandbox();
    const { dir } = makeFolder();
    unlinkSync(path.join(dir, 'schema.json'));
    const elsewhere = path.join(tempDir(), 'orders-schema.json');
    writeFileSync(elsewhere, JSON.stringify(RECORDS_SCHEMA));
    const res = await deliver(box, dir, ['--schema', elsewhere]);
    expect(res.code, res.stderr).toBe(0);
    expect(box.store.batches()[0]!.schema).toEqual(RECORDS_SCHEMA);
  });
});

describe('product', () => {
  it('refuses an unknown --product', async () => {
    const { box, res } = await deliverFolder({}, ['--product', 'tables']);
    expectUsageError(box, res, 'tables', 'records, episodes, environment');
  });

  it('refuses a --product that contradicts schema.format', async () => {
    const { box, res } = await deliverFolder({}, ['--product', 'episodes']);
    expectUsageError(box, res, '--product episodes contradicts', 'schema.json', '"jsonl"');
  });

  it('refuses a format it cannot map, and takes it with --product environment', async () => {
    const { box, res, dir } = await deliverFolder({ schema: { format: 'parquet', columns: ['a'] } });
    expectUsageError(box, res, 'schema.json', 'cannot tell the product', '"parquet"');
    expect(res.stderr).toContain('--product environment');

    const named = await deliver(box, dir, ['--product', 'environment']);
    expect(named.code, named.stderr).toBe(0);
    expect(box.store.batches()[0]!.product).toBe('environment');
  });
});

describe('data file', () => {
  const object = '{"_object":"orders","order_id":"o1"}';

  it('refuses a truncated gzip', async () => {
    const whole = gzipSync(Buffer.from(`${object}\n`.repeat(100)));
    const { box, res } = await deliverFolder({ dataBytes: whole.subarray(0, whole.length - 12) });
    expectUsageError(box, res, 'records.jsonl.gz', 'truncated');
  });

  it('refuses a file that is not gzip', async () => {
    const { box, res } = await deliverFolder({ dataBytes: Buffer.from(`${object}\n`) });
    expectUsageError(box, res, 'records.jsonl.gz', 'not a gzip file');
  });

  it.each([
    ['not JSON', [object, '', 'hello', object], 3],
    ['JSON but not an object', [object, object, '', '', '[1, 2]'], 5],
    ['a string', ['"text"'], 1],
    ['a broken object', [object, '{"_object": "orders",'], 2],
  ])('names the line that is %s', async (_name, lines, line) => {
    for (const plain of [false, true]) {
      const { box, res } = await deliverFolder({ lines, plain });
      expectUsageError(box, res, plain ? 'records.jsonl' : 'records.jsonl.gz', `line ${line} `);
    }
  });

  it('refuses a file with no records', async () => {
    const { box, res } = await deliverFolder({ lines: ['', '  ', ''] });
    expectUsageError(box, res, 'records.jsonl.gz', 'no records');
  });

  it('counts records, not blank lines', async () => {
    const { box, res } = await deliverFolder({ lines: ['', object, '', object, '  '] }, ['--json']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.json().record_count).toBe(2);
    expect(box.store.batches()[0]!.record_count).toBe(2);
  });

  it('--file must exist', async () => {
    const box = await sandbox();
    const missing = path.join(tempDir(), 'absent.jsonl.gz');
    expectUsageError(box, await deliver(box, makeFolder().dir, ['--file', missing]), missing);
  });
});

describe('source id', () => {
  it('is required, and the hint says how to set one', async () => {
    const box = await sandbox();
    const res = await run(['deliver', makeFolder().dir, '--period', '2024-05'], {
      env: sandboxEnv(box),
      now: () => NOW,
    });
    expectUsageError(box, res, 'no source id');
    expect(res.stderr).toMatch(/hint: .*--source.*BDS_SOURCE_ID.*sourceId/);
  });

  it('is asked for after the folder: a folder that is not there is said first', async () => {
    const box = await sandbox();
    const cwd = tempDir();
    const one = await run(['deliver', './nope'], { cwd, env: sandboxEnv(box), now: () => NOW });
    expectUsageError(box, one, `bds: no such folder: ${path.join(cwd, 'nope')}`);
    const two = await run(['deliver', './nope-2024-04', './nope-2024-05'], {
      cwd,
      env: sandboxEnv(box),
      now: () => NOW,
    });
    expect(two.code).toBe(2);
    expect(two.stderr).toContain(`./nope-2024-05: no such folder: ${path.join(cwd, 'nope-2024-05')}`);
    for (const res of [one, two]) expect(res.stderr).not.toContain('no source id');
    expect(box.requests).toHaveLength(0);
  });

  it('that the API does not know exits 4 with its message', async () => {
    const box = await sandbox();
    const res = await run(['deliver', makeFolder().dir, '--period', '2024-05', '--source', 'src_unknown'], {
      env: sandboxEnv(box),
      now: () => NOW,
    });
    expectRefused(box, res, 4, '404', 'source src_unknown does not exist');
  });
});

describe('API refusals', () => {
  it('a 422 on create exits 4 with its message', async () => {
    const box = await sandbox();
    box.faults.add({ route: 'create', status: 422 });
    const res = await deliver(box, makeFolder().dir);
    expect(res.code, res.stderr).toBe(4);
    expect(errorLines(res)).toHaveLength(1);
    expect(errorLines(res)[0]).toContain('422');
    expect(count(box, 'upload') + count(box, 'complete')).toBe(0);
    expect(box.store.batches()).toHaveLength(0);
  });
});

describe('API key', () => {
  it.each([
    ['an unknown prefix', 'sk_live_0123456789abcdef'],
    ['a space inside', 'svc_test_abc def0123'],
    ['a short value', 'xyz'],
  ])('with %s exits 3 without echoing it', async (_name, key) => {
    const box = await sandbox();
    const res = await deliver(box, makeFolder().dir, [], { env: sandboxEnv(box, { BDS_API_KEY: key }) });
    expectRefused(box, res, 3, 'malformed', 'BDS_API_KEY');
    expect(box.requests).toHaveLength(0);
    const output = `${res.stdout}${res.stderr}`;
    expect(output).not.toContain(key);
    // Not even masked by the output's last-line redaction: the message never held it.
    expect(output).not.toContain('redacted');
  });

  it('that is only a prefix exits 3', async () => {
    const box = await sandbox();
    const res = await deliver(box, makeFolder().dir, [], { env: sandboxEnv(box, { BDS_API_KEY: 'svc_live_' }) });
    expectRefused(box, res, 3, 'malformed');
    expect(box.requests).toHaveLength(0);
  });

  it('that is missing exits 3 and says how to set one', async () => {
    const box = await sandbox();
    const res = await deliver(box, makeFolder().dir, [], { env: { BDS_BASE_URL: box.baseUrl } });
    expectRefused(box, res, 3, 'no API key');
    expect(res.stderr).toMatch(/hint: .*BDS_API_KEY.*BDS_API_KEY_FILE.*apiKey/);
    expect(box.requests).toHaveLength(0);
  });

  it('that the API does not know (401) exits 3', async () => {
    const box = await sandbox();
    const key = 'svc_live_not_a_sandbox_key_123';
    const res = await deliver(box, makeFolder().dir, [], { env: sandboxEnv(box, { BDS_API_KEY: key }) });
    expectRefused(box, res, 3, '401');
    expect(`${res.stdout}${res.stderr}`).not.toContain(key);
  });

  it('that was revoked (403) exits 3', async () => {
    const box = await sandbox();
    const res = await deliver(box, makeFolder().dir, [], { env: sandboxEnv(box, { BDS_API_KEY: box.keys.revoked }) });
    expectRefused(box, res, 3, '403', 'revoked');
    expect(`${res.stdout}${res.stderr}`).not.toContain(box.keys.revoked);
  });
});

describe('base URL', () => {
  async function whoamiAt(box: Sandbox, baseUrl: string | undefined): Promise<RunResult> {
    return run(['whoami'], { env: { BDS_API_KEY: box.keys.live, BDS_BASE_URL: baseUrl } });
  }

  it('has no default', async () => {
    const box = await sandbox();
    const res = await whoamiAt(box, undefined);
    expectUsageError(box, res, 'no base URL');
    expect(res.stderr).toMatch(/hint: .*--base-url.*BDS_BASE_URL.*baseUrl/);
  });

  it('refuses http:// for a host that is not this machine, before any request', async () => {
    const box = await sandbox();
    const res = await whoamiAt(box, 'http://bds.example.com');
    expectUsageError(box, res, 'http://', 'BDS_BASE_URL');
    expect(res.stderr).toMatch(/hint: .*https:\/\//);
    // On deliver too, before the pre-flight and before the re-run check.
    const delivered = await run(['deliver', makeFolder().dir, '--period', '2024-05', '--source', newSource(box)], {
      env: sandboxEnv(box, { BDS_BASE_URL: 'http://10.0.0.8:8787' }),
    });
    expectUsageError(box, delivered, 'http://');
  });

  it("refuses http:// to a container's host, saying how a container reaches a sandbox on its host", async () => {
    const box = await sandbox();
    for (const host of ['host.containers.internal', 'host.docker.internal']) {
      const res = await whoamiAt(box, `http://${host}:8787`);
      expectUsageError(box, res, 'uses http:// for a host that is not this machine');
      expect(res.stderr).toContain(
        "hint: a container reaches a sandbox on its host only on the host's network (podman or docker run's network host), at http://127.0.0.1:<port>",
      );
    }
  });

  it('accepts http:// for localhost, 127.0.0.0/8 and [::1]', async () => {
    const box = await sandbox();
    const port = new URL(box.baseUrl).port;
    const local = await whoamiAt(box, `http://localhost:${port}`);
    expect(local.code, local.stderr).toBe(0);
    expect(local.stdout).toContain(`http://localhost:${port}`);
    // Nothing listens on these: getting past the URL check to a network error (exit 5) is the point.
    for (const url of ['http://127.0.0.2:1', 'http://[::1]:1']) {
      const res = await whoamiAt(box, url);
      expect(res.code, res.stderr).toBe(5);
    }
  });

  it('refuses a URL with credentials, without echoing them', async () => {
    const box = await sandbox();
    const url = new URL(box.baseUrl);
    url.username = 'seller';
    url.password = 'hunter2secret';
    const res = await whoamiAt(box, url.toString());
    expectUsageError(box, res, 'credentials');
    expect(res.stderr).not.toContain('hunter2secret');
  });

  it('refuses what is not a URL', async () => {
    const box = await sandbox();
    expectUsageError(box, await whoamiAt(box, 'bds.example.com'), 'not a URL');
    expectUsageError(box, await whoamiAt(box, 'ftp://bds.example.com'), 'https://');
  });
});
