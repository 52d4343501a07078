// bds check: deliver's pre-flight alone, offline, with a preview of what reviewers will see; the period taken
// from the folder's name (check and deliver); the schema compared with the nearest earlier delivery's.

import {
  chmodSync,
  chownSync,
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../src/sandbox/emulator.js';
import {
  RECORDS_SCHEMA,
  REPORT,
  ROOT,
  count,
  makeFolder,
  newSource,
  run,
  sandbox,
  sandboxEnv,
  spawnCli,
  tempDir,
  type FolderOptions,
  type RunOptions,
  type RunResult,
  type SpawnResult,
} from './helpers.js';

const NOW = new Date('2024-06-15T12:00:00Z');
const at = { now: () => NOW };

/** A delivery folder whose own name is `name` (the period rules read it). */
function namedFolder(name: string, options: FolderOptions = {}): string {
  const dir = path.join(tempDir(), name);
  renameSync(makeFolder(options).dir, dir);
  return dir;
}

function errorLines(res: RunResult): string[] {
  return res.stderr.split('\n').filter((line) => line.startsWith('bds:') || line.startsWith('hint:'));
}

/** `bds check ...` at NOW, with no key, no base URL and no source. */
function check(args: string[], options: RunOptions = {}): Promise<RunResult> {
  return run(['check', ...args], { ...at, ...options });
}

/** `bds deliver ...` to the sandbox, at NOW. */
function deliver(box: Sandbox, args: string[], options: RunOptions & { source?: string } = {}): Promise<RunResult> {
  return run(['deliver', ...args, '--source', options.source ?? newSource(box)], {
    ...at,
    ...options,
    env: { ...sandboxEnv(box), ...options.env },
  });
}

/** A TCP server that counts connections and closes each at once: a proxy nothing should reach. */
async function connectionCounter(): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  server.unref();
  return { url: `http://127.0.0.1:${port}`, connections: () => connections };
}

