// The GitHub Action (action.yml), run as a runner runs a composite action: each step's `run` under bash with
// the step's env (inputs and earlier steps' outputs substituted), the runner's variables set (RUNNER_OS and
// RUNNER_ARCH of a Linux, macOS or Windows runner), and what a step appends to GITHUB_ENV given to the steps after
// it. Its "release" is served from 127.0.0.1: bds as one executable file (the standalone binary under
// BDS_TEST_BIN, else a script running bin/bds.js), whose SHA-256 is pinned into action.yml the way a release pins
// it (scripts/pin-action.js). `npm` is a stand-in first in PATH that records how it was called and lays out a global
// install as npm does on the runner's system. The deliveries go to the sandbox.

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BDS_COMMAND,
  collectOutput,
  listenUntilTestEnds,
  makeFolder,
  newSource,
  periods,
  ROOT,
  sandbox,
  tempDir,
} from './helpers.js';

interface Step {
  id: string;
  shell: string;
  env: Record<string, string>;
  run: string;
}
interface Action {
  inputs: Record<string, { default?: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
}

const yaml = createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown };
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const RELEASE_BINARIES = ['bds-linux-x64', 'bds-linux-arm64', 'bds-darwin-x64', 'bds-win-x64.exe'];

/** action.yml as a release would pin it for `sums` (scripts/pin-action.js's own function). */
function pinnedAction(sums: Record<string, string>): Action {
  const text = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { pinned } from ${JSON.stringify(path.join(ROOT, 'scripts', 'pin-action.js'))};
       try { process.stdout.write(pinned(process.argv[1], process.argv[2], JSON.parse(process.argv[3]))); }
       catch (error) { process.stderr.write(error.message); }`,
      readFileSync(path.join(ROOT, 'action.yml'), 'utf8'),
      VERSION,
      JSON.stringify(sums),
    ],
    { encoding: 'utf8' },
  );
  expect(text.stderr).toBe('');
  return yaml.load(text.stdout) as Action;
}

/** The four binaries' pins: `sum` for `binary`, another sum for each of the others. */
function pinsFor(binary: string, sum: string): Record<string, string> {
  return Object.fromEntries(RELEASE_BINARIES.map((name) => [name, name === binary ? sum : '0'.repeat(64)]));
}

/** A release folder served on 127.0.0.1 with bds as each of the release's binaries; counts the requests. */
async function serveRelease(executable: Buffer): Promise<{ url: string; requests: string[] }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    if (RELEASE_BINARIES.some((name) => req.url === `/v${VERSION}/${name}`)) res.end(executable);
    else res.writeHead(404).end();
  });
  const port = await listenUntilTestEnds(server);
  return { url: `http://127.0.0.1:${port}`, requests };
}

/** A shell script that runs bds: the standalone binary, or bin/bds.js with this Node. */
const BDS_SCRIPT = `#!/bin/sh\nexec ${BDS_COMMAND.map((part) => JSON.stringify(part)).join(' ')} "$@"\n`;

/** bds as one executable file: the standalone binary, or the script. */
function bdsExecutable(): Buffer {
  return BDS_COMMAND.length === 1 ? readFileSync(BDS_COMMAND[0]!) : Buffer.from(BDS_SCRIPT);
}

interface Runner {
  toolCache: string;
  temp: string;
  home: string;
  /** Put first in PATH: `npm`, which writes `npm.args` and `npm.env` here at each call. */
  bin: string;
}

/**
 * A runner whose `npm install -g --prefix X` lays bds out as npm does on RUNNER_OS: in X/bin (a link into
 * X/lib/node_modules), or on Windows as shims in X itself (bds for Git Bash, bds.cmd) beside X/node_modules.
 */
