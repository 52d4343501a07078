// Deliveries as they happen, fed the core's events; the words are words.ts's. Months one at a time (one folder
// delivered, or check's folders one after the other): each step a spinner on a terminal (a timestamped line
// elsewhere), the upload as a bar, notices and warnings in between. Several months at once (deliver's several
// folders): on a terminal, a live block, one line per running month (period, product, step, a bar while reading
// or uploading) above an overall line (months done of total, bytes sent, time left), redrawn in place, and a
// month that ends leaves one line above the block; without a terminal, the usual timestamped lines, each naming
// its period and product, progress at most every 10 s per month.

import type { DeliveryEvent, StepEvent } from '../../core/events.js';
import type { Month } from '../../core/month.js';
import { EXIT_CODES } from '../../core/errors.js';
import type { FailureData } from '../../core/failure.js';
import { failureWords } from './error-words.js';
import { formatBytes, formatDuration, formatRate } from './format.js';
import type { IO } from './io.js';
import { capText, progressBar, progressLine, WAITING_FOR_STORAGE } from './progress.js';
import { deliveredText, noticeText, sayNotice, stepText } from './words.js';

/** The live block is redrawn this often while nothing else happens (the spinner's pace). */
const REDRAW_INTERVAL_MS = 100;
/** No estimate of the time left before this much of the work and this much time. */
const ESTIMATE_AFTER = { fraction: 0.02, ms: 2_000 };
const BAR_WIDTH = 16;

interface MonthRow extends Month {
  dir: string;
  /** The data file's size: the month's weight in the estimate of the time left. */
  weight: number;
  state: 'waiting' | 'running' | 'finished';
  failed: boolean;
  /** What the month is doing, for its live line. */
  doing: string;
  /** A pass or an upload with bytes to show. */
  transfer: { kind: 'read' | 'uploaded'; done: number; total: number; startedAt: number } | undefined;
  /** 0 to 1: half for the pass over the file, half for the upload. */
  readFraction: number;
  sentFraction: number;
  sent: number;
}

export class DeliveryView {
  /** One month at a time: when the upload in progress began, to close it with its size, time and rate. */
  private uploadStarted: number | undefined;
  private uploadBytes = 0;
  /** Several months at once: one row each, once the run says which. */
  private months: MonthRow[] = [];
  private readonly started: number;
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;
  /** The run's upload rate cap, shared by all months (--limit-rate), once an upload says it. */
  private rateCap: number | null = null;

  constructor(
    private readonly io: IO,
    private readonly now: () => Date,
    /** The working folder, which file names are given from. */
    private readonly cwd: string,
    /** Several months run at once: each line names its month, and a terminal shows the live block. */
    private readonly atOnce = false,
  ) {
    this.started = now().getTime();
  }

  readonly onEvent = (event: DeliveryEvent): void => {
    switch (event.type) {
      case 'review_waiting':
      case 'review_polled':
        return; // --wait: the review's own view (status-view.ts)
      case 'queued':
        return this.atOnce ? this.queue(event.deliveries) : undefined;
      case 'notice':
        return this.atOnce ? this.notice(event) : this.oneNotice(event);
    }
    if (!this.atOnce) return this.oneAtATime(event);
    const month = this.months.find((m) => m.period === event.period && m.product === event.product);
    if (!month) return;
    switch (event.type) {
      // Bytes come every MiB: the redraw timer shows them, at its pace.
      case 'reading':
        this.transfer(month, 'read', event.read, event.total);
        month.readFraction = fraction(event.read, event.total);
        return;
      case 'progress':
        this.transfer(month, 'uploaded', event.sent, event.total);
        month.sent = event.sent;
        month.sentFraction = fraction(event.sent, event.total);
        return;
      case 'step':
        this.step(month, event);
        break;
      case 'ended':
        this.ended(month, event.error);
        break;
    }
    this.draw();
  };

  /** The live block leaves the screen (the run is over, or failed). */
  close(): void {
    if (!this.atOnce) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.io.endLive();
  }

  private oneNotice(event: Extract<DeliveryEvent, { type: 'notice' }>): void {
    // The re-run check is a step of the delivery as a person sees it: a spinner until the next step.
    if (event.code === 'listing_batches') this.io.step(noticeText(event).text);
    else sayNotice(this.io, event);
  }