/** A port on 127.0.0.1 that nobody listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('bds check offline', () => {
  it('runs with no key, no base URL and proxies at a closed port', async () => {
    const proxy = `http://127.0.0.1:${await closedPort()}`;
    const dir = namedFolder('2024-05');
    const res = await spawnCli(['check', dir], {
      env: { HTTPS_PROXY: proxy, HTTP_PROXY: proxy, https_proxy: proxy, http_proxy: proxy },
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`✔ ${dir} is ready to deliver`);
    expect(res.stderr).not.toMatch(/bds:|warning:/);
  });

  it('sends nothing, even with a key, a base URL and a proxy at hand', async () => {
    const box = await sandbox();
    const proxy = await connectionCounter();
    const proxies = { HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url };
    const dir = makeFolder().dir;
    for (const baseUrl of [box.baseUrl, 'https://bds.example.com']) {
      const res = await check([dir, '--period', '2024-05'], {
        env: { ...sandboxEnv(box), BDS_BASE_URL: baseUrl, ...proxies },
      });
      expect(res.code, res.stderr).toBe(0);
    }
    expect(box.requests).toHaveLength(0);
    expect(proxy.connections()).toBe(0);
  });
});

describe('bds check gives the verdict of deliver', () => {
  const object = '{"_object":"orders","order_id":"o1"}';
  const whole = gzipSync(Buffer.from(`${object}\n`.repeat(100)));
  const cases: Array<[string, () => string, string[]]> = [
    ['a missing folder', () => path.join(tempDir(), 'nope'), []],
    ['an empty folder', () => tempDir(), []],
    ['no data file', () => makeFolder({ dataName: 'notes.txt' }).dir, []],
    [
      'two data files',
      () => {
        const { dir } = makeFolder();
        writeFileSync(path.join(dir, 'more.jsonl'), '{"a":1}\n');
        return dir;
      },
      [],
    ],
    ['no report.json', () => makeFolder({ report: null }).dir, []],
    [
      'a report.json that is not JSON',
      () => {
        const { dir } = makeFolder();
        writeFileSync(path.join(dir, 'report.json'), '{"tool": "scrubkit",');
        return dir;
      },
      [],
    ],
    ['a report without totals', () => makeFolder({ report: { tool: 'scrubkit', files: [] } }).dir, []],
    [
      'no schema.json',
      () => {
        const { dir } = makeFolder();
        unlinkSync(path.join(dir, 'schema.json'));
        return dir;
      },
      [],
    ],
    ['records without objects', () => makeFolder({ schema: { format: 'jsonl' } }).dir, []],
    [
      'a column without role',
      () => makeFolder({ schema: { format: 'jsonl', objects: { orders: [{ name: 'id', kind: 'string' }] } } }).dir,
      [],
    ],
    ['a format it cannot map', () => makeFolder({ schema: { format: 'parquet' } }).dir, []],
    ['a --product that contradicts the schema', () => makeFolder().dir, ['--product', 'episodes']],
    ['a truncated gzip', () => makeFolder({ dataBytes: whole.subarray(0, whole.length - 12) }).dir, []],
    ['a data file that is not gzip', () => makeFolder({ dataBytes: Buffer.from(`${object}\n`) }).dir, []],
    ['a line that is not JSON', () => makeFolder({ lines: [object, '', 'hello', object] }).dir, []],
    ['a plain .jsonl line that is not an object', () => makeFolder({ lines: [object, '[1, 2]'], plain: true }).dir, []],
    ['a file with no records', () => makeFolder({ lines: ['', '  '] }).dir, []],
    ['a --file that does not exist', () => makeFolder().dir, ['--file', path.join(tempDir(), 'absent.jsonl.gz')]],
    ['a --period in the future', () => makeFolder().dir, ['--period', '2024-07']],
    ['a --period of another form', () => makeFolder().dir, ['--period', '2024-5']],
    ["a --period that contradicts the folder's name", () => namedFolder('records-2024-05'), ['--period', '2024-04']],
    ['a period in the name that is no month', () => namedFolder('records-2024-13'), []],
  ];

  it.each(cases)('%s: exit 2 and the same error', async (_name, folder, args) => {
    const dir = folder();
    const withPeriod = args.includes('--period') || /\d{4}-\d{2}$/.test(dir) ? args : ['--period', '2024-05', ...args];
    const box = await sandbox();
    const delivered = await deliver(box, [dir, ...withPeriod]);
    const checked = await check([dir, ...withPeriod]);
    expect(delivered.code, delivered.stderr).toBe(2);
    expect(checked.code, checked.stderr).toBe(2);
    expect(errorLines(checked)).toEqual(errorLines(delivered));
    expect(errorLines(checked)[0]).toMatch(/^bds: /);
    expect(box.requests).toHaveLength(0);
  });

  it('names the file and the line', async () => {
    const lines = ['{"a":1}', '{"a":2}', '', '{"a":'];
    for (const plain of [false, true]) {
      const { dir, dataFile } = makeFolder({ lines, plain });
      const res = await check([dir, '--period', '2024-05']);
      expect(res.code).toBe(2);
      expect(errorLines(res)[0]).toBe(`bds: ${dataFile} line 4 is not valid JSON`);
      // Inside the working folder: named from it.
      const near = await check([path.basename(dir), '--period', '2024-05'], { cwd: path.dirname(dir) });
      expect(errorLines(near)[0]).toBe(
        `bds: ${path.join(path.basename(dir), path.basename(dataFile))} line 4 is not valid JSON`,
      );
    }
  });

  it('names the line and the byte of a line that is not UTF-8, on this thread and on the pass thread', async () => {
    const latin1 = Buffer.from('{"a":"caf\xe9"}\n', 'latin1');
    const good = Buffer.from('{"a":"café 日本 😀"}\n');
    // 4 MiB and more is passed over on a thread of its own (data-pass.ts).
    const many = Buffer.from(`${JSON.stringify({ a: 'x'.repeat(90) })}\n`.repeat(50_000));
    for (const before of [good, Buffer.concat([good, many])]) {
      for (const plain of [false, true]) {
        const text = Buffer.concat([before, latin1, good]);
        const { dir, dataFile } = makeFolder({ plain, dataBytes: plain ? text : gzipSync(text) });
        const res = await check([dir, '--period', '2024-05']);
        const line = before.toString().split('\n').length;
        expect(res.code, res.stdout + res.stderr).toBe(2);
        expect(errorLines(res)).toEqual([
          `bds: ${dataFile} line ${line} is not valid UTF-8 at byte 10 of the line (0xE9)`,
          'hint: JSON Lines must be UTF-8 (RFC 8259): write the file as UTF-8, not as Latin-1 or Windows-1252',
        ]);
      }
    }
  });

  it('passes what deliver delivers, with the same numbers', async () => {
    const box = await sandbox();
    const folder = makeFolder({ records: 5 });
    const checked = await check([folder.dir, '--period', '2024-05', '--json']);
    const delivered = await deliver(box, [folder.dir, '--period', '2024-05', '--json']);
    expect(checked.code, checked.stderr).toBe(0);
    expect(delivered.code, delivered.stderr).toBe(0);
    const { product, period, record_count, bytes, sha256 } = delivered.json();
    expect(checked.json()).toMatchObject({ ok: true, product, period, record_count, bytes, sha256 });
  });
});

describe('bds check preview', () => {
  const schema = {
    format: 'jsonl',
    objects: {
      orders: [
        { name: 'order_id', role: 'identifier', kind: 'string', transform: 'keyed hash' },
        { name: 'amount', role: 'measure', kind: 'number' },
      ],
      customers: [
        { name: 'customer', role: 'identifier', kind: 'string', transform: 'tokenized' },
        { name: 'region', role: 'quasi_identifier', kind: 'string', transform: 'generalized to country' },
      ],
    },
  };
  const report = {
    tool: 'scrubkit 3.4.1',
    files: [{ path: 'records.jsonl.gz' }, { path: 'b.jsonl.gz' }],
    totals: { rows_out: 3, reidentification: { method: 'k-anonymity', k: 5, checks: { passed: true } }, notes: [] },
  };

  it('shows product, period, records, bytes, checksum, the report and the columns by object type', async () => {
    const folder = makeFolder({ schema, report });
    const res = await check([folder.dir, '--period', '2024-05']);
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.split('\n');
    expect(lines[0]).toBe(`✔ ${folder.dir} is ready to deliver`);
    expect(lines.slice(1, 8)).toEqual([
      'Product:   records',
      'Period:    2024-05',
      'Data file: records.jsonl.gz',
      'Records:   3',
      `Bytes:     ${folder.uploaded.length} (${folder.uploaded.length} B)`,
      `SHA-256:   ${folder.sha256}`,
      'Report:    scrubkit 3.4.1, 2 files',
    ]);
    expect(lines.slice(8)).toEqual([
      'Totals:    rows_out                        3',
      '           reidentification.method         k-anonymity',
      '           reidentification.k              5',
      '           reidentification.checks.passed  true',
      '           notes                           []',
      'Columns:   4 in 2 object types',
      'Roles:     identifier 2, measure 1, quasi_identifier 1',
      '  OBJECT     NAME      ROLE              KIND    TRANSFORM',
      '  orders     order_id  identifier        string  keyed hash',
      '             amount    measure           number',
      '  customers  customer  identifier        string  tokenized',
      '             region    quasi_identifier  string  generalized to country',
      '',
    ]);
  });

  it('shows the steps of episodes, and says when the period was not checked', async () => {
    const folder = makeFolder({ product: 'episodes', plain: true });
    const res = await check([folder.dir]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`✔ ${folder.dir} is ready to deliver once given --period YYYY-MM`);
    expect(res.stdout).toContain("Period:    not checked (no --period, and none in the folder's name)");
    expect(res.stdout).toContain(
      `Bytes:     ${folder.uploaded.length} (${folder.uploaded.length} B, gzipped by bds for the upload)`,
    );
    expect(res.stdout).toContain(
      [
        'Columns:   1 per step',
        'Roles:     timestamp 1',
        '  NAME  ROLE       KIND     TRANSFORM',
        '  t     timestamp  integer',
      ].join('\n'),
    );
  });

  it('--json is the object of the contract', async () => {
    const folder = makeFolder({ schema, report });
    const res = await check([folder.dir, '--period', '2024-05', '--json']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.json()).toEqual({
      ok: true,
      dir: folder.dir,
      data_file: folder.dataFile,
      product: 'records',
      period: '2024-05',
      record_count: 3,
      bytes: folder.uploaded.length,
      sha256: folder.sha256,
      report: {
        tool: 'scrubkit 3.4.1',
        files: 2,
        totals: {
          rows_out: 3,
          'reidentification.method': 'k-anonymity',
          'reidentification.k': 5,
          'reidentification.checks.passed': true,
          notes: [],
        },
        per_file: [{ path: 'records.jsonl.gz' }, { path: 'b.jsonl.gz' }],
      },
      columns: [
        { object: 'orders', name: 'order_id', role: 'identifier', kind: 'string', transform: 'keyed hash' },
        { object: 'orders', name: 'amount', role: 'measure', kind: 'number', transform: null },
        { object: 'customers', name: 'customer', role: 'identifier', kind: 'string', transform: 'tokenized' },
        {
          object: 'customers',
          name: 'region',
          role: 'quasi_identifier',
          kind: 'string',
          transform: 'generalized to country',
        },
      ],
      roles: { identifier: 2, measure: 1, quasi_identifier: 1 },
      warnings: [],
      schema_changes: null,
    });
    const unchecked = await check([folder.dir, '--json']);
    expect(unchecked.json().period).toBeNull();
  });

  it('an environment schema has no columns', async () => {
    const folder = makeFolder({ product: 'environment' });
    const res = await check([folder.dir, '--period', '2024-05', '--product', 'environment', '--json']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.json()).toMatchObject({ product: 'environment', columns: [], roles: {} });
    const text = await check([folder.dir, '--period', '2024-05', '--product', 'environment']);
    expect(text.stdout).toContain('Columns:   none (an environment schema lists no columns)');
  });

  it('lists warnings in the preview and in the JSON', async () => {
    const dir = namedFolder('records-2024-06');
    const res = await check([dir]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`✔ ${dir} is ready to deliver, with 1 warning`);
    const warning =
      "the period 2024-06 in the folder's name records-2024-06 is the current month, which is not over yet";
    expect(res.stdout).toContain(`warning: ${warning}`);
    expect((await check([dir, '--json'])).json().warnings).toEqual([warning]);
  });

  it('shows for a plain .jsonl the SHA-256 that deliver sends', async () => {
    const box = await sandbox();
    const folder = makeFolder({ plain: true, records: 50 });
    const checked = (await check([folder.dir, '--period', '2024-05', '--json'])).json();
    const delivered = await deliver(box, [folder.dir, '--period', '2024-05', '--json']);
    expect(delivered.code, delivered.stderr).toBe(0);
    expect(checked.sha256).toBe(folder.sha256);
    expect(delivered.json().sha256).toBe(checked.sha256);
    const batch = box.store.batches()[0]!;
    expect(box.store.uploadedBytes(batch.id)!.equals(folder.uploaded)).toBe(true);
    expect(checked.bytes).toBe(folder.uploaded.length);
  });
});

describe("the period from the folder's name", () => {
  it.each(['2024-05', 'records-2024-05', 'orders_2024-05_v2'])(
    '%s is 2024-05, for check and for deliver',
    async (name) => {
      const dir = namedFolder(name);
      const checked = await check([dir, '--json']);
      expect(checked.code, checked.stderr).toBe(0);
      expect(checked.json().period).toBe('2024-05');

      const box = await sandbox();
      const delivered = await deliver(box, [dir, '--json']);
      expect(delivered.code, delivered.stderr).toBe(0);
      expect(delivered.json().period).toBe('2024-05');
      expect(box.store.batches().map((b) => b.period)).toEqual(['2024-05']);
    },
  );

  it('a --period that contradicts it is a usage error, for deliver and for check', async () => {
    const dir = namedFolder('records-2024-05');
    const box = await sandbox();
    for (const res of [await deliver(box, [dir, '--period', '2024-04']), await check([dir, '--period', '2024-04'])]) {
      expect(res.code).toBe(2);
      expect(errorLines(res)).toEqual([
        "bds: --period 2024-04 contradicts the folder's name records-2024-05 (2024-05)",
        'hint: deliver each month from its own folder; rename the folder if its name is wrong',
      ]);
    }
    expect(box.requests).toHaveLength(0);
    expect((await check([dir, '--period', '2024-05'])).code).toBe(0);
    // A folder named just the month: the name says it once.
    expect(errorLines(await check([namedFolder('2024-02'), '--period', '2024-03']))[0]).toBe(
      "bds: --period 2024-03 contradicts the folder's name 2024-02",
    );
  });

  it('with no period anywhere, deliver names the fix and check says it did not check it', async () => {
    const dir = namedFolder('out');
    const box = await sandbox();
    const delivered = await deliver(box, [dir]);
    expect(delivered.code).toBe(2);
    expect(errorLines(delivered)).toEqual([
      "bds: missing --period YYYY-MM (the month the data covers), and the folder's name holds none",
      "hint: name it with --period, or put it in the folder's name (out/2024-05)",
    ]);
    expect(box.requests).toHaveLength(0);

    const checked = await check([dir]);
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.stdout).toContain("Period:    not checked (no --period, and none in the folder's name)");
    expect((await check([dir, '--json'])).json().period).toBeNull();
  });

  it('a name with two months needs --period, which must be one of them', async () => {
    const dir = namedFolder('orders-2024-04-to-2024-05');
    const res = await check([dir]);
    expect(res.code).toBe(2);
    expect(errorLines(res)).toEqual([
      "bds: the folder's name orders-2024-04-to-2024-05 holds more than one period (2024-04, 2024-05)",
      'hint: name the month with --period',
    ]);
    expect((await check([dir, '--period', '2024-05'])).code).toBe(0);
    expect((await check([dir, '--period', '2024-03'])).stderr).toContain('--period 2024-03 contradicts');
  });

  it('a period from the name is named as such in its errors', async () => {
    const res = await check([namedFolder('records-2024-07')]);
    expect(res.code).toBe(2);
    expect(errorLines(res)[0]).toBe(
      "bds: the period 2024-07 in the folder's name records-2024-07 is in the future (this month is 2024-06, UTC)",
    );
  });
});

describe('schema changes', () => {
  const changed = {
    format: 'jsonl',
    objects: {
      orders: [
        { name: 'order_id', role: 'identifier', kind: 'string', transform: 'kept' },
        { name: 'email', role: 'identifier', kind: 'string', transform: 'kept' },
      ],
    },
  };

  /** Delivers a records folder of `period` with `schema` from `source`, in `home`; returns the batch id. */
  async function delivered(
    box: Sandbox,
    home: string,
    source: string,
    period: string,
    schema: unknown = RECORDS_SCHEMA,
  ): Promise<string> {
    // The clock as it is: which delivery is the newest is part of the test. Each month has data of its own.
    const lines = [JSON.stringify({ _object: 'orders', order_id: `o-${period}`, amount: 1 })];
    const res = await deliver(box, [makeFolder({ schema, lines }).dir, '--period', period, '--json'], {
      home,
      source,
      now: () => new Date(),
    });
    expect(res.code, res.stderr).toBe(0);
    return res.json().batch.id;
  }

  it('the delivery record keeps the columns, never the data', async () => {
    const box = await sandbox();
    const home = tempDir();
    const secret = 'c0ffee-SECRET-VALUE';
    const folder = makeFolder({ lines: [JSON.stringify({ _object: 'orders', order_id: secret, amount: 987654321 })] });
    const res = await deliver(box, [folder.dir, '--period', '2024-05'], { home });
    expect(res.code, res.stderr).toBe(0);
    const records = path.join(home, '.local', 'state', 'bds', 'deliveries');
    const files = readdirSync(records).filter((name) => name.endsWith('.json'));
    expect(files).toHaveLength(1);
    const text = readFileSync(path.join(records, files[0]!), 'utf8');
    expect(JSON.parse(text).columns).toEqual([
      { object: 'orders', name: 'order_id', role: 'identifier', kind: 'string', transform: 'keyed hash' },
      { object: 'orders', name: 'amount', role: 'measure', kind: 'number', transform: null },
    ]);
    expect(text).not.toContain(secret);
    expect(text).not.toContain('987654321');
  });

  it('check and deliver list what changed since the previous month, before the batch is created', async () => {
    const box = await sandbox();
    const home = tempDir();
    const source = newSource(box);
    const april = await delivered(box, home, source, '2024-04');
    const may = makeFolder({ schema: changed }).dir;
    const expected = {
      since: { period: '2024-04', batch_id: april },
      added: [{ object: 'orders', name: 'email', role: 'identifier', kind: 'string', transform: 'kept' }],
      removed: [{ object: 'orders', name: 'amount', role: 'measure', kind: 'number', transform: null }],
      changed: [{ object: 'orders', name: 'order_id', field: 'transform', from: 'keyed hash', to: 'kept' }],
    };
    const warning = [
      `warning: the schema differs from the one delivered for 2024-04 (${april}):`,
      '  added    orders.email (role identifier, kind string, transform "kept")',
      '  removed  orders.amount',
      '  changed  orders.order_id: transform "keyed hash" → "kept"',
    ].join('\n');

    const checked = await check([may, '--period', '2024-05', '--source', source], { home });
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.stdout).toContain('is ready to deliver, with 1 warning');
    expect(checked.stdout).toContain(warning);
    expect((await check([may, '--period', '2024-05', '--json'], { home })).json().schema_changes).toEqual(expected);

    const res = await deliver(box, [may, '--period', '2024-05', '--json'], { home, source });
    expect(res.code, res.stderr).toBe(0);
    expect(res.json().schema_changes).toEqual(expected);
    expect(res.stderr).toContain(warning);
    expect(res.stderr.indexOf(warning)).toBeLessThan(res.stderr.indexOf('creating the records batch for 2024-05'));
    expect(count(box, 'create')).toBe(2);
  });

  it('say a kind or role that changed, with the old and new value', async () => {
    const box = await sandbox();
    const home = tempDir();
    const april = await delivered(box, home, newSource(box), '2024-04');
    const schema = {
      format: 'jsonl',
      objects: {
        orders: [
          { name: 'order_id', role: 'quasi_identifier', kind: 'string', transform: 'keyed hash' },
          { name: 'amount', role: 'measure', kind: 'string' },
        ],
      },
    };
    const res = await check([makeFolder({ schema }).dir, '--period', '2024-05', '--json'], { home });
    expect(res.json().schema_changes).toEqual({
      since: { period: '2024-04', batch_id: april },
      added: [],
      removed: [],
      changed: [
        { object: 'orders', name: 'order_id', field: 'role', from: 'identifier', to: 'quasi_identifier' },
        { object: 'orders', name: 'amount', field: 'kind', from: 'number', to: 'string' },
      ],
    });
  });

  it('are null in check and in deliver when nothing changed', async () => {
    const box = await sandbox();
    const home = tempDir();
    const source = newSource(box);
    await delivered(box, home, source, '2024-04');
    const may = makeFolder().dir;
    const checked = await check([may, '--period', '2024-05', '--json'], { home });
    expect(checked.json().schema_changes).toBeNull();
    const again = await deliver(box, [may, '--period', '2024-05', '--json'], { home, source });
    expect(again.code, again.stderr).toBe(0);
    expect(again.json().schema_changes).toBeNull();
    expect(again.stderr).not.toContain('warning');
    expect((await check([may, '--period', '2024-05'], { home })).stdout).not.toContain('warning');
  });

  it('compare with the nearest earlier month of the same product, and of the source when one is known', async () => {
    const box = await sandbox();
    const home = tempDir();
    const [ours, theirs] = [newSource(box), newSource(box)];
    const february = await delivered(box, home, ours, '2024-02');
    await delivered(box, home, ours, '2024-03');
    const april = await delivered(box, home, ours, '2024-04');
    // Delivered after April: another source's April, our own January (a backfill), and episodes.
    const theirApril = await delivered(box, home, theirs, '2024-04');
    await delivered(box, home, ours, '2024-01');
    const episodes = await deliver(box, [makeFolder({ product: 'episodes' }).dir, '--period', '2024-04'], {
      home,
      source: ours,
      now: () => new Date(),
    });
    expect(episodes.code, episodes.stderr).toBe(0);

    // A schema unlike any delivered one, so that every check finds changes and names what it compared with.
    const other = makeFolder({ schema: changed }).dir;
    const since = async (args: string[], options: RunOptions = {}) =>
      (await check([other, ...args, '--json'], { home, ...options })).json().schema_changes.since;
    const config = path.join(tempDir(), 'bds.json');
    writeFileSync(config, JSON.stringify({ sourceId: theirs }));

    expect(await since(['--period', '2024-05', '--source', ours])).toEqual({ period: '2024-04', batch_id: april });
    expect(await since(['--period', '2024-05'], { env: { BDS_SOURCE_ID: theirs } })).toEqual({
      period: '2024-04',
      batch_id: theirApril,
    });
    expect(await since(['--period', '2024-05', '--config', config])).toEqual({
      period: '2024-04',
      batch_id: theirApril,
    });
    // Without a source: the nearest month of any source, and of that month the newest delivery.
    expect(await since(['--period', '2024-05'])).toEqual({ period: '2024-04', batch_id: theirApril });
    // A month is never compared with itself, nor with a later month when an earlier one exists.
    expect(await since(['--period', '2024-03', '--source', ours])).toEqual({ period: '2024-02', batch_id: february });
    // Older than every delivery (a backfill): the nearest month after it.
    const december = await since(['--period', '2023-12', '--source', ours]);
    expect(december.period).toBe('2024-01');
    // Episodes compare with episodes only.
    const steps = { format: 'episodes/v1', steps: [{ name: 'x', role: 'r', kind: 'k' }] };
    const episodeChanges = (
      await check([makeFolder({ product: 'episodes', schema: steps }).dir, '--period', '2024-05', '--json'], { home })
    ).json();
    expect(episodeChanges.schema_changes).toMatchObject({
      since: { period: '2024-04' },
      added: [{ name: 'x' }],
      removed: [{ name: 't' }],
    });
  });
});

