// The package as another project gets it: `npm pack`, installed into a fresh project (exactly the runtime tree
// its npm-shrinkwrap.json locks), imported by a script that delivers to the sandbox with progress events, and
// compiled against by a strict TypeScript consumer.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, tempDir } from './helpers.js';

const npm = (args: string[], cwd: string): string =>
  execFileSync('npm', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' },
  });

describe('the packed package in another project', () => {
  it('installs, delivers from a script with events, and type-checks a strict consumer', () => {
    const packDir = tempDir('bds-pack-');
    // dist/ is already built by `npm test`; the scripts would rebuild it under the other tests' feet.
    npm(['pack', '--silent', '--ignore-scripts', '--pack-destination', packDir], ROOT);
    const tarball = path.join(
      packDir,
      readdirSync(packDir).find((name) => name.endsWith('.tgz'))!,
    );
    const project = tempDir('bds-consumer-');
    writeFileSync(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'pipeline', private: true, type: 'module' }),
    );
    npm(['install', '--prefer-offline', '--no-save', '--ignore-scripts', tarball], project);
    // Exactly the runtime tree the tarball's npm-shrinkwrap.json locks, whatever the registry's newest versions.
    const installed = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'check-installed.js'), project], {
      encoding: 'utf8',
    });
    expect({ status: installed.status, stderr: installed.stderr }).toEqual({ status: 0, stderr: '' });

    writeFileSync(
      path.join(project, 'deliver.mjs'),
      `import { deliver, EXIT_CODES } from '@batch-delivery/bds';
import { startSandbox } from '@batch-delivery/bds/sandbox';
const sandbox = await startSandbox({ port: 0 });
const steps = [];
try {
  const result = await deliver({
    dir: process.argv[2],
    env: { HOME: process.argv[3], BDS_BASE_URL: sandbox.baseUrl, BDS_API_KEY: sandbox.keys.test, BDS_SOURCE_ID: sandbox.sourceId },
    onEvent: (event) => { if (event.type === 'step') steps.push(event.step); },
  });
  console.log(JSON.stringify({ status: result.batch.status, steps, ok: EXIT_CODES.ok }));
} finally {
  await sandbox.close();
}
`,
    );
    const example = path.join(project, 'node_modules', '@batch-delivery', 'bds', 'examples', 'records-2024-05');
    const out = JSON.parse(
      execFileSync(process.execPath, ['deliver.mjs', example, tempDir()], { cwd: project, encoding: 'utf8' }),
    );
    expect(out).toEqual({
      status: 'received',
      steps: ['checking', 'checked', 'creating', 'uploading', 'completing', 'done'],
      ok: 0,
    });

    mkdirSync(path.join(project, 'src'));
    writeFileSync(
      path.join(project, 'src', 'pipeline.ts'),
      `import { BdsError, deliver, type DeliveryEvent, type DeliverResult } from '@batch-delivery/bds';
import { startSandbox, type Sandbox } from '@batch-delivery/bds/sandbox';
export async function run(dir: string, signal: AbortSignal): Promise<DeliverResult | number> {
  const sandbox: Sandbox = await startSandbox({ port: 0 });
  try {
    return await deliver({ dir, signal, baseUrl: sandbox.baseUrl, apiKey: sandbox.keys.test, sourceId: sandbox.sourceId,
      onEvent: (event: DeliveryEvent) => { if (event.type === 'progress') console.log(event.sent / event.total); } });
  } catch (error) {
    if (error instanceof BdsError) return error.exitCode;
    throw error;
  } finally {
    await sandbox.close();
  }
}
`,
    );
    writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          noEmit: true,
          types: ['node'],
          typeRoots: [path.join(ROOT, 'node_modules', '@types')],
        },
        include: ['src'],
      }),
    );
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], {
      encoding: 'utf8',
    });
  }, 120_000);
});
