// The options that say which delivery folder and what it holds: the same for check and deliver.

import { Option } from 'commander';
import { PRODUCTS, type Product } from '../../core/api/types.js';
import { UsageError } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import type { CommonFlags } from '../command.js';
import { expandFolderPatterns } from './folder-patterns.js';

export interface FolderFlags extends CommonFlags {
  period?: string;
  product?: Product;
  file?: string;
  schema?: string;
  report?: string;
}

export function folderOptions(sourceHelp: string): Option[] {
  return [
    new Option('--period <YYYY-MM>', "the month the data covers (default: the YYYY-MM in the folder's name)"),
    new Option('--source <id>', sourceHelp),
    new Option('--product <product>', 'product; default from schema.format').choices(PRODUCTS),
    new Option('--file <path>', 'the data file, when the folder holds several'),
    new Option('--schema <path>', 'the schema file (default <dir>/schema.json)'),
    new Option('--report <path>', 'the scrub report (default <dir>/report.json)'),
  ];
}

/** The folder arguments as the core takes them: a pattern the shell left as typed, expanded (folder-patterns.ts). */
export function foldersOf(dirs: string | string[] | undefined, { cwd, platform }: Runtime): string[] {
  return expandFolderPatterns(Array.isArray(dirs) ? dirs : [String(dirs)], cwd, platform);
}

/** The folder options as the core takes them. */
export function folderOf(dir: string, flags: FolderFlags) {
  return {
    dir,
    period: flags.period,
    product: flags.product,
    file: flags.file,
    schema: flags.schema,
    report: flags.report,
  };
}

/** With several folders, each folder's period is the one in its name and its files are its own. */
export function refuseOneFolderFlags(folders: string[], flags: FolderFlags, command: 'check' | 'deliver'): void {
  const given = (['period', 'file', 'schema', 'report'] as const).filter((name) => flags[name] !== undefined);
  if (folders.length > 1 && given.length > 0) {
    throw new UsageError(`${given.map((name) => `--${name}`).join(', ')} cannot be given with several folders`, {
      hint: `each folder's period is the YYYY-MM in its name, and its files are its own; or ${command} one folder at a time`,
    });
  }
}