describe('bds check with several folders', () => {
  it('checks each, one result per folder, and exits 2 if any fails', async () => {
    const good = namedFolder('records-2024-04');
    const bad = { dir: namedFolder('records-2024-05', { lines: ['{"a":1}', 'oops'] }) };
    const other = namedFolder('episodes-2024-05', { product: 'episodes' });
    const res = await check([good, bad.dir, other]);
    expect(res.code).toBe(2);
    expect(errorLines(res)).toEqual([
      `bds: ${bad.dir}/records.jsonl.gz line 2 is not a JSON object`,
      'hint: every non-empty line of the data file must be one JSON object',
    ]);
    expect(res.stdout).toContain(`✔ ${good} is ready to deliver`);
    expect(res.stdout).toContain(`✖ ${bad.dir}: ${bad.dir}/records.jsonl.gz line 2 is not a JSON object`);
    expect(res.stdout).toContain(`✔ ${other} is ready to deliver`);
    expect(res.stdout.trimEnd().split('\n').at(-1)).toBe('2 of 3 folders are ready to deliver.');

    const json = await check([good, bad.dir, other, '--json']);
    expect(json.code).toBe(2);
    const { checks } = json.json();
    expect(checks.map((c: { ok: boolean; dir: string }) => [c.ok, c.dir])).toEqual([
      [true, good],
      [false, bad.dir],
      [true, other],
    ]);
    expect(checks[1].error).toEqual({
      message: `${bad.dir}/records.jsonl.gz line 2 is not a JSON object`,
      hint: 'every non-empty line of the data file must be one JSON object',
      exit_code: 2,
    });
    expect(checks[2]).toMatchObject({ product: 'episodes', record_count: 3 });
  });

  it('two folders for the same month and product: the second fails, as deliver would refuse them', async () => {
    const first = namedFolder('records-2024-05');
    const second = namedFolder('orders-2024-05');
    const res = await check([first, second]);
    expect(res.code).toBe(2);
    expect(errorLines(res)).toEqual([
      `bds: the same period and product (2024-05 records) as ${first}`,
      'hint: deliver one folder per month and product',
    ]);
    expect(res.stdout).toContain(`✔ ${first} is ready to deliver`);
    expect(res.stdout).toContain(`✖ ${second}: the same period and product (2024-05 records) as ${first}`);
  });

  it("one data file in two months: the later month fails, in deliver's words, whatever order the folders come in", async () => {
    const box = await sandbox();
    const january = namedFolder('records-2024-01');
    const february = path.join(path.dirname(january), 'records-2024-02');
    cpSync(january, february, { recursive: true });
    const march = namedFolder('records-2024-03', { records: 5 });
    const args = [february, march, january];
    const res = await check([...args, '--json']);
    expect(res.code).toBe(2);
    const { checks } = res.json();
    expect(checks.map((c: { ok: boolean }) => c.ok)).toEqual([false, true, true]);
    const delivered = await deliver(box, [...args, '--json']);
    expect(delivered.code).toBe(2);
    const refused = delivered.json().deliveries.find((d: { period: string }) => d.period === '2024-02');
    expect(checks[0].error).toEqual(refused.error);
    expect(checks[0].error.message).toContain(`is the same file as the one for 2024-01 in ${january}`);
    // The text: the refusal as it happens, and the folder failed in the summary.
    const text = await check(args);
    expect(errorLines(text)).toEqual([`bds: ${refused.error.message}`, `hint: ${refused.error.hint}`]);
    expect(text.stdout.trimEnd().split('\n').at(-1)).toBe('2 of 3 folders are ready to deliver.');
  });

  it('refuses --period, --file, --schema and --report, as deliver does', async () => {
    const res = await check([
      namedFolder('2024-04'),
      namedFolder('2024-05'),
      '--period',
      '2024-05',
      '--report',
      'r.json',
    ]);
    expect(res.code).toBe(2);
    expect(errorLines(res)).toEqual([
      'bds: --period, --report cannot be given with several folders',
      "hint: each folder's period is the YYYY-MM in its name, and its files are its own; or check one folder at a time",
    ]);
    expect(res.stdout).toBe('');
  });

  it('exits 0 when every folder is ready', async () => {
    // Data of each month's own: one file in two months is refused, as deliver refuses it.
    const res = await check([namedFolder('2024-04'), namedFolder('2024-05', { records: 4 }), '--json']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.json().checks.map((c: { period: string }) => c.period)).toEqual(['2024-04', '2024-05']);
  });
});

