// bds sandbox: runs the API emulator until interrupted, and says how to use it.

import path from 'node:path';
import { UsageError } from '../errors.js';
import type { Session } from './session.js';

export interface SandboxCommandOptions {
  port: string;
  host: string;
  dataDir?: string;
}

export async function runSandbox(session: Session, options: SandboxCommandOptions): Promise<void> {
  const { ctx, io } = session;
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65534) throw new UsageError(`--port ${options.port} is not a port number`);
  const { startSandbox } = await import('../sandbox/index.js');
  const sandbox = await startSandbox({
    host: options.host,
    port,
    storagePort: port === 0 ? 0 : port + 1,
    ...(options.dataDir ? { dataDir: path.resolve(ctx.cwd, options.dataDir) } : {}),
  }).catch((error: { code?: string; message?: string }) => {
    if (error.code === 'EADDRINUSE') {
      throw new UsageError(`port ${port} or ${port + 1} is already in use`, { hint: 'choose others with --port' });
    }
    if (error.code === 'EADDRNOTAVAIL') throw new UsageError(`cannot listen on ${options.host}: not an address of this machine`);
    throw error;
  });
  // A source to deliver to at once; with --data-dir, the one kept from an earlier run.
  const source = sandbox.store.sources()[0] ?? sandbox.store.createSource({ name: 'sandbox demo' });
  try {
    io.result(
      {
        baseUrl: sandbox.baseUrl,
        storageUrl: sandbox.storageUrl,
        keys: { live: sandbox.keys.live, test: sandbox.keys.test },
        sourceId: source.id,
      },
      () =>
        [
          `bds sandbox is listening on ${sandbox.baseUrl} (storage host ${sandbox.storageUrl})`,
          `${options.dataDir ? `Data is kept in ${path.resolve(ctx.cwd, options.dataDir)}.` : 'Data is kept in memory and a temp folder until it stops.'}`,
          '',
          'Keys:',
          `  live  ${sandbox.keys.live}`,
          `  test  ${sandbox.keys.test}`,
          '',
          `Source: ${source.id}`,
          '',
          'Try it in another terminal (examples/ is in the bds repository):',
          `  export BDS_BASE_URL=${sandbox.baseUrl} BDS_API_KEY=${sandbox.keys.test} BDS_SOURCE_ID=${source.id}`,
          '  bds deliver examples/records-2024-05 --period 2024-05',
          '',
          'Stop it with Ctrl-C.',
        ].join('\n'),
    );
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) return resolve();
      ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    io.notice('stopping the sandbox');
  } finally {
    await sandbox.close();
  }
  // Stopped by a signal: exit 130 or 143, as for every command.
  throw ctx.signal.reason;
}
