import { describe, expect, it } from 'vitest';
import { makeFolder, newSource, run, sandbox, sandboxEnv, tempDir } from './helpers.js';

async function deliverTwo() {
  const box = await sandbox();
  const source = newSource(box);
  const env = sandboxEnv(box, { BDS_SOURCE_ID: source });
  const home = tempDir();
  expect((await run(['deliver', makeFolder().dir, '--period', '2024-04'], { env, home })).code).toBe(0);
  await new Promise((r) => setTimeout(r, 5));
  expect(
    (await run(['deliver', makeFolder({ product: 'episodes', records: 4 }).dir, '--period', '2024-05'], { env, home }))
      .code,
  ).toBe(0);
  const [older, newer] = box.store.batches();
  return { box, env, older: older!, newer: newer! };
}

describe('bds list', () => {
  it('in a pipe: tab-separated, no header, newest first', async () => {
    const { env, older, newer } = await deliverTwo();
    const res = await run(['list'], { env });
    expect(res.code).toBe(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines).toEqual([
      [newer.id, '2024-05', 'episodes', '4', 'received', newer.created_at].join('\t'),
      [older.id, '2024-04', 'records', '3', 'received', older.created_at].join('\t'),
    ]);
  });

  it('on a terminal: a table with a header', async () => {
    const { env, newer } = await deliverTwo();
    const res = await run(['list', '--no-color'], { env, tty: true });
    const lines = res.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+PERIOD\s+PRODUCT\s+RECORDS\s+STATUS\s+CREATED$/);
    expect(lines[1]).toMatch(new RegExp(`^${newer.id}\\s+2024-05\\s+episodes\\s+4\\s+received\\s+`));
  });

  it('--json, and the client-side filters', async () => {
    const { box, env, older, newer } = await deliverTwo();
    expect((await run(['list', '--json'], { env })).json().batches.map((b: { id: string }) => b.id)).toEqual([
      newer.id,
      older.id,
    ]);
    expect((await run(['list', '--json', '--period', '2024-04'], { env })).json().batches).toHaveLength(1);
    expect((await run(['list', '--json', '--product', 'episodes'], { env })).json().batches[0].id).toBe(newer.id);
    box.store.setStatus(older.id, 'rejected');
    expect((await run(['list', '--json', '--status', 'rejected'], { env })).json().batches[0].id).toBe(older.id);
    // The filters never reach the server: only source_id does.
    for (const r of box.requests.filter((r) => r.route === 'list')) expect(r.path).toMatch(/\?source_id=[^&]+$/);
  });

  it('needs a source and a well-formed period', async () => {
    const box = await sandbox();
    const noSource = await run(['list'], { env: sandboxEnv(box) });
    expect(noSource.code).toBe(2);
    expect(noSource.stderr).toMatch(/no source id/);
    expect(noSource.stderr).toMatch(/BDS_SOURCE_ID/);
    const badPeriod = await run(['list', '--period', '2024-13', '--source', 'x'], { env: sandboxEnv(box) });
    expect(badPeriod.code).toBe(2);
  });
});
