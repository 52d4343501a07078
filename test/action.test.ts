// The GitHub Action (action.yml), run as a runner runs a composite action: each step's `run` under bash with
// the step's env (inputs substituted), the runner's variables set, and what a step appends to GITHUB_ENV given to
// the steps after it. Its "release" is served from 127.0.0.1: bds as one executable file (the standalone binary
// under BDS_TEST_BIN, else a script running bin/bds.js), whose SHA-256 is pinned into action.yml the way a
// release pins it (scripts/pin-action.js). The deliveries go to the sandbox.

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

/** action.yml as a release would pin it for `sums` (scripts/pin-action.js's own function). */
function pinnedAction(sums: Record<string, string>): Action {
  const text = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { pinned } from ${JSON.stringify(path.join(ROOT, 'scripts', 'pin-action.js'))};
       process.stdout.write(pinned(process.argv[1], process.argv[2], JSON.parse(process.argv[3])));`,
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
  const pins: Record<string, string> = {};
  for (const name of ['bds-linux-x64', 'bds-linux-arm64', 'bds-darwin-x64', 'bds-win-x64.exe']) {
    pins[name] = name === binary ? sum : '0'.repeat(64);
  }
  return pins;
}

/** A release folder served on 127.0.0.1 with bds as bds-linux-x64 and bds-win-x64.exe; counts the requests. */
async function serveRelease(executable: Buffer): Promise<{ url: string; requests: string[] }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    if (req.url === `/v${VERSION}/bds-linux-x64` || req.url === `/v${VERSION}/bds-win-x64.exe`) res.end(executable);
    else res.writeHead(404).end();
  });
  const port = await listenUntilTestEnds(server);
  return { url: `http://127.0.0.1:${port}`, requests };
}

/** bds as one executable file: the standalone binary, or a script that runs bin/bds.js with this Node. */
function bdsExecutable(): Buffer {
  if (BDS_COMMAND.length === 1) return readFileSync(BDS_COMMAND[0]!);
  return Buffer.from(`#!/bin/sh\nexec ${JSON.stringify(BDS_COMMAND[0])} ${JSON.stringify(BDS_COMMAND[1])} "$@"\n`);
}

interface Runner {
  toolCache: string;
  temp: string;
  home: string;
}

function newRunner(): Runner {
  return { toolCache: tempDir('bds-toolcache-'), temp: tempDir('bds-runner-temp-'), home: tempDir('bds-home-') };
}

interface ActionRun {
  steps: Array<{ id: string; code: number | null; stdout: string; stderr: string }>;
  outputs: Record<string, string>;
  summary: string;
}

