// One command's run, loaded only when a command runs (with it chalk, the output code and the core's operation),
// so that --help and --version stay quick: its output (io) and its operation are made, the command runs and
// prints, and a failure is rendered here, the one place that turns an error into what a person reads.

import type { Command } from 'commander';
import { BdsError, InterruptedError, toBdsError, UsageError } from '../core/errors.js';
import { Operation } from '../core/operation.js';
import type { CommandSpec, CommonFlags } from './command.js';
import { RunMonitor } from './monitoring.js';
import { errorWords, FLAG_NAMES, inCliWords } from './output/error-words.js';
import { errorDocument } from './output/format.js';
import { IO } from './output/io.js';
import { noticePrinter } from './output/words.js';
import type { CliRuntime } from './runtime.js';

/** Runs a command and prints its result or its failure; returns the exit code. */
export async function runCommand(
  spec: CommandSpec,
  runtime: CliRuntime,
  options: CommonFlags,
  args: Array<string | string[]>,
  program: Command,
): Promise<number> {
  const monitor = spec.monitored && new RunMonitor(spec.monitored.delivers(options));
  const io = outputFor(runtime, options);
  const flags = {
    baseUrl: options.baseUrl,
    sourceId: options.source,
    profile: options.profile,
    config: options.config,
    ...spec.settings?.(options),
    names: FLAG_NAMES,
  };
  const op = new Operation(runtime, flags, {
    signal: runtime.signal,
    onEvent: noticePrinter(io),
    observe: runtime.observe,
    log: (line) => io.verbose(line),
    onSecret: (secret) => io.addSecret(secret),
  });
  let code: number;
  try {
    await io.prepare();
    await monitor?.start(op, io, flags);
    const data = await spec.run(op, io, options, args, program);
    if (monitor) monitor.delivered(spec.monitored!.months(data));
    code = spec.print(io, inCliWords(data), options, op) ?? 0;
  } catch (error) {
    code = reportError(io, failure(error, spec));
  } finally {
    io.stopSpinner();
  }
  // A script must not take an empty file for a result, even after a delivery that succeeded.
  const lost = await runtime.resultWritten?.();
  if (lost && code === 0) code = reportError(io, new UsageError(`cannot write the result to stdout: ${lost.message}`));
  // After the result (written, or not) or the error, so that the end ping's body and code are the run's own; an
  // interrupted run is pinged too.
  await monitor?.finish(code, io, runtime);
  return code;
}

/** A failure outside any command's run. */
export function reportFailure(runtime: CliRuntime, error: unknown): number {
  return reportError(outputFor(runtime, {}), toBdsError(error));
}

function outputFor(runtime: CliRuntime, options: CommonFlags): IO {
  return new IO({
    stdout: runtime.stdout,
    stderr: runtime.stderr,
    stdin: runtime.stdin,
    env: runtime.env,
    platform: runtime.platform,
    now: runtime.now,
    flags: {
      json: options.json === true,
      quiet: options.quiet === true,
      verbose: options.verbose === true,
      color: options.color !== false,
    },
  });
}

/** What to report: a bug is wrapped as one; an interrupted delivery says that a re-run resumes it. */
function failure(error: unknown, spec: CommandSpec): BdsError {
  if (error instanceof InterruptedError && spec.name === 'deliver') {
    return new InterruptedError(error.reason, 'run the same command again to resume this delivery');
  }
  return toBdsError(error);
}

/** An error: one line (and a hint), a stack trace only with --verbose; with --json also a JSON object on stdout. */
function reportError(io: IO, error: BdsError): number {
  const { message, hint } = errorWords(error);
  io.error(message, hint, error.stack);
  // One JSON document per run: a command that already printed its result (the sandbox's banner) adds none.
  if (io.flags.json && !io.printedResult) io.writeOut(errorDocument(message, hint, error.exitCode));
  return error.exitCode;
}
