// Test helpers: the sandbox on 127.0.0.1, the CLI run in process through main(argv, runtime) or spawned as
// a user would, and delivery folders made by code.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, constants, copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, expect } from 'vitest';
import type { CliRuntime, OutputStream } from '../src/cli/runtime.js';
import type { HttpTuning } from '../src/core/api/http.js';
import { main } from '../src/cli/main.js';
import { startSandbox, type Sandbox, type EmulatorOptions } from '../src/sandbox/emulator.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = path.join(ROOT, 'bin', 'bds.js');
/**
 * How a spawned test runs bds: `node bin/bds.js`, or the program named by BDS_TEST_BIN (.ci/run points it at
 * the standalone binary, release/bds-linux-x64, to run the spawned tests against it).
 */
export const BDS_COMMAND: readonly string[] = process.env.BDS_TEST_BIN
  ? [path.resolve(process.env.BDS_TEST_BIN)]
  : [process.execPath, BIN];

/** Timeouts and backoff short enough for tests; attempts as in production. */
export const FAST_HTTP: Partial<HttpTuning> = {
  connectTimeoutMs: 2_000,
  headersTimeoutMs: 1_000,
  idleTimeoutMs: 1_000,
  baseDelayMs: 10,
  maxDelayMs: 50,
  maxRetryAfterMs: 200,
};

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A sandbox closed after the current test. */
export async function sandbox(options: EmulatorOptions = {}): Promise<Sandbox> {
  const box = await startSandbox(options);
  cleanups.push(() => box.close());
  return box;
}

/**
 * Listens on 127.0.0.1 until the current test ends, when the server's open connections (tunnels, hung
 * requests) are ended and it is closed; returns the port.
 */
export async function listenUntilTestEnds(server: net.Server): Promise<number> {
  const sockets = new Set<net.Socket>();
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  cleanups.push(async () => {
    // close() waits for open connections: end them first.
    sockets.forEach((socket) => socket.destroy());
    await new Promise((resolve) => server.close(resolve));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/**
 * A listener on 127.0.0.1 that records every request reaching it (method, path, Authorization) and answers 500,
 * until the test ends: where a stolen key or a ping would go.
 */
export async function trap(): Promise<{ url: string; requests: string[] }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
    res.writeHead(500).end();
  });
  return { url: `http://127.0.0.1:${await listenUntilTestEnds(server)}`, requests };
}

