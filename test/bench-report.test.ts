// The bench's table (bench/report.js, built from the cases' rows in bench/cases/) against tables the bench wrote
// before it was split by case (bench/bench.js at 942bdad), from the same figures: the README's table comes out
// the same, byte for byte. No bench runs here: the figures are fixed (test/fixtures/bench/*.json, the shape of
// bench/data/latest.json).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CASES, CONTENDERS } from '../bench/cases/index.js';
import { report } from '../bench/report.js';

const fixtures = path.join(import.meta.dirname, 'fixtures', 'bench');
const read = (name: string): string => readFileSync(path.join(fixtures, name), 'utf8');

describe('the bench report', () => {
  for (const [name, what] of [
    ['full', 'both columns and every case'],
    ['sparse', 'the quiet column of an older run: no pigz, baseline, binary or cap; the upload on shared cores'],
  ]) {
    it(`renders the table of ${what} as the bench did before its split`, () => {
      expect(report(JSON.parse(read(`${name}.json`)))).toBe(read(`${name}.md`));
    });
  }

  it('names each contender once, each with a run and a summary', () => {
    const names = CASES.flatMap((c) => (c.contenders ?? []).map((contender) => contender.name));
    expect(new Set(names).size).toBe(names.length);
    for (const contender of Object.values(CONTENDERS)) {
      expect(typeof contender.run).toBe('function');
      expect(typeof contender.summary).toBe('function');
    }
  });
});
