// The terminal policy: the one place that decides how bds talks: terminal or not, colour or not, spinners and
// bars or plain timestamped lines, JSON or text, and the secret filter every write goes through. stdout
// carries results; stderr carries progress, notices and errors. The live block's drawing is live-block.ts's.
// The plain text of steps, notices, warnings and errors is cleaned here (clean-text.ts), whatever a server or a
// file put into it, and JSON leaves with DEL and C1 escaped: nothing bds prints can drive the terminal.

import readline from 'node:readline';
import { stripVTControlCharacters } from 'node:util';
import { Chalk, type ChalkInstance } from 'chalk';
import type { Ora } from 'ora';
import type { LogTail } from '../../core/monitoring/log-tail.js';
import type { Platform } from '../../core/platform.js';
import type { Env } from '../../core/runtime.js';
import type { InputStream, OutputStream } from '../runtime.js';
import { KEY_PREFIXES } from '../../core/api/types.js';
import { cleanLines, terminalJson } from '../../core/clean-text.js';
import { timestamp } from './format.js';
import { appendStepSummary, githubAnnotation, inGithubActions } from './github.js';
import { LiveBlock } from './live-block.js';
import { progressBar, progressLine, type ProgressVerb } from './progress.js';
import { LineThrottle } from './throttle.js';

export interface OutputFlags {
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  /** false with --no-color */
  color: boolean;
}

export interface IOSetup {
  stdout: OutputStream;
  stderr: OutputStream;
  /** Where answers are typed or piped in. */
  stdin?: InputStream | undefined;
  env: Env;
  platform: Platform;
  now: () => Date;
  flags: OutputFlags;
}

/** The marks bds draws itself, beside ora's. */
export interface Symbols {
  ok: string;
  failed: string;
  /** A spinner's frames. */
  frames: readonly string[];
}

