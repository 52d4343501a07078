import { describe, expect, it } from 'vitest';
import { run, sandbox, sandboxEnv } from './helpers.js';

describe('bds register-source', () => {
  it('creates the source and says how to use its id', async () => {
    const box = await sandbox();
    const res = await run(['register-source', '--name', 'EU orders', '--description', 'orders from the EU shop'], {
      env: sandboxEnv(box),
    });
    expect(res.code, res.stderr).toBe(0);
    const [source] = box.store.sources();
    expect(source).toMatchObject({ name: 'EU orders', description: 'orders from the EU shop' });
    expect(res.stdout).toContain(`Registered source ${source!.id} (EU orders)`);
    expect(res.stdout).toContain(`--source ${source!.id}`);
    expect(res.stdout).toContain(`BDS_SOURCE_ID=${source!.id}`);
    expect(res.stdout).toContain(`"sourceId": "${source!.id}"`);
    const sent = box.requests.find((r) => r.route === 'sources')!;
    expect(sent.method).toBe('POST');
  });

  it('sends no description when none is given', async () => {
    const box = await sandbox();
    const res = await run(['register-source', '--name', 'plain'], { env: sandboxEnv(box) });
    expect(res.code, res.stderr).toBe(0);
    expect(box.store.sources()).toEqual([
      { id: expect.stringMatching(/^src_/), name: 'plain', created_at: expect.any(String) },
    ]);
  });

  it('--json prints the source object', async () => {
    const box = await sandbox();
    const res = await run(['register-source', '--name', 'EU orders', '--json'], { env: sandboxEnv(box) });
    expect(res.code, res.stderr).toBe(0);
    expect(res.json()).toEqual(box.store.sources()[0]);
  });

  it('accepts a bare source object as the response', async () => {
    const box = await sandbox();
    const bare = { id: 'src_bare', name: 'bare' };
    box.faults.add({ route: 'sources', replaceJson: bare });
    const res = await run(['register-source', '--name', 'bare', '--json'], { env: sandboxEnv(box) });
    expect(res.code, res.stderr).toBe(0);
    expect(res.json()).toEqual(bare);
  });

  it('needs --name, and sends nothing without it', async () => {
    const box = await sandbox();
    for (const argv of [['register-source'], ['register-source', '--name', '  ']]) {
      const res = await run(argv, { env: sandboxEnv(box) });
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toMatch(/^bds: missing --name/);
    }
    expect(box.requests).toHaveLength(0);
  });

  it("shows the API's refusal with exit 4", async () => {
    const box = await sandbox();
    const res = await run(['register-source', '--name', 'x'.repeat(201)], { env: sandboxEnv(box) });
    expect(res.code, res.stderr).toBe(4);
    expect(res.stderr).toMatch(/^bds: .*422.*at most 200 characters/m);
    expect(box.store.sources()).toHaveLength(0);
  });

  it('a lost response is retried with the same Idempotency-Key: one source', async () => {
    const box = await sandbox();
    box.faults.add({ route: 'sources', loseResponse: true });
    const res = await run(['register-source', '--name', 'once', '--json'], { env: sandboxEnv(box) });
    expect(res.code).toBe(0);
    expect(box.store.sources()).toHaveLength(1);
    expect(res.json().id).toBe(box.store.sources()[0]!.id);
    const keys = box.requests.filter((r) => r.route === 'sources').map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
  });
});
