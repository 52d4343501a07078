// scripts/node-from-npm.js, which gives the build and CI their pinned Nodes: a cached Node is checked again on
// every use, as the image's Debian packages are (its tarball against the pinned integrity, its unpacked files
// against the tarball), never reused on trust. A fake package of our own, served by a fake registry on loopback.

import { createHash } from 'node:crypto';
import { execFile, execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, tempDir } from './helpers.js';

const NAME = 'node-fake-bds-test';
const VERSION = '99.0.0';
const NODE = `#!/bin/sh\necho v${VERSION}\n`;

let tarball: Buffer;
let integrity: string;
let registry: http.Server;
let registryUrl: string;
const served: string[] = [];

beforeAll(async () => {
  const dir = tempDir('bds-fake-node-');
  mkdirSync(path.join(dir, 'bin'));
  writeFileSync(path.join(dir, 'bin', 'node'), NODE, { mode: 0o755 });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: NAME, version: VERSION, license: 'MIT' }));
  execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: dir, stdio: 'ignore' });
  tarball = readFileSync(
    path.join(
      dir,
      readdirSync(dir).find((name) => name.endsWith('.tgz'))!,
    ),
  );
  integrity = `sha512-${createHash('sha512').update(tarball).digest('base64')}`;
  registry = http.createServer((req, res) => {
    served.push(req.url ?? '');
    if (req.url === `/${NAME}`) {
      const dist = { tarball: `${registryUrl}/${NAME}/-/${NAME}-${VERSION}.tgz`, integrity };
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          name: NAME,
          'dist-tags': { latest: VERSION },
          versions: { [VERSION]: { name: NAME, version: VERSION, dist } },
        }),
      );
    } else if (req.url === `/${NAME}/-/${NAME}-${VERSION}.tgz`) {
      res.end(tarball);
    } else {
      res.statusCode = 404;
      res.end('{}');
    }
  });
  await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
  registryUrl = `http://127.0.0.1:${(registry.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => registry.close(() => resolve())));

/**
 * cachedPackage() of scripts/node-from-npm.js in a process of its own, with the fake registry and its own cache
 * (asynchronously: the registry answers from this process).
 */
function cachedPackage(
  cache: string,
  pinned = integrity,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { cachedPackage } from ${JSON.stringify(path.join(ROOT, 'scripts', 'node-from-npm.js'))};
         process.stdout.write(cachedPackage(JSON.parse(process.argv[1])));`,
        JSON.stringify({ name: NAME, version: VERSION, integrity: pinned, arch: process.arch }),
      ],
      {
        encoding: 'utf8',
        env: {
          ...process.env,
          BDS_BUILD_CACHE: cache,
          npm_config_registry: `${registryUrl}/`,
          npm_config_cache: path.join(cache, 'npm-cache'),
        },
      },
      (error, stdout, stderr) => resolve({ status: error ? (error.code as number) : 0, stdout, stderr }),
    );
  });
}

const tarballRequests = () => served.filter((url) => url.endsWith('.tgz')).length;

describe.skipIf(process.platform === 'win32')('a pinned Node from the build cache', () => {
  it('is checked on every use: changed files are unpacked again, a changed tarball fetched again', async () => {
    const cache = tempDir('bds-build-cache-');
    const first = await cachedPackage(cache);
    expect(first.status, first.stderr).toBe(0);
    const pkg = first.stdout;
    expect(pkg).toBe(path.join(cache, `${NAME}-${VERSION}`, 'node_modules', NAME));
    expect(readFileSync(path.join(pkg, 'bin', 'node'), 'utf8')).toBe(NODE);
    expect(tarballRequests()).toBe(1);

    // The unpacked Node changed in the cache (a cache restored from elsewhere, a tampered file): unpacked again
    // from the cached tarball, which is as pinned, so nothing is fetched.
    writeFileSync(path.join(pkg, 'bin', 'node'), '#!/bin/sh\necho pwned\n');
    const again = await cachedPackage(cache);
    expect(again).toEqual({ status: 0, stdout: pkg, stderr: '' });
    expect(readFileSync(path.join(pkg, 'bin', 'node'), 'utf8')).toBe(NODE);
    expect(tarballRequests()).toBe(1);

    // The cached tarball changed: it no longer has the pinned integrity, so it is fetched again.
    appendFileSync(path.join(cache, 'npm', `${NAME}-${VERSION}.tgz`), 'x');
    const refetched = await cachedPackage(cache);
    expect(refetched).toEqual({ status: 0, stdout: pkg, stderr: '' });
    expect(tarballRequests()).toBe(2);
    expect(readFileSync(path.join(cache, 'npm', `${NAME}-${VERSION}.tgz`))).toEqual(tarball);
  }, 120_000);

  it('a tarball the registry serves with another integrity than the pinned one is refused, and not cached', async () => {
    const cache = tempDir('bds-build-cache-');
    const other = `sha512-${createHash('sha512').update('another package').digest('base64')}`;
    const res = await cachedPackage(cache, other);
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain(
      `${NAME}@${VERSION}: the registry served integrity ${integrity}, not the pinned ${other}`,
    );
    expect(readdirSync(path.join(cache, 'npm'))).toEqual([]);
  }, 60_000);
});
