// Runs before every test file: a private HOME and XDG folders, so that no developer's real config file,
// key or delivery record is ever read (cosmiconfig reads the global config folder from process.env).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

// npm's cache stays where it was, so that an offline install (package.test.ts) finds what `npm ci` fetched;
// `npm test` passes it on as npm_config_cache, vitest run directly (CI on Node 22 and 24) does not.
process.env.npm_config_cache ??= path.join(os.homedir(), '.npm');
const home = mkdtempSync(path.join(os.tmpdir(), 'bds-test-home-'));
process.env.HOME = home;
process.env.XDG_CONFIG_HOME = path.join(home, '.config');
process.env.XDG_STATE_HOME = path.join(home, '.local', 'state');
process.env.XDG_CACHE_HOME = path.join(home, '.cache');
for (const name of ['BDS_API_KEY', 'BDS_API_KEY_FILE', 'BDS_BASE_URL', 'BDS_SOURCE_ID', 'BDS_PROFILE', 'BDS_CONFIG']) {
  delete process.env[name];
}
afterAll(() => rmSync(home, { recursive: true, force: true }));
