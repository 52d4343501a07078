// The program: the common options, the list of commands (each defines itself in commands/), and the one
// place that turns errors into exit codes and renders them. Command modules load only what their run needs,
// so that --help and --version stay quick.

import { Argument, Command, CommanderError, Option } from 'commander';
import { EXIT_CODES } from '../core/errors.js';
// A key given as an argument or option (`--key=svc_live_...`) is never echoed back by a usage error.
import { withoutKeys } from '../core/settings/text.js';
import { packageVersion, versionInfo } from '../core/version.js';
import type { CommandSpec, CommonFlags } from './command.js';
import checkCommand from './commands/check.js';
import completionCommand from './commands/completion.js';
import deliverCommand from './commands/deliver.js';
import doctorCommand from './commands/doctor.js';
import listCommand from './commands/list.js';
import loginCommand from './commands/login.js';
import logoutCommand from './commands/logout.js';
import registerSourceCommand from './commands/register-source.js';
import sandboxCommand from './commands/sandbox.js';
import statusCommand from './commands/status.js';
import whoamiCommand from './commands/whoami.js';
import { errorDocument } from './output/format.js';
import { githubAnnotation, inGithubActions } from './output/github.js';
import type { CliRuntime } from './runtime.js';

/** In the order `bds --help` lists them. */
const COMMANDS: CommandSpec[] = [
  loginCommand,
  logoutCommand,
  whoamiCommand,
  registerSourceCommand,
  checkCommand,
  deliverCommand,
  listCommand,
  statusCommand,
  doctorCommand,
  sandboxCommand,
  completionCommand,
];

const HELP_FOOTER = `
Settings (highest first: flags, environment, config file):
  bds login stores a key in ~/.config/bds/config.json; bds doctor checks them all
  BDS_API_KEY         the API key (svc_live_... or svc_test_...); never a flag
  BDS_API_KEY_FILE    a file holding the API key
  BDS_BASE_URL        base URL of the API (--base-url)
  BDS_SOURCE_ID       source id (--source)
  BDS_PROFILE         profile of the config file (--profile)
  BDS_CONFIG          config file to use instead of searching (--config)
  BDS_PING_URL        deliver: a URL to ping as the run starts and ends (--ping-url)
  BDS_METRICS_FILE    deliver: a Prometheus textfile of each month's outcome (--metrics-file)
  BDS_LIMIT_RATE      deliver: cap the upload, bytes/s as curl writes them: 500K, 10M (--limit-rate)
  HTTPS_PROXY, HTTP_PROXY, NO_PROXY   proxies; NODE_EXTRA_CA_CERTS for a corporate CA
  NO_COLOR            no colours; XDG_STATE_HOME holds delivery records (~/.local/state/bds)
  XDG_CACHE_HOME      remembered checks of data files (~/.cache/bds)
  CI                  plain timestamped lines even on a terminal
  GITHUB_ACTIONS      on GitHub Actions: an ::error:: annotation for a failure, and deliver's
                      summary appended to GITHUB_STEP_SUMMARY

Exit codes:
  0  success, including "already delivered" and --dry-run
  1  internal error (a bug)
  2  usage error or invalid input; nothing was created
  3  authentication: no key, a malformed key, or 401/403 from the API
  4  the API or the storage host refused the request, or answered with a redirect;
     or the month is already delivered from another file (--force delivers it again)
  5  network or server failure after retries, or a response that makes no sense;
     or the delivery record could not be saved once the batch existed
  6  another bds process is delivering the same source, period and product
  7  status (or deliver --wait): a month is in a state --fail-on names, or still
     pending when --wait timed out
  130/143  interrupted by SIGINT/SIGTERM; a delivery run again resumes
  129      interrupted by SIGHUP (a closed terminal or ssh session); likewise
`;