const UNICODE_SYMBOLS: Symbols = { ok: '✔', failed: '✖', frames: ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'] };
/** What log-symbols and ora fall back to: characters of the old console fonts (code page 437 has √). */
const ASCII_SYMBOLS: Symbols = { ok: '√', failed: '×', frames: ['-', '\\', '|', '/'] };

/**
 * Whether the terminal's font draws ✔ and the braille spinner, decided as ora's own spinner decides it
 * (is-unicode-supported, which reads the process and cannot be told another system): everywhere but the Linux
 * console, and on Windows only in terminals known to (Windows Terminal, VS Code, ConEmu's Cmder, JetBrains'):
 * cmd.exe's and PowerShell's classic console shows a box for each.
 */
export function unicodeTerminal(env: Env, platform: Platform): boolean {
  if (platform !== 'win32') return env.TERM !== 'linux';
  return (
    Boolean(env.WT_SESSION) ||
    Boolean(env.TERMINUS_SUBLIME) ||
    env.ConEmuTask === '{cmd::Cmder}' ||
    env.TERM_PROGRAM === 'Terminus-Sublime' ||
    env.TERM_PROGRAM === 'vscode' ||
    ['xterm-256color', 'alacritty', 'rxvt-unicode', 'rxvt-unicode-256color'].includes(env.TERM ?? '') ||
    env.TERMINAL_EMULATOR === 'JetBrains-JediTerm'
  );
}

/** A key is a line: more than this on standard input is something else piped in by mistake. */
const MAX_INPUT_BYTES = 64 * 1024;

const SPINNER_UPDATE_INTERVAL_MS = 100;

export class IO {
  readonly flags: OutputFlags;
  /** Spinners and bars: stderr is a real terminal and neither --json nor --quiet. */
  readonly interactive: boolean;
  /** Colours for stdout and stderr, each off unless that stream is a terminal. */
  readonly out: ChalkInstance;
  readonly err: ChalkInstance;
  readonly stdoutIsTerminal: boolean;
  readonly symbols: Symbols;
  /** A result went to stdout: under --json, the run's one JSON document. */
  printedResult = false;
  private readonly options: IOSetup;
  private spinner: Ora | undefined;
  private stepText = '';
  private stepStarted = 0;
  private lastSpinnerUpdate = 0;
  /** Plain progress lines, off a terminal; each thing in progress has its own pace (a month of several). */
  readonly throttle: LineThrottle;
  private readonly secrets: Array<{ secret: string; shown: string }> = [];
  /** Several deliveries at once, on a terminal. */
  private readonly block: LiveBlock;
  /** Where the log goes as well, once keepLog() names it. */
  private tail: LogTail | undefined;

  constructor(options: IOSetup) {
    this.options = options;
    const { env, flags, stdout, stderr } = options;
    this.flags = flags;
    this.throttle = new LineThrottle(options.now);
    this.block = new LiveBlock(() => ({ columns: stderr.columns, rows: stderr.rows }));
    const colorAllowed = flags.color && !env.NO_COLOR && env.TERM !== 'dumb';
    this.stdoutIsTerminal = stdout.isTTY === true;
    this.symbols = unicodeTerminal(env, options.platform) ? UNICODE_SYMBOLS : ASCII_SYMBOLS;
    this.out = new Chalk({ level: colorAllowed && stdout.isTTY ? 1 : 0 });
    this.err = new Chalk({ level: colorAllowed && stderr.isTTY ? 1 : 0 });
    // ora loops forever on a terminal that reports 0 columns; CI consoles are not terminals for our purposes.
    this.interactive =
      stderr.isTTY === true &&
      (stderr.columns ?? 0) > 0 &&
      env.TERM !== 'dumb' &&
      !inCi(env) &&
      !flags.json &&
      !flags.quiet;
  }

  /**
   * A value that must never be printed (the API key, a ping URL's path): every write replaces it with `shown`
   * (by default its first characters), as a last line of defence.
   */
  addSecret(secret: string, shown = `${secret.slice(0, KEY_PREFIXES.live.length)}…(redacted)`): void {
    // A bare prefix ("svc_live_") would garble ordinary text and reveals nothing.
    if (secret.length > KEY_PREFIXES.live.length) this.secrets.push({ secret, shown });
  }

  /**
   * From now on, the run's log also goes to `tail` as a plain run prints it (timestamped lines, no colour),
   * whatever --quiet or a terminal show, and the result as text: the body of deliver's end ping.
   */
  keepLog(tail: LogTail): void {
    this.tail = tail;
  }

  /** Loads the spinner library, only when it will be used. */
  async prepare(): Promise<void> {
    if (!this.interactive || this.spinner) return;
    const { default: ora } = await import('ora');
    this.spinner = ora({
      stream: this.spinnerStream(),
      isEnabled: true,
      // ora's own colours ignore NO_COLOR; ours decide.
      color: this.err.level > 0 ? 'cyan' : false,
      // Raw mode on stdin would swallow Ctrl-C's default behaviour and keep the process alive.
      discardStdin: false,
    });
  }

  /** A person can be asked: standard input is a terminal. */
  get canAsk(): boolean {
    return this.options.stdin?.isTTY === true;
  }

  /** Asks on the terminal (stderr), the answer hidden when it is a secret; see canAsk. */
  async ask(question: string, options: { secret: boolean; signal: AbortSignal }): Promise<string> {
    const { ask } = await import('./prompt.js');
    return ask(this.options.stdin!, this.options.stderr, question, options);
  }

  /** Everything piped into standard input (a key), at most 64 kB. */
  async readInput(): Promise<string> {
    const { readAll } = await import('./prompt.js');
    return readAll(this.options.stdin, MAX_INPUT_BYTES);
  }

  /** A result for stdout: JSON with --json, else the text. */
  result(json: unknown, text: () => string): void {
    this.printedResult = true;
    this.stopSpinner();
    if (this.flags.json) {
      this.write(this.options.stdout, `${terminalJson(json)}\n`);
      // The tail is for a person: the result as text.
      if (this.tail) this.log(text());
      return;
    }
    const body = text();
    if (body) this.write(this.options.stdout, body.endsWith('\n') ? body : `${body}\n`);
    this.log(body);
  }

  /** A step begins: a spinner on a terminal, else one timestamped line (none with --quiet). */
  step(words: string): void {
    const text = cleanLines(words);
    this.stepText = text;
    this.stepStarted = this.options.now().getTime();
    this.lastSpinnerUpdate = this.stepStarted;
    this.throttle.wrote();
    this.log(text);
    if (this.spinner) {
      if (this.spinner.isSpinning) this.succeed();
      this.spinner.start(text);
    } else if (!this.flags.quiet) {
      this.line(text);
    }
  }

  /** The current step finished, with an optional closing text. */
  done(words?: string): void {
    const text = words && cleanLines(words);
    if (text) this.log(text);
    if (this.spinner?.isSpinning) this.succeed(text ?? this.stepText);
    else if (text && !this.flags.quiet) this.line(text);
  }

  /**
   * Bytes of the current step's work done (a file read, an upload): a bar on a terminal (the step's text says a
   * rate cap), else a line every 10 s.
   */
  progress(done: number, total: number, verb: ProgressVerb, rateCap?: number | null): void {
    const now = this.options.now().getTime();
    const sample = { sent: done, total, elapsedMs: now - this.stepStarted, rateCap };
    if (this.spinner?.isSpinning) {
      if (now - this.lastSpinnerUpdate < SPINNER_UPDATE_INTERVAL_MS && done < total) return;
      this.lastSpinnerUpdate = now;
      this.spinner.text = `${this.stepText} ${progressBar(sample, verb)}`;
      // Drawn now rather than on the spinner's next frame, so that the last update (100%) is always seen.
      this.spinner.render();
    } else if (!this.spinner && this.throttle.due()) {
      const line = progressLine(sample, verb);
      this.log(line);
      if (!this.flags.quiet) this.line(line);
    }
  }

  /** Something the user should know that is not a problem; not shown with --quiet. */
  notice(words: string): void {
    const text = cleanLines(words);
    this.log(text);
    if (this.flags.quiet) return;
    this.above(this.lineText(text));
  }

  /** Always shown, --quiet included. */
  warn(words: string): void {
    const text = cleanLines(words);
    this.log(`warning: ${text}`);
    this.above(`${this.err.yellow('warning:')} ${text}\n`);
  }

  /** Only with --verbose. */
  verbose(words: string): void {
    if (!this.flags.verbose) return;
    const text = cleanLines(words);
    this.log(text);
    this.above(this.lineText(text));
  }

  /** An error as bds reports one: `bds: <message>`, a hint line, the stack with --verbose, a GitHub annotation. */
  error(words: string, hintWords: string | undefined, stack?: string): void {
    const message = cleanLines(words);
    const hint = hintWords && cleanLines(hintWords);
    this.failStep();
    this.log(`bds: ${message}${hint ? `\nhint: ${hint}` : ''}`);
    this.above(
      `${this.err.red('bds:')} ${message}\n` +
        (hint ? `${this.err.dim(`hint: ${hint}`)}\n` : '') +
        (this.flags.verbose && stack ? `${this.err.dim(stack)}\n` : '') +
        (inGithubActions(this.options.env) ? githubAnnotation(message) : ''),
    );
  }

  /** In GitHub Actions, a table on the job's page ($GITHUB_STEP_SUMMARY); a file it cannot write is a warning. */
  stepSummary(title: string, rows: string[][], header?: string[]): void {
    const file = this.options.env.GITHUB_STEP_SUMMARY;
    if (!inGithubActions(this.options.env) || !file) return;
    try {
      appendStepSummary(file, title, rows, header);
    } catch (error) {
      this.warn(`could not write the GitHub step summary to ${file}: ${(error as Error).message}`);
    }
  }

  /** A failure is about to be reported: a running spinner ends with a cross instead of a tick. */
  failStep(): void {
    if (this.spinner?.isSpinning) this.spinner.stopAndPersist({ symbol: this.err.red(this.symbols.failed) });
  }

  /** Text for stderr as is (an error's lines), through the secret filter. */
  writeErr(text: string): void {
    this.write(this.options.stderr, text);
  }

  /** Text for stdout as is, through the secret filter. */
  writeOut(text: string): void {
    this.write(this.options.stdout, text);
  }

  /** ora's succeed() colours its symbol whatever NO_COLOR or --no-color say; this uses our chalk. */
  private succeed(text?: string): void {
    this.spinner?.stopAndPersist({ symbol: this.err.green(this.symbols.ok), ...(text === undefined ? {} : { text }) });
  }

  stopSpinner(): void {
    if (this.spinner?.isSpinning) this.spinner.stop();
    this.endLive();
  }

  /** Draws the live block (interactive only), with `above` (lines that stay) written before it in one write. */
  live(lines: string[], above: string[] = []): void {
    for (const line of above) this.log(line);
    if (this.interactive) this.write(this.options.stderr, this.block.draw(lines, above));
  }

  /** The live block leaves the screen; what was printed above it stays. */
  endLive(): void {
    if (this.block.shown) this.write(this.options.stderr, this.block.clear());
  }

  /** Writes text to stderr without tearing a spinner or the live block: cleared, the text written, redrawn. */
  private above(text: string): void {
    if (this.spinner?.isSpinning) {
      this.spinner.clear();
      this.write(this.options.stderr, text);
      this.spinner.render();
    } else if (this.block.shown) {
      // One write: a terminal never shows a half-drawn state.
      this.write(this.options.stderr, this.block.withAbove(text));
    } else {
      this.write(this.options.stderr, text);
    }
  }

  /**
   * The stream ora draws on. ora moves the cursor with tty.WriteStream's methods, which an OutputStream need
   * not have; its writes pass the secret filter too. Never "full", so that ora never waits for a 'drain'.
   */
  private spinnerStream(): NodeJS.WritableStream {
    const stderr = this.options.stderr;
    const target = stderr as NodeJS.WritableStream;
    return {
      isTTY: true,
      get columns() {
        return stderr.columns;
      },
      write: (chunk: string) => {
        this.write(stderr, chunk);
        return true;
      },
      cursorTo: (x: number) => readline.cursorTo(target, x),
      moveCursor: (dx: number, dy: number) => readline.moveCursor(target, dx, dy),
      clearLine: (direction: -1 | 0 | 1) => readline.clearLine(target, direction),
    } as unknown as NodeJS.WritableStream;
  }

  private write(stream: OutputStream, text: string): void {
    stream.write(this.redacted(text));
  }

  private redacted(text: string): string {
    let safe = text;
    for (const { secret, shown } of this.secrets) safe = safe.split(secret).join(shown);
    return safe;
  }

  /** Lines for the tail: through the secret filter, without colour, each with the time it was logged. */
  private log(text: string): void {
    const { tail } = this;
    if (!tail || !text) return;
    const at = timestamp(this.options.now());
    for (const line of stripVTControlCharacters(this.redacted(text)).replace(/\n$/, '').split('\n'))
      tail.add(`${at} ${line}`);
  }

  private line(text: string): void {
    this.write(this.options.stderr, this.lineText(text));
  }

  /** A line as stderr shows it: off a terminal, it starts with a UTC timestamp. */
  private lineText(text: string): string {
    return `${this.interactive ? '' : `${timestamp(this.options.now())} `}${text}\n`;
  }
}

/** CI consoles get plain lines even when they claim a terminal; CI=false or CI=0 says this is not CI. */
function inCi(env: Env): boolean {
  return env.CI !== undefined && !['', '0', 'false'].includes(env.CI.toLowerCase());
}
