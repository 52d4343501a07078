// The documents stay true to the program: every `bds <command>` and every `--flag` that README.md and docs/*.md
// name exists in the command definitions, every option a command defines is documented in its section of
// docs/commands.md, and every relative link leads to a page (and heading) that exists. Everything is read
// from the commander program that buildProgram() makes, so a command or flag added later is checked as soon
// as it exists, with no change here: document it, or this test names what is missing.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import type { CliRuntime } from '../src/cli/runtime.js';
import { buildProgram } from '../src/cli/main.js';
import { ROOT } from './helpers.js';

const program = buildProgram({} as CliRuntime, async () => {});
const commands = new Map(program.commands.map((command) => [command.name(), command]));

/** Long flags a command takes, its help option included (visibleOptions adds it; options may hold hidden ones). */
function longFlags(command: Command): Set<string> {
  const options = [...command.options, ...command.createHelp().visibleOptions(command)];
  return new Set(options.map((option) => option.long).filter((long): long is string => long !== undefined));
}

const programFlags = longFlags(program);
const flagsOf = new Map([...commands].map(([name, command]) => [name, longFlags(command)]));
const everyFlag = new Set([...programFlags, ...[...flagsOf.values()].flatMap((flags) => [...flags])]);
/** Words after `bds` that are not commands of ours but still work: commander's implicit `help` command. */
const BUILT_IN_COMMANDS = new Set(['help']);

/** Commands whose flags are their own business, not bds's (a code line or span that runs one is not checked). */
const OTHER_TOOLS = new Set([
  'node', // node --version
  'npm', // npm install -g --prefix, --offline; npm run bench -- --quick
  'git',
  'curl',
  'sha256sum',
  'shasum', // shasum -a 256 -c --ignore-missing (macOS)
  'systemctl', // systemctl enable --now
  'journalctl',
  'docker',
  'podman',
  'skopeo',
  'kubectl',
  'install', // install -m 755
  'apt-get',
  'apt', // apt install ./bds_<version>_amd64.deb
  'dnf',
  'brew', // brew audit --strict --online (docs/releasing.md)
  'scoop',
  'winget', // winget install --id
  'gh', // gh attestation verify --repo
  'ssh',
  'date',
  'scrub', // the seller's own scrubber in the GitHub Actions recipe: ./scrub --month --out
]);
/** Flags named on their own (not on a command line) that belong to another program. */
const OTHER_FLAGS = new Set([
  '--wasm-tiering-budget', // a V8 flag that bin/bds.js sets (docs/design.md)
  '--expose-gc', // V8 flags that the data pass sets (docs/library.md)
  '--harmony-rab-gsab-transfer',
  '--build-sea', // Node's flag that makes the binaries (docs/releasing.md)
]);

interface Doc {
  file: string;
  text: string;
}

function readDocs(): Doc[] {
  const docsDir = path.join(ROOT, 'docs');
  const files = [
    'README.md',
    ...readdirSync(docsDir)
      .filter((name) => name.endsWith('.md'))
      .sort()
      .map((name) => `docs/${name}`),
  ];
  return files.map((file) => ({ file, text: readFileSync(path.join(ROOT, file), 'utf8') }));
}

interface Piece {
  /** Where it is, as file:line. */
  where: string;
  text: string;
  /** Output is what bds prints: the lines of a `console` block other than `$ ` ones, and spans like `bds: <message>`. */
  kind: 'code' | 'output' | 'prose';
}

const OUTPUT = /^(bds|hint|warning):\s/;

