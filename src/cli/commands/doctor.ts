// bds doctor: one line per check (ok, warn, fail), a hint under each warn and fail, and the exit code of the
// first failure's kind. For a person, and with --json for a support ticket.

import type { FindingStatus, DoctorFinding, DoctorResult } from '../../core/diagnostics/doctor.js';
import { defineCommand } from '../command.js';
import type { CommonFlags } from '../command.js';
import { findingWords } from '../output/error-words.js';
import { counted } from '../output/format.js';
import type { IO } from '../output/io.js';

export default defineCommand<CommonFlags, DoctorResult>({
  name: 'doctor',
  description: 'check whether this machine can deliver, and say why not',
  async run(op) {
    const { doctor } = await import('../../core/diagnostics/doctor.js');
    return doctor(op);
  },
  print(io, data) {
    const result = { ...data, checks: data.checks.map(findingWords) };
    io.result(result, () => {
      const width = Math.max(...result.checks.map((check) => check.name.length));
      const lines = result.checks.flatMap(({ name, status, message, hint }) => [
        `${label(io, status)}  ${name.padEnd(width)}  ${message}`,
        ...(hint ? [`${' '.repeat(6 + width)}  ${io.out.dim(`hint: ${hint}`)}`] : []),
      ]);
      return [...lines, '', summary(result, data.checks)].join('\n');
    });
    return result.exit_code;
  },
});

function label(io: IO, status: FindingStatus): string {
  const text = status.padEnd(4);
  return status === 'ok' ? io.out.green(text) : status === 'warn' ? io.out.yellow(text) : io.out.red(text);
}

/** The last line; `checks` as the core found them (with what each is about). */
function summary(result: DoctorResult, checks: DoctorFinding[]): string {
  const count = (status: FindingStatus): number => result.checks.filter((check) => check.status === status).length;
  const warnings = count('warn');
  const also = warnings ? `, with ${counted(warnings, 'warning')}` : '';
  // The next deliver would fail for want of a source: "can deliver" alone would be a promise it breaks.
  const noSource = checks.some((check) => check.about?.code === 'no_source');
  if (result.ok) return `This machine can deliver${noSource ? ' once a source id is set' : ''}${also}.`;
  const failures = count('fail');
  return `${counted(failures, 'check')} failed${also}; the first one decides the exit code (${result.exit_code}).`;
}