function newRunner(): Runner {
  const runner = {
    toolCache: tempDir('bds-toolcache-'),
    temp: tempDir('bds-runner-temp-'),
    home: tempDir('bds-home-'),
    bin: tempDir('bds-runner-bin-'),
  };
  writeFileSync(path.join(runner.bin, 'bds-program'), BDS_SCRIPT, { mode: 0o755 });
  const npm = `#!/usr/bin/env bash
set -eu
printf '%s\\n' "$@" >>'${runner.bin}/npm.args'
env >>'${runner.bin}/npm.env'
while [[ $1 != --prefix ]]; do shift; done
prefix=$2
if [[ $RUNNER_OS == Windows ]]; then package=$prefix/node_modules/@batch-delivery/bds; else package=$prefix/lib/node_modules/@batch-delivery/bds; fi
mkdir -p "$package/bin"
cp '${runner.bin}/bds-program' "$package/bin/bds.js"
echo '{"name": "@batch-delivery/bds"}' >"$package/package.json"
if [[ $RUNNER_OS == Windows ]]; then
  printf '#!/bin/sh\\nbasedir=$(dirname "$0")\\nexec "$basedir/node_modules/@batch-delivery/bds/bin/bds.js" "$@"\\n' >"$prefix/bds"
  printf '@"%%~dp0\\\\node_modules\\\\@batch-delivery\\\\bds\\\\bin\\\\bds.js" %%*\\r\\n' >"$prefix/bds.cmd"
  chmod 755 "$prefix/bds"
else
  mkdir -p "$prefix/bin"
  ln -s ../lib/node_modules/@batch-delivery/bds/bin/bds.js "$prefix/bin/bds"
fi
`;
  writeFileSync(path.join(runner.bin, 'npm'), npm, { mode: 0o755 });
  return runner;
}

/** How the runner's `npm` was called: each call's arguments, and the environments it saw. */
function npmCalls(runner: Runner): { args: string; env: string } {
  const read = (name: string) =>
    existsSync(path.join(runner.bin, name)) ? readFileSync(path.join(runner.bin, name), 'utf8') : '';
  return { args: read('npm.args'), env: read('npm.env') };
}

interface ActionRun {
  steps: Array<{ id: string; code: number | null; stdout: string; stderr: string }>;
  outputs: Record<string, string>;
  summary: string;
}

/** `${{ inputs.x }}` and `${{ steps.id.outputs.y }}` in a step's env or the action's outputs, substituted. */
function substituted(
  text: string,
  inputs: Record<string, string>,
  action: Action,
  stepOutputs: Record<string, Record<string, string>>,
): string {
  return text
    .replace(
      /\$\{\{\s*inputs\.([\w-]+)\s*\}\}/g,
      (_, input: string) => inputs[input] ?? action.inputs[input]?.default ?? '',
    )
    .replace(
      /\$\{\{\s*steps\.([\w-]+)\.outputs\.([\w-]+)\s*\}\}/g,
      (_, id: string, output: string) => stepOutputs[id]?.[output] ?? '',
    );
}

/**
 * Runs the action's steps in order, as a runner does, until one fails; `beforeStep` is called before each step
 * with the outputs of the steps before it.
 */
