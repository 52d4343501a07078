// An option has one way into the core's messages: the names its door hands in (core/option-names.ts). Run
// through an Operation whose names are markers, every message and hint below names its options by markers
// alone; the library's and the CLI's words for the same failures are these with their own names.

import { cpSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDeliver } from '../src/core/delivery/deliver-run.js';
import type { BdsError } from '../src/core/errors.js';
import type { NamedOption, OptionNames } from '../src/core/option-names.js';
import { OPTION_NAMES } from '../src/core/options.js';
import { Operation } from '../src/core/operation.js';
import { status } from '../src/core/status/status.js';
import { FLAG_NAMES } from '../src/cli/output/error-words.js';
import { processRuntime } from '../src/process-runtime.js';
import { makeFolder, tempDir } from './helpers.js';

/** Names no door uses: `‹period›` for the name alone, `«period»` for the phrase. */
const MARKERS: OptionNames = { name: (option) => `‹${option}›`, phrase: (option) => `«${option}»` };

/** A folder named for its month, `2024-05`, as the scrubber writes it. */
function monthFolder(): string {
  const named = path.join(tempDir(), '2024-05');
  cpSync(makeFolder().dir, named, { recursive: true });
  return named;
}

describe('one way to word an option in errors', () => {
  const home = tempDir();
  // No key, no base URL and no source: nothing can be sent, and every call below fails before it would be.
  const env = { HOME: home };
  const folder = monthFolder();
  const unnamed = makeFolder().dir;
  const twoFiles = monthFolder();
  writeFileSync(path.join(twoFiles, 'more.jsonl.gz'), '');

  /** Each failing call, as the core is asked it (the flags or the library's options, as data). */
  const calls: Array<[string, (op: Operation) => Promise<unknown>]> = [
    ['force and skipDelivered', (op) => runDeliver({ dir: folder, force: true, skipDelivered: true }, op)],
    ['wait and dryRun', (op) => runDeliver({ dir: folder, wait: true, dryRun: true }, op)],
    ['timeout without wait', (op) => runDeliver({ dir: folder, timeout: 1000, failOn: 'missing' }, op)],
    ['no month', (op) => runDeliver({ dir: folder, period: '2024-13' }, op)],
    ['another month than the name', (op) => runDeliver({ dir: folder, period: '2024-04' }, op)],
    ['no period', (op) => runDeliver({ dir: unnamed }, op)],
    ['two data files', (op) => runDeliver({ dir: twoFiles }, op)],
    ['the wrong product', (op) => runDeliver({ dir: folder, product: 'episodes' }, op)],
    ['jobs', (op) => runDeliver({ dirs: [folder], jobs: 99 }, op)],
    ['period and a range', (op) => status({ period: '2024-05', since: '2024-04' }, op)],
    ['since after until', (op) => status({ since: '2024-05', until: '2024-04' }, op)],
    ['failOn', (op) => status({ failOn: 'gone' }, op)],
    ['no source', (op) => status({}, op)],
    ['no base URL', (op) => runDeliver({ dir: folder }, op.withFlags({ sourceId: 'src_1' }))],
    ['no key', (op) => runDeliver({ dir: folder }, op.withFlags({ sourceId: 'src_1', baseUrl: 'http://127.0.0.1:9' }))],
  ];

  async function failures(names: OptionNames): Promise<string[][]> {
    const runtime = processRuntime({ env, cwd: home });
    return Promise.all(
      calls.map(async ([, call]) => {
        const op = new Operation(runtime, { names }, { signal: new AbortController().signal });
        const error = (await call(op).then(
          () => undefined,
          (thrown: unknown) => thrown,
        )) as BdsError | undefined;
        return [error?.message ?? 'no error', error?.hint ?? ''];
      }),
    );
  }

  it('the core names each option by the names its door hands in, and by nothing else', async () => {
    const marked = await failures(MARKERS);
    expect(Object.fromEntries(calls.map(([what], index) => [what, marked[index]]))).toEqual({
      'force and skipDelivered': [
        '‹force› and ‹skipDelivered› cannot be given together',
        '‹force› delivers a month although it is delivered; ‹skipDelivered› counts it as delivered: choose one',
      ],
      'wait and dryRun': ['‹wait› cannot be given with ‹dryRun›', 'a dry run delivers nothing to wait for'],
      'timeout without wait': [
        '‹timeout› and ‹failOn› go with ‹wait›',
        'set ‹wait› to wait for the review of what is delivered',
      ],
      'no month': ['‹period› 2024-13: month 13 is not between 01 and 12', ''],
      'another month than the name': [
        "‹period› 2024-04 contradicts the folder's name 2024-05",
        'deliver each month from its own folder; rename the folder if its name is wrong',
      ],
      'no period': [
        "missing ‹period› YYYY-MM (the month the data covers), and the folder's name holds none",
        "name it with «period», or put it in the folder's name (out/2024-05)",
      ],
      'two data files': [expect.stringMatching(/^more than one data file in /), 'choose one with «file»'],
      'the wrong product': [expect.stringMatching(/^‹product› episodes contradicts .*schema\.json/), ''],
      jobs: [
        '‹jobs› must be a whole number from 1 to 8, not 99',
        'more months at once rarely helps: each already uses every core for its pass',
      ],
      'period and a range': [
        '‹period› cannot be given with ‹since› or ‹until›',
        '‹period› is one month; ‹since› and ‹until› name a range',
      ],
      'since after until': ['‹since› 2024-05 is after ‹until› 2024-04', 'the first month comes first'],
      failOn: [
        '‹failOn› gone: gone is not a state it can name',
        'name one or more of missing, rejected, unfinished, pending, separated by commas (pending: received or in review)',
      ],
      'no source': [
        'no source id',
        'set «sourceId», BDS_SOURCE_ID or sourceId in a config file (registerSource() creates one)',
      ],
      'no base URL': ['no base URL', 'set «baseUrl», BDS_BASE_URL or baseUrl in a config file'],
      'no key': [
        'no API key',
        'give «apiKey», or set BDS_API_KEY, BDS_API_KEY_FILE to a file holding the key, or apiKey in a config file',
      ],
    });
  });

  it("the library's words and the CLI's are the same sentences with their own names", async () => {
    const marked = await failures(MARKERS);
    const inWords = (names: OptionNames) => (text: string) =>
      text
        .replace(/«(\w+)»/g, (_, option: NamedOption) => names.phrase(option))
        .replace(/‹(\w+)›/g, (_, option: NamedOption) => names.name(option));
    for (const names of [OPTION_NAMES, FLAG_NAMES]) {
      expect(await failures(names)).toEqual(marked.map((texts) => texts.map(inWords(names))));
    }
  });
});
