// The one pace for progress lines without a terminal (cron mail, CI logs): at most one per 10 seconds for each
// thing in progress (the one delivery, or each month of several).

/** Plain progress lines come at most this often. */
export const PROGRESS_LINE_INTERVAL_MS = 10_000;

export class LineThrottle {
  /** When each key last had a line (ms). */
  private readonly last = new Map<string, number>();

  constructor(
    private readonly now: () => Date,
    private readonly intervalMs = PROGRESS_LINE_INTERVAL_MS,
  ) {}

  /** A line about `key` was just written (a step's): the next progress line waits a whole interval. */
  wrote(key = ''): void {
    this.last.set(key, this.now().getTime());
  }

  /** Whether a progress line about `key` is due now; if so, it counts as written. */
  due(key = ''): boolean {
    const now = this.now().getTime();
    if (now - (this.last.get(key) ?? 0) < this.intervalMs) return false;
    this.last.set(key, now);
    return true;
  }
}