  /** One month at a time: a spinner per step, a bar for the upload. */
  private oneAtATime(
    event: Exclude<DeliveryEvent, { type: 'notice' | 'queued' | 'review_waiting' | 'review_polled' }>,
  ): void {
    const { io } = this;
    switch (event.type) {
      case 'progress':
        return io.progress(event.sent, event.total, 'uploaded', this.rateCap);
      case 'reading':
        return io.progress(event.read, event.total, 'read');
      case 'ended':
        // Several folders checked one after the other: a failed one is said as it happens; the others go on.
        if (event.error) {
          const { message, hint } = failureWords(event.error);
          io.error(message, hint ?? undefined);
        }
        return;
      case 'step':
        break;
    }
    switch (event.step) {
      case 'checked':
        return io.done(stepText(event, this.cwd));
      case 'done':
        return io.done();
      case 'uploading':
        this.uploadStarted = this.now().getTime();
        this.uploadBytes = event.bytes;
        this.rateCap = event.rateCap;
        return io.step(stepText(event, this.cwd));
      case 'completing':
        this.closeUpload();
        return io.step(stepText(event, this.cwd));
      case 'creating':
        // An upload refused by the storage host is not finished: a fresh batch is being created for it.
        this.uploadStarted = undefined;
        return io.step(stepText(event, this.cwd));
      case 'checking':
        return io.step(stepText(event, this.cwd));
    }
  }

  private closeUpload(): void {
    if (this.uploadStarted === undefined) return;
    const ms = this.now().getTime() - this.uploadStarted;
    this.uploadStarted = undefined;
    const bytes = this.uploadBytes;
    this.io.done(
      `uploaded ${formatBytes(bytes)} in ${formatDuration(ms)}${ms > 0 ? ` (${formatRate(bytes, ms, this.rateCap)})` : ''}`,
    );
  }

  private queue(deliveries: Array<Month & { dir: string; bytes: number }>): void {
    this.months = deliveries.map(({ dir, period, product, bytes }) => ({
      dir,
      period,
      product,
      weight: Math.max(bytes, 1),
      state: 'waiting',
      failed: false,
      doing: 'waiting',
      transfer: undefined,
      readFraction: 0,
      sentFraction: 0,
      sent: 0,
    }));
    if (!this.io.interactive) {
      this.io.notice(
        `delivering ${deliveries.length} folders, oldest first: ${deliveries.map((d) => label(d)).join(', ')}`,
      );
      return;
    }
    this.timer = setInterval(() => this.draw(), REDRAW_INTERVAL_MS);
    this.timer.unref();
  }

  private step(month: MonthRow, event: StepEvent): void {
    month.state = 'running';
    month.transfer = undefined;
    const text = stepText(event, this.cwd);
    switch (event.step) {
      case 'checked':
        month.readFraction = 1;
        return this.logFor(month, text);
      case 'done':
        month.readFraction = 1;
        month.sentFraction = 1;
        return this.finish(month, deliveredText({ id: event.batchId, status: event.status }, event.skipped));
      case 'checking':
        month.doing = 'reading';
        return this.logFor(month, text);
      case 'creating':
        month.doing = 'creating the batch';
        return this.logFor(month, text);
      case 'uploading':
        month.doing = `uploading to ${event.batchId}`;
        month.transfer = { kind: 'uploaded', done: 0, total: event.bytes, startedAt: this.now().getTime() };
        this.rateCap = event.rateCap;
        return this.logFor(month, text);
      case 'completing':
        month.doing = `confirming ${event.batchId}`;
        return this.logFor(month, text);
    }
  }

  private transfer(month: MonthRow, kind: 'read' | 'uploaded', done: number, total: number): void {
    const now = this.now().getTime();
    if (month.transfer?.kind !== kind) month.transfer = { kind, done, total, startedAt: now };
    month.transfer.done = done;
    month.transfer.total = total;
    if (this.io.interactive || !this.io.throttle.due(label(month))) return;
    this.io.notice(
      `${label(month)}: ${progressLine({ sent: done, total, elapsedMs: now - month.transfer.startedAt }, kind)}`,
    );
  }

  /** A step's line off a terminal (on one, the live line shows it). */
  private logFor(month: MonthRow, text: string): void {
    this.io.throttle.wrote(label(month));
    if (!this.io.interactive) this.io.notice(`${label(month)}: ${text}`);
  }

