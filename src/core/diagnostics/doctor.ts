// bds doctor: whether this machine can deliver, and why not, in the contract's order: bds itself, the
// settings, the local state, the way to the API, the API, the source. Each check is data; a check that needs
// an earlier one (connect needs the name, the API needs the key and a connection) is left out when that one
// failed. It changes nothing: no folder made, no file written, nothing created on the server.

import { EXIT_CODES } from '../errors.js';
import type { Operation } from '../operation.js';
import { apiFindings } from './api.js';
import type { DoctorFinding, Finding } from './finding.js';
import { installFindings } from './install.js';
import { localStateFindings } from './local-state.js';
import { networkFindings } from './network.js';
import { settingsFindings } from './settings.js';
import { baseUrlSettings } from '../settings/settings.js';

export type { FindingStatus, DoctorFinding } from './finding.js';

/** What `bds doctor --json` prints. */
export interface DoctorResult {
  /** No check failed (warnings allowed). */
  ok: boolean;
  /** 0, or the exit code of the first failure's kind: 2 local trouble, 3 the key, 4 refused, 5 the network. */
  exit_code: number;
  checks: DoctorFinding[];
}

export async function doctor(op: Operation): Promise<DoctorResult> {
  const findings: Finding[] = [installFindings()];
  const settings = await settingsFindings(op);
  findings.push(...settings.findings);
  findings.push(...localStateFindings(op.runtime, op.tempDir()));
  if (settings.baseUrl) {
    const network = await networkFindings(op.runtime, settings.baseUrl, baseUrlSettings(op.names), op.signal);
    findings.push(...network.findings);
    if (network.reached && settings.key && settings.settings)
      findings.push(...(await apiFindings(op, settings.key, settings.settings)));
  }
  const failed = findings.find((finding) => finding.status === 'fail');
  return {
    ok: failed === undefined,
    exit_code: failed ? (failed.exitCode ?? EXIT_CODES.usage) : EXIT_CODES.ok,
    checks: findings.map(({ name, status, message, hint, about }) => ({
      name,
      status,
      message,
      hint,
      ...(about && { about }),
    })),
  };
}
