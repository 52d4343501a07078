#!/usr/bin/env node
// The last step of `npm run build`: writes dist/cli/quick-answers.json, the answers to `bds --version` (the
// version in package.json) and `bds --help` (rendered once, with commander and the command list of
// dist/cli/main.js), so that bin/bds.js can print them without loading commander and every command: they then
// start about as fast as `node -e 0` (contract, "Speed"). The help is what commander prints on a stream that is
// not a terminal (80 columns); it is also rendered 1000 columns wide, and when both are the same (nothing was
// wrapped), any terminal at least 80 columns wide gets it too. A narrower terminal, or a build without this
// step, gets commander's own rendering as before.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUTPUT = path.join(ROOT, 'dist', 'cli', 'quick-answers.json');
const WIDTH = 80;

const { buildProgram } = await import(new URL('../dist/cli/main.js', import.meta.url).href);

/** What `bds --help` writes on stdout at this width. */
async function helpAt(width) {
  let out = '';
  const runtime = { env: {}, stdout: { write: (text) => ((out += text), true) }, stderr: { write: () => true } };
  const program = buildProgram(runtime, async () => {});
  program.configureOutput({ getOutHelpWidth: () => width, getOutHasColors: () => false });
  try {
    await program.parseAsync(['--help'], { from: 'user' });
  } catch (error) {
    if (error.exitCode !== 0) throw error;
  }
  return out;
}

const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const help = await helpAt(WIDTH);
const anyWider = (await helpAt(1000)) === help;
// WIDTH: the width the help was rendered at; ANY_WIDER: whether any wider terminal gets the same text.
fs.writeFileSync(OUTPUT, `${JSON.stringify({ VERSION: version, HELP: help, WIDTH, ANY_WIDER: anyWider }, null, 2)}\n`);