describe('text from the folder in the preview', () => {
  /** Sets the window title, clears the screen, rings the bell, colours: what a hostile or broken file might hold. */
  const ESCAPES = '\u001b]0;owned\u0007\u001b[2J\u0007\u001b[31m\u009b1m';
  const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

  it('is printed without control characters and on one line, as text from a server is', async () => {
    const schema = {
      format: 'jsonl',
      objects: {
        [`orders${ESCAPES}`]: [
          {
            name: `order_id${ESCAPES}\nsplit`,
            role: `identifier${ESCAPES}`,
            kind: 'string',
            transform: `keyed\r\nhash${ESCAPES}`,
          },
        ],
      },
    };
    const report = {
      tool: `scrubkit${ESCAPES}\n3.4.1`,
      files: [],
      totals: { [`rows${ESCAPES}_out`]: `3${ESCAPES}\n4`, long: 'z'.repeat(5_000) },
    };
    const res = await check([makeFolder({ schema, report }).dir, '--period', '2024-05']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).not.toMatch(CONTROL);
    expect(res.stdout).toContain('Report:    scrubkit 3.4.1, 0 files');
    expect(res.stdout).toContain('Totals:    rows_out  3 4');
    expect(res.stdout).toMatch(/^ {11}long {6}z+…$/m);
    expect(res.stdout).toContain('  orders  order_id split  identifier  string  keyed hash');
    expect(res.stdout.length).toBeLessThan(3_000);
    // The JSON keeps the files' values as they are (JSON escapes control characters).
    const json = (await check([makeFolder({ schema, report }).dir, '--period', '2024-05', '--json'])).json();
    expect(json.report.tool).toBe(report.tool);
  });

  it('aligns the columns by the width they take on screen: CJK and emoji take two', async () => {
    const schema = {
      format: 'jsonl',
      objects: {
        注文: [
          { name: '注文番号', role: 'identifier', kind: 'string', transform: 'keyed hash' },
          { name: '📦 box', role: 'measure', kind: 'number' },
          { name: 'amount', role: '金額', kind: 'number' },
        ],
      },
    };
    const report = { ...REPORT, totals: { 件数: 3, rows_out: 3 } };
    const res = await check([makeFolder({ schema, report }).dir, '--period', '2024-05']);
    expect(res.code, res.stderr).toBe(0);
    const table = res.stdout.split('\n').slice(-5, -1);
    expect(table).toEqual([
      '  OBJECT  NAME      ROLE        KIND    TRANSFORM',
      '  注文    注文番号  identifier  string  keyed hash',
      '          📦 box    measure     number',
      '          amount    金額        number',
    ]);
    expect(res.stdout).toContain(['Totals:    件数      3', '           rows_out  3'].join('\n'));
  });
});