/** Runs the action's steps in order, as a runner does, until one fails. */
async function runAction(
  action: Action,
  runner: Runner,
  inputs: Record<string, string>,
  extraEnv: Record<string, string>,
): Promise<ActionRun> {
  const files = tempDir('bds-runner-files-');
  const summaryFile = path.join(files, 'summary.md');
  const envFile = path.join(files, 'env');
  const exported: Record<string, string> = {};
  const steps: ActionRun['steps'] = [];
  const stepOutputs: Record<string, Record<string, string>> = {};
  for (const step of action.runs.steps) {
    const outputFile = path.join(files, `${step.id}.output`);
    writeFileSync(outputFile, '');
    writeFileSync(envFile, '');
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
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
      env[name] = String(value).replace(
        /\$\{\{\s*inputs\.([\w-]+)\s*\}\}/g,
        (_, input: string) => inputs[input] ?? action.inputs[input]?.default ?? '',
      );
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
    outputs[name] = value.replace(
      /\$\{\{\s*steps\.([\w-]+)\.outputs\.([\w-]+)\s*\}\}/g,
      (_, id: string, output: string) => stepOutputs[id]?.[output] ?? '',
    );
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

describe('the GitHub Action', () => {
  it('has the inputs and outputs of the contract, and runs scripts/action.sh in a composite action', () => {
    const action = yaml.load(readFileSync(path.join(ROOT, 'action.yml'), 'utf8')) as Action;
    expect(Object.keys(action.inputs).sort()).toEqual(
      ['api-key', 'args', 'base-url', 'fail-on', 'folders', 'period', 'source', 'version', 'wait'].sort(),
    );
    expect(Object.keys(action.outputs).sort()).toEqual(['batch-ids', 'exit-code', 'result']);
    expect(action.runs.using).toBe('composite');
    expect(action.runs.steps.map((s) => s.run)).toEqual([
      'bash "$GITHUB_ACTION_PATH/scripts/action.sh" install',
      'bash "$GITHUB_ACTION_PATH/scripts/action.sh" deliver',
    ]);
    // The pins are the package's version and a SHA-256 value per binary (empty until a release pins it: then
    // npm installs the package), never a sum fetched at run time.
    const install = action.runs.steps[0]!.env;
    expect(install.BDS_PINNED_VERSION).toBe(VERSION);
    for (const variable of ['LINUX_X64', 'LINUX_ARM64', 'DARWIN_X64', 'WIN_X64']) {
      expect(String(install[`BDS_SHA256_${variable}`])).toMatch(/^([0-9a-f]{64})?$/);
    }
  });

  it('installs the pinned binary into the tool cache, delivers, and delivers nothing twice on a re-run', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder();
    const executable = bdsExecutable();
    const release = await serveRelease(executable);
    const action = pinnedAction(pinsFor('bds-linux-x64', sha256(executable)));
    const runner = newRunner();
    const inputs = {
      folders: folder.dir,
      period: '2024-05',
      source,
      'base-url': box.baseUrl,
      'api-key': box.keys.test,
    };
    const env = { BDS_RELEASE_URL: release.url };

    const first = await runAction(action, runner, inputs, env);
    expect(first.steps.map((s) => [s.id, s.code])).toEqual([
      ['install', 0],
      ['deliver', 0],
    ]);
    // The key is masked before anything else, and appears nowhere after.
    expect(first.steps[0]!.stdout.split('\n')[0]).toBe(`::add-mask::${box.keys.test}`);
    expect(first.steps[1]!.stdout + first.steps[1]!.stderr).not.toContain(box.keys.test);
    const cached = path.join(runner.toolCache, 'bds', VERSION, 'linux-x64', 'bds');
    expect(sha256(readFileSync(cached))).toBe(sha256(executable));
    expect(release.requests).toEqual([`/v${VERSION}/bds-linux-x64`]);
    const batch = box.store.batches();
    expect(batch).toHaveLength(1);
    expect(first.outputs).toMatchObject({ 'exit-code': '0', 'batch-ids': batch[0]!.id });
    expect((JSON.parse(first.outputs.result!) as { batch: { id: string } }).batch.id).toBe(batch[0]!.id);
    expect(first.summary).toContain(batch[0]!.id);

    // Again: from the tool cache (checked again), and bds finds the month delivered.
    const second = await runAction(action, runner, inputs, env);
    expect(second.steps.map((s) => s.code)).toEqual([0, 0]);
    expect(release.requests).toHaveLength(1);
    expect(box.store.batches()).toHaveLength(1);
    expect(second.outputs).toMatchObject({ 'exit-code': '0', 'batch-ids': batch[0]!.id });
  });

  it('on a Windows runner installs bds-win-x64.exe as bds.exe, checked against its own pin', async () => {
    const box = await sandbox();
    const executable = bdsExecutable();
    const release = await serveRelease(executable);
    const action = pinnedAction(pinsFor('bds-win-x64.exe', sha256(executable)));
    const runner = newRunner();
    const run = await runAction(
      action,
      runner,
      {
        folders: makeFolder().dir,
        period: '2024-05',
        source: newSource(box),
        'base-url': box.baseUrl,
        'api-key': box.keys.test,
      },
      { BDS_RELEASE_URL: release.url, RUNNER_OS: 'Windows' },
    );
    expect(run.steps.map((s) => [s.id, s.code])).toEqual([
      ['install', 0],
      ['deliver', 0],
    ]);
    expect(release.requests).toEqual([`/v${VERSION}/bds-win-x64.exe`]);
    expect(sha256(readFileSync(path.join(runner.toolCache, 'bds', VERSION, 'win-x64', 'bds.exe')))).toBe(
      sha256(executable),
    );
    expect(box.store.batches()).toHaveLength(1);
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
    const deliver = run.steps[1]!;
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
    expect(downloaded.steps.map((s) => [s.id, s.code])).toEqual([['install', 1]]);
    expect(downloaded.steps[0]!.stdout).toMatch(/^::error title=bds action::.*not [0-9a-f]{64} as action.yml pins/m);
    expect(existsSync(path.join(runner.toolCache, 'bds', VERSION, 'linux-x64', 'bds'))).toBe(false);

    // A tool cache someone wrote into: checked at every run, refused the same way.
    const cached = path.join(runner.toolCache, 'bds', VERSION, 'linux-x64', 'bds');
    mkdirSync(path.dirname(cached), { recursive: true });
    writeFileSync(cached, tampered);
    chmodSync(cached, 0o755);
    const fromCache = await runAction(action, runner, inputs, { BDS_RELEASE_URL: release.url });
    expect(fromCache.steps.map((s) => s.code)).toEqual([1]);
    expect(existsSync(marker)).toBe(false);
  });
});
