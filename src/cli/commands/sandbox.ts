// bds sandbox: runs the API emulator until interrupted, and says how to use it.

import path from 'node:path';
import { Option } from 'commander';
import { UsageError } from '../../core/errors.js';
import { pathsOf, type Platform } from '../../core/platform.js';
import type { Env } from '../../core/runtime.js';
import { parseSize } from '../../core/settings/size.js';
import { examplesFolder } from '../../core/version.js';
import { defineCommand } from '../command.js';
import type { CommonFlags } from '../command.js';
import { parseDuration } from './review-options.js';

interface SandboxFlags extends CommonFlags {
  port: string;
  host: string;
  dataDir?: string;
  review: 'accept' | 'reject' | 'none';
  reviewAfter: string;
  maxUploadSize: string;
}

export default defineCommand<SandboxFlags, void>({
  name: 'sandbox',
  description: 'run a local emulator of the API (for trying bds and for tests)',
  options: [
    new Option('--port <port>', 'API port; the storage host listens on the next one').default('8787'),
    new Option('--host <host>', 'address to listen on').default('127.0.0.1'),
    new Option('--data-dir <path>', 'keep sources, batches and uploads in this folder'),
    new Option(
      '--review <decision>',
      'review received batches: accept, reject, or none (they stay received until a test decides)',
    )
      .choices(['accept', 'reject', 'none'])
      .default('none'),
    new Option(
      '--review-after <duration>',
      'with --review accept or reject: decide a batch this long after it was received',
    ).default('10s'),
    new Option(
      '--max-upload-size <size>',
      'refuse an upload larger than this (bytes, or with K, M, G, T: 1024-based), as storage does',
    ).default('5G'),
  ],
  async run(op, io, flags) {
    const { runtime, signal } = op;
    const port = Number(flags.port);
    if (!/^\d+$/.test(flags.port) || port > 65535)
      throw new UsageError(`--port ${flags.port} is not a port number (0 to 65535)`);
    const reviewAfter = parseDuration(flags.reviewAfter, '--review-after');
    const maxUploadSize = maxUploadSizeOf(flags.maxUploadSize);
    const dataDir = flags.dataDir ? path.resolve(runtime.cwd, flags.dataDir) : undefined;
    const { startSandbox } = await import('../../sandbox/index.js');
    const sandbox = await startSandbox({
      host: flags.host,
      port,
      review: flags.review,
      reviewAfter,
      maxUploadSize,
      ...(dataDir ? { dataDir } : {}),
    }).catch((error: { code?: string; message?: string; path?: string }) => {
      if (error.code === 'EADDRINUSE') {
        throw new UsageError(`port ${port} or ${port + 1} is already in use`, { hint: 'choose others with --port' });
      }
      if (error.code === 'EADDRNOTAVAIL')
        throw new UsageError(`cannot listen on ${flags.host}: not an address of this machine`);
      if (error.code === 'ESANDBOXSTATE') {
        throw new UsageError(`${error.message}`, {
          hint: 'name an empty folder with --data-dir, or remove that state.json',
        });
      }
      // A failed system call on the data folder (a file, not a folder; no permission): the folder's fault.
      if (dataDir && error.path?.startsWith(dataDir)) {
        throw new UsageError(`cannot keep the sandbox's data in ${dataDir} (${error.code} on ${error.path})`, {
          hint: 'name a folder you can write with --data-dir',
        });
      }
      throw error;
    });
    try {
      io.result(
        { baseUrl: sandbox.baseUrl, storageUrl: sandbox.storageUrl, keys: sandbox.keys, sourceId: sandbox.sourceId },
        () =>
          [
            `bds sandbox is listening on ${sandbox.baseUrl} (storage host ${sandbox.storageUrl})`,
            dataDir ? `Data is kept in ${dataDir}.` : 'Data is kept in memory and a temp folder until it stops.',
            '',
            'Keys:',
            `  live  ${sandbox.keys.live}`,
            `  test  ${sandbox.keys.test}`,
            '',
            `Source: ${sandbox.sourceId}`,
            '',
            flags.review === 'none'
              ? `Review: none; a batch stays received until decided with POST ${sandbox.baseUrl}/_sandbox/batches/<id>/review {"status": "accepted"} (JSON, with a key as the API takes it)`
              : `Review: a received batch is in review at once, and ${flags.review === 'accept' ? 'accepted' : 'rejected'} ${flags.reviewAfter} after it was received.`,
            '',
            ...trySettings(
              { BDS_BASE_URL: sandbox.baseUrl, BDS_API_KEY: sandbox.keys.test, BDS_SOURCE_ID: sandbox.sourceId },
              runtime.platform,
            ),
            ...tryDeliver(examplesFolder(), runtime.env, runtime.platform),
            '',
            'Stop it with Ctrl-C.',
          ].join('\n'),
      );
      await new Promise<void>((resolve) => {
        if (signal.aborted) return resolve();
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
      io.notice('stopping the sandbox');
    } finally {
      await sandbox.close();
    }
    // Stopped by a signal: exit 130 or 143, as for every command.
    throw signal.reason;
  },
  print() {
    // The banner is printed as soon as the sandbox listens, in run().
  },
});

/** `--max-upload-size`: a size as every size bds reads is written (size.ts): bytes, or e.g. 500K, 1.5M, 5G, 6T. */
function maxUploadSizeOf(text: string): number {
  const bytes = parseSize(text);
  if (bytes === undefined) {
    throw new UsageError(`--max-upload-size ${text.trim() === '' ? 'is empty' : `${text} is not a size`}`, {
      hint: 'write bytes, or a number with K, M, G or T (1024-based): 500K, 1.5M, 5G',
    });
  }
  return bytes;
}

/**
 * The banner's `bds deliver` line, true for the way bds was got: in a clone run with `npx bds` (npx ran in the
 * folder that holds these examples), `npx bds` from there, which works nowhere else; otherwise (an npm install,
 * wherever its prefix) `bds` and the examples' absolute path; the single executable holds no examples/, so
 * where to find some.
 */
function tryDeliver(examples: string | undefined, env: Env, platform: Platform): string[] {
  if (!examples) {
    return [
      '  bds deliver <a folder your scrubber wrote> --period YYYY-MM',
      '(this standalone bds holds no example folders: examples/ is in the release tarball and the repository)',
    ];
  }
  const paths = pathsOf(platform);
  const folder = paths.join(examples, 'records-2024-05');
  const npxFrom = env.npm_command === 'exec' ? env.npm_config_local_prefix : undefined;
  const inClone = npxFrom ? paths.relative(npxFrom, folder) : '..';
  const shown = (file: string) => shellWord(file, platform);
  if (!npxFrom || inClone.startsWith('..') || paths.isAbsolute(inClone))
    return [`  bds deliver ${shown(folder)} --period 2024-05`];
  return [`  cd ${shown(npxFrom)}`, `  npx bds deliver ${shown(inClone)} --period 2024-05`];
}

/**
 * The banner's lines that set the sandbox's settings, in the shells of the system: POSIX's `export`; on
 * Windows, where no `export` exists, PowerShell's (Windows Terminal's default) and cmd.exe's.
 */
function trySettings(values: Record<string, string>, platform: Platform): string[] {
  const pairs = Object.entries(values);
  if (platform !== 'win32') {
    return ['Try it in another terminal:', `  export ${pairs.map(([name, value]) => `${name}=${value}`).join(' ')}`];
  }
  return [
    'Try it in another terminal, in PowerShell:',
    `  ${pairs.map(([name, value]) => `$env:${name}='${value}'`).join('; ')}`,
    'or in cmd.exe:',
    `  ${pairs.map(([name, value]) => `set "${name}=${value}"`).join(' & ')}`,
    'then:',
  ];
}

/** A path as one word of a command line: as it is when nothing in it needs quoting, else quoted for the shell. */
export function shellWord(file: string, platform: Platform): string {
  if ((platform === 'win32' ? /^[\w@+=:,./\\-]+$/ : /^[\w@%+=:,./-]+$/).test(file)) return file;
  // Double quotes are read alike by PowerShell and cmd.exe, and a Windows path cannot hold one.
  return platform === 'win32' ? `"${file}"` : `'${file.replace(/'/g, `'\\''`)}'`;
}
