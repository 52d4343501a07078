// The sandbox's review, so that `bds status` and --wait can be tried: --review accept|reject|none and
// --review-after, the control route that decides one batch, review() in the library's sandbox, and all of it kept
// in --data-dir across a restart.

import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InterruptedError } from '../src/core/errors.js';
import { startSandbox as startPublicSandbox } from '../src/sandbox/index.js';
import { SANDBOX_KEYS, startSandbox, type Sandbox } from '../src/sandbox/emulator.js';
import { fakeClock, makeFolder, newSource, REPORT, run, sandbox, sandboxEnv, tempDir } from './helpers.js';

/** A batch received now, by the sandbox's clock. */
function received(box: Pick<Sandbox, 'store'>, source: string, period = '2024-05'): string {
  const { id } = box.store.createBatch({
    source_id: source,
    product: 'records',
    period,
    record_count: 1,
    schema: {},
    report: REPORT,
    client: null,
    key_id: 'k',
    idempotency_key: null,
  });
  box.store.setStatus(id, 'received');
  return id;
}

/** The statuses the API lists for the source, as a client sees them. */
async function listed(box: { baseUrl: string; keys: { test: string } }, source: string): Promise<string[]> {
  const res = await fetch(`${box.baseUrl}/api/v1/batches?source_id=${source}`, {
    headers: { authorization: `Bearer ${box.keys.test}` },
  });
  return ((await res.json()) as { batches: Array<{ status: string }> }).batches.map((b) => b.status);
}

