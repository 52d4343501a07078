// `bds help <command>`: the command's help, or, for a name bds does not know, commander's "unknown command"
// line (with a suggestion when one is close) instead of the general help without a word of why.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { EXIT_CODES } from '../src/core/errors.js';
import { ROOT, run } from './helpers.js';

describe('bds help <command>', () => {
  it('an unknown name is exit 2 with an "unknown command" line and the hint, not the general help', async () => {
    const res = await run(['help', 'nonexistent']);
    expect(res.code).toBe(2);
    expect(res.stderr).toBe("bds: unknown command 'nonexistent'\nhint: see bds --help\n");
    expect(res.stdout).toBe('');
  });

  it('a name close to a command suggests it', async () => {
    const res = await run(['help', 'delivr']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^bds: unknown command 'delivr'\n\(Did you mean deliver\?\)\nhint: see bds --help\n$/);
  });

  it('a command, or none, still gets its help on stdout with exit 0', async () => {
    const command = await run(['help', 'deliver']);
    expect(command.code).toBe(0);
    expect(command.stdout).toMatch(/^Usage: bds deliver /);
    const general = await run(['help']);
    expect(general.code).toBe(0);
    expect(general.stdout).toMatch(/^Usage: bds /);
  });

  it('`bds help help` is `bds help`: the general help, exit 0', async () => {
    const res = await run(['help', 'help']);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^Usage: bds /);
    expect(res.stderr).toBe('');
  });

  it('under --json the unknown name is one JSON document on stdout too', async () => {
    const res = await run(['help', 'nonexistent', '--json']);
    expect(res.code).toBe(2);
    expect(res.json()).toEqual({
      error: { message: "unknown command 'nonexistent'", hint: 'see bds --help', exit_code: 2 },
    });
  });
});

describe('options before the command', () => {
  it('`bds --json whoami`: the unknown option gets a hint with the line as it should be', async () => {
    const res = await run(['--json', 'whoami']);
    expect(res.code).toBe(2);
    expect(res.stderr).toBe("bds: unknown option '--json'\nhint: options follow the command: bds whoami --json\n");
    expect(res.json()).toEqual({
      error: {
        message: "unknown option '--json'",
        hint: 'options follow the command: bds whoami --json',
        exit_code: 2,
      },
    });

    const values = await run(['-q', '--base-url', 'https://api.example.com', 'list', '--source', 'src_1']);
    expect(values.stderr).toContain(
      'hint: options follow the command: bds list --source src_1 -q --base-url https://api.example.com\n',
    );
    const noCommand = await run(['--verbose']);
    expect(noCommand.stderr).toContain(
      'hint: options follow the command: bds <command> --verbose; the version is bds --version (-V); see bds --help\n',
    );
  });

  it('`bds -v`: -v is --verbose, as the help says; the hint names the version option', async () => {
    const help = await run(['--help']);
    expect(help.stdout).toMatch(/^ {2}-V, --version +print the version \(--verbose: Node\.js, install\)$/m);
    expect(help.stdout).not.toMatch(/-v adds/);
    const res = await run(['-v']);
    expect(res.code).toBe(2);
    expect(res.stderr).toBe(
      "bds: unknown option '-v'\n" +
        'hint: options follow the command: bds <command> -v; the version is bds --version (-V); see bds --help\n',
    );
  });

  it('an option no command has keeps the general hint', async () => {
    const res = await run(['--frobnicate', 'whoami']);
    expect(res.code).toBe(2);
    expect(res.stderr).toBe("bds: unknown option '--frobnicate'\nhint: see bds --help\n");
  });
});

/** Every exit code bds has, written once in core/errors.ts. */
const exitCodes = [...new Set(Object.values(EXIT_CODES))].sort((a, b) => a - b);
const sorted = (codes: Iterable<string>): number[] => [...new Set([...codes].map(Number))].sort((a, b) => a - b);
const doc = (name: string): string => readFileSync(path.join(ROOT, name), 'utf8');

describe('the exit codes, written once in EXIT_CODES', () => {
  it('are those bds --help lists, and no other', async () => {
    const help = (await run(['--help'])).stdout;
    const section = help.slice(help.indexOf('Exit codes:'));
    expect(sorted(section.match(/^ {2}[\d/]+(?= )/gm)!.flatMap((codes) => codes.trim().split('/')))).toEqual(exitCodes);
  });

  it("are those of docs/output.md's table, and no other", () => {
    const rows = doc('docs/output.md')
      .split('\n')
      .filter((line) => /^\| \d/.test(line));
    expect(sorted(rows.flatMap((row) => row.split('|')[1]!.trim().split(' / ')))).toEqual(exitCodes);
  });

  it('are those the script in docs/recipes.md branches on, but 1 (its catch-all, a bug)', () => {
    const recipe = doc('docs/recipes.md');
    const script = recipe.slice(recipe.indexOf('## Exit codes in a script'));
    const branches = script.slice(0, script.indexOf('esac')).match(/^ {2}[\d|]+(?=\))/gm)!;
    const codes = sorted(branches.flatMap((codes) => codes.trim().split('|')));
    expect(codes).toEqual(exitCodes.filter((code) => code !== EXIT_CODES.internal));
  });
});

describe("bds --help's exit codes", () => {
  it('list every code of docs/output.md, and for 4 and 5 every meaning it gives them', async () => {
    const help = (await run(['--help'])).stdout;
    const codes = help.slice(help.indexOf('Exit codes:'));
    const table = readFileSync(path.join(ROOT, 'docs', 'output.md'), 'utf8')
      .split('\n')
      .filter((line) => /^\| \d/.test(line));
    for (const row of table) {
      for (const code of row.split('|')[1]!.trim().split(' / '))
        expect(codes).toMatch(new RegExp(`^ +(\\d+/)*${code}\\b`, 'm'));
    }
    expect(codes).toMatch(/^ {2}4 .*refused.*redirect;\n {5}or the month is already delivered from another file/m);
    expect(codes).toMatch(
      /^ {2}5 .*after retries.*makes no sense;\n {5}or the delivery record could not be saved once the batch existed/m,
    );
  });
});
