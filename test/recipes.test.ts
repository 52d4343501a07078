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

/** A fenced block of docs/recipes.md under `heading`, of the given info string. */
function recipeBlock(heading: string, info: string): string {
  const text = readFileSync(path.join(ROOT, 'docs', 'recipes.md'), 'utf8');
  const section = text.split(/^## /m).find((part) => part.startsWith(`${heading}\n`));
  const block = section && new RegExp(`^\`\`\`${info}\\n([\\s\\S]*?)^\`\`\`$`, 'm').exec(section)?.[1];
  if (!block) throw new Error(`docs/recipes.md has no \`\`\`${info} block under ## ${heading}`);
  return block;
}

interface XmlElement {
  name: string;
  children: XmlElement[];
  text: string;
}

/**
 * The plist's XML as elements, after checking it is well-formed the way plutil would see it: one root, every
 * tag closed in order, no bare & or < in text (`&&` must be `&amp;&amp;`). Entities are decoded in text.
 */
function parseXml(xml: string): XmlElement {
  const body = xml.replace(/^<\?xml[^>]*\?>\s*/, '').replace(/^<!DOCTYPE[^>]*>\s*/, '');
  const root: XmlElement = { name: '', children: [], text: '' };
  const stack = [root];
  for (const token of body.match(/<[^>]*>|[^<]+/g) ?? []) {
    const top = stack.at(-1)!;
    if (token.startsWith('</')) {
      const name = token.slice(2, -1).trim();
      if (top.name !== name) throw new Error(`</${name}> closes <${top.name}>`);
      stack.pop();
    } else if (token.startsWith('<')) {
      const name = /^<([\w-]+)/.exec(token)?.[1];
      if (!name) throw new Error(`not a tag: ${token}`);
      const element = { name, children: [], text: '' };
      top.children.push(element);
      if (!token.endsWith('/>')) stack.push(element);
    } else {
      if (/&(?!(amp|lt|gt|quot|apos);)/.test(token)) throw new Error(`a bare & in: ${token.trim()}`);
      top.text += token
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&apos;/g, "'")
        .replace(/&amp;/g, '&');
    }
  }
  if (stack.length !== 1) throw new Error(`<${stack.at(-1)!.name}> is not closed`);
  if (root.children.length !== 1) throw new Error('not one root element');
  return root.children[0]!;
}

/** A plist <dict> as key → element. */
function plistDict(dict: XmlElement): Map<string, XmlElement> {
  const entries = new Map<string, XmlElement>();
  for (let i = 0; i < dict.children.length; i += 2) {
    const [key, value] = [dict.children[i]!, dict.children[i + 1]!];
    expect(key.name).toBe('key');
    entries.set(key.text, value);
  }
  return entries;
}

describe('the launchd recipe (docs/recipes.md)', () => {
  const plist = parseXml(recipeBlock('launchd (macOS)', 'xml'));
  const job = plistDict(plist.children[0]!);

  it('is a well-formed plist: monthly on the 1st at 03:15, with a PATH that finds bds, and a log', () => {
    expect(plist.name).toBe('plist');
    expect(job.get('Label')!.text).toBe('com.example.bds-deliver');
    const when = plistDict(job.get('StartCalendarInterval')!);
    expect(Object.fromEntries([...when].map(([key, value]) => [key, `${value.name} ${value.text}`]))).toEqual({
      Day: 'integer 1',
      Hour: 'integer 3',
      Minute: 'integer 15',
    });
    expect(plistDict(job.get('EnvironmentVariables')!).get('PATH')!.text).toContain('/opt/homebrew/bin');
    expect(job.get('StandardOutPath')!.text).toBe(job.get('StandardErrorPath')!.text);
  });

  it('delivers last month when its program runs as launchd runs it (BSD date stood in for)', async () => {
    const machine = await machineFor('prefix');
    const args = job.get('ProgramArguments')!.children.map((element) => element.text);
    expect(args.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    const command = args[2]!.replace('cd /Users/scrub/scrub', `cd ${machine.srv}`);
    expect(command).not.toContain('/Users/');
    // macOS's date takes -v-1m; this machine's may not: a stand-in answers as BSD date would.
    const bsd = tempDir('bds-bsd-date-');
    writeFileSync(
      path.join(bsd, 'date'),
      `#!/bin/sh\n[ "$*" = "-u -v-1m +%Y-%m" ] || exit 64\nexec /bin/date -u -d "$(/bin/date -u +%Y-%m-01) -1 month" +%Y-%m\n`,
    );
    chmodSync(path.join(bsd, 'date'), 0o755);
    const PATH = [
      bsd,
      ...plistDict(job.get('EnvironmentVariables')!)
        .get('PATH')!
        .text.replace('/opt/homebrew/bin', path.join(machine.home, '.local', 'bin'))
        .split(':'),
      path.dirname(process.execPath),
    ].join(':');
    const child = spawn('/bin/sh', ['-c', command], {
      env: { HOME: machine.home, PATH },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const res = await collectOutput(child);
    expect(res.stdout).toMatch(/^Delivered bat_\w+ \(received\)\.$/m);
    expect(res.code, res.stderr).toBe(0);
    expect(machine.received()).toBe(1);
  });
});

describe('the Task Scheduler recipe (docs/recipes.md)', () => {
  it("runs the script it shows monthly on the 1st at 03:15, and the script ends with bds's exit code", () => {
    const script = recipeBlock('Task Scheduler (Windows)', 'powershell');
    const [create] = recipeBlock('Task Scheduler (Windows)', 'bat').split('\n');
    expect(create).toMatch(/^schtasks \/Create \/TN "bds deliver" \/SC MONTHLY \/D 1 \/ST 03:15 \/TR "(.*)"$/);
    const run = /\/TR "(.*)"$/.exec(create!)![1]!;
    const scriptPath = /-File (\S+)$/.exec(run)![1]!;
    const text = readFileSync(path.join(ROOT, 'docs', 'recipes.md'), 'utf8');
    expect(text).toContain(`\`${scriptPath}\``);
    expect(script).toMatch(/\$period = \(Get-Date\)\.ToUniversalTime\(\)\.AddMonths\(-1\)\.ToString\('yyyy-MM'\)/);
    expect(script).toMatch(/bds deliver \.\\out --period \$period/);
    expect(script.trimEnd().split('\n').at(-1)).toBe('exit $LASTEXITCODE');
  });
});