/** Runs bds with the user's arguments (argv without node and the script) and returns the exit code. */
export async function main(argv: string[], runtime: CliRuntime): Promise<number> {
  if (isVerboseVersion(argv)) {
    runtime.stdout.write(formatVersionInfo());
    return EXIT_CODES.ok;
  }
  let exitCode: number = EXIT_CODES.ok;
  const program = buildProgram(
    runtime,
    async (spec, options, args, command) => {
      const { runCommand } = await import('./run-command.js');
      exitCode = await runCommand(spec, runtime, options, args, command.parent ?? command);
    },
    argv,
  );
  try {
    await program.parseAsync(helpOfUnknownAsUnknown(argv, program), { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      exitCode = error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
      // Scripts parsing stdout get one JSON document on a usage error too (commander printed the line).
      if (exitCode !== EXIT_CODES.ok && argv.includes('--json')) {
        runtime.stdout.write(
          errorDocument(
            withoutKeys(withoutPrefix(error.message)),
            usageHint(withoutPrefix(error.message), program, argv),
            exitCode,
          ),
        );
      }
      return exitCode;
    }
    const { reportFailure } = await import('./run-command.js');
    return reportFailure(runtime, error);
  }
}

/**
 * `bds --version --verbose`, in either order and with -V and -v: commander would print the version alone at
 * --version, so it is answered before commander parses.
 */
function isVerboseVersion(argv: string[]): boolean {
  return (
    argv.length === 2 &&
    argv.some((a) => a === '--version' || a === '-V') &&
    argv.some((a) => a === '--verbose' || a === '-v')
  );
}

/** What support asks first: the version, the Node.js, the platform and how bds was installed. */
function formatVersionInfo(): string {
  const { version, node, platform, install } = versionInfo();
  return `bds:      ${version}\nnode:     ${node}\nplatform: ${platform}\ninstall:  ${install}\n`;
}

/**
 * `bds help <name>` for a name that is no command: commander prints the general help and fails without a word
 * of why. Read as `bds <name>`, it gets commander's "unknown command" line and its suggestion (and
 * `bds help help` is `bds help`).
 */
function helpOfUnknownAsUnknown(argv: string[], program: Command): string[] {
  const [first, name, ...rest] = argv;
  if (first !== 'help' || name === undefined || name.startsWith('-')) return argv;
  return program.commands.some((command) => command.name() === name) ? argv : [name, ...rest];
}

/**
 * The hint under a usage error. An option of the commands given before the command (`bds --json whoami`) is
 * unknown to bds itself: the hint shows the same line with the options after the command.
 */
function usageHint(message: string, program: Command, argv: readonly string[]): string {
  const option = /^unknown option '([^'=]+)/.exec(message)?.[1];
  // Every command takes the common options (--json, --quiet, --base-url, ...); the first command has them all.
  if (
    option === undefined ||
    !program.commands[0]?.options.some((known) => known.long === option || known.short === option)
  ) {
    return 'see bds --help';
  }
  const at = argv.findIndex((arg) => program.commands.some((command) => command.name() === arg));
  const before = argv.slice(0, Math.max(at, 0));
  if (at < 0 || !before.some((arg) => arg === option || arg.startsWith(`${option}=`))) {
    // `bds -v` as `node -v`: -v is every command's --verbose (the contract); the version has its own options.
    const version = option === '-v' || option === '--verbose' ? '; the version is bds --version (-V)' : '';
    return `options follow the command: bds <command> ${option}${version}; see bds --help`;
  }
  return `options follow the command: bds ${[...argv.slice(at), ...before].join(' ')}`;
}

/** commander's messages start with "error: "; bds's start with "bds: ". */
function withoutPrefix(message: string): string {
  return message.replace(/^error: /, '');
}

type Runner = (
  spec: CommandSpec,
  options: CommonFlags,
  args: Array<string | string[]>,
  command: Command,
) => Promise<void>;

/** `argv`: the user's arguments, for the hint of a usage error. */
export function buildProgram(runtime: CliRuntime, runner: Runner, argv: readonly string[] = []): Command {
  const program = new Command('bds')
    .description('Deliver scrubbed datasets to the Batch Delivery Service.')
    .version(packageVersion(), '-V, --version', 'print the version (--verbose: Node.js, install)')
    .helpOption('-h, --help', 'show help')
    .addHelpText('after', HELP_FOOTER)
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: (text) => runtime.stdout.write(text),
      writeErr: (text) => runtime.stderr.write(text),
      // commander's "error: ..." becomes bds's one-line form, with a pointer to help.
      outputError: (text, write) => {
        const message = withoutKeys(withoutPrefix(text)).trimEnd();
        write(`bds: ${message}\nhint: ${usageHint(message, program, argv)}\n`);
        if (inGithubActions(runtime.env)) write(githubAnnotation(message));
      },
    });

  for (const spec of COMMANDS) {
    const command = program
      .command(spec.name)
      .description(spec.description)
      .helpOption('-h, --help', 'show help')
      .exitOverride();
    for (const { syntax, description, choices } of spec.arguments ?? []) {
      const argument = new Argument(syntax, description);
      // For completion only: a wrong word gets the command's own message, not commander's.
      if (choices) argument.argChoices = [...choices];
      command.addArgument(argument);
    }
    for (const option of spec.options ?? []) command.addOption(option);
    command.action(async (...params: unknown[]) => {
      // commander passes the arguments, then the options, then the command itself.
      const args = params.slice(0, -2) as Array<string | string[]>;
      await runner(spec, command.opts<CommonFlags>(), args, command);
    });
  }

  // Added last, so that each command's help lists its own options first.
  for (const sub of program.commands) {
    sub
      .addOption(new Option('--json', 'print the result as one JSON document on stdout'))
      .addOption(new Option('-q, --quiet', 'only warnings, errors and the result'))
      .addOption(new Option('-v, --verbose', 'log each HTTP request (secrets redacted) and stack traces'))
      .addOption(new Option('--no-color', 'no colours (also NO_COLOR)'))
      .addOption(new Option('--base-url <url>', 'base URL of the API (BDS_BASE_URL)'))
      .addOption(new Option('--config <path>', 'use this config file instead of searching (BDS_CONFIG)'))
      .addOption(new Option('--profile <name>', 'use this profile of the config file (BDS_PROFILE)'));
  }
  return program;
}