describe('the report against the data file', () => {
  it("warns, in check and in deliver, when its rows_out is not the file's record count", async () => {
    const report = {
      tool: 'scrubkit 3.4.1',
      files: [{ path: 'records.jsonl.gz', rows_out: 99_999 }],
      totals: { rows_out: 99_999 },
    };
    const folder = makeFolder({ records: 100, report });
    const warnings = [
      `the report's files[] says records.jsonl.gz has rows_out 99999, but ${folder.dataFile} holds 100 records`,
      `the report's totals.rows_out is 99999, but ${folder.dataFile} holds 100 records`,
    ];
    const checked = await check([folder.dir, '--period', '2024-05', '--json']);
    expect(checked.code).toBe(0);
    expect(checked.json().warnings).toEqual(warnings);
    const text = await check([folder.dir, '--period', '2024-05']);
    expect(text.stdout).toContain(`✔ ${folder.dir} is ready to deliver, with 2 warnings`);
    for (const warning of warnings) expect(text.stdout).toContain(`warning: ${warning}`);

    const box = await sandbox();
    const delivered = await deliver(box, [folder.dir, '--period', '2024-05']);
    expect(delivered.code).toBe(0);
    for (const warning of warnings) expect(delivered.stderr).toContain(`warning: ${warning}`);
    expect(box.store.batches().map((b) => b.status)).toEqual(['received']);
  });

  it('warns when its files[] names another file; a plain .jsonl may be named gzipped or not', async () => {
    const other = makeFolder({
      report: { tool: 'scrubkit 3.4.1', files: [{ path: 'out/orders-2024-04.jsonl.gz' }], totals: {} },
    });
    const res = await check([other.dir, '--period', '2024-05', '--json']);
    expect(res.json().warnings).toEqual([
      "the report's files[] names out/orders-2024-04.jsonl.gz, not records.jsonl.gz: is it this folder's report?",
    ]);
    for (const path of ['records.jsonl', 'out/records.jsonl.gz']) {
      const plain = makeFolder({
        plain: true,
        report: { tool: 'scrubkit 3.4.1', files: [{ path, rows_out: 3 }], totals: { rows_out: 3 } },
      });
      expect((await check([plain.dir, '--period', '2024-05', '--json'])).json().warnings).toEqual([]);
    }
  });

  it("the examples (the service's sample folders) pass without a warning", async () => {
    for (const example of ['records-2024-05', 'episodes-2024-05']) {
      const res = await check([path.join(ROOT, 'examples', example), '--json']);
      expect(res.code, res.stderr).toBe(0);
      expect(res.json().warnings).toEqual([]);
    }
  });
});