/** Temp folders of this test file, removed when it ends: the machine's /tmp is shared. */
const tempDirs: string[] = [];
afterAll(() => {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export function tempDir(prefix = 'bds-test-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export class CapturedStream implements OutputStream {
  text = '';
  isTTY: boolean;
  columns: number;
  rows: number | undefined;
  constructor(
    tty = false,
    columns = 100,
    private readonly onWrite?: (chunk: string) => void,
    rows?: number,
  ) {
    this.isTTY = tty;
    this.columns = tty ? columns : 0;
    this.rows = tty ? rows : undefined;
  }
  write(chunk: string): boolean {
    this.text += chunk;
    this.onWrite?.(chunk);
    return true;
  }
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  home?: string;
  tty?: boolean;
  /** The terminal's width, with tty. */
  columns?: number;
  /** The terminal's height, with tty (none by default, as a stream that does not know it). */
  rows?: number;
  /** Sees each write to stderr as it is made. */
  onStderrWrite?: (chunk: string) => void;
  stdoutTty?: boolean;
  signal?: AbortSignal;
  http?: Partial<HttpTuning>;
  now?: () => Date;
  /** Delays asked of sleep(), in ms (sleep itself returns at once). */
  sleeps?: number[];
  /** Instead of the sleep that returns at once (a fakeClock's moves its clock). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  pid?: number;
  /** Default 'test-host'; a lock names it, and is taken over only on the same host. */
  hostname?: string;
  isProcessAlive?: (pid: number) => boolean;
  /** Who runs bds; default this process's uid. */
  uid?: number;
  /** The system bds is told it runs on; default this one's. */
  platform?: NodeJS.Platform;
  /** What standard input holds (a pipe, not a terminal); default nothing at all. */
  stdin?: string;
  /** Sees every event of the run (the runtime's observer, as the benchmark's). */
  observe?: CliRuntime['observe'];
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (for --json runs). */
  json: () => any;
}

/** A fresh, isolated HOME/state per call unless given; returns the exit code and what was printed. */
export async function run(argv: string[], options: RunOptions = {}): Promise<RunResult> {
  const home = options.home ?? tempDir('bds-home-');
  const stdout = new CapturedStream(options.stdoutTty ?? options.tty ?? false);
  const stderr = new CapturedStream(options.tty ?? false, options.columns, options.onStderrWrite, options.rows);
  const ctx: CliRuntime = {
    // The user config folder as a real process would have it: test/setup.ts's private one.
    env: {
      HOME: home,
      XDG_STATE_HOME: path.join(home, '.local', 'state'),
      XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME,
      // A temp folder of its own: a delivery removes the gzipped copies of processes that are gone, and to this
      // runtime every other pid is gone (isProcessAlive), those of runs in other test files included.
      TMPDIR: tempDir('bds-tmp-'),
      ...options.env,
    },
    cwd: options.cwd ?? home,
    homedir: home,
    platform: options.platform ?? process.platform,
    hostname: options.hostname ?? 'test-host',
    pid: options.pid ?? process.pid,
    uid: options.uid ?? process.getuid?.(),
    ...(options.stdin === undefined ? {} : { stdin: Readable.from([Buffer.from(options.stdin)]) }),
    stdout,
    stderr,
    signal: options.signal ?? new AbortController().signal,
    now: options.now ?? (() => new Date()),
    sleep: async (ms, signal) => {
      options.sleeps?.push(ms);
      await options.sleep?.(ms, signal);
    },
    random: () => 0.5,
    isProcessAlive: options.isProcessAlive ?? (() => false),
    http: { ...FAST_HTTP, ...options.http },
    ...(options.observe ? { observe: options.observe } : {}),
  };
  const code = await main(argv, ctx);
  return { code, stdout: stdout.text, stderr: stderr.text, json: () => JSON.parse(stdout.text) };
}

/** Environment for a CLI pointed at a sandbox with its test key and a fresh source. */
export function sandboxEnv(box: Sandbox, extra: Record<string, string> = {}): Record<string, string> {
  return { BDS_BASE_URL: box.baseUrl, BDS_API_KEY: box.keys.test, ...extra };
}

export function newSource(box: Sandbox, name = 'test source'): string {
  return box.store.createSource({ name }).id;
}

export interface SpawnResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Whether any user may run `file`: it and every folder above it are open to others. */
function othersMayRun(file: string): boolean {
  for (let at = file; ; at = path.dirname(at)) {
    if (!(statSync(at).mode & constants.S_IXOTH)) return false;
    if (path.dirname(at) === at) return true;
  }
}

let copyForOthers: string | undefined;
/**
 * BDS_COMMAND as another user can run it: the Nodes .ci/run takes from npm live under root's home, closed to
 * others, so its program is copied where anyone may run it (once per test file).
 */
function commandFor(uid: number | undefined): readonly string[] {
  if (uid === undefined || uid === process.getuid?.() || othersMayRun(BDS_COMMAND[0]!)) return BDS_COMMAND;
  if (!copyForOthers) {
    const dir = tempDir('bds-node-');
    chmodSync(dir, 0o755);
    copyForOthers = path.join(dir, path.basename(BDS_COMMAND[0]!));
    copyFileSync(BDS_COMMAND[0]!, copyForOthers);
    chmodSync(copyForOthers, 0o755);
  }
  return [copyForOthers, ...BDS_COMMAND.slice(1)];
}

/** bds as a user runs it (BDS_COMMAND), with exactly the environment given (plus PATH). */
export function spawnCli(
  argv: string[],
  options: {
    env?: Record<string, string>;
    cwd?: string;
    onSpawn?: (child: import('node:child_process').ChildProcess) => void;
    /** A file descriptor for the CLI's stdout (say, one open on /dev/full); default a pipe, read into `stdout`. */
    stdoutFd?: number;
    /** Piped into the CLI's stdin; default none (stdin is /dev/null). */
    input?: string;
    /** Run as this user (and group of the same number); the tests run as root to do so. */
    uid?: number;
  } = {},
): Promise<SpawnResult> {
  const home = options.env?.HOME ?? tempDir('bds-home-');
  const command = commandFor(options.uid);
  const child = spawn(command[0]!, [...command.slice(1), ...argv], {
    cwd: options.cwd ?? home,
    env: { PATH: process.env.PATH ?? '', HOME: home, ...options.env },
    stdio: [options.input === undefined ? 'ignore' : 'pipe', options.stdoutFd ?? 'pipe', 'pipe'],
    ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.uid }),
  });
  if (options.input !== undefined) child.stdin?.end(options.input);
  const output = collectOutput(child);
  options.onSpawn?.(child);
  return output;
}

