#!/usr/bin/env node
// npm run demo: start the sandbox, register a source, deliver the example folder, list it, have the sandbox accept
// it and show where the months stand, stop.
// Offline and self-contained: bds runs exactly as a user would run it, against a throw-away sandbox.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSandbox } from '../dist/sandbox/emulator.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// A home of its own, removed at the end: the demo's delivery records, remembered passes and config folder
// never mix with the user's own (~/.local/state/bds, ~/.cache/bds, ~/.config/bds).
const home = mkdtempSync(path.join(os.tmpdir(), 'bds-demo-'));
const sandbox = await startSandbox();
const env = {
  ...process.env,
  BDS_BASE_URL: sandbox.baseUrl,
  BDS_API_KEY: sandbox.keys.test,
  HOME: home,
  XDG_STATE_HOME: path.join(home, '.local', 'state'),
  XDG_CACHE_HOME: path.join(home, '.cache'),
  XDG_CONFIG_HOME: path.join(home, '.config'),
};
for (const name of ['BDS_API_KEY_FILE', 'BDS_SOURCE_ID', 'BDS_PROFILE', 'BDS_CONFIG']) delete env[name];

/** Runs bds as a user would (the sandbox lives in this process, so never block it with spawnSync). */
function bds(...args) {
  console.log(`\n$ bds ${args.join(' ')}`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bin', 'bds.js'), ...args], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      process.stdout.write(chunk);
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`bds ${args[0]} exited with ${code}`)),
    );
  });
}

let failed = false;
try {
  console.log(`Sandbox on ${sandbox.baseUrl}, with its test key in BDS_API_KEY.`);
  await bds('whoami');
  const source = JSON.parse(await bds('register-source', '--name', 'demo', '--json')).id;
  env.BDS_SOURCE_ID = source;
  await bds('deliver', 'examples/records-2024-05', '--period', '2024-05');
  await bds('deliver', 'examples/records-2024-05', '--period', '2024-05');
  await bds('list');
  console.log('\nThe second deliver found the first and sent nothing: re-runs are safe.');
  // The service reviews each batch; the sandbox decides when told to, as a seller's pipeline test would.
  const [batch] = sandbox.store.batches();
  sandbox.review(batch.id, 'accepted');
  console.log(`\nThe sandbox accepted ${batch.id}. Where do the months around it stand?`);
  await bds('status', '--since', '2024-04', '--until', '2024-06');
} catch (error) {
  console.error(`demo failed: ${error.message}`);
  failed = true;
} finally {
  await sandbox.close();
  rmSync(home, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
