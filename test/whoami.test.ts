import { describe, expect, it } from 'vitest';
import { count, run, sandbox } from './helpers.js';

describe('bds whoami', () => {
  it('prints the base URL, organization, key id, mode and key source', async () => {
    const box = await sandbox();
    const res = await run(['whoami'], { env: { BDS_BASE_URL: box.baseUrl, BDS_API_KEY: box.keys.live } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.split('\n')).toEqual([
      `Base URL:      ${box.baseUrl}`,
      'Organization:  Sandbox Seller',
      'Key:           key_live_sandbox (live mode)',
      'Key from:      BDS_API_KEY',
      '',
    ]);
    expect(res.stderr).toBe('');
    expect(count(box, 'me')).toBe(1);
  });

  it('prints the base URL without a trailing slash', async () => {
    const box = await sandbox();
    const res = await run(['whoami', '--base-url', `${box.baseUrl}/`], { env: { BDS_API_KEY: box.keys.live } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`Base URL:      ${box.baseUrl}\n`);
  });

  it.each(['/api/v1', '/api/v1/'])(
    'a base URL ending in %s: the 404 says to leave it out, as login says',
    async (suffix) => {
      const box = await sandbox();
      const res = await run(['whoami'], {
        env: { BDS_BASE_URL: `${box.baseUrl}${suffix}`, BDS_API_KEY: box.keys.live },
      });
      expect(res.code).toBe(4);
      expect(res.stderr).toContain(`GET ${box.baseUrl}/api/v1/api/v1/me → 404`);
      expect(res.stderr).toContain(`hint: leave /api/v1 out of the base URL, which bds adds itself: ${box.baseUrl}\n`);
    },
  );

  it('tells that a test key never makes billable batches', async () => {
    const box = await sandbox();
    const res = await run(['whoami'], { env: { BDS_BASE_URL: box.baseUrl, BDS_API_KEY: box.keys.test } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('Key:           key_test_sandbox (test mode)');
    expect(res.stderr).toMatch(/test key: its batches never become billable/);
  });

  it('warns when the key prefix disagrees with the mode the API reports', async () => {
    const box = await sandbox();
    box.faults.add({
      route: 'me',
      replaceJson: { organization: { name: 'Sandbox Seller' }, key: { id: 'key_x', mode: 'test' } },
    });
    const res = await run(['whoami'], { env: { BDS_BASE_URL: box.baseUrl, BDS_API_KEY: box.keys.live } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/warning: the key's prefix says live mode but the API reports test mode/);
  });

  it('--json is the API object plus baseUrl, keySource and profile', async () => {
    const box = await sandbox();
    const res = await run(['whoami', '--json'], { env: { BDS_BASE_URL: box.baseUrl, BDS_API_KEY: box.keys.live } });
    expect(res.code, res.stderr).toBe(0);
    expect(res.json()).toEqual({
      organization: { name: 'Sandbox Seller' },
      key: { id: 'key_live_sandbox', mode: 'live' },
      baseUrl: box.baseUrl,
      keySource: 'BDS_API_KEY',
      profile: null,
    });
  });

  it('never prints the key, in text, JSON or verbose output', async () => {
    const box = await sandbox();
    for (const key of [box.keys.live, box.keys.test]) {
      for (const flags of [[], ['--json'], ['--verbose']]) {
        const res = await run(['whoami', ...flags], { env: { BDS_BASE_URL: box.baseUrl, BDS_API_KEY: key } });
        expect(res.code, res.stderr).toBe(0);
        expect(`${res.stdout}${res.stderr}`).not.toContain(key.slice('svc_test_'.length));
      }
    }
  });

  it('exits 3 on a key the API does not know (401) or has revoked (403)', async () => {
    const box = await sandbox();
    const unknown = await run(['whoami'], {
      env: { BDS_BASE_URL: box.baseUrl, BDS_API_KEY: 'svc_live_unknown_key_0000' },
    });
    expect(unknown.code, unknown.stderr).toBe(3);
    expect(unknown.stderr).toMatch(/^bds: .*401/m);
    const revoked = await run(['whoami'], { env: { BDS_BASE_URL: box.baseUrl, BDS_API_KEY: box.keys.revoked } });
    expect(revoked.code, revoked.stderr).toBe(3);
    expect(revoked.stderr).toMatch(/^bds: .*403.*revoked/m);
    expect(`${unknown.stderr}${revoked.stderr}`).not.toContain('sandbox_revoked_00000000');
    expect(unknown.stderr).not.toContain('unknown_key_0000');
  });
});