export interface FolderOptions {
  product?: 'records' | 'episodes' | 'environment';
  records?: number;
  /** Raw lines of the data file; overrides `records`. */
  lines?: string[];
  /** Write a plain .jsonl instead of .jsonl.gz. */
  plain?: boolean;
  dataName?: string;
  schema?: unknown;
  report?: unknown;
  /** Raw bytes for the data file (a corrupt gzip, say). */
  dataBytes?: Buffer;
}

export interface Folder {
  dir: string;
  dataFile: string;
  /** The bytes that must reach the server. */
  uploaded: Buffer;
  sha256: string;
  records: number;
}

export const RECORDS_SCHEMA = {
  format: 'jsonl',
  objects: {
    orders: [
      { name: 'order_id', role: 'identifier', kind: 'string', transform: 'keyed hash' },
      { name: 'amount', role: 'measure', kind: 'number' },
    ],
  },
};
export const EPISODES_SCHEMA = {
  format: 'episodes/v1',
  steps: [{ name: 't', role: 'timestamp', kind: 'integer' }],
};
export const REPORT = { tool: 'scrubkit 3.4.1', files: [{ path: 'records.jsonl.gz' }], totals: { rows_out: 3 } };

/** The report a scrubber writes beside its data file: the file named, its records counted (as bds cross-checks). */
export function reportFor(
  dataName: string,
  records: number,
): { tool: string; files: Array<{ path: string; rows_out: number }>; totals: { rows_out: number } } {
  return {
    tool: REPORT.tool,
    files: [{ path: path.basename(dataName), rows_out: records }],
    totals: { rows_out: records },
  };
}

/** A delivery folder as the scrubber writes it. */
export function makeFolder(options: FolderOptions = {}): Folder {
  const dir = tempDir('bds-folder-');
  const product = options.product ?? 'records';
  const schema =
    options.schema !== undefined
      ? options.schema
      : product === 'episodes'
        ? EPISODES_SCHEMA
        : product === 'environment'
          ? { sensors: ['t'] }
          : RECORDS_SCHEMA;
  if (schema !== null) writeFileSync(path.join(dir, 'schema.json'), JSON.stringify(schema, null, 2));
  const count = options.records ?? 3;
  const lines =
    options.lines ??
    Array.from({ length: count }, (_, i) => JSON.stringify({ _object: 'orders', order_id: `o${i}`, amount: i }));
  const text = Buffer.from(lines.map((l) => `${l}\n`).join(''));
  const name = options.dataName ?? (options.plain ? `${product}.jsonl` : `${product}.jsonl.gz`);
  const report = options.report ?? reportFor(name, lines.filter((l) => l.trim() !== '').length);
  if (options.report !== null) writeFileSync(path.join(dir, 'report.json'), JSON.stringify(report, null, 2));
  const bytes = options.dataBytes ?? (options.plain ? text : gzipSync(text));
  const dataFile = path.join(dir, name);
  mkdirSync(path.dirname(dataFile), { recursive: true });
  writeFileSync(dataFile, bytes);
  const uploaded = options.plain ? gzipSync(text) : bytes;
  return {
    dir,
    dataFile,
    uploaded,
    sha256: createHash('sha256').update(uploaded).digest('hex'),
    records: lines.filter((l) => l.trim() !== '').length,
  };
}

/** How many requests of a route the sandbox has seen. */
export function count(box: Sandbox, route: string): number {
  return box.requests.filter((r) => r.route === route).length;
}

