// The program: commander definitions of every command, and the one place that turns errors into exit codes.
// Command modules load only when their command runs, so that --help and --version stay quick.

import { Command, CommanderError, Option } from 'commander';
import { BATCH_STATUSES, PRODUCTS } from './api/types.js';
import type { Context } from './context.js';
import { BdsError, EXIT, InternalError } from './errors.js';
// Type only: the session (and with it chalk and the output code) loads when a command runs, not for --help.
import type { CommonOptions, Session } from './commands/session.js';
import { errorDocument } from './output/format.js';
import { githubAnnotation, inGithubActions } from './output/github.js';
import { VERSION } from './version.js';

const HELP_FOOTER = `
Settings (highest first: flags, environment, config file):
  BDS_API_KEY         the API key (svc_live_... or svc_test_...); never a flag
  BDS_API_KEY_FILE    a file holding the API key
  BDS_BASE_URL        base URL of the API (--base-url)
  BDS_SOURCE_ID       source id (--source)
  BDS_PROFILE         profile of the config file (--profile)
  BDS_CONFIG          config file to use instead of searching (--config)
  HTTPS_PROXY, HTTP_PROXY, NO_PROXY   proxies; NODE_EXTRA_CA_CERTS for a corporate CA
  NO_COLOR            no colours; XDG_STATE_HOME holds delivery records (~/.local/state/bds)
  CI                  plain timestamped lines even on a terminal
  GITHUB_ACTIONS      on GitHub Actions: an ::error:: annotation for a failure, and deliver's
                      summary appended to GITHUB_STEP_SUMMARY

Exit codes:
  0  success, including "already delivered" and --dry-run
  1  internal error (a bug)
  2  usage error or invalid input; nothing was created
  3  authentication: no key, a malformed key, or 401/403 from the API
  4  the API or the storage host refused the request, or answered with a redirect
  5  network or server failure after retries, or a response that makes no sense
  6  another bds process is delivering the same source, period and product
  130/143  interrupted by SIGINT/SIGTERM; run again to resume
`;

