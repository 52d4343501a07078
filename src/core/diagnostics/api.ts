// doctor's questions to the API itself: GET /me with its time and what it names, the server's clock against
// this machine's (signed upload URLs expire), and whether the source exists for this key.

import { abortError, ApiError } from '../errors.js';
import type { Operation } from '../operation.js';
import type { ApiKey, Settings } from '../settings/settings.js';
import { fail, ok, warn, type Finding } from './finding.js';
import { failure } from './settings.js';
import { counted } from '../plural.js';

/** More than this between the clocks is a warning: signed upload URLs are checked against the server's. */
const CLOCK_SKEW_WARN_MS = 5 * 60_000;
/** Two tries, not six, each within 30 s: doctor says what is wrong rather than waiting it out. */
const DOCTOR_TUNING = { maxAttempts: 2, maxTotalMs: 30_000, deadlineMs: 30_000 };

export async function apiFindings(op: Operation, key: ApiKey, settings: Settings): Promise<Finding[]> {
  const findings: Finding[] = [];
  const api = await op.client({}, DOCTOR_TUNING);
  try {
    const started = op.runtime.now().getTime();
    let answer;
    try {
      answer = await api.meAndClock(op.signal);
    } catch (error) {
      if (op.signal.aborted) throw abortError(op.signal);
      findings.push(failure('API', error));
      return findings;
    }
    const answeredAt = op.runtime.now().getTime();
    const { me, serverDate } = answer;
    findings.push(
      ok(
        'API',
        `GET /api/v1/me in ${answeredAt - started} ms: ${me.organization.name}, key ${me.key.id} (${me.key.mode} mode)`,
      ),
    );
    if (me.key.mode !== key.mode) {
      findings.push(
        warn(
          'API',
          `the key's prefix says ${key.mode} mode but the API reports ${me.key.mode} mode`,
          'copy the key again from the portal (Settings, API keys)',
        ),
      );
    }
    findings.push(clockFinding(serverDate, answeredAt));
    if (settings.sourceId) {
      const sourceId = settings.sourceId.value;
      try {
        const batches = await api.listBatches(sourceId, op.signal);
        findings.push(ok('source', `${sourceId} exists for this key: ${counted(batches.length, 'batch', 'batches')}`));
      } catch (error) {
        if (op.signal.aborted) throw abortError(op.signal);
        findings.push(
          error instanceof ApiError && error.status === 404
            ? fail(
                'source',
                `the API knows no source ${sourceId} for this key (${error.message})`,
                `check ${op.names.phrase('sourceId')}, BDS_SOURCE_ID or sourceId; registerSource() creates a source`,
                error.exitCode,
                { code: 'unknown_source' },
              )
            : failure('source', error),
        );
      }
    }
  } finally {
    await api.close();
  }
  return findings;
}

function clockFinding(serverDate: string | undefined, localMs: number): Finding {
  const serverMs = serverDate === undefined ? Number.NaN : Date.parse(serverDate);
  if (Number.isNaN(serverMs)) {
    return warn(
      'clock',
      'the API sent no usable Date header to compare the clocks with',
      'make sure this machine keeps its clock by NTP (timedatectl)',
    );
  }
  const skew = localMs - serverMs;
  const amount = describeMs(Math.abs(skew));
  if (Math.abs(skew) <= CLOCK_SKEW_WARN_MS) return ok('clock', `within ${amount} of the API's`);
  return warn(
    'clock',
    `this machine's clock is ${amount} ${skew > 0 ? 'ahead of' : 'behind'} the API's (its Date header)`,
    "signed upload URLs expire by the storage host's clock: set this machine's clock right (NTP: timedatectl set-ntp true)",
  );
}

function describeMs(ms: number): string {
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 3_600_000)} h`;
}
