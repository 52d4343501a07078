// A file larger than one upload may be: storage refuses it from its Content-Length (S3's 400 EntityTooLarge),
// and bds ends the delivery with one line, exit 4, the batch left awaiting_upload, no retry.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatBytes } from '../src/cli/output/format.js';
import { ApiError, deliver, UploadTooLargeError } from '../src/index.js';
import { startSandbox } from '../src/sandbox/index.js';
import { count, deliverTo, makeFolder, sandbox, tempDir } from './helpers.js';

const HINT =
  'bds cannot send a batch in parts: check that the file holds this month alone, or ask the Batch Delivery ' +
  'Service to raise the limit; the batch waits, and delivering again then resumes it';

describe('a file over the storage host limit', () => {
  // Small: the whole body is sent before the answer comes. Large (about 8 MB of random text, far more than the
  // sockets' buffers): the answer comes while bds is still sending, and the connection is closed under it.
  it.each([
    ['small', makeFolder({ records: 200 }), (size: number) => size - 1],
    [
      'large',
      makeFolder({
        lines: Array.from({ length: 100_000 }, () => JSON.stringify({ r: randomBytes(60).toString('base64') })),
      }),
      () => 1000,
    ],
  ])(
    '(%s) is one line naming size and limit, exit 4, the batch left awaiting_upload, sent once',
    async (_, folder, limitOf) => {
      const limit = limitOf(folder.uploaded.length);
      const box = await sandbox({ maxUploadBytes: limit });
      const res = await deliverTo(box, folder);
      expect(res.code).toBe(4);
      const errors = res.stderr.split('\n').filter((line) => line.startsWith('bds: '));
      // The data file named, sizes as people read them (as everywhere else), and what the seller can do.
      expect(errors).toEqual([
        `bds: ${folder.dataFile} is ${formatBytes(folder.uploaded.length)}, over the storage host's limit of ` +
          `${formatBytes(limit)} for one upload`,
      ]);
      expect(res.stderr).toContain(`hint: ${HINT}`);
      expect(count(box, 'upload')).toBe(1);
      expect(count(box, 'create')).toBe(1);
      expect(count(box, 'complete')).toBe(0);
      expect(box.store.batches().map((batch) => batch.status)).toEqual(['awaiting_upload']);
    },
  );

  it("is the same line for a storage host's 413 that names no limit, sent once", async () => {
    const folder = makeFolder({ records: 5 });
    const box = await sandbox();
    box.faults.add({ route: 'upload', status: 413, body: '<html><title>413 Request Entity Too Large</title></html>' });
    const res = await deliverTo(box, folder);
    expect(res.code).toBe(4);
    expect(res.stderr.split('\n').filter((line) => line.startsWith('bds: '))).toEqual([
      `bds: ${folder.dataFile} is ${formatBytes(folder.uploaded.length)}, over the storage host's limit for one upload`,
    ]);
    expect(res.stderr).toContain(`hint: ${HINT}`);
    expect(count(box, 'upload')).toBe(1);
    expect(box.store.batches().map((batch) => batch.status)).toEqual(['awaiting_upload']);
  });

  it('a storage host that closes the connection instead of answering (S3 over 5 GiB): the hint names the likely limit', async () => {
    // The limit bds assumes (S3's 5 GiB for one PUT) made small; the host resets every attempt, as S3 closes the
    // connection under a body it refused before the answer could be read.
    const folder = makeFolder({ records: 20 });
    const deliverWithLimit = async (limit: number) => {
      const box = await sandbox();
      box.faults.add({ route: 'upload', resetAfterBytes: 0, times: 10 });
      const res = await deliverTo(box, folder, { http: { singleUploadLimitBytes: limit } });
      expect(res.code).toBe(5);
      expect(count(box, 'complete')).toBe(0);
      return res.stderr.split('\n').filter((line) => line.startsWith('hint: '));
    };
    expect(await deliverWithLimit(folder.uploaded.length - 1)).toEqual([
      `hint: the file is ${folder.uploaded.length} bytes, over ${folder.uploaded.length - 1} bytes, the most S3 ` +
        'takes in one upload: a storage host that closes the connection on a file this large is most likely ' +
        'refusing its size, and the service must accept the file in parts before it can be delivered',
    ]);
    // A file within the limit: a reset is the network's.
    expect(await deliverWithLimit(folder.uploaded.length)).toEqual([
      'hint: the service or the network is failing; run the same command again later',
    ]);
  });

  it('says a plain .jsonl was gzipped to be sent', async () => {
    const folder = makeFolder({ records: 50, plain: true });
    const box = await sandbox({ maxUploadBytes: 100 });
    const res = await deliverTo(box, folder);
    expect(res.code).toBe(4);
    expect(res.stderr).toMatch(
      new RegExp(
        `^bds: ${folder.dataFile.replace(/[.\\/]/g, '\\$&')}, gzipped, is [\\d.]+ k?B, over the storage host's limit of 100 B for one upload$`,
        'm',
      ),
    );
  });

  it("rejects the library's deliver with an UploadTooLargeError carrying size and limit", async () => {
    const box = await startSandbox({ maxUploadSize: 100 });
    try {
      const folder = makeFolder({ records: 50 });
      const home = tempDir();
      const env = { HOME: home, XDG_STATE_HOME: path.join(home, 'state'), XDG_CONFIG_HOME: path.join(home, 'config') };
      const settings = { baseUrl: box.baseUrl, apiKey: box.keys.test, sourceId: box.sourceId, env };
      const refused = await deliver({ dir: folder.dir, period: '2024-05', ...settings }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(UploadTooLargeError);
      expect(refused).toBeInstanceOf(ApiError);
      expect(refused).toMatchObject({
        exitCode: 4,
        size: folder.uploaded.length,
        limit: 100,
        request: { status: 400 },
      });
      expect((refused as UploadTooLargeError).request?.requestId).toMatch(/^[0-9A-F]{16}$/);
      // The library's words: the file and its sizes in bytes.
      expect((refused as Error).message).toBe(
        `${folder.dataFile} is ${folder.uploaded.length} bytes, over the storage host's limit of 100 bytes for one ` +
          'upload (400): the service must accept the file in parts before it can be delivered',
      );
    } finally {
      await box.close();
    }
  });
});
