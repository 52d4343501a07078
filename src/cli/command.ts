// What a command module defines, as gh's NewCmdX and firebase's `new Command(...)` do: its name, arguments and
// options, a run function that calls the core and returns its data, and a print function that shows that data.
// main.ts turns the list of these into the commander program; a command module loads the core only inside run().

import type { Command, Option } from 'commander';
import type { MonthRun } from '../core/monitoring/metrics.js';
import type { Operation } from '../core/operation.js';
import type { SettingsFlags } from '../core/settings/settings.js';
import type { IO } from './output/io.js';

/** Options every command takes (and --source, which several do). */
export interface CommonFlags {
  json?: boolean;
  quiet?: boolean;
  verbose?: boolean;
  /** false with --no-color */
  color?: boolean;
  baseUrl?: string;
  config?: string;
  profile?: string;
  source?: string;
}

export interface ArgumentSpec {
  /** As commander writes it: `<dir>`, `<dir...>`. */
  syntax: string;
  description: string;
  /** Words the argument may be (completion offers them); a folder otherwise. */
  choices?: readonly string[];
}

export interface CommandSpec<Options = object, Data = unknown> {
  name: string;
  description: string;
  arguments?: ArgumentSpec[];
  options?: Option[];
  /**
   * Does the work through the core; `op` is what the call carries (its events print notices until the command
   * gives it a view of its own with op.with), `args` the positional arguments (a variadic one as an array).
   */
  run(op: Operation, io: IO, options: Options, args: Array<string | string[]>, program: Command): Promise<Data>;
  /** Shows the result: JSON with --json, else text (io.result decides); may return a non-zero exit code. */
  print(io: IO, data: Data, options: Options, op: Operation): number | void;
  /**
   * The settings the command's own flags give, besides the common ones (deliver's --limit-rate, --ping-url and
   * --metrics-file): they are resolved with the others, over the environment and the config file.
   */
  settings?(options: Options): Omit<SettingsFlags, 'names'>;
  /**
   * A watched command (deliver) pings and writes the metrics file its settings name (run-command.ts): `months`
   * says which months its result was about, `delivers` whether a run delivers at all (a dry run does not).
   */
  monitored?: { months(data: Data): MonthRun[]; delivers(options: Options): boolean };
}

/** Lets a list hold commands of different option and data types. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each command's own types are checked where it is defined
export function defineCommand<Options, Data>(spec: CommandSpec<Options, Data>): CommandSpec<any, any> {
  return spec;
}
