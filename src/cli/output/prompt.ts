// Asking a person at a terminal, with the answer hidden when it is a secret (the API key): readline on the
// terminal, its echo sent nowhere while the secret is typed. And reading what a pipe hands in (`--with-key`).

import readline from 'node:readline';
import { Writable } from 'node:stream';
import { InterruptedError, UsageError } from '../../core/errors.js';
import type { InputStream, OutputStream } from '../runtime.js';

/** One line typed at the terminal; Ctrl-C is exit 130, Ctrl-D (no answer) a usage error. */
export function ask(
  input: InputStream,
  output: OutputStream,
  question: string,
  options: { secret: boolean; signal: AbortSignal },
): Promise<string> {
  return new Promise((resolve, reject) => {
    let muted = false;
    // readline echoes every key and redraws the line on this stream; while a secret is typed it goes nowhere.
    const echo = new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        if (!muted) output.write(chunk.toString());
        callback();
      },
    });
    const lines = readline.createInterface({ input, output: echo, terminal: true });
    let settled = false;
    const finish = (settle: () => void): void => {
      if (settled) return;
      settled = true;
      options.signal.removeEventListener('abort', onAbort);
      if (muted) output.write('\n');
      lines.close();
      settle();
    };
    const onAbort = (): void => finish(() => reject(options.signal.reason));
    if (options.signal.aborted) return onAbort();
    options.signal.addEventListener('abort', onAbort, { once: true });
    lines.on('SIGINT', () => finish(() => reject(new InterruptedError('SIGINT'))));
    lines.on('close', () => finish(() => reject(new UsageError('no answer: the input ended'))));
    lines.question(question, (answer) => finish(() => resolve(answer)));
    muted = options.secret;
  });
}

/** All of a piped input, up to `maxBytes` (a key is a line; a large file piped by mistake is refused, unread). */
export async function readAll(input: InputStream | undefined, maxBytes: number): Promise<string> {
  if (!input) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    const bytes = Buffer.from(chunk);
    size += bytes.length;
    if (size > maxBytes) throw new UsageError(`standard input holds more than ${maxBytes} bytes, which is no key`);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString('utf8');
}
