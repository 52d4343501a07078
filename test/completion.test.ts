// bds completion bash|zsh|fish|powershell, and bds --help: both generated from the command definitions. Each
// script is checked by its own shell when that shell is installed, and driven as the shell would drive it; the
// four offer the same commands and options (PowerShell is not in Debian: its script is read, not run, here).

import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CliRuntime } from '../src/cli/runtime.js';
import { buildProgram } from '../src/cli/main.js';
import { run, tempDir } from './helpers.js';

const program = buildProgram({} as CliRuntime, async () => {});
const COMMANDS = program.commands.map((c) => c.name());
const DELIVER_OPTIONS = program.commands.find((c) => c.name() === 'deliver')!.options.flatMap((o) => [o.short, o.long]);

const installed = (shell: string): boolean => spawnSync(shell, ['--version'], { stdio: 'ignore' }).status === 0;

/** The script for a shell, in a file, for the shell to read. */
async function script(shell: string): Promise<{ text: string; file: string }> {
  const res = await run(['completion', shell]);
  expect(res.stderr).toBe('');
  expect(res.code).toBe(0);
  const file = path.join(tempDir(), `bds.${shell}`);
  writeFileSync(file, res.stdout);
  return { text: res.stdout, file };
}

function shellRun(shell: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const res = spawnSync(shell, args, {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: tempDir() },
    timeout: 10_000,
  });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

/** Each command a script completes, with the options it offers for it (sorted), read from the script's text. */
function optionsOffered(shell: string, text: string): Record<string, string[]> {
  const offered: Record<string, string[]> = {};
  const add = (command: string, names: string[]): void => {
    offered[command] = [...(offered[command] ?? []), ...names].sort();
  };
  if (shell === 'bash') {
    for (const [, command, body] of text.matchAll(/^ {4}([a-z-]+)\)\n([\s\S]*?);;\n(?= {4}[a-z-]+\)| {2}esac)/gm))
      add(command!, /== -\* \]\]; then COMPREPLY=\(\$\(compgen -W '([^']*)'/.exec(body!)![1]!.split(' '));
  } else if (shell === 'zsh') {
    for (const [, command, body] of text.matchAll(/^_bds_(\w+)\(\) \{\n([\s\S]*?)\n\}/gm)) {
      const names = [...body!.matchAll(/^ {4}(?:'\([^)]*\)'\{([^}]*)\}|'(-[^']+)'')/gm)].flatMap(([, pair, one]) =>
        pair ? pair.split(',') : [one!],
      );
      add(command!.replace(/_/g, '-'), names);
    }
  } else if (shell === 'fish') {
    for (const [, command, rest] of text.matchAll(/__fish_seen_subcommand_from ([a-z-]+)' (.*)$/gm)) {
      const names = [/-l (\S+)/.exec(rest!)?.[1], /-s (\S+)/.exec(rest!)?.[1]];
      add(
        command!,
        [names[0] && `--${names[0]}`, names[1] && `-${names[1]}`].filter((n): n is string => Boolean(n)),
      );
    }
  } else {
    for (const [, command, body] of text.matchAll(/^ {4}'([a-z-]+)' = @\{\n([\s\S]*?)\n {4}\}/gm)) {
      const names = [...body!.matchAll(/@\{ Names = @\(([^)]*)\)/g)].flatMap(([, list]) =>
        list!.split(', ').map((n) => n.slice(1, -1)),
      );
      add(command!, names);
    }
  }
  return offered;
}