function control(box: Pick<Sandbox, 'baseUrl'>, id: string, body: unknown) {
  return fetch(`${box.baseUrl}/_sandbox/batches/${id}/review`, {
    method: 'POST',
    headers: { authorization: `Bearer ${SANDBOX_KEYS.test}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then(async (res) => ({ status: res.status, json: (await res.json()) as any }));
}

describe('the sandbox reviews', () => {
  it('accept and reject: in review at once, decided --review-after later', async () => {
    for (const [review, decided] of [
      ['accept', 'accepted'],
      ['reject', 'rejected'],
    ] as const) {
      const clock = fakeClock('2024-08-10T12:00:00Z');
      const box = await sandbox({ now: clock.ms, review, reviewAfter: 60_000 });
      const source = newSource(box);
      received(box, source);
      expect(await listed(box, source)).toEqual(['in_review']);
      clock.advance(59_999);
      expect(await listed(box, source)).toEqual(['in_review']);
      clock.advance(1);
      expect(await listed(box, source)).toEqual([decided]);
    }
  });

  it('none (the default): a batch stays received until the control route or review() decides; a decision sticks', async () => {
    const clock = fakeClock('2024-08-10T12:00:00Z');
    const box = await sandbox({ now: clock.ms });
    const source = newSource(box);
    const [first, second] = [received(box, source), received(box, source)];
    clock.advance(3_600_000);
    expect(await listed(box, source)).toEqual(['received', 'received']);

    expect(await control(box, first, { status: 'accepted' })).toEqual({
      status: 200,
      json: { batch: { id: first, status: 'accepted' } },
    });
    box.review(second, 'in_review');
    expect(await listed(box, source)).toEqual(['accepted', 'in_review']);

    expect((await control(box, first, { status: 'received' })).status).toBe(422);
    expect((await control(box, 'bat_nope', { status: 'accepted' })).status).toBe(404);
    const waiting = box.store.createBatch({
      source_id: source,
      product: 'records',
      period: '2024-06',
      record_count: 1,
      schema: {},
      report: REPORT,
      client: null,
      key_id: 'k',
      idempotency_key: null,
    });
    expect(await control(box, waiting.id, { status: 'accepted' })).toMatchObject({
      status: 409,
      json: { error: { code: 'not_received' } },
    });
    expect(() => box.review('bat_nope', 'accepted')).toThrow('batch bat_nope does not exist');
    // Control requests are not the API's: they are not recorded.
    expect(box.requests.some((request) => request.path.startsWith('/_sandbox'))).toBe(false);
  });

  it("a batch a test decided is left alone by the sandbox's own review", async () => {
    const clock = fakeClock('2024-08-10T12:00:00Z');
    const box = await sandbox({ now: clock.ms, review: 'accept', reviewAfter: 1_000 });
    const source = newSource(box);
    const id = received(box, source);
    box.review(id, 'in_review');
    clock.advance(10_000);
    expect(await listed(box, source)).toEqual(['in_review']);
  });

  it('keeps its review across a restart with the same --data-dir: the clock goes on from the time received', async () => {
    const dataDir = tempDir();
    const clock = fakeClock('2024-08-10T12:00:00Z');
    const first = await startSandbox({ dataDir, now: clock.ms, review: 'accept', reviewAfter: 60_000 });
    const source = newSource(first);
    const [waiting, decided] = [received(first, source), received(first, source)];
    first.review(decided, 'rejected');
    expect(await listed(first, source)).toEqual(['in_review', 'rejected']);
    await first.close();

    clock.advance(60_000);
    const second = await sandbox({ dataDir, now: clock.ms, review: 'accept', reviewAfter: 60_000 });
    expect(await listed(second, source)).toEqual(['accepted', 'rejected']);
    const saved = JSON.parse(fs.readFileSync(path.join(dataDir, 'state.json'), 'utf8'));
    expect(saved.batches.map((b: { id: string; status: string }) => [b.id, b.status])).toEqual([
      [waiting, 'accepted'],
      [decided, 'rejected'],
    ]);
  });

  it("the library's sandbox takes review and reviewAfter, and has review(id, status)", async () => {
    const box = await startPublicSandbox({ review: 'reject', reviewAfter: 0 });
    try {
      const home = tempDir();
      const delivered = await run(['deliver', makeFolder().dir, '--period', '2024-05', '--source', box.sourceId], {
        env: sandboxEnv({ baseUrl: box.baseUrl, keys: box.keys } as Sandbox),
        home,
      });
      expect(delivered.code).toBe(0);
      const id = delivered.stderr.match(/uploading \d+ bytes to (bat_\w+)/)![1]!;
      expect(await listed(box, box.sourceId)).toEqual(['rejected']);
      box.review(id, 'accepted');
      expect(await listed(box, box.sourceId)).toEqual(['accepted']);
    } finally {
      await box.close();
    }
    await expect(startPublicSandbox({ reviewAfter: -1 })).rejects.toThrow(
      'reviewAfter must be a number of milliseconds',
    );
  });
});

describe('bds sandbox --review', () => {
  it('says how it reviews in its banner; a bad --review or --review-after is exit 2', async () => {
    const ctrlC = new AbortController();
    ctrlC.abort(new InterruptedError('SIGINT'));
    const accept = await run(['sandbox', '--port', '0', '--review', 'accept', '--review-after', '2m'], {
      signal: ctrlC.signal,
    });
    expect(accept.code).toBe(130);
    expect(accept.stdout).toContain(
      'Review: a received batch is in review at once, and accepted 2m after it was received.',
    );
    const none = await run(['sandbox', '--port', '0'], { signal: ctrlC.signal });
    expect(none.stdout).toMatch(
      /^Review: none; a batch stays received until decided with POST http:\/\/127\.0\.0\.1:\d+\/_sandbox\/batches\/<id>\/review \{"status": "accepted"\} \(JSON, with a key as the API takes it\)$/m,
    );

    const badDuration = await run(['sandbox', '--port', '0', '--review', 'reject', '--review-after', '10']);
    expect(badDuration.code).toBe(2);
    expect(badDuration.stderr).toContain('bds: --review-after 10 is not a duration');
    const badReview = await run(['sandbox', '--port', '0', '--review', 'maybe']);
    expect(badReview.code).toBe(2);
    expect(badReview.stderr).toMatch(/--review.*maybe/);
  });
});
