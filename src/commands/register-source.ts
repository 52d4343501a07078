// bds register-source: creates a source and says how to use its id.

import { UsageError } from '../errors.js';
import type { Source } from '../api/types.js';
import type { Session } from './session.js';

export interface RegisterSourceOptions {
  name?: string;
  description?: string;
}

export async function registerSource(session: Session, options: RegisterSourceOptions): Promise<Source> {
  const name = options.name?.trim();
  if (!name) throw new UsageError('missing --name <name> (what the portal shows for this source)');
  const { api } = await session.connect();
  return api.createSource(
    { name, ...(options.description === undefined ? {} : { description: options.description }) },
    session.newIdempotencyKey(),
  );
}

export function printSource(session: Session, source: Source): void {
  session.io.result(source, () =>
    [
      `Registered source ${source.id}${source.name ? ` (${source.name})` : ''}.`,
      'Deliver to it with any of:',
      `  bds deliver <dir> --period YYYY-MM --source ${source.id}`,
      `  export BDS_SOURCE_ID=${source.id}`,
      `  "sourceId": "${source.id}"   in your config file (.bdsrc.json or ~/.config/bds/config.json)`,
    ].join('\n'),
  );
}
