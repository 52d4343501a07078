// Delivery folders and config files as people really have them: a byte order mark from a Windows editor,
// macOS's ._ files beside the data, and the data file chosen by the name the error listed.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeFolder, newSource, REPORT, RECORDS_SCHEMA, run, sandbox, sandboxEnv, tempDir } from './helpers.js';

const BOM = '\uFEFF';

describe('a UTF-8 byte order mark', () => {
  it('before report.json and schema.json is ignored: check and deliver accept them, and send them unchanged', async () => {
    const box = await sandbox();
    const folder = makeFolder();
    writeFileSync(path.join(folder.dir, 'report.json'), `${BOM}${JSON.stringify(REPORT, null, 2)}`);
    writeFileSync(path.join(folder.dir, 'schema.json'), `${BOM}${JSON.stringify(RECORDS_SCHEMA)}`);
    const checked = await run(['check', folder.dir, '--period', '2024-05']);
    expect(checked.stderr).not.toContain('bds:');
    expect(checked.code).toBe(0);

    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', newSource(box)], {
      env: sandboxEnv(box),
    });
    expect(res.stderr).not.toContain('bds:');
    expect(res.code).toBe(0);
    const [batch] = box.store.batches();
    expect(batch!.report).toEqual(REPORT);
    expect(batch!.schema).toEqual(RECORDS_SCHEMA);
  });

  it.each([
    ['.bdsrc.json', (url: string) => JSON.stringify({ baseUrl: url })],
    ['.bdsrc.yaml', (url: string) => `baseUrl: ${url}\n`],
  ])('before a config file (%s) is ignored', async (name, content) => {
    const box = await sandbox();
    const home = tempDir();
    writeFileSync(path.join(home, name), `${BOM}${content(box.baseUrl)}`);
    const res = await run(['whoami'], { home, env: { BDS_API_KEY: box.keys.test } });
    expect(res.stderr).not.toContain('bds:');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`Base URL:      ${box.baseUrl}`);
  });
});

describe('hidden files in the folder', () => {
  it("macOS's ._records.jsonl.gz and other dot files are not data files", async () => {
    const box = await sandbox();
    const folder = makeFolder();
    // AppleDouble files hold Finder metadata, not gzip; a swap file is an editor's.
    writeFileSync(path.join(folder.dir, '._records.jsonl.gz'), Buffer.from([0, 5, 22, 7, 0, 2, 0, 0]));
    writeFileSync(path.join(folder.dir, '.records.jsonl.swp.jsonl'), 'not json\n');
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', newSource(box), '--json'], {
      env: sandboxEnv(box),
    });
    expect(res.stderr).not.toContain('bds:');
    expect(res.code).toBe(0);
    expect(res.json()).toMatchObject({ record_count: folder.records, sha256: folder.sha256 });
  });

  it('a folder whose only data file is hidden has no data file', async () => {
    const folder = makeFolder({ dataName: '._records.jsonl.gz' });
    const res = await run(['check', folder.dir, '--period', '2024-05']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`bds: no data file in ${folder.dir}`);
  });
});

describe('--file', () => {
  it('takes a name that "more than one data file" listed, from the folder, when the working folder has no such file', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder();
    writeFileSync(path.join(folder.dir, 'b.jsonl'), '{"a":1}\n{"a":2}\n');
    const cwd = tempDir();
    const several = await run(['deliver', folder.dir, '--period', '2024-05', '--source', source], {
      cwd,
      env: sandboxEnv(box),
    });
    expect(several.code).toBe(2);
    expect(several.stderr).toContain('more than one data file');
    expect(several.stderr).toContain('b.jsonl');

    const res = await run(
      ['deliver', folder.dir, '--period', '2024-05', '--source', source, '--file', 'b.jsonl', '--json'],
      {
        cwd,
        env: sandboxEnv(box),
      },
    );
    expect(res.stderr).not.toContain('bds:');
    expect(res.code).toBe(0);
    expect(res.json().record_count).toBe(2);
  });

  it('a name in the working folder wins: a path on the command line is relative to it', async () => {
    const folder = makeFolder({ records: 3 });
    writeFileSync(path.join(folder.dir, 'b.jsonl'), '{"a":1}\n');
    const cwd = tempDir();
    writeFileSync(path.join(cwd, 'b.jsonl'), '{"a":1}\n{"a":2}\n{"a":3}\n{"a":4}\n');
    const res = await run(['check', folder.dir, '--period', '2024-05', '--file', 'b.jsonl', '--json'], { cwd });
    expect(res.code).toBe(0);
    expect(res.json().record_count).toBe(4);
  });

  it('a path with a folder in it is never looked for elsewhere', async () => {
    const folder = makeFolder();
    const res = await run(['check', folder.dir, '--period', '2024-05', '--file', './records.jsonl.gz'], {
      cwd: tempDir(),
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('records.jsonl.gz');
  });
});
