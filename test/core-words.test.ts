// The core knows nothing of the command line (docs/design.md): no string or template in src/core names a
// `--flag` or a `bds <command>`. What a person reads about flags and commands is the CLI's, in
// src/cli/output/; the core's messages name an option only by the names its door hands in
// (core/option-names.ts, test/option-names.test.ts), and its errors carry a code and data for the rest.
// Comments are not read: only the text the program can say.

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import type { CliRuntime } from '../src/cli/runtime.js';
import { buildProgram } from '../src/cli/main.js';
import { ROOT } from './helpers.js';

const CORE = path.join(ROOT, 'src', 'core');
const COMMANDS = buildProgram({} as CliRuntime, async () => {}).commands.map((command) => command.name());

/** A flag (`--force`), a command (`bds status`) or the CLI's "run the same command", as a person reads them. */
const CLI_WORDS = new RegExp(String.raw`(?<![\w-])--[a-z]|\bbds (?:${COMMANDS.join('|')})\b|same command`);

/**
 * Strings that name a flag but are not the CLI's: V8's own flags, which the data pass sets on itself
 * (datapass/garbage.ts).
 */
const NOT_OURS = new Set(['--expose-gc', '--harmony-rab-gsab-transfer']);

function coreFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return coreFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Every string literal and template piece of a file, with its line. */
function stringsOf(file: string): Array<{ line: number; text: string }> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Array<{ line: number; text: string }> = [];
  const add = (node: ts.Node, text: string) =>
    found.push({ line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, text });
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) add(node, node.text);
    else if (ts.isTemplateExpression(node)) {
      // The literal pieces joined, so that a flag split by an interpolation is still seen as text.
      add(node, [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(' '));
    }
    // Import and export paths are not words.
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the core speaks no command line', () => {
  it('names no --flag and no bds command in any string of src/core', () => {
    const offending = coreFiles(CORE).flatMap((file) =>
      stringsOf(file)
        .filter(({ text }) => CLI_WORDS.test(text) && !NOT_OURS.has(text))
        .map(({ line, text }) => `${path.relative(ROOT, file)}:${line}: ${JSON.stringify(text)}`),
    );
    expect(offending).toEqual([]);
  });

  it("names no option in the library's words (`the period option`): those are core/options.ts's names", () => {
    const offending = coreFiles(CORE).flatMap((file) =>
      stringsOf(file)
        .filter(({ text }) => /\bthe [a-z][A-Za-z]* option\b/.test(text))
        .map(({ line, text }) => `${path.relative(ROOT, file)}:${line}: ${JSON.stringify(text)}`),
    );
    expect(offending).toEqual([]);
  });

  it('sees a flag in a string, and not in a comment', () => {
    const sample = path.join(ROOT, 'test', 'fixtures', 'core-words-sample.ts');
    expect(
      stringsOf(sample)
        .filter(({ text }) => CLI_WORDS.test(text))
        .map(({ line }) => line),
    ).toEqual([3, 4, 5]);
  });
});
