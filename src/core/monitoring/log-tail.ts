// The end of a run's log, for the body of the ping that ends it: whole lines, the newest kept, at most a
// number of bytes in all (healthchecks.io keeps the first 100 kB of a body; a few kB is what a person reads).

export const LOG_TAIL_BYTES = 10_000;
/** The first line of a tail that lost its oldest lines. */
const LEFT_OUT = '[earlier lines left out]';

export class LogTail {
  private readonly lines: string[] = [];
  private bytes = 0;
  private leftOut = false;
  /** What the lines may take, room for LEFT_OUT kept. */
  private readonly budget: number;

  constructor(max = LOG_TAIL_BYTES) {
    this.budget = max - Buffer.byteLength(`${LEFT_OUT}\n`);
  }

  /** One line (without its newline); a line longer than the whole budget keeps its start. */
  add(line: string): void {
    const text = Buffer.byteLength(line) < this.budget ? line : startOf(line, this.budget - 2);
    this.lines.push(text);
    this.bytes += Buffer.byteLength(text) + 1;
    while (this.bytes > this.budget) {
      this.bytes -= Buffer.byteLength(this.lines.shift()!) + 1;
      this.leftOut = true;
    }
  }

  text(): string {
    return [...(this.leftOut ? [LEFT_OUT] : []), ...this.lines].map((line) => `${line}\n`).join('');
  }
}

/** The characters of `text` that fit in `bytes` bytes of UTF-8, then an ellipsis. */
function startOf(text: string, bytes: number): string {
  let kept = '';
  let size = Buffer.byteLength('…');
  for (const character of text) {
    size += Buffer.byteLength(character);
    if (size > bytes) break;
    kept += character;
  }
  return `${kept}…`;
}
