// bds register-source: creates a source and says how to use its id.

import { Option } from 'commander';
import type { Source } from '../../core/api/types.js';
import { defineCommand } from '../command.js';
import type { CommonFlags } from '../command.js';

interface RegisterSourceFlags extends CommonFlags {
  name?: string;
  description?: string;
}

export default defineCommand<RegisterSourceFlags, Source>({
  name: 'register-source',
  description: 'register a new source and print its id',
  options: [
    new Option('--name <name>', 'name of the source'),
    new Option('--description <text>', 'what the source delivers'),
  ],
  async run(op, _io, flags) {
    const { registerSource } = await import('../../core/service.js');
    return registerSource({ name: flags.name ?? '', description: flags.description }, op);
  },
  print(io, source) {
    io.result(source, () =>
      [
        `Registered source ${source.id}${source.name ? ` (${source.name})` : ''}.`,
        'Deliver to it with any of:',
        `  bds deliver <dir> --period YYYY-MM --source ${source.id}`,
        `  export BDS_SOURCE_ID=${source.id}`,
        `  "sourceId": "${source.id}"   in your config file (.bdsrc.json or ~/.config/bds/config.json)`,
      ].join('\n'),
    );
  },
});
