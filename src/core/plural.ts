// The one rule for a noun after a count, in the core's few English words (error messages, doctor's findings) and
// the CLI's alike. It imports nothing, so every part of src/ may use it.

/** `one` for a count of 1, else `many` (the noun with an s, unless given: "batches"). */
export function plural(count: number, one: string, many = `${one}s`): string {
  return count === 1 ? one : many;
}

/** A count and its noun: "1 record", "3 records", "2 batches". */
export function counted(count: number, one: string, many?: string): string {
  return `${count} ${plural(count, one, many)}`;
}
