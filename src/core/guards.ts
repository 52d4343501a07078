// Small checks that many modules need: plain objects from JSON, the errno code of a failed system call, and
// whether the process that wrote a file (a lock, a temp copy) still runs.

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `ENOENT`, `EACCES`, ... of a failed system call, or undefined for anything else. */
export function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Slack for clocks: a process that started this long after a file was written cannot be its writer. */
const START_TIME_SLACK_MS = 2_000;

/**
 * Whether the process `pid` that wrote a file at `writtenAt` (ms since the epoch, or NaN if unknown) still
 * runs. A pid is reused after a reboot (or after many processes): a process with that pid that started after
 * the file was written is not its writer.
 */
export function writerIsRunning(
  pid: number,
  writtenAt: number,
  isProcessAlive: (pid: number) => boolean,
  processStartedAt: ((pid: number) => number | undefined) | undefined,
): boolean {
  if (!isProcessAlive(pid)) return false;
  const started = processStartedAt?.(pid);
  return started === undefined || Number.isNaN(writtenAt) || started <= writtenAt + START_TIME_SLACK_MS;
}
