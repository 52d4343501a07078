// Byte counts as curl writes them, one grammar for every size and rate bds reads (deliver's --limit-rate,
// the sandbox's --max-upload-size): a number, a fraction allowed, with K, M, G or T (1024, 1024², 1024³,
// 1024⁴, as curl's and S3's 5G), in either case. A fraction of a byte is rounded to the nearest one.

const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };
const SIZE = /^(\d+(?:\.\d+)?)([kmgt]?)$/i;

/** The bytes `text` says, or undefined when it is not a size. */
export function parseSize(text: string): number | undefined {
  const match = SIZE.exec(text.trim());
  if (!match) return undefined;
  const bytes = Math.round(Number(match[1]) * UNITS[match[2]!.toLowerCase()]!);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}