/** A document as pieces: each line of a fenced block, each inline code span, and each prose line without its code spans. */
function pieces({ file, text }: Doc): Piece[] {
  const out: Piece[] = [];
  let fence: string | undefined;
  let consoleBlock = false;
  const outside: string[] = [];
  text.split('\n').forEach((line, index) => {
    const marker = /^\s*(```+|~~~+)\s*(\S*)/.exec(line);
    if (fence === undefined && marker) {
      fence = marker[1];
      consoleBlock = marker[2] === 'console';
      outside.push('');
    } else if (fence !== undefined) {
      if (marker && line.trim().startsWith(fence)) fence = undefined;
      else {
        const output = consoleBlock ? !line.startsWith('$ ') : OUTPUT.test(line);
        out.push({ where: `${file}:${index + 1}`, text: line, kind: output ? 'output' : 'code' });
      }
      outside.push('');
    } else {
      outside.push(line);
    }
  });
  const rest = outside.join('\n');
  const lineAt = (offset: number): number => rest.slice(0, offset).split('\n').length;
  const prose = rest.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (match, _ticks: string, code: string, offset: number) => {
    // Inside a table, `\|` is a | in the code span.
    const span = code.replace(/\\\|/g, '|').replace(/\s+/g, ' ');
    out.push({ where: `${file}:${lineAt(offset)}`, text: span, kind: OUTPUT.test(span) ? 'output' : 'code' });
    return match.replace(/[^\n]/g, ' ');
  });
  prose.split('\n').forEach((line, index) => out.push({ where: `${file}:${index + 1}`, text: line, kind: 'prose' }));
  return out;
}

interface Segment {
  text: string;
  /** The program the segment runs: its first word past `sudo`, `exec`, `npx`, `VAR=value`, a `$ ` prompt, YAML's `- ` and `key:`. */
  tool: string | undefined;
  /** For bds, the word after it, where a command goes. */
  subcommand: string | undefined;
}

/** A piece of code split where one shell command ends and another starts; a comment is a segment of its own. */
function segments(code: string): Segment[] {
  const skip = (word: string): boolean =>
    ['sudo', 'exec', 'env', 'time', 'npx', '$', '-'].includes(word) ||
    /^[A-Za-z_]\w*=/.test(word) ||
    /^[\w-]+:$/.test(word);
  return code.split(/&&|\|\||[;|()`']|\$\(|(?:^|\s)#(?=\s|$)/).map((text) => {
    const words = text.trim().split(/\s+/).filter(Boolean);
    const at = words.findIndex((word) => !skip(word));
    const tool = at < 0 ? undefined : path.basename(words[at]!.replace(/^"+|"+$/g, ''));
    const next = words[at + 1];
    const subcommand = tool === 'bds' && next !== undefined && /^[a-z][a-z0-9-]*$/.test(next) ? next : undefined;
    return { text, tool, subcommand };
  });
}

const LONG_FLAG = /(?<![\w-])--[a-z][a-z0-9-]*/g;

interface Named {
  where: string;
  name: string;
}

/** Every `bds <word>` that code runs: the word after bds, where a command goes. */
function namedCommands(docs: Doc[]): Named[] {
  return docs.flatMap((doc) =>
    pieces(doc)
      .filter((piece) => piece.kind === 'code')
      .flatMap((piece) =>
        segments(piece.text).flatMap(({ subcommand }) =>
          subcommand ? [{ where: piece.where, name: subcommand }] : [],
        ),
      ),
  );
}

interface NamedFlag extends Named {
  /** The bds command the flag is given to, when the code names one. */
  command?: string;
}

/** Every long flag meant for bds: in code, those of a segment that runs another tool are left out. */
function namedFlags(docs: Doc[]): NamedFlag[] {
  const found: NamedFlag[] = [];
  for (const doc of docs) {
    for (const piece of pieces(doc)) {
      const parts: Segment[] =
        piece.kind === 'code' ? segments(piece.text) : [{ text: piece.text, tool: undefined, subcommand: undefined }];
      for (const { text, tool, subcommand } of parts) {
        if (tool !== undefined && OTHER_TOOLS.has(tool)) continue;
        for (const [flag] of text.matchAll(LONG_FLAG)) {
          if (OTHER_FLAGS.has(flag)) continue;
          const command = subcommand !== undefined && commands.has(subcommand) ? subcommand : undefined;
          found.push({ where: piece.where, name: flag, ...(command ? { command } : {}) });
        }
      }
    }
  }
  return found;
}

interface Section {
  heading: string;
  body: string;
}

/** docs/commands.md's level-2 sections, each with what follows its heading up to the next one. */
function sections(text: string): Section[] {
  const out: Section[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? undefined : /^##\s+(.*)$/.exec(line)?.[1];
    if (heading !== undefined) out.push({ heading: heading.replace(/`/g, '').trim(), body: '' });
    else if (out.length) out.at(-1)!.body += `${line}\n`;
  }
  return out;
}

const mentions = (text: string, flag: string): boolean => new RegExp(`(?<![\\w-])${flag}(?![\\w-])`).test(text);

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? undefined : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  }
  return out;
}

describe('the documents (README.md, docs/*.md)', () => {
  const docs = readDocs();

  it('name only commands that bds defines', () => {
    const wrong = namedCommands(docs)
      .filter(({ name }) => !commands.has(name) && !BUILT_IN_COMMANDS.has(name))
      .map(
        ({ where, name }) => `${where}: \`bds ${name}\` is not a command (bds has: ${[...commands.keys()].join(', ')})`,
      );
    expect(wrong).toEqual([]);
  });

  it('name only flags that bds defines, each on the command it is given to', () => {
    const wrong = namedFlags(docs).flatMap(({ where, name, command }) => {
      if (command !== undefined) {
        return flagsOf.get(command)!.has(name) ? [] : [`${where}: \`bds ${command}\` has no option ${name}`];
      }
      return everyFlag.has(name) ? [] : [`${where}: ${name} is not an option of bds or of any of its commands`];
    });
    expect(wrong).toEqual([]);
  });

  it('docs/commands.md has a section per command, and each documents every option its command defines', () => {
    const text = readFileSync(path.join(ROOT, 'docs/commands.md'), 'utf8');
    const all = sections(text);
    const common = all.find(({ heading }) => /^common options$/i.test(heading));
    const byCommand = new Map<string, Section>();
    const wrong: string[] = [];
    for (const section of all) {
      const name = /^bds\s+([a-z][a-z0-9-]*)/.exec(section.heading)?.[1];
      if (name === undefined) continue;
      if (!commands.has(name))
        wrong.push(`docs/commands.md: the section "## ${section.heading}" is for no command of bds`);
      byCommand.set(name, section);
    }
    // Options that every command has (main.ts adds them to each) are documented once, under "## Common options".
    const shared = [...flagsOf.values()].reduce((a, b) => new Set([...a].filter((flag) => b.has(flag))));
    if (!common) wrong.push('docs/commands.md: no "## Common options" section');
    for (const flag of shared) {
      if (common && !mentions(common.body, flag))
        wrong.push(`docs/commands.md: "## Common options" does not document ${flag}`);
    }
    for (const flag of programFlags) {
      if (!mentions(text, flag)) wrong.push(`docs/commands.md: bds ${flag} is not documented`);
    }
    for (const [name, command] of commands) {
      const section = byCommand.get(name);
      if (!section) {
        wrong.push(`docs/commands.md: no section "## bds ${name} ..." for the command ${name}`);
        continue;
      }
      for (const option of command.options) {
        if (!option.long || shared.has(option.long)) continue;
        if (!mentions(section.body, option.long))
          wrong.push(`docs/commands.md: "## ${section.heading}" does not document ${option.long}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('link only to pages and headings that exist', () => {
    const wrong: string[] = [];
    for (const { file, text } of docs) {
      const here = path.dirname(path.join(ROOT, file));
      for (const piece of pieces({ file, text }).filter((p) => p.kind === 'prose')) {
        for (const [, target] of piece.text.matchAll(/\]\(([^)\s]+)\)/g)) {
          if (/^[a-z][a-z+.-]*:/i.test(target!)) continue;
          const [page, anchor] = target!.split('#') as [string, string | undefined];
          const resolved = page === '' ? path.join(ROOT, file) : path.resolve(here, page);
          if (!existsSync(resolved)) {
            wrong.push(`${piece.where}: the link ${target} leads to no file`);
          } else if (
            anchor !== undefined &&
            resolved.endsWith('.md') &&
            !anchors(readFileSync(resolved, 'utf8')).has(anchor)
          ) {
            wrong.push(
              `${piece.where}: the link ${target}: ${path.relative(ROOT, resolved)} has no heading #${anchor}`,
            );
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("docs/library.md describes startSandbox in one place, with every option and field of the sandbox's types", () => {
    const library = readFileSync(path.join(ROOT, 'docs/library.md'), 'utf8');
    const bullets = library.split(/\n(?=- )/).filter((bullet) => bullet.startsWith('- `startSandbox('));
    expect(bullets).toHaveLength(1);
    const source = readFileSync(path.join(ROOT, 'src/sandbox/index.ts'), 'utf8');
    for (const type of ['SandboxOptions', 'Sandbox']) {
      const body = new RegExp(`export interface ${type} \\{([\\s\\S]*?)\\n\\}`).exec(source)![1]!;
      const names = [...body.matchAll(/^ {2}(\w+)\??[:(]/gm)].map(([, name]) => name!);
      expect(names.length, type).toBeGreaterThan(3);
      for (const name of names) expect(bullets[0], `${type}.${name}`).toMatch(new RegExp(`\\b${name}\\b`));
    }
  });

  it('finds what it checks (the parsing above sees commands, flags and sections)', () => {
    expect(namedCommands(docs).map(({ name }) => name)).toEqual(expect.arrayContaining([...commands.keys()]));
    expect(namedFlags(docs).map(({ name }) => name)).toEqual(expect.arrayContaining(['--period', '--force', '--json']));
    const headings = sections(readFileSync(path.join(ROOT, 'docs/commands.md'), 'utf8')).map(({ heading }) => heading);
    expect(headings).toEqual(
      expect.arrayContaining([...commands.keys()].map((name) => expect.stringMatching(new RegExp(`^bds ${name}\\b`)))),
    );
  });
});

describe('docs/design.md follows the code', () => {
  const design = readFileSync(path.join(ROOT, 'docs', 'design.md'), 'utf8');
  /** The fenced block that follows `heading` (a heading or the start of a paragraph). */
  const blockAfter = (heading: string): string => {
    const rest = design.slice(design.indexOf(heading));
    const start = rest.indexOf('```\n') + 4;
    return rest.slice(start, rest.indexOf('\n```', start));
  };

  it('run the image by the name it loads as, with the settings a container has no other way to get', () => {
    // A container sees no config file and no variable of the shell's but those passed: deliver needs the base
    // URL and the source as well as the key. .ci/run runs the README's container commands as written.
    const version = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version as string;
    const image = new RegExp(`(^|\\s)(bds|ghcr\\.io/batch-delivery/bds):${version.replace(/\./g, '\\.')}(\\s|$)`);
    const runs = readDocs().flatMap(({ file, text }) =>
      text
        .replace(/\\\n\s*/g, '')
        .split('\n')
        .flatMap((line) => [...line.matchAll(/(?:podman|docker) run [^`]*/g)].map((m) => ({ file, command: m[0] }))),
    );
    // Whole commands, which run a command of bds's; "podman run --network host" in a sentence is an option named.
    const whole = runs.filter(({ command }) => / (deliver|sandbox|check|status|whoami|doctor)( |$)/.test(command));
    expect(whole.length).toBeGreaterThan(2);
    const wrong = whole.flatMap(({ file, command }) => [
      ...(image.test(command) ? [] : [`${file}: ${command}: not bds:${version}`]),
      ...(/ deliver /.test(command) &&
      !['BDS_BASE_URL', 'BDS_SOURCE_ID', 'BDS_API_KEY'].every((v) => command.includes(`-e ${v}`))
        ? [`${file}: ${command}: without -e BDS_BASE_URL, BDS_SOURCE_ID and BDS_API_KEY`]
        : []),
    ]);
    expect(wrong).toEqual([]);
  });

  it('fails an import up the floors: the call importing a use case, even for a type', () => {
    const src = mkdtempSync(path.join(os.tmpdir(), 'bds-floors-'));
    try {
      mkdirSync(path.join(src, 'core', 'status'), { recursive: true });
      writeFileSync(path.join(src, 'core', 'operation.ts'), "import type { Month } from './status/ledger.js';\n");
      writeFileSync(path.join(src, 'core', 'status', 'ledger.ts'), 'export interface Month {}\n');
      const run = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'check-imports.js'), src], {
        encoding: 'utf8',
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('core/operation.ts (floor 3) imports core/status/ledger.ts, up on floor 4');
    } finally {
      rmSync(src, { recursive: true, force: true });
    }
  });

  it('states the import rules exactly as scripts/check-imports.js --rules prints them', () => {
    const printed = execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'check-imports.js'), '--rules'], {
      encoding: 'utf8',
    });
    expect(blockAfter('Which part may import which')).toBe(printed.trimEnd());
  });

  /**
   * Every path the code map names, from the root: a name in the first column is under the last folder of the
   * column before it (two spaces in: under the last folder at the margin); the files a folder's description
   * names are in that folder, unless written from src/.
   */
  function codeMapPaths(): string[] {
    const paths: string[] = [];
    const parents: string[] = [];
    let folder: string | undefined;
    for (const line of blockAfter('## Code map').split('\n')) {
      const entry = /^( *)(\S+)/.exec(line.slice(0, 28));
      if (entry) {
        const depth = entry[1]!.length / 2;
        const named = `${parents.slice(0, depth).join('')}${entry[2]}`;
        paths.push(named);
        parents[depth] = entry[2]!;
        folder = named.endsWith('/') ? named : undefined;
      }
      if (!folder) continue;
      for (const [file] of line.slice(28).matchAll(/(?<![\w./-])[\w/<>.-]+\.(?:ts|js)\b/g)) {
        paths.push(file.startsWith('src/') ? file : `${folder}${file}`);
      }
    }
    return paths;
  }

  it('names in its code map only files and folders that exist, and every file of src/', () => {
    const named = codeMapPaths();
    const patterns = named.map((name) => new RegExp(`^${name.replace(/[.]/g, '\\.').replace(/<\w+>/g, '[\\w-]+')}$`));
    const missing = named.filter((name) => !name.includes('<') && !existsSync(path.join(ROOT, name)));
    expect(missing).toEqual([]);
    const files = (readdirSync(path.join(ROOT, 'src'), { recursive: true }) as string[])
      .map((file) => `src/${file.split(path.sep).join('/')}`)
      .filter((file) => /\.ts$/.test(file) && !file.endsWith('.generated.ts'));
    expect(files.filter((file) => !patterns.some((pattern) => pattern.test(file)))).toEqual([]);
    expect(named).toEqual(expect.arrayContaining(['src/core/delivery/journal.ts', 'src/cli/output/io.ts']));
  });
});

describe("the repository's files", () => {
  /** Names ending in .md that are files bds or a test writes or reads, not documents cited. */
  const NOT_CITED = new Set(['latest.md', 'summary.md', 'step_summary.md', 'package/README.md']);

  it('cite only documents the repository holds (from its root, beside the citing file, or in docs/)', () => {
    const files = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((file) => /\.(ts|js|cjs|md|yml|sh)$|^\.ci\//.test(file) && !file.startsWith('test/fixtures/'));
    const missing = files.flatMap((file) =>
      [...readFileSync(path.join(ROOT, file), 'utf8').matchAll(/(?<![\w./-])[\w./-]*[\w-]\.md\b/g)]
        .map(([cited]) => cited)
        .filter(
          (cited) =>
            !NOT_CITED.has(cited) &&
            ![ROOT, path.join(ROOT, path.dirname(file)), path.join(ROOT, 'docs')].some((from) =>
              existsSync(path.join(from, cited)),
            ),
        )
        .map((cited) => `${file}: ${cited}`),
    );
    expect(missing).toEqual([]);
  });
});

describe("login's and logout's section of docs/commands.md", () => {
  const commandsDoc = sections(readFileSync(path.join(ROOT, 'docs', 'commands.md'), 'utf8'));
  const section = (name: string): string => commandsDoc.find((s) => s.heading === `bds ${name}`)!.body;
  /** The --json document of a golden file (test/golden/<name>.txt), as json-golden.test.ts wrote it. */
  const goldenJson = (name: string): Record<string, unknown> => {
    const text = readFileSync(path.join(ROOT, 'test', 'golden', `${name}.txt`), 'utf8');
    return JSON.parse(text.split('--- stdout\n')[1]!.split('\n--- stderr')[0]!) as Record<string, unknown>;
  };

  it('names every field of their --json that the golden files hold', () => {
    for (const [command, goldens] of [
      ['login', ['login', 'login-overridden']],
      ['logout', ['logout', 'logout-remaining']],
    ] as const) {
      const fields = new Set(goldens.flatMap((name) => Object.keys(goldenJson(name))));
      // login's prints what whoami prints, whose fields its own section names.
      for (const field of ['organization', 'key', 'baseUrl']) fields.delete(field);
      expect([...fields].filter((field) => !mentions(section(command), field))).toEqual([]);
    }
  });

  it("says login's refusal of a key holding a space or a control character in the words bds prints", () => {
    const { error } = goldenJson('login-key-character') as { error: { message: string } };
    expect(section('login').replace(/\s+/g, ' ')).toContain(error.message);
  });
});