describe('bds completion', () => {
  it('knows the definitions it is generated from', () => {
    expect(COMMANDS).toEqual([
      'login',
      'logout',
      'whoami',
      'register-source',
      'check',
      'deliver',
      'list',
      'status',
      'doctor',
      'sandbox',
      'completion',
    ]);
    expect(DELIVER_OPTIONS).toEqual(
      expect.arrayContaining(['--period', '--source', '--product', '--file', '--dry-run', '--force', '-q', '--quiet']),
    );
  });

  for (const shell of ['bash', 'zsh', 'fish', 'powershell']) {
    it(`${shell}: names every command and every option of deliver`, async () => {
      const { text } = await script(shell);
      for (const name of COMMANDS) expect(text).toMatch(new RegExp(`\\b${name}\\b`));
      for (const flag of DELIVER_OPTIONS.filter(Boolean)) {
        const word =
          shell === 'fish' ? (flag!.startsWith('--') ? `-l ${flag!.slice(2)}` : `-s ${flag!.slice(1)}`) : flag!;
        expect(text).toContain(word);
      }
      for (const product of ['records', 'episodes', 'environment']) expect(text).toContain(product);
    });
  }

  it('bash: valid syntax, and completes commands, options, choices and paths', async () => {
    const { file } = await script('bash');
    expect(shellRun('bash', ['-n', file]).stderr).toBe('');
    const complete = (words: string[]): string[] => {
      const line = `source ${file}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _bds; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const res = shellRun('bash', ['-c', line]);
      expect(res.stderr).toBe('');
      return res.stdout.split('\n').filter(Boolean);
    };
    expect(complete(['bds', 'de'])).toEqual(['deliver']);
    expect(complete(['bds', 'lo'])).toEqual(['login', 'logout']);
    expect(complete(['bds', 'login', '--w'])).toEqual(['--with-key']);
    expect(complete(['bds', 'do'])).toEqual(['doctor']);
    expect(complete(['bds', 'deliver', '--dr'])).toEqual(['--dry-run']);
    expect(complete(['bds', 'deliver', 'x', '--product', ''])).toEqual(['records', 'episodes', 'environment']);
    expect(complete(['bds', 'list', '--status', 'a'])).toEqual(['awaiting_upload', 'accepted']);
    expect(complete(['bds', 'completion', 'z'])).toEqual(['zsh']);
    // A value that is not a path gets no file names.
    expect(complete(['bds', 'deliver', '--period', ''])).toEqual([]);
    expect(complete(['bds', 'deliver', '--file', path.dirname(file)])).toEqual([path.dirname(file)]);
    // check takes one folder or several, and only folders.
    writeFileSync(path.join(path.dirname(file), 'not-a-folder'), '');
    expect(complete(['bds', 'check', path.dirname(file)])).toEqual([path.dirname(file)]);
    expect(complete(['bds', 'check', 'out/2024-04', `${path.dirname(file)}/`])).toEqual([]);
    expect(complete(['bds', 'check', 'out/2024-04', path.dirname(file)])).toEqual([path.dirname(file)]);
    expect(complete(['bds', 'check', 'x', '--s'])).toEqual(['--source', '--schema']);
  });

  it.skipIf(!installed('zsh'))('zsh: valid syntax, and registers _bds with compinit', async () => {
    const { file } = await script('zsh');
    expect(shellRun('zsh', ['-n', file]).stderr).toBe('');
    const res = shellRun('zsh', [
      '-f',
      '-c',
      `autoload -U compinit; compinit -u -D; source ${file}; print -r -- $_comps[bds]`,
    ]);
    expect(res.stderr).toBe('');
    expect(res.stdout.trim()).toBe('_bds');
  });

  it.skipIf(!installed('fish'))('fish: valid syntax, and completes commands, options and choices', async () => {
    const { file } = await script('fish');
    expect(shellRun('fish', ['-n', file]).stderr).toBe('');
    const complete = (line: string): string[] => {
      const res = shellRun('fish', ['--no-config', '-c', `source ${file}; complete -C ${JSON.stringify(line)}`]);
      expect(res.stderr).toBe('');
      return res.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t')[0]!);
    };
    expect(complete('bds de')).toEqual(['deliver']);
    expect(complete('bds deliver --dr')).toEqual(['--dry-run']);
    expect(complete('bds deliver x --product ')).toEqual(['environment', 'episodes', 'records']);
    expect(complete('bds list --source ')).toEqual([]);
  });

  it('the four shells offer the same commands and options, those of the definitions', async () => {
    const defined = Object.fromEntries(
      program.commands.map((c) => [
        c.name(),
        [...c.options.flatMap((o) => [o.short, o.long]), '-h', '--help'].filter(Boolean).sort(),
      ]),
    );
    const offered: Record<string, Record<string, string[]>> = {};
    for (const shell of ['bash', 'zsh', 'fish', 'powershell'])
      offered[shell] = optionsOffered(shell, (await script(shell)).text);
    expect(offered.bash).toEqual(defined);
    expect(offered.zsh).toEqual(defined);
    expect(offered.fish).toEqual(defined);
    expect(offered.powershell).toEqual(defined);
  });

  it('powershell: a native completer for bds and bds.exe, with the choices of each value', async () => {
    const { text } = await script('powershell');
    expect(text).toMatch(/^Register-ArgumentCompleter -Native -CommandName 'bds', 'bds\.exe' -ScriptBlock \{$/m);
    expect(text).toContain(
      "@{ Names = @('--product'); Value = 'text'; Choices = @('records', 'episodes', 'environment'); Description = 'product; default from schema.format' }",
    );
    expect(text).toContain("Argument = @('bash', 'zsh', 'fish', 'powershell')");
    // Every brace and parenthesis closes, outside the quoted words.
    const code = text
      .replace(/'(?:[^']|'')*'/g, "''")
      .replace(/"[^"]*"/g, '""')
      .replace(/#.*$/gm, '');
    for (const [open, close] of [
      ['{', '}'],
      ['(', ')'],
    ]) {
      let depth = 0;
      for (const char of code) {
        depth += char === open ? 1 : char === close ? -1 : 0;
        expect(depth).toBeGreaterThanOrEqual(0);
      }
      expect(depth).toBe(0);
    }
  });

  it('refuses an unknown shell with exit 2', async () => {
    const res = await run(['completion', 'tcsh']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(
      /^bds: no completion for the shell "tcsh"\nhint: choose bash, zsh, fish or powershell\n$/,
    );
  });
});

describe('bds --help', () => {
  it('lists the exit codes and the environment variables', async () => {
    const res = await run(['--help']);
    expect(res.code).toBe(0);
    for (const code of ['0', '1', '2', '3', '4', '5', '6'])
      expect(res.stdout).toMatch(new RegExp(`^  ${code}  \\S`, 'm'));
    expect(res.stdout).toMatch(/^ {2}130\/143 .*SIGINT\/SIGTERM/m);
    for (const name of [
      'BDS_API_KEY',
      'BDS_API_KEY_FILE',
      'BDS_BASE_URL',
      'BDS_SOURCE_ID',
      'BDS_PROFILE',
      'BDS_CONFIG',
      'BDS_PING_URL',
      'BDS_METRICS_FILE',
    ]) {
      expect(res.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
    }
    for (const name of [
      'HTTPS_PROXY',
      'HTTP_PROXY',
      'NO_PROXY',
      'NODE_EXTRA_CA_CERTS',
      'NO_COLOR',
      'CI',
      'GITHUB_ACTIONS',
      'GITHUB_STEP_SUMMARY',
    ]) {
      expect(res.stdout).toMatch(new RegExp(`\\b${name}\\b`));
    }
    for (const name of COMMANDS) expect(res.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
  });
});