async function runAction(
  action: Action,
  runner: Runner,
  inputs: Record<string, string>,
  extraEnv: Record<string, string>,
  beforeStep: (id: string, outputs: Record<string, Record<string, string>>) => void = () => {},
): Promise<ActionRun> {
  const files = tempDir('bds-runner-files-');
  const summaryFile = path.join(files, 'summary.md');
  const envFile = path.join(files, 'env');
  const exported: Record<string, string> = {};
  const steps: ActionRun['steps'] = [];
  const stepOutputs: Record<string, Record<string, string>> = {};
  for (const step of action.runs.steps) {
    beforeStep(step.id, stepOutputs);
    const outputFile = path.join(files, `${step.id}.output`);
    writeFileSync(outputFile, '');
    writeFileSync(envFile, '');
    const env: Record<string, string> = {
      PATH: `${runner.bin}${path.delimiter}${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: runner.home,
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      GITHUB_ACTION_PATH: ROOT,
      GITHUB_OUTPUT: outputFile,
      GITHUB_ENV: envFile,
      GITHUB_STEP_SUMMARY: summaryFile,
      RUNNER_OS: 'Linux',
      RUNNER_ARCH: 'X64',
      RUNNER_TEMP: runner.temp,
      RUNNER_TOOL_CACHE: runner.toolCache,
      ...exported,
      ...extraEnv,
    };
    for (const [name, value] of Object.entries(step.env ?? {})) {
      env[name] = substituted(String(value), inputs, action, stepOutputs);
    }
    expect(step.shell).toBe('bash');
    const child = spawn('bash', ['-c', step.run], { cwd: runner.home, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const result = await collectOutput(child);
    steps.push({ id: step.id, ...result });
    Object.assign(exported, parseCommandFile(readFileSync(envFile, 'utf8')));
    stepOutputs[step.id] = parseCommandFile(readFileSync(outputFile, 'utf8'));
    if (result.code !== 0) break;
  }
  const outputs: Record<string, string> = {};
  for (const [name, { value }] of Object.entries(action.outputs)) {
    outputs[name] = substituted(value, inputs, action, stepOutputs);
  }
  return { steps, outputs, summary: existsSync(summaryFile) ? readFileSync(summaryFile, 'utf8') : '' };
}

/** GITHUB_OUTPUT's and GITHUB_ENV's format: name=value lines, and name<<DELIMITER ... DELIMITER blocks. */
function parseCommandFile(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const heredoc = /^([^=<]+)<<(.+)$/.exec(lines[i]!);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2]!, i + 1);
      values[heredoc[1]!] = lines.slice(i + 1, end).join('\n');
      i = end;
    } else if (lines[i]!.includes('=')) {
      const at = lines[i]!.indexOf('=');
      values[lines[i]!.slice(0, at)] = lines[i]!.slice(at + 1);
    }
  }
  return values;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const codes = (run: ActionRun) => run.steps.map((s) => [s.id, s.code]);

/** A folder to deliver and the inputs that deliver it to a new source of the sandbox. */
async function deliveryInputs(review: { review?: 'reject'; reviewAfter?: number } = {}) {
  const box = await sandbox(review);
  const inputs: Record<string, string> = {
    folders: makeFolder().dir,
    period: '2024-05',
    source: newSource(box),
    'base-url': box.baseUrl,
    'api-key': box.keys.test,
  };
  return { box, inputs };
}

// Each test runs the action's three steps once or more, each spawning bash and bds: on a busy machine, a while.
describe('the GitHub Action', { timeout: 120_000 }, () => {
  it('has the inputs and outputs of the contract; the key goes to the mask and deliver steps only', () => {
    const action = yaml.load(readFileSync(path.join(ROOT, 'action.yml'), 'utf8')) as Action;
    expect(Object.keys(action.inputs).sort()).toEqual(
      ['api-key', 'args', 'base-url', 'fail-on', 'folders', 'period', 'source', 'version', 'wait'].sort(),
    );
    expect(Object.keys(action.outputs).sort()).toEqual(['batch-ids', 'exit-code', 'result']);
    expect(action.runs.using).toBe('composite');
    expect(action.runs.steps.map((s) => s.run)).toEqual([
      'bash "$GITHUB_ACTION_PATH/scripts/action.sh" mask',
      'bash "$GITHUB_ACTION_PATH/scripts/action.sh" install',
      'bash "$GITHUB_ACTION_PATH/scripts/action.sh" deliver',
    ]);
    const [mask, install, deliver] = action.runs.steps.map((s) => JSON.stringify(s.env));
    for (const [step, given] of [
      [mask, true],
      [install, false],
      [deliver, true],
    ] as const) {
      expect(step!.includes('inputs.api-key')).toBe(given);
    }
    // The pins are the package's version and a SHA-256 value per binary (empty until a release pins it: then
    // npm installs the package), never a sum fetched at run time.
    const pins = action.runs.steps[1]!.env;
    expect(pins.BDS_PINNED_VERSION).toBe(VERSION);
    for (const variable of ['LINUX_X64', 'LINUX_ARM64', 'DARWIN_X64', 'WIN_X64']) {
      expect(String(pins[`BDS_SHA256_${variable}`])).toMatch(/^([0-9a-f]{64})?$/);
    }
  });

  it("pin-action.js pins each of the release's four binaries, and refuses sums that lack one", () => {
    const sums = Object.fromEntries(RELEASE_BINARIES.map((name, i) => [name, String(i + 1).repeat(64)]));
    const pins = pinnedAction(sums).runs.steps[1]!.env;
    expect([
      pins.BDS_SHA256_LINUX_X64,
      pins.BDS_SHA256_LINUX_ARM64,
      pins.BDS_SHA256_DARWIN_X64,
      pins.BDS_SHA256_WIN_X64,
    ]).toEqual(['1', '2', '3', '4'].map((digit) => digit.repeat(64)));
    const lacking = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { pinned } from ${JSON.stringify(path.join(ROOT, 'scripts', 'pin-action.js'))};
         pinned('', '1.0.0', JSON.parse(process.argv[1]));`,
        JSON.stringify({ ...sums, 'bds-win-x64.exe': undefined }),
      ],
      { encoding: 'utf8' },
    );
    expect(lacking.stderr).toContain('SHA256SUMS has no bds-win-x64.exe');
  });

  it('installs the pinned binary into the tool cache, delivers, and delivers nothing twice on a re-run', async () => {
    const { box, inputs } = await deliveryInputs();
    const executable = bdsExecutable();
    const release = await serveRelease(executable);
    const action = pinnedAction(pinsFor('bds-linux-x64', sha256(executable)));
    const runner = newRunner();
    const env = { BDS_RELEASE_URL: release.url };

    const first = await runAction(action, runner, inputs, env);
    expect(codes(first)).toEqual([
      ['mask', 0],
      ['install', 0],
      ['deliver', 0],
    ]);
    // The key is masked before anything else, and appears nowhere after.
    expect(first.steps[0]!.stdout).toBe(`::add-mask::${box.keys.test}\n`);
    for (const step of first.steps.slice(1)) expect(step.stdout + step.stderr).not.toContain(box.keys.test);
    const cached = path.join(runner.toolCache, 'bds', VERSION, 'linux-x64', 'bds');
    expect(sha256(readFileSync(cached))).toBe(sha256(executable));
    expect(release.requests).toEqual([`/v${VERSION}/bds-linux-x64`]);
    expect(npmCalls(runner).args).toBe('');
    const batch = box.store.batches();
    expect(batch).toHaveLength(1);
    expect(first.outputs).toMatchObject({ 'exit-code': '0', 'batch-ids': batch[0]!.id });
    expect((JSON.parse(first.outputs.result!) as { batch: { id: string } }).batch.id).toBe(batch[0]!.id);
    expect(first.summary).toContain(batch[0]!.id);

    // Again, asking for v<version>: the same pinned binary, from the tool cache (checked again), and bds finds
    // the month delivered.
    const second = await runAction(action, runner, { ...inputs, version: `v${VERSION}` }, env);
    expect(second.steps.map((s) => s.code)).toEqual([0, 0, 0]);
    expect(release.requests).toHaveLength(1);
    expect(npmCalls(runner).args).toBe('');
    expect(box.store.batches()).toHaveLength(1);
    expect(second.outputs).toMatchObject({ 'exit-code': '0', 'batch-ids': batch[0]!.id });
  });

  it('on a Windows runner installs bds-win-x64.exe as bds.exe, checked against its own pin', async () => {
    const { box, inputs } = await deliveryInputs();
    const executable = bdsExecutable();
    const release = await serveRelease(executable);
    const action = pinnedAction(pinsFor('bds-win-x64.exe', sha256(executable)));
    const runner = newRunner();
    const run = await runAction(action, runner, inputs, { BDS_RELEASE_URL: release.url, RUNNER_OS: 'Windows' });
    expect(codes(run)).toEqual([
      ['mask', 0],
      ['install', 0],
      ['deliver', 0],
    ]);
    expect(release.requests).toEqual([`/v${VERSION}/bds-win-x64.exe`]);
    expect(sha256(readFileSync(path.join(runner.toolCache, 'bds', VERSION, 'win-x64', 'bds.exe')))).toBe(
      sha256(executable),
    );
    expect(box.store.batches()).toHaveLength(1);
  });

  it('on a macOS runner installs bds-darwin-x64; on Apple silicon, with no binary, the npm package', async () => {
    const { box, inputs } = await deliveryInputs();
    const executable = bdsExecutable();
    const release = await serveRelease(executable);
    const action = pinnedAction(pinsFor('bds-darwin-x64', sha256(executable)));
    const intel = await runAction(action, newRunner(), inputs, { BDS_RELEASE_URL: release.url, RUNNER_OS: 'macOS' });
    expect(intel.steps.map((s) => s.code)).toEqual([0, 0, 0]);
    expect(release.requests).toEqual([`/v${VERSION}/bds-darwin-x64`]);

    const runner = newRunner();
    const arm = await runAction(action, runner, (await deliveryInputs()).inputs, {
      BDS_RELEASE_URL: release.url,
      RUNNER_OS: 'macOS',
      RUNNER_ARCH: 'ARM64',
    });
    expect(arm.steps.map((s) => s.code)).toEqual([0, 0, 0]);
    expect(release.requests).toHaveLength(1);
    expect(npmCalls(runner).args).toContain(`@batch-delivery/bds@${VERSION}`);
    expect(arm.outputs['exit-code']).toBe('0');
    expect(box.store.batches()).toHaveLength(1);
  });

  it("npm where no binary is pinned: the exact version, no install script, no key, never an earlier job's install", async () => {
    const { box, inputs } = await deliveryInputs();
    const action = pinnedAction(pinsFor('bds-linux-x64', '1'.repeat(64)));
    const runner = newRunner();
    // What a self-hosted runner's tool cache may hold: an npm install that is not bds.
    const marker = path.join(tempDir('bds-marker-'), 'ran');
    const planted = path.join(runner.toolCache, 'bds', '0.0.9', 'npm', 'bin', 'bds');
    mkdirSync(path.dirname(planted), { recursive: true });
    writeFileSync(planted, `#!/bin/sh\ntouch ${JSON.stringify(marker)}\n`, { mode: 0o755 });

    for (const attempt of [1, 2]) {
      const run = await runAction(action, runner, { ...inputs, version: 'v0.0.9' }, {});
      expect(codes(run)).toEqual([
        ['mask', 0],
        ['install', 0],
        ['deliver', 0],
      ]);
      expect(existsSync(marker)).toBe(false);
      // Each run installs anew, into a new folder of the job's temp folder.
      const { args, env } = npmCalls(runner);
      expect(args.match(/^install$/gm)).toHaveLength(attempt);
      expect(run.steps[1]!.stdout).toContain('npm install -g --ignore-scripts @batch-delivery/bds@0.0.9');
      expect(args.split('install\n').slice(1)).toEqual(
        Array(attempt).fill(
          expect.stringMatching(
            new RegExp(
              `^-g\\n--prefix\\n${runner.temp}/bds-npm-\\w+\\n--ignore-scripts\\n.*@batch-delivery/bds@0\\.0\\.9\\n$`,
              's',
            ),
          ),
        ),
      );
      expect(env).not.toContain(box.keys.test);
      expect(env).not.toMatch(/^INPUT_API_KEY=/m);
    }
    expect(box.store.batches()).toHaveLength(1);
  });

  it('on a Windows runner with no binary for the version, runs the shim npm puts in the prefix itself', async () => {
    const { box, inputs } = await deliveryInputs();
    const runner = newRunner();
    // CI runs this for real (.ci/steps/60-wine.sh): its `npm` installs the release's tarball as npm on Windows
    // lays it out (with npm's own cmd-shim), and its `node` is Windows Node under Wine.
    for (const tool of ['npm', 'node']) {
      const real = process.env[`BDS_TEST_WINDOWS_${tool.toUpperCase()}`];
      if (!real) continue;
      rmSync(path.join(runner.bin, tool), { force: true });
      symlinkSync(real, path.join(runner.bin, tool));
    }
    // A version other than the one pinned (and, until a release pins it, every version): no binary.
    const run = await runAction(
      pinnedAction(pinsFor('bds-win-x64.exe', '1'.repeat(64))),
      runner,
      { ...inputs, version: '0.0.9' },
      {
        RUNNER_OS: 'Windows',
      },
    );
    expect(codes(run)).toEqual([
      ['mask', 0],
      ['install', 0],
      ['deliver', 0],
    ]);
    const [prefix] = readdirSync(runner.temp).filter((name) => name.startsWith('bds-npm-'));
    const laidOut = readdirSync(path.join(runner.temp, prefix!));
    expect(laidOut).toEqual(expect.arrayContaining(['bds', 'bds.cmd', 'node_modules']));
    expect(laidOut).not.toContain('bin');
    expect(run.outputs['batch-ids']).toBe(box.store.batches()[0]!.id);
  });

  it('the deliver step runs only what the install step checked: a binary or an npm install changed since is refused', async () => {
    const { box, inputs } = await deliveryInputs();
    const marker = path.join(tempDir('bds-marker-'), 'ran');
    const tampered = `#!/bin/sh\ntouch ${JSON.stringify(marker)}\n`;
    const executable = bdsExecutable();
    const release = await serveRelease(executable);
    const action = pinnedAction(pinsFor('bds-linux-x64', sha256(executable)));
    const swap = (file: string) => {
      renameSync(file, `${file}.old`);
      writeFileSync(file, tampered, { mode: 0o755 });
    };

    const binary = await runAction(action, newRunner(), inputs, { BDS_RELEASE_URL: release.url }, (id, outputs) => {
      if (id === 'deliver') swap(outputs.install!.bin!);
    });
    expect(codes(binary)).toEqual([
      ['mask', 0],
      ['install', 0],
      ['deliver', 1],
    ]);
    expect(binary.steps[2]!.stdout).toMatch(/^::error title=bds action::.*bds has changed since the install step/m);

    const npm = await runAction(action, newRunner(), { ...inputs, version: '0.0.9' }, {}, (id, outputs) => {
      if (id === 'deliver') {
        appendFileSync(path.join(outputs.install!.root!, 'lib/node_modules/@batch-delivery/bds/package.json'), ' ');
      }
    });
    expect(codes(npm)).toEqual([
      ['mask', 0],
      ['install', 0],
      ['deliver', 1],
    ]);
    expect(npm.steps[2]!.stdout).toMatch(
      /^::error title=bds action::.*bds-npm-\w+ has changed since the install step/m,
    );
    expect(existsSync(marker)).toBe(false);
    expect(box.store.batches()).toHaveLength(0);
  });

  it("wait: True (GitHub's YAML boolean in any case) waits, and the summary shows the verdict; wait: yes is refused", async () => {
    const { box, inputs } = await deliveryInputs({ review: 'reject', reviewAfter: 0 });
    const executable = bdsExecutable();
    const release = await serveRelease(executable);
    const action = pinnedAction(pinsFor('bds-linux-x64', sha256(executable)));
    const env = { BDS_RELEASE_URL: release.url };

    const refused = await runAction(action, newRunner(), { ...inputs, wait: 'yes' }, env);
    expect(codes(refused).at(-1)).toEqual(['deliver', 1]);
    expect(refused.steps[2]!.stdout).toMatch(/^::error title=bds action::the input wait is 'yes': true or false$/m);
    expect(box.store.batches()).toHaveLength(0);

    const waited = await runAction(action, newRunner(), { ...inputs, wait: 'True' }, env);
    expect(codes(waited).at(-1)).toEqual(['deliver', 7]);
    expect(waited.outputs['exit-code']).toBe('7');
    expect(box.store.batches().map((b) => b.status)).toEqual(['rejected']);
    expect(waited.summary).toContain('| Review | rejected |');
    expect(waited.steps[2]!.stderr).toMatch(/^::error title=bds::--fail-on rejected: 2024-05 records is rejected/m);
  });

  it('folders: a pattern (out/2023-*) delivers every month it matches', async () => {
    const box = await sandbox();
    const root = tempDir('bds-months-');
    for (const [i, period] of ['2023-02', '2023-01'].entries()) {
      renameSync(makeFolder({ records: 3 + i }).dir, path.join(root, `records-${period}`));
    }
    const executable = bdsExecutable();
    const release = await serveRelease(executable);
    const run = await runAction(
      pinnedAction(pinsFor('bds-linux-x64', sha256(executable))),
      newRunner(),
      {
        folders: path.join(root, 'records-2023-*'),
        source: newSource(box),
        'base-url': box.baseUrl,
        'api-key': box.keys.test,
      },
      { BDS_RELEASE_URL: release.url },
    );
    expect(run.steps.map((s) => s.code)).toEqual([0, 0, 0]);
    expect(periods(box)).toEqual(['2023-01', '2023-02']);
    expect(run.outputs['batch-ids']!.split(' ')).toHaveLength(2);
  });

  it('fails the step on a failing month, annotated, with its exit code as an output', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const broken = makeFolder({ lines: ['{"_object": "orders", "order_id": "o1", "amount": 1}', '{"broken": '] });
    const executable = bdsExecutable();
    const release = await serveRelease(executable);
    const action = pinnedAction(pinsFor('bds-linux-x64', sha256(executable)));
    const run = await runAction(
      action,
      newRunner(),
      { folders: broken.dir, period: '2024-05', source, 'base-url': box.baseUrl, 'api-key': box.keys.test },
      { BDS_RELEASE_URL: release.url },
    );
    const deliver = run.steps[2]!;
    expect(deliver.code).not.toBe(0);
    expect(run.outputs['exit-code']).toBe(String(deliver.code));
    expect(deliver.stdout + deliver.stderr).toMatch(/^::error title=bds::.*line 2/m);
    expect(JSON.parse(run.outputs.result!)).toHaveProperty('error');
    expect(box.store.batches()).toHaveLength(0);
  });

  it('refuses a binary whose SHA-256 is not the pinned one, downloaded or cached, before it runs', async () => {
    const marker = path.join(tempDir('bds-marker-'), 'ran');
    const tampered = Buffer.from(`#!/bin/sh\ntouch ${JSON.stringify(marker)}\n`);
    const genuine = bdsExecutable();
    const release = await serveRelease(tampered);
    const action = pinnedAction(pinsFor('bds-linux-x64', sha256(genuine)));
    const runner = newRunner();
    const inputs = { folders: makeFolder().dir, period: '2024-05' };

    const downloaded = await runAction(action, runner, inputs, { BDS_RELEASE_URL: release.url });
    expect(codes(downloaded)).toEqual([
      ['mask', 0],
      ['install', 1],
    ]);
    expect(downloaded.steps[1]!.stdout).toMatch(/^::error title=bds action::.*not [0-9a-f]{64} as action.yml pins/m);
    expect(existsSync(path.join(runner.toolCache, 'bds', VERSION, 'linux-x64', 'bds'))).toBe(false);

    // A tool cache someone wrote into: checked at every run, refused the same way.
    const cached = path.join(runner.toolCache, 'bds', VERSION, 'linux-x64', 'bds');
    mkdirSync(path.dirname(cached), { recursive: true });
    writeFileSync(cached, tampered);
    chmodSync(cached, 0o755);
    const fromCache = await runAction(action, runner, inputs, { BDS_RELEASE_URL: release.url });
    expect(fromCache.steps.map((s) => s.code)).toEqual([0, 1]);
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses a version that is not an exact one, before npm is asked', async () => {
    const runner = newRunner();
    const run = await runAction(
      pinnedAction(pinsFor('bds-linux-x64', '1'.repeat(64))),
      runner,
      {
        folders: makeFolder().dir,
        version: 'latest',
      },
      {},
    );
    expect(codes(run)).toEqual([
      ['mask', 0],
      ['install', 1],
    ]);
    expect(run.steps[1]!.stdout).toMatch(/^::error title=bds action::the input version is 'latest': an exact version/m);
    expect(npmCalls(runner).args).toBe('');
  });
});