  /** A month delivered, or found delivered: one line that stays (a failure is told as an error). */
  private finish(month: MonthRow, text: string): void {
    month.state = 'finished';
    month.transfer = undefined;
    // On a terminal, the line and the block without the month in one write: no frame shows it twice.
    if (this.timer) this.draw([`${this.io.err.green(this.io.symbols.ok)} ${label(month)}  ${text}`]);
    else this.io.notice(`${label(month)}: ${text}`);
  }

  private ended(month: MonthRow, error: FailureData | null): void {
    if (month.state === 'finished') return;
    if (!error) return this.finish(month, 'checked; nothing was created (dry run)');
    month.state = 'finished';
    month.failed = true;
    month.transfer = undefined;
    // An interruption is told once, for the whole run, by the command.
    const interrupted = [EXIT_CODES.sigint, EXIT_CODES.sigterm, EXIT_CODES.sighup] as number[];
    if (!interrupted.includes(error.exit_code)) {
      const { message, hint } = failureWords(error);
      this.io.error(`${label(month)}: ${message}`, hint ?? undefined);
    }
  }

  private notice(event: Extract<DeliveryEvent, { type: 'notice' }>): void {
    const month = this.months.find((m) => m.period === event.period && m.product === event.product);
    if (event.code === 'listing_batches' && month) {
      month.doing = 'checking earlier batches';
      this.logFor(month, noticeText(event).text);
      return this.draw();
    }
    const about = event.period && event.product ? `${label({ period: event.period, product: event.product })}: ` : '';
    sayNotice(this.io, event, about);
  }

  /** The live block, with `above` (lines that stay) written before it. */
  private draw(above: string[] = []): void {
    if (!this.timer) return;
    this.frame = (this.frame + 1) % this.io.symbols.frames.length;
    const now = this.now().getTime();
    const running = this.months.filter((m) => m.state === 'running');
    this.io.live([...running.map((m) => this.liveLine(m, now)), this.overall(now)], above);
  }

  private liveLine(month: MonthRow, now: number): string {
    const { transfer } = month;
    const bar = transfer
      ? ` ${transfer.kind === 'read' ? 'reading' : 'uploading'} ${progressBar({ sent: transfer.done, total: transfer.total, elapsedMs: now - transfer.startedAt }, transfer.kind, BAR_WIDTH)}`
      : ` ${month.doing}`;
    return `${this.io.err.cyan(this.io.symbols.frames[this.frame]!)} ${label(month)} ${bar}`;
  }

  /** Months done of total, bytes sent, and the time left once it can be estimated. */
  private overall(now: number): string {
    const finished = this.months.filter((m) => m.state === 'finished').length;
    const sent = this.months.reduce((sum, m) => sum + m.sent, 0);
    const weight = this.months.reduce((sum, m) => sum + m.weight, 0);
    const done =
      this.months.reduce(
        (sum, m) => sum + (m.state === 'finished' ? 1 : (m.readFraction + m.sentFraction) / 2) * m.weight,
        0,
      ) / weight;
    const elapsed = now - this.started;
    // Every month left has handed all its bytes over: the time is the storage host's, not bds's to estimate.
    const open = this.months.filter((m) => m.state !== 'finished');
    const waiting =
      open.length > 0 && open.every((m) => m.transfer?.kind === 'uploaded' && m.transfer.done >= m.transfer.total);
    const left = waiting
      ? `, ${WAITING_FOR_STORAGE}`
      : done >= ESTIMATE_AFTER.fraction && elapsed >= ESTIMATE_AFTER.ms && done < 1
        ? `, about ${formatDuration((elapsed * (1 - done)) / done)} left`
        : '';
    const cap = this.rateCap ? `, ${capText(this.rateCap)}` : '';
    const rate = sent > 0 ? ` (${formatRate(sent, elapsed, this.rateCap)}${cap})` : '';
    const failed = this.months.filter((m) => m.failed).length;
    return `${finished} of ${this.months.length} done${failed ? ` (${failed} failed)` : ''}, ${formatBytes(sent)} sent${rate}${left}`;
  }
}

/** How a month is named in every line about it. */
function label({ period, product }: Month): string {
  return `${period} ${product}`;
}

function fraction(done: number, total: number): number {
  return total > 0 ? Math.min(1, done / total) : 1;
}
