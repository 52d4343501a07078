// The cron recipe of docs/recipes.md, run as cron runs it: its crontab's PATH line and command line, taken from
// the document, under /bin/sh with cron's environment (HOME, and PATH=/usr/bin:/bin unless the crontab sets it),
// for bds installed with `npm install -g --prefix ~/.local` and as the standalone binary in /usr/local/bin.
// Folders outside the test's own are mapped to temp folders: /home/scrub, /usr/local/bin, /srv/scrub, /var/log.

import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BDS_COMMAND, BIN, collectOutput, makeFolder, newSource, ROOT, sandbox, tempDir } from './helpers.js';

/** The crontab of the cron recipe: its PATH line (if any) and the job's command (the schedule's five fields dropped). */
function cronRecipe(): { path: string | undefined; command: string } {
  const text = readFileSync(path.join(ROOT, 'docs', 'recipes.md'), 'utf8');
  const block = /^## cron$[\s\S]*?^```cron\n([\s\S]*?)^```$/m.exec(text)?.[1];
  if (!block) throw new Error('docs/recipes.md has no ```cron block under ## cron');
  const lines = block.trimEnd().split('\n');
  const job = lines.find((line) => /^[\d*]/.test(line));
  if (!job) throw new Error('the cron block has no job line');
  return {
    path: lines.find((line) => line.startsWith('PATH='))?.slice('PATH='.length),
    // cron hands the rest of the line to /bin/sh, with \% turned into %.
    command: job.split(/\s+/).slice(5).join(' ').replace(/\\%/g, '%'),
  };
}

interface Machine {
  home: string;
  usrLocalBin: string;
  srv: string;
  log: string;
}

/** Runs the recipe's line as cron would on `machine`, with the crontab's PATH or cron's own. */
async function runAsCron(
  machine: Machine,
  crontabPath: string | undefined,
): Promise<{ code: number | null; log: string }> {
  const { command } = cronRecipe();
  const local = command.replace('cd /srv/scrub', `cd ${machine.srv}`).replace('/var/log/bds.log', machine.log);
  expect(local).not.toMatch(/\/srv\/scrub|\/var\/log/);
  const PATH = crontabPath ?? '/usr/bin:/bin';
  const child = spawn('/bin/sh', ['-c', local], {
    env: { HOME: machine.home, LOGNAME: 'scrub', SHELL: '/bin/sh', PATH },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { code } = await collectOutput(child);
  let log = '';
  try {
    log = readFileSync(machine.log, 'utf8');
  } catch {
    // no log: the shell failed before the redirection
  }
  return { code, log };
}

/** The recipe's PATH line on this machine: its folders mapped to the temp ones, and node's added if it is elsewhere, as the recipe says. */
function recipePath(machine: Machine): string {
  const written = cronRecipe().path;
  if (written === undefined) throw new Error('the cron recipe sets no PATH: under cron, bds is not found');
  const folders = written
    .replace('/home/scrub', machine.home)
    .replace('/usr/local/bin', machine.usrLocalBin)
    .split(':');
  const nodeFolder = path.dirname(process.execPath);
  return [...folders, ...(folders.includes(nodeFolder) ? [] : [nodeFolder])].join(':');
}

/** A machine with the recipe's config file (the key in a key file) and ./out in /srv/scrub, for the sandbox. */
async function machineFor(install: 'prefix' | 'binary'): Promise<Machine & { received: () => number }> {
  const box = await sandbox();
  const home = tempDir('bds-cron-home-');
  const machine = {
    home,
    usrLocalBin: tempDir('bds-usr-local-bin-'),
    srv: tempDir('bds-srv-'),
    log: path.join(tempDir('bds-var-log-'), 'bds.log'),
  };
  const out = makeFolder();
  symlinkSync(out.dir, path.join(machine.srv, 'out'));
  const keyFile = path.join(home, '.bds-key');
  writeFileSync(keyFile, `${box.keys.test}\n`, { mode: 0o600 });
  mkdirSync(path.join(home, '.config', 'bds'), { recursive: true });
  const config = path.join(home, '.config', 'bds', 'config.json');
  writeFileSync(config, JSON.stringify({ baseUrl: box.baseUrl, sourceId: newSource(box), apiKeyFile: keyFile }));
  chmodSync(config, 0o600);
  if (install === 'prefix') {
    // What `npm install -g --prefix ~/.local` makes: ~/.local/bin/bds, a link to the package's bin/bds.js.
    mkdirSync(path.join(home, '.local', 'bin'), { recursive: true });
    symlinkSync(BIN, path.join(home, '.local', 'bin', 'bds'));
  } else {
    // The standalone binary when the suite runs against it (BDS_TEST_BIN), else bin/bds.js in its place.
    symlinkSync(BDS_COMMAND.length === 1 ? BDS_COMMAND[0]! : BIN, path.join(machine.usrLocalBin, 'bds'));
  }
  return { ...machine, received: () => box.store.batches().filter((b) => b.status === 'received').length };
}

describe('the cron recipe (docs/recipes.md), under cron', () => {
  it.each(['prefix', 'binary'] as const)(
    'delivers last month with bds installed as %s, thanks to its PATH line',
    async (install) => {
      const machine = await machineFor(install);
      const res = await runAsCron(machine, recipePath(machine));
      expect(res.log).toMatch(/^Delivered bat_\w+ \(received\)\.$/m);
      expect(res.code).toBe(0);
      expect(machine.received()).toBe(1);
    },
  );

  it("without it, cron's PATH=/usr/bin:/bin finds no bds (exit 127)", async () => {
    const machine = await machineFor('prefix');
    const res = await runAsCron(machine, undefined);
    expect(res.code).toBe(127);
    expect(res.log).toMatch(/bds: not found/);
    expect(machine.received()).toBe(0);
  });
});
