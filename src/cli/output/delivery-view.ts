// One delivery as it happens: each step a spinner on a terminal (a timestamped line elsewhere), the upload as
// a bar, notices and warnings in between. Fed the core's events; the words are words.ts's.

import type { DeliveryEvent } from '../../core/events.js';
import { failureWords } from './error-words.js';
import { formatBytes, formatDuration, formatRate } from './format.js';
import type { IO } from './io.js';
import { noticeText, sayNotice, stepText } from './words.js';

export class DeliveryView {
  /** When the upload in progress began, to close it with its size, time and rate. */
  private uploadStarted: number | undefined;
  private uploadBytes = 0;
  private rateCap: number | null = null;

  constructor(
    private readonly io: IO,
    private readonly now: () => Date,
    /** The working folder, which file names are given from. */
    private readonly cwd: string,
  ) {}

  readonly onEvent = (event: DeliveryEvent): void => {
    const { io } = this;
    switch (event.type) {
      case 'notice':
        // The re-run check is a step of the delivery as a person sees it: a spinner until the next step.
        return event.code === 'listing_batches' ? io.step(noticeText(event).text) : sayNotice(io, event);
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
      case 'queued':
        return; // several deliveries only (many-view.ts)
      case 'review_waiting':
      case 'review_polled':
        return; // --wait: the review's own view (status-view.ts)
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
  };

  private closeUpload(): void {
    if (this.uploadStarted === undefined) return;
    const ms = this.now().getTime() - this.uploadStarted;
    this.uploadStarted = undefined;
    const bytes = this.uploadBytes;
    this.io.done(
      `uploaded ${formatBytes(bytes)} in ${formatDuration(ms)}${ms > 0 ? ` (${formatRate(bytes, ms, this.rateCap)})` : ''}`,
    );
  }
}
