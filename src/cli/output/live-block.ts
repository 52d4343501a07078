// A block of lines at the bottom of a terminal, redrawn in place (several deliveries at once): the cursor goes
// back to the block's first line and each line is overwritten, all in one write, so the block never flickers.
// It renders text; the terminal policy (io.ts) decides whether there is a block at all and writes the text.

const CLEAR_LINE = '\u001b[2K';
const CLEAR_BELOW = '\u001b[J';

export class LiveBlock {
  /** The lines as last drawn; empty when none is on screen. */
  private frame: string[] = [];

  constructor(
    /** The terminal's size now (it may change between frames). */
    private readonly size: () => { columns: number | undefined; rows: number | undefined },
  ) {}

  get shown(): boolean {
    return this.frame.length > 0;
  }

  /**
   * The text that draws `lines` over the last frame. Lines are cut to the terminal's width, since a wrapped line
   * would throw the count of lines to go back; a block taller than the terminal keeps its last line (the overall
   * one) and as many before it as fit, or the scrollback would fill with stale frames. `above`: lines that stay,
   * written where the block was, in the same write as the new block; they are not cut (they may wrap, since the
   * block below them is what is counted).
   */
  draw(lines: string[], above: string[] = []): string {
    const { columns, rows } = this.size();
    const width = Math.max((columns ?? 80) - 1, 1);
    const fitted = fitHeight(lines, rows).map((line) => fit(line, width));
    const kept = above.length > 0 ? `${CLEAR_BELOW}${above.map((line) => `${line}\n`).join('')}` : '';
    const text = `${this.cursorToBlock()}${kept}${frameText(fitted)}`;
    this.frame = fitted;
    return text;
  }

  /** The text that takes the block off the screen; what was printed above it stays. */
  clear(): string {
    if (!this.shown) return '';
    const text = `${this.cursorToBlock()}${CLEAR_BELOW}`;
    this.frame = [];
    return text;
  }

  /** The text that writes `text` above the block: the block cleared, the text, the block again, in one write. */
  withAbove(text: string): string {
    return `${this.cursorToBlock()}${CLEAR_BELOW}${text}${frameText(this.frame)}`;
  }

  private cursorToBlock(): string {
    return this.frame.length > 0 ? `\u001b[${this.frame.length}A\r` : '';
  }
}

function frameText(lines: string[]): string {
  return `${lines.map((line) => `${CLEAR_LINE}${line}\n`).join('')}${CLEAR_BELOW}`;
}

/** At most rows - 1 lines (the cursor sits on the last row): the first ones that fit, a count of the rest, the last. */
function fitHeight(lines: string[], rows: number | undefined): string[] {
  const room = rows !== undefined && rows > 1 ? rows - 1 : Infinity;
  if (lines.length <= room) return lines;
  if (room < 2) return lines.slice(-1);
  const kept = lines.slice(0, room - 2);
  return [...kept, `… and ${lines.length - 1 - kept.length} more`, lines[lines.length - 1]!];
}

/** The text cut to `width` visible characters, ending in …; colour codes are kept, and reset after a cut. */
function fit(text: string, width: number): string {
  const tokens = Array.from(text.matchAll(/\u001b\[[0-9;]*m|[^\u001b]/gsu), ([token]) => token);
  const isCode = (token: string) => token.startsWith('\u001b');
  if (tokens.filter((token) => !isCode(token)).length <= width) return text;
  let out = '';
  let visible = 0;
  for (const token of tokens) {
    if (isCode(token)) {
      out += token;
    } else if (visible < width - 1) {
      out += token;
      visible++;
    } else {
      break;
    }
  }
  return `${out}…${text.includes('\u001b') ? '\u001b[0m' : ''}`;
}