describe('the report', () => {
  it('may say nothing in its totals', async () => {
    const res = await check([makeFolder({ report: { ...REPORT, totals: {} } }).dir, '--period', '2024-05']);
    expect(res.stdout).toContain('Totals:    none');
  });
});

describe.skipIf(process.getuid?.() !== 0)('a folder the user may not read', () => {
  // Tests run as root, who reads anything: bds is spawned as nobody (uid 65534), in a home of its own, and the
  // folders are root's, mode 0700 (a container's /data mounted from another user's folder, say).
  const NOBODY = 65534;
  function asNobody(args: string[], cwd?: string): Promise<SpawnResult> {
    const home = tempDir('bds-nobody-');
    chownSync(home, NOBODY, NOBODY);
    return spawnCli(['check', ...args], { env: { HOME: home }, uid: NOBODY, cwd: cwd ?? home });
  }
  /** A 0755 folder holding `name`, a 0700 folder of root's. */
  function closed(name: string): string {
    const open = tempDir('bds-open-');
    chmodSync(open, 0o755);
    const dir = path.join(open, name);
    mkdirSync(dir, { mode: 0o700 });
    return dir;
  }
  const WHY = 'is mode 0700, owned by root and group root (gid 0): only root may read it';

  it('in a folder it may not enter: that folder named, its mode and owner, not "no such folder"', async () => {
    const data = closed('data');
    const month = path.join(data, '2024-05');
    cpSync(makeFolder().dir, month, { recursive: true });
    const res = await asNobody([month, '--period', '2024-05']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`bds: cannot read the folder ${month}: permission denied: ${data} ${WHY}\n`);
    expect(res.stderr).toContain('hint: run bds as a user who may read it, or change its owner or mode (chown, chmod)');
    expect(res.stderr).not.toContain('no such folder');
  });

  it('that it may not list: the folder itself named', async () => {
    const month = closed('2024-05');
    cpSync(makeFolder().dir, month, { recursive: true });
    chmodSync(month, 0o700);
    const res = await asNobody([month]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`bds: cannot read the folder ${month}: permission denied: ${month} ${WHY}\n`);
  });

  it('as the working folder, outside home: named as what it is, not as a config folder', async () => {
    const data = closed('data');
    const res = await asNobody(['2024-05'], data);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`bds: cannot look in ${data} for a config file: permission denied: ${data} ${WHY}\n`);
    expect(res.stderr).not.toContain('config folder');
  });
});