/** `bds deliver <folder> --period 2024-05` to the sandbox's first source (made if there is none). */
export async function deliverTo(
  box: Sandbox,
  folder: Folder,
  options: RunOptions & { args?: string[] } = {},
): Promise<RunResult> {
  const source = box.store.sources()[0]?.id ?? newSource(box);
  return run(['deliver', folder.dir, '--period', '2024-05', '--source', source, ...(options.args ?? [])], {
    ...options,
    env: { ...sandboxEnv(box), ...options.env },
  });
}

/** The statuses of every batch the sandbox holds, sorted. */
export function statuses(box: Sandbox): string[] {
  return box.store
    .batches()
    .map((b) => b.status)
    .sort();
}

/** The periods of every batch the sandbox holds, sorted. */
export function periods(box: Sandbox): string[] {
  return box.store
    .batches()
    .map((b) => b.period)
    .sort();
}

/** Exactly one batch is `received`, and it holds the file's bytes. */
export function expectOneReceived(box: Sandbox, folder: Folder): void {
  const received = box.store.batches().filter((b) => b.status === 'received');
  expect(received).toHaveLength(1);
  expect(box.store.uploadedBytes(received[0]!.id)!.equals(folder.uploaded)).toBe(true);
}

/** A small seeded PRNG (mulberry32), so that every run of a test sees the same data. */
export function seededRandom(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What a spawned process printed, and its exit code, once it has closed. */
export function collectOutput(
  child: import('node:child_process').ChildProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/**
 * What the references for bds's JSON Lines check (TextDecoder's fatal UTF-8 and JSON.parse) say of one line's
 * bytes: 'empty', 'object', or bds's words for what is wrong. A line that starts as an object but is not UTF-8
 * is told as such, naming the byte its first invalid sequence starts at: the end of the longest whole UTF-8
 * prefix before the first prefix the decoder refuses.
 */
export function lineVerdict(line: Uint8Array | string): string {
  const bytes = Buffer.from(line);
  const first = bytes.findIndex((byte) => byte !== 0x20 && byte !== 0x09 && byte !== 0x0d);
  if (first === -1) return 'empty';
  if (bytes[first] !== 0x7b) return 'is not a JSON object';
  const decodes = (end: number, stream: boolean): boolean => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, end), { stream });
      return true;
    } catch {
      return false;
    }
  };
  if (!decodes(bytes.length, false)) {
    let refused = 1;
    while (refused < bytes.length && decodes(refused, true)) refused++;
    let whole = refused - 1;
    while (!decodes(whole, false)) whole--;
    const value = bytes[whole]!.toString(16).toUpperCase();
    return `is not valid UTF-8 at byte ${whole + 1} of the line (0x${value})`;
  }
  try {
    JSON.parse(bytes.toString());
    return 'object';
  } catch {
    return 'is not valid JSON';
  }
}

/** bds's verdict on JSON Lines, worked out line by line with the references: `records N`, or the first bad line's message. */
export function linesVerdict(input: Buffer | string, fileName = 'f'): string {
  const bytes = Buffer.from(input);
  let records = 0;
  for (let start = 0, index = 0; start <= bytes.length; index++) {
    const newline = bytes.indexOf(0x0a, start);
    const end = newline === -1 ? bytes.length : newline;
    const verdict = lineVerdict(bytes.subarray(start, end));
    if (verdict === 'object') records++;
    else if (verdict !== 'empty') return `${fileName} line ${index + 1} ${verdict}`;
    start = end + 1;
  }
  return `records ${records}`;
}

/** A clock that only sleep() moves: a 30-minute wait runs at once, and "this month" is the one it starts in. */
export function fakeClock(start: string): {
  ms: () => number;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
  advance: (ms: number) => void;
} {
  let at = Date.parse(start);
  return {
    ms: () => at,
    now: () => new Date(at),
    sleep: async (ms) => {
      at += ms;
    },
    advance: (ms) => {
      at += ms;
    },
  };
}

/** Waits until `condition` holds, polling every 10 ms; fails naming `what` once `timeoutMs` has passed. */
export async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
