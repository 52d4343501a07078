// What a command module defines, as gh's NewCmdX and firebase's `new Command(...)` do: its name, arguments and
// options, a run function that returns data, and a print function that shows that data. main.ts turns the
// list of these into the commander program; a command module loads the core only inside run().

import type { Option } from 'commander';
import type { Factory } from './factory.js';

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
  /** Does the work; `args` are the positional arguments (a variadic one as an array). */
  run(factory: Factory, options: Options, args: Array<string | string[]>): Promise<Data>;
  /** Shows the result: JSON with --json, else text (io.result decides); may return a non-zero exit code. */
  print(factory: Factory, data: Data, options: Options): number | void;
}

/** Lets a list hold commands of different option and data types. */
export function defineCommand<Options, Data>(spec: CommandSpec<Options, Data>): CommandSpec<any, any> {
  return spec;
}

