// The metrics file's content: five gauges per month (source, period, product) in the Prometheus text format, for
// node_exporter's textfile collector; read back and merged with a run's months, so that the months of earlier
// runs stay and one file describes every month delivered from this machine. Text in, text out: the file itself
// is metrics-file.ts's.

/** Which month a sample is about: its labels. */
export interface MonthKey {
  source: string;
  period: string;
  product: string;
}

/** The review's verdict as deliver --wait learned it: pending while the batch is received or in review. */
export type ReviewVerdict = 'accepted' | 'rejected' | 'pending';

const VERDICTS: readonly string[] = ['accepted', 'rejected', 'pending'] satisfies ReviewVerdict[];

/**
 * How one run ended for one month: the delivery's own outcome, 0 when delivered or already delivered (whatever
 * a wait for the review after it ended in), else its exit code.
 */
export interface MonthRun extends MonthKey {
  exitCode: number;
  /** The data file's size and records, when the run got that far. */
  bytes: number | null;
  records: number | null;
  /** This run confirmed a new batch (not one found delivered). */
  newBatch?: boolean | undefined;
  /** What the run's wait learned of the review; undefined without a wait, or when it was stopped. */
  review?: ReviewVerdict | undefined;
}

/** A month's samples; a value no run has given yet (no success so far) is left out of the file. */
export interface MonthMetrics extends MonthKey {
  lastRun?: number;
  lastSuccess?: number;
  exitCode?: number;
  bytes?: number;
  records?: number;
  review?: ReviewVerdict;
}

type Field = Exclude<keyof MonthMetrics, keyof MonthKey | 'review'>;

const METRICS: ReadonlyArray<{ name: string; field: Field; help: string }> = [
  {
    name: 'bds_delivery_last_run_timestamp_seconds',
    field: 'lastRun',
    help: 'When bds last ran a delivery of this month (Unix time).',
  },
  {
    name: 'bds_delivery_last_success_timestamp_seconds',
    field: 'lastSuccess',
    help: 'When a run of bds last ended with this month delivered, or found it already delivered (Unix time).',
  },
  {
    name: 'bds_delivery_last_exit_code',
    field: 'exitCode',
    help: "The exit code of bds's last run for this month (0: delivered).",
  },
  {
    name: 'bds_delivery_bytes',
    field: 'bytes',
    help: 'Bytes uploaded for this month (the gzipped data file), as of its last success.',
  },
  {
    name: 'bds_delivery_records',
    field: 'records',
    help: "Records (or episodes) in this month's data file, as of its last success.",
  },
];
const LABELS = ['source', 'period', 'product'] as const;

/** The review's verdict: a sample of its own, labelled with the state, so that an alert can name it. */
const REVIEW = {
  name: 'bds_delivery_review_state',
  help: "The review's verdict for this month as the last delivery that waited for it learned it (1 for its state).",
};

/** A line of an existing file that bds did not write: the file is not bds's to replace. */
export class ForeignLineError extends Error {
  constructor(readonly line: number) {
    super(`line ${line} is not one bds writes`);
  }
}

/** The months of `earlier` with this run's months at time `at` (Unix seconds) merged in. */
export function mergeRuns(earlier: MonthMetrics[], runs: MonthRun[], at: number): MonthMetrics[] {
  const months = new Map(earlier.map((month) => [keyOf(month), month]));
  for (const run of runs) {
    const before = months.get(keyOf(run));
    const succeeded = run.exitCode === 0;
    months.set(keyOf(run), {
      source: run.source,
      period: run.period,
      product: run.product,
      lastRun: at,
      exitCode: run.exitCode,
      // A failure keeps what the last success said.
      lastSuccess: succeeded ? at : before?.lastSuccess,
      bytes: succeeded ? (run.bytes ?? undefined) : before?.bytes,
      records: succeeded ? (run.records ?? undefined) : before?.records,
      // A verdict holds for its batch: a new batch delivered without a wait leaves no verdict known.
      review: run.review ?? (run.newBatch ? undefined : before?.review),
    });
  }
  return [...months.values()].sort(
    (a, b) => compare(a.source, b.source) || compare(a.period, b.period) || compare(a.product, b.product),
  );
}

/** The Prometheus text format: each gauge's HELP and TYPE, then its samples, without timestamps. */
export function renderMetrics(months: MonthMetrics[]): string {
  const lines: string[] = [];
  const labels = (month: MonthKey): string =>
    LABELS.map((label) => `${label}="${escapeLabel(month[label])}"`).join(',');
  for (const { name, field, help } of METRICS) {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
    for (const month of months) {
      const value = month[field];
      if (value !== undefined) lines.push(`${name}{${labels(month)}} ${value}`);
    }
  }
  lines.push(`# HELP ${REVIEW.name} ${REVIEW.help}`, `# TYPE ${REVIEW.name} gauge`);
  for (const month of months) {
    if (month.review) lines.push(`${REVIEW.name}{${labels(month)},state="${month.review}"} 1`);
  }
  return `${lines.join('\n')}\n`;
}

/** The months of a file bds wrote; throws ForeignLineError at the first line it would not have written. */
export function parseMetrics(text: string): MonthMetrics[] {
  const months = new Map<string, MonthMetrics>();
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const sample = parseSample(line);
    const metric = METRICS.find(({ name }) => name === sample?.name);
    const review = sample?.name === REVIEW.name && sample.value === 1 ? sample.state : undefined;
    if (!sample || (!metric && !review) || (metric && sample.state !== undefined))
      throw new ForeignLineError(index + 1);
    const key = keyOf(sample.labels);
    const month = months.get(key) ?? { ...sample.labels };
    if (metric) month[metric.field] = sample.value;
    else month.review = review;
    months.set(key, month);
  }
  return [...months.values()];
}

/** `name{label="value",...} value`, as bds writes it (an optional timestamp after the value is allowed). */
const SAMPLE =
  /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*)\}\s+(\S+)(?:\s+-?\d+)?\s*$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"/g;

/** A sample's name, month, value, and the review's state label (the review's sample alone has one). */
function parseSample(
  line: string,
): { name: string; labels: MonthKey; value: number; state: ReviewVerdict | undefined } | undefined {
  const match = SAMPLE.exec(line);
  if (!match) return undefined;
  const labels = new Map([...match[2]!.matchAll(LABEL)].map(([, name, value]) => [name!, unescapeLabel(value!)]));
  const value = Number(match[3]);
  const state = labels.get('state');
  labels.delete('state');
  if (state !== undefined && !VERDICTS.includes(state)) return undefined;
  if (!Number.isFinite(value) || labels.size !== LABELS.length || !LABELS.every((label) => labels.has(label)))
    return undefined;
  return {
    name: match[1]!,
    labels: { source: labels.get('source')!, period: labels.get('period')!, product: labels.get('product')! },
    value,
    state: state as ReviewVerdict | undefined,
  };
}

/** A label value as the text format writes it: backslash, double quote and newline escaped. */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function unescapeLabel(value: string): string {
  return value.replace(/\\(.)/g, (_, character: string) => (character === 'n' ? '\n' : character));
}

function keyOf({ source, period, product }: MonthKey): string {
  return JSON.stringify([source, period, product]);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
