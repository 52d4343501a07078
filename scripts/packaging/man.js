// The man page bds(1), for the .deb and .rpm packages: made from `bds --help` and `bds help <command>` as the
// built program prints them (dist/cli/main.js, the same definitions docs/commands.md is checked against), so
// the page says what --help says and never drifts from it.
//
// One page for every command, not a page per command as gh has: bds has eleven commands of a few options
// each, `man bds` is where a person looks, and one page is searched with `/` in one go. gh's 150 commands
// need a page each; ours would be eleven pages of a screen or two.

import path from 'node:path';
import { pathToFileURL } from 'node:url';

const HOMEPAGE = 'https://github.com/batch-delivery/bds';

/** The help text commander prints for `args`, wide enough that no line is wrapped. */
async function helpText(buildProgram, args) {
  let out = '';
  const runtime = { env: {}, stdout: { write: (text) => ((out += text), true) }, stderr: { write: () => true } };
  const program = buildProgram(runtime, async () => {});
  program.configureOutput({ getOutHelpWidth: () => 1000, getOutHasColors: () => false });
  for (const command of program.commands) command.configureOutput(program.configureOutput());
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (error) {
    if (error.exitCode !== 0) throw error;
  }
  return { text: out, names: program.commands.map((c) => c.name()) };
}

/**
 * A help text as its parts: the usage line, the paragraphs before the first titled section, and each section
 * ("Options:", "Exit codes:", ...) as its title, its free lines and its items (a term, two spaces or more, a
 * description; a line indented deeper continues the item above).
 */
export function parseHelp(text) {
  const lines = text.replace(/\n+$/, '').split('\n');
  const usage = lines.shift().replace(/^Usage: /, '');
  const intro = [];
  const sections = [];
  for (const line of lines) {
    if (/^\S.*:$/.test(line)) sections.push({ title: line.slice(0, -1), lines: [], items: [] });
    else if (!sections.length) {
      if (line) intro.push(line);
    } else if (!line) continue;
    else {
      const section = sections.at(-1);
      const item = /^ {2}(\S.*?) {2,}(\S.*)$/.exec(line);
      if (item) section.items.push({ term: item[1], description: item[2] });
      else if (/^ {3,}\S/.test(line) && section.items.length) section.items.at(-1).description += ` ${line.trim()}`;
      else section.lines.push(line.trim());
    }
  }
  return { usage, intro, sections };
}

/** Text for roff: backslashes and minus signs escaped, no line starting with a control character. */
function roff(text) {
  return text
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .replace(/^([.'])/gm, '\\&$1');
}

/** A titled section's items as tagged paragraphs, the term in bold. */
function items(list) {
  return list.flatMap(({ term, description }) => ['.TP', `\\fB${roff(term)}\\fR`, roff(description)]);
}

/** The page, in roff with the man macros; `epoch` (SOURCE_DATE_EPOCH) dates it. */
export async function manPage({ root, version, epoch }) {
  const { buildProgram } = await import(pathToFileURL(path.join(root, 'dist', 'cli', 'main.js')).href);
  const { text, names } = await helpText(buildProgram, ['--help']);
  const top = parseHelp(text);
  const section = (title) => top.sections.find((s) => s.title.startsWith(title));
  const [settings, exitCodes, options] = [section('Settings'), section('Exit codes'), section('Options')];
  if (!settings || !exitCodes || !options) throw new Error(`bds --help has no Settings, Exit codes or Options`);
  const date = new Date(epoch * 1000).toISOString().slice(0, 10);
  const page = [
    `.TH BDS 1 ${date} "bds ${version}" "User Commands"`,
    // Left-aligned and not hyphenated: options and URLs are copied from the page as they are.
    '.ad l',
    '.nh',
    '.SH NAME',
    `bds \\- ${roff(
      top.intro
        .join(' ')
        .replace(/\.$/, '')
        .replace(/^\w/, (c) => c.toLowerCase()),
    )}`,
    '.SH SYNOPSIS',
    '\\fBbds\\fR \\fIcommand\\fR [\\fIoptions\\fR] [\\fIarguments\\fR]',
    '.br',
    '\\fBbds\\fR \\fB\\-\\-version\\fR [\\fB\\-\\-verbose\\fR]',
    '.br',
    '\\fBbds help\\fR [\\fIcommand\\fR]',
    '.SH DESCRIPTION',
    roff(top.intro.join(' ')),
    '.PP',
    roff(
      'Each command below is as bds help <command> prints it. Options follow the command (bds whoami --json). ' +
        `The documentation, with examples: ${HOMEPAGE}/blob/v${version}/docs/commands.md`,
    ),
    '.SH OPTIONS',
    ...items(options.items),
    '.SH COMMANDS',
  ];
  const helps = [];
  for (const name of names) helps.push(parseHelp((await helpText(buildProgram, ['help', name])).text));
  // The options every command takes are listed once, after the commands.
  const optionsOf = (help) => help.sections.find((s) => s.title === 'Options')?.items ?? [];
  const common = optionsOf(helps[0]).filter(({ term }) =>
    helps.every((h) => optionsOf(h).some((o) => o.term === term)),
  );
  const isCommon = (item) => common.some((o) => o.term === item.term);
  for (const help of helps) {
    page.push('.SS', `\\fB${roff(help.usage)}\\fR`, roff(help.intro.join(' ')));
    for (const part of help.sections) {
      const own = part.items.filter((item) => part.title !== 'Options' || !isCommon(item));
      if (!own.length && !part.lines.length) continue;
      page.push('.PP', `${roff(part.title)}:`, ...part.lines.flatMap((line) => ['.br', roff(line)]));
      page.push('.RS', ...items(own), '.RE');
    }
  }
  page.push('.SH COMMON OPTIONS', roff('Every command takes these, after its name.'), ...items(common));
  page.push(
    '.SH ENVIRONMENT',
    roff(`${settings.title}. ${settings.lines.join(' ')}.`),
    ...items(settings.items),
    '.SH EXIT STATUS',
    ...items(exitCodes.items),
    '.SH SEE ALSO',
    roff(`${HOMEPAGE}/tree/v${version}/docs (settings, output, recipes, troubleshooting)`),
  );
  return `${page.join('\n')}\n`;
}
