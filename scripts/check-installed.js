#!/usr/bin/env node
// Whether an install of bds holds exactly the runtime tree its npm-shrinkwrap.json locks: every package the
// shrinkwrap names for the runtime (not `dev`, not `devOptional`) at its locked version, where Node finds it
// from bds (npm nests them under bds in a global install and hoists them in a project's), and no other
// package. For CI's install of the release tarball (.ci/run) and test/package.test.ts.
//
//   node scripts/check-installed.js <root>    the folder whose node_modules holds @batch-delivery/bds:
//                                             a project, or $PREFIX/lib for `npm install -g --prefix $PREFIX`
//
// Prints one line per difference and exits 1 if there is any; else one line saying how many matched.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const NAME = '@batch-delivery/bds';

/** The differences between the packages installed under `root` and the runtime tree bds's shrinkwrap locks. */
export function installedDifferences(root) {
  const installed = installedPackages(root);
  const bds = `node_modules/${NAME}`;
  const lock = JSON.parse(fs.readFileSync(path.join(root, bds, 'npm-shrinkwrap.json'), 'utf8'));
  const runtime = Object.entries(lock.packages).filter(([where, entry]) => where && !entry.dev && !entry.devOptional);
  const problems = [];
  const found = new Map([['', bds]]); // the lock's path of each package -> where it is installed
  // Shallow ones first: a nested package is looked for from where its parent was found.
  for (const [where, entry] of runtime.sort(([a], [b]) => a.split('/').length - b.split('/').length)) {
    const last = where.lastIndexOf('node_modules/');
    const parent = found.get(where.slice(0, last).replace(/\/$/, ''));
    const at = parent && resolve(installed, parent, where.slice(last + 'node_modules/'.length));
    if (!at) problems.push(`${where}@${entry.version} is locked but not installed where bds finds it`);
    else if (installed.get(at) !== entry.version)
      problems.push(`${at} is ${installed.get(at)}, not the locked ${entry.version}`);
    if (at) found.set(where, at);
  }
  const expected = new Set(found.values());
  for (const [at, version] of installed) {
    if (!expected.has(at)) problems.push(`${at}@${version} is installed but not locked`);
  }
  return { problems, count: runtime.length };
}

/** Where Node finds package `name` from the package installed at `from`: its node_modules, then its parents'. */
function resolve(installed, from, name) {
  for (let dir = from; ; dir = dir.slice(0, dir.lastIndexOf('/node_modules/'))) {
    const candidate = `${dir}/node_modules/${name}`;
    if (installed.has(candidate)) return candidate;
    if (!dir.includes('/node_modules/'))
      return installed.has(`node_modules/${name}`) ? `node_modules/${name}` : undefined;
  }
}

/** Every package under `dir`'s node_modules, nested ones too, by its path as a lockfile writes it. */
function installedPackages(dir, prefix = '', found = new Map()) {
  const modules = path.join(dir, 'node_modules');
  let names;
  try {
    names = fs.readdirSync(modules);
  } catch {
    return found;
  }
  for (const name of names.filter((n) => !n.startsWith('.'))) {
    const packages = name.startsWith('@')
      ? fs.readdirSync(path.join(modules, name)).map((n) => `${name}/${n}`)
      : [name];
    for (const pkg of packages) {
      const where = `${prefix}node_modules/${pkg}`;
      const folder = path.join(modules, pkg);
      found.set(where, JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8')).version);
      installedPackages(folder, `${where}/`, found);
    }
  }
  return found;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = process.argv[2];
  if (!root || process.argv.length > 3) {
    process.stderr.write('usage: node scripts/check-installed.js <folder whose node_modules holds bds>\n');
    process.exit(2);
  }
  const { problems, count } = installedDifferences(path.resolve(root));
  if (problems.length) {
    process.stderr.write(`${problems.join('\n')}\n`);
    process.exit(1);
  }
  process.stdout.write(
    `ok: the ${count} runtime packages npm-shrinkwrap.json locks, at their versions, nothing else\n`,
  );
}