/** Runs bds with the user's arguments (argv without node and the script) and returns the exit code. */
export async function main(argv: string[], ctx: Context): Promise<number> {
  let session: Session | undefined;
  let exitCode: number = EXIT.ok;
  const program = buildProgram(ctx, async (options, run) => {
    const { Session } = await import('./commands/session.js');
    session = new Session(ctx, options);
    try {
      await run(session);
    } finally {
      await session.close();
    }
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    exitCode = exitCodeOf(error);
    if (error instanceof CommanderError) {
      // Scripts parsing stdout get one JSON document on a usage error too (commander printed the line).
      if (exitCode !== EXIT.ok && argv.includes('--json')) {
        ctx.stdout.write(errorDocument(withoutPrefix(error.message), 'see bds --help', exitCode));
      }
      return exitCode;
    }
    const { Session } = await import('./commands/session.js');
    const io = (session ?? new Session(ctx, {})).io;
    io.error(exitCode === EXIT.internal ? internalError(error) : error, exitCode);
  }
  return exitCode;
}

/** commander's messages start with "error: "; bds's start with "bds: ". */
function withoutPrefix(message: string): string {
  return message.replace(/^error: /, '');
}

export function exitCodeOf(error: unknown): number {
  if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  if (error instanceof BdsError) return error.exitCode;
  return EXIT.internal;
}

function internalError(error: unknown): InternalError {
  const wrapped = new InternalError(`internal error: ${error instanceof Error ? error.message : String(error)}`, {
    hint: 'this is a bug in bds; please report it with the output of the same command run with --verbose',
  });
  if (error instanceof Error && error.stack) wrapped.stack = error.stack;
  return wrapped;
}

type Runner = (options: CommonOptions, run: (session: Session) => Promise<void>) => Promise<void>;

export function buildProgram(ctx: Context, runner: Runner): Command {
  const program = new Command('bds')
    .description('Deliver scrubbed datasets to the Batch Delivery Service.')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .addHelpText('after', HELP_FOOTER)
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: (text) => ctx.stdout.write(text),
      writeErr: (text) => ctx.stderr.write(text),
      // commander's "error: ..." becomes bds's one-line form, with a pointer to help.
      outputError: (text, write) => {
        const message = withoutPrefix(text).trimEnd();
        write(`bds: ${message}\nhint: see bds --help\n`);
        if (inGithubActions(ctx.env)) write(githubAnnotation(message));
      },
    });

  const command = (name: string, description: string): Command =>
    program.command(name).description(description).helpOption('-h, --help', 'show help').exitOverride();

  command('whoami', 'show the organization, key and settings in use').action(async (options: CommonOptions) =>
    runner(options, async (session) => {
      const { whoami, printWhoami } = await import('./commands/whoami.js');
      printWhoami(session, await whoami(session));
    }),
  );

  command('register-source', 'register a new source and print its id')
    .option('--name <name>', 'name of the source')
    .option('--description <text>', 'what the source delivers')
    .action(async (options: CommonOptions & { name?: string; description?: string }) =>
      runner(options, async (session) => {
        const { registerSource, printSource } = await import('./commands/register-source.js');
        printSource(session, await registerSource(session, options));
      }),
    );

  command('deliver', 'check a folder written by the scrubber and deliver it as one batch')
    .argument('<dir>', 'the folder: report.json, schema.json and one *.jsonl.gz (or *.jsonl)')
    .option('--period <YYYY-MM>', 'the month the data covers')
    .option('--source <id>', 'source id (BDS_SOURCE_ID)')
    .addOption(new Option('--product <product>', 'product; default from schema.format').choices(PRODUCTS))
    .option('--file <path>', 'the data file, when the folder holds several')
    .option('--schema <path>', 'the schema file (default <dir>/schema.json)')
    .option('--report <path>', 'the scrub report (default <dir>/report.json)')
    .option('--dry-run', 'check everything and show what would be sent; create nothing')
    .option('--force', 'deliver even when this period already has a delivered batch')
    .action(async (dir: string, options: CommonOptions & import('./commands/deliver.js').DeliverOptions) =>
      runner(options, async (session) => {
        const { deliver, printDelivery } = await import('./commands/deliver.js');
        printDelivery(session, await deliver(session, dir, options));
      }),
    );

  command('list', "list a source's batches, newest first")
    .option('--source <id>', 'source id (BDS_SOURCE_ID)')
    .option('--period <YYYY-MM>', 'only this month')
    .addOption(new Option('--product <product>', 'only this product').choices(PRODUCTS))
    .addOption(
      new Option('--status <status>', 'only this status').choices(BATCH_STATUSES),
    )
    .action(async (options: CommonOptions & { period?: string; product?: string; status?: string }) =>
      runner(options, async (session) => {
        const { listBatches, printBatches } = await import('./commands/list.js');
        printBatches(session, await listBatches(session, options));
      }),
    );

  command('sandbox', 'run a local emulator of the API (for trying bds and for tests)')
    .option('--port <port>', 'API port; the storage host listens on the next one', '8787')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--data-dir <path>', 'keep sources, batches and uploads in this folder')
    .action(async (options: CommonOptions & { port: string; host: string; dataDir?: string }) =>
      runner(options, async (session) => {
        const { runSandbox } = await import('./commands/sandbox.js');
        await runSandbox(session, options);
      }),
    );

  command('completion', 'print a shell completion script (bash, zsh or fish)')
    .argument('<shell>', 'bash, zsh or fish')
    .action(async (shell: string, options: CommonOptions) =>
      runner(options, async (session) => {
        const { completionScript } = await import('./commands/completion.js');
        const script = completionScript(program, shell);
        session.io.result({ shell, script }, () => script);
      }),
    );

  // Added last, so that each command's help lists its own options first.
  for (const sub of program.commands) {
    sub
      .option('--json', 'print the result as one JSON document on stdout')
      .option('-q, --quiet', 'only warnings, errors and the result')
      .option('-v, --verbose', 'log each HTTP request (secrets redacted) and stack traces')
      .option('--no-color', 'no colours (also NO_COLOR)')
      .option('--base-url <url>', 'base URL of the API (BDS_BASE_URL)')
      .option('--config <path>', 'use this config file instead of searching (BDS_CONFIG)')
      .option('--profile <name>', 'use this profile of the config file (BDS_PROFILE)');
  }
  return program;
}
