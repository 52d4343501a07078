#!/usr/bin/env node
// The shape of src/, checked in `npm test`: no import circle (type-only and dynamic imports included), no
// import up the floors, and each part imports only what docs/design.md says it may. Prints every offence and
// exits 1 if there is any; with --rules, prints the rules (test/docs.test.ts compares them with
// docs/design.md). A folder given as the argument is checked instead of src/ (a test's made-up tree).

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = path.resolve(process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? path.join(ROOT, 'src'));

/**
 * The floors of src/, lowest first: a module imports only from its own floor or those below it. A path takes the
 * first prefix that it starts with; every module is on a floor.
 */
const FLOORS = [
  [
    'core/platform.ts',
    'core/plural.ts',
    'core/clean-text.ts',
    'core/guards.ts',
    'core/errors.ts',
    'core/option-names.ts',
    'core/files.ts',
    'core/deferred.ts',
    'core/version.ts',
  ],
  ['core/api/', 'core/datapass/', 'core/preflight/', 'core/month.ts', 'core/failure.ts'],
  ['core/settings/', 'core/runtime.ts'],
  ['core/operation.ts', 'core/options.ts', 'core/events.ts'],
  ['core/delivery/', 'core/status/', 'core/diagnostics/', 'core/monitoring/', 'core/login.ts', 'core/service.ts'],
  ['cli/', 'sandbox/', 'index.ts', 'process-runtime.ts'],
];

/** A module's floor (its index in FLOORS), -1 for none. */
function floorOf(file) {
  return FLOORS.findIndex((floor) => floor.some((prefix) => file.startsWith(prefix)));
}

/** Which modules a part may import besides its own; the first matching prefix of a file's path decides. */
const ALLOWED = [
  ['sandbox/', ['sandbox/', 'core/api/types.ts']],
  ['core/api/', ['core/api/', 'core/errors.ts', 'core/clean-text.ts', 'core/plural.ts']],
  // core/files.ts (the crash-safe write of every file bds keeps) imports nothing of bds: the pass cache,
  // the delivery records, the locks and the user's config file all write through it.
  // core/platform.ts (the path rules of the system bds runs on) imports nothing of bds either, nor does
  // core/plural.ts (a noun after a count), which every part may import. core/option-names.ts (how the door a call
  // came through names its options) is types alone, for the parts whose messages name an option.
  [
    'core/datapass/',
    ['core/datapass/', 'core/errors.ts', 'core/guards.ts', 'core/files.ts', 'core/platform.ts', 'core/plural.ts'],
  ],
  [
    'core/preflight/',
    [
      'core/preflight/',
      'core/errors.ts',
      'core/guards.ts',
      'core/api/types.ts',
      'core/option-names.ts',
      'core/platform.ts',
      'core/plural.ts',
    ],
  ],
  [
    'core/settings/',
    [
      'core/settings/',
      'core/errors.ts',
      'core/guards.ts',
      'core/runtime.ts',
      'core/api/',
      'core/files.ts',
      'core/option-names.ts',
      'core/platform.ts',
      'core/plural.ts',
    ],
  ],
  ['core/files.ts', ['core/platform.ts']],
  ['core/option-names.ts', []],
  ['core/platform.ts', []],
  ['core/plural.ts', []],
  [
    'core/monitoring/',
    [
      'core/monitoring/',
      'core/errors.ts',
      'core/guards.ts',
      'core/api/',
      'core/delivery/',
      'core/files.ts',
      'core/platform.ts',
      'core/plural.ts',
    ],
  ],
  ['core/', ['core/']],
];
/** Packages the core never imports: the command line's. */
const CLI_PACKAGES = ['commander', 'chalk', 'ora'];

/**
 * The rules as docs/design.md states them: the floors, highest first; then one line a part, then the packages the
 * core never imports.
 */
function rulesText() {
  const width = Math.max(...ALLOWED.map(([prefix]) => prefix.length));
  return [
    ...FLOORS.map((floor, index) => `floor ${index}: ${floor.join(', ')}`).reverse(),
    '',
    ...ALLOWED.map(([prefix, allowed]) => `${prefix.padEnd(width)} → ${allowed.join(', ') || 'nothing of bds'}`),
    `${'core/'.padEnd(width)} ✗ ${CLI_PACKAGES.join(', ')}`,
  ].join('\n');
}

if (process.argv.includes('--rules')) {
  console.log(rulesText());
  process.exit(0);
}

function sources(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(file);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.as.ts') ? [file] : [];
  });
}

/** Every module a file imports: static, type-only, re-exported and dynamic. */
function importsOf(file) {
  const text = fs.readFileSync(file, 'utf8');
  const specifiers = [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*'([^']+)'|import\(\s*'([^']+)'\s*\)/g),
  ].map((m) => m[1] ?? m[2]);
  return specifiers.map((specifier) => {
    if (!specifier.startsWith('.')) return { package: specifier.split('/')[0] };
    return { file: path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts') };
  });
}

const files = sources(SRC);
const graph = new Map(files.map((file) => [file, importsOf(file)]));
const rel = (file) => path.relative(SRC, file);
const problems = [];

for (const [file, imports] of graph) {
  const from = rel(file);
  const rule = ALLOWED.find(([prefix]) => from.startsWith(prefix));
  const floor = floorOf(from);
  if (floor < 0) problems.push(`${from} is on no floor (scripts/check-imports.js, FLOORS)`);
  for (const imported of imports) {
    if (imported.package) {
      if (from.startsWith('core/') && CLI_PACKAGES.includes(imported.package))
        problems.push(`${from} imports ${imported.package}`);
      continue;
    }
    const to = rel(imported.file);
    if (!fs.existsSync(imported.file) && !to.endsWith('.generated.ts'))
      problems.push(`${from} imports ${to}, which does not exist`);
    if (floorOf(to) > floor) problems.push(`${from} (floor ${floor}) imports ${to}, up on floor ${floorOf(to)}`);
    if (rule && !rule[1].some((prefix) => to.startsWith(prefix)))
      problems.push(`${from} imports ${to}: ${rule[0]} may import only ${rule[1].join(', ')}`);
  }
}

// Circles: a depth-first search that reports each back edge's cycle once.
const state = new Map();
const stack = [];
function visit(file) {
  state.set(file, 'open');
  stack.push(file);
  for (const { file: next } of graph.get(file) ?? []) {
    if (!next || !graph.has(next)) continue;
    if (state.get(next) === 'open')
      problems.push(`import circle: ${[...stack.slice(stack.indexOf(next)), next].map(rel).join(' → ')}`);
    else if (!state.has(next)) visit(next);
  }
  stack.pop();
  state.set(file, 'done');
}
for (const file of files) if (!state.has(file)) visit(file);

if (problems.length > 0) {
  console.error(
    `src/ has ${problems.length} import problem${problems.length === 1 ? '' : 's'}:\n${problems.map((p) => `  ${p}`).join('\n')}`,
  );
  process.exit(1);
}
console.log(`src/: ${files.length} modules, no import circle, none up the floors, every import allowed`);
