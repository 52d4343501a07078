// Small checks that many modules need: plain objects from JSON, and the errno code of a failed system call.

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `ENOENT`, `EACCES`, ... of a failed system call, or undefined for anything else. */
export function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
