// The upload case, on the quiet machine: bds's upload phase (`bds check`, then `bds deliver` with the same HOME)
// against `curl -T` of the same file to the same storage host, first with the storage host on cores of its own
// (`upload`, `curl`: the sandbox process on half of the cores, bds or curl on the other half), then on shared
// cores (`uploadShared`, `curlShared`); `uploadOther` is the upload of another built checkout (--other), before
// and after, interleaved. Each says the storage host's CPU as a share of the upload's time, which tells which
// side was short (near 1: the storage host).

import fs from 'node:fs';
import path from 'node:path';
import { coreList, mb, mbps, median, pick, ratio, seconds, verdict } from '../format.js';
import { PERIOD, TIMED_BIN } from '../harness.js';
import { measure } from '../measure.js';

/** The contract: bds's upload at least this share of curl -T's throughput over HTTPS (issue 34). */
const LIMIT = 0.9;

/** The storage host's CPU during an upload, and as a share of the upload's time. */
function storageBusy(cpu, upload) {
  return `storage host CPU ${seconds(cpu)}, ${ratio(cpu / upload)} of the upload`;
}

/** A check remembers the pass, then a delivery whose upload phase is the figure. */
async function upload(bench, bin = TIMED_BIN) {
  const home = bench.freshHome();
  await bench.check(home, bench.data, bin);
  const deliver = await bench.deliver(home, bench.data, { fromCache: true, bin });
  const { upload: phase, wall, peakRss, cpu, storageCpu, others } = deliver;
  return { upload: phase, wall, peakRss, cpu, storageCpu, others };
}

async function curl(bench) {
  const { data } = bench;
  const created = await bench.api('POST', '/api/v1/batches', {
    source_id: await bench.source(),
    product: 'records',
    period: PERIOD,
    record_count: data.records,
    schema: JSON.parse(fs.readFileSync(path.join(data.dir, 'schema.json'), 'utf8')),
    report: JSON.parse(fs.readFileSync(path.join(data.dir, 'report.json'), 'utf8')),
  });
  const headers = Object.entries(created.upload.headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
  const storageBefore = bench.box.cpu();
  const res = await measure(
    'curl',
    [
      '-sS',
      '--fail-with-body',
      '-X',
      created.upload.method,
      '-T',
      data.file,
      ...(bench.cert ? ['--cacert', bench.cert] : []),
      ...headers,
      created.upload.url,
      '-o',
      '/dev/null',
    ],
    { rss: true, scratch: bench.scratch, cpus: bench.contenderCpus },
  );
  const storageCpu = bench.box.cpu() - storageBefore;
  if (res.code !== 0) throw new Error(`curl -T exited ${res.code}: ${res.stderr}`);
  await bench.verifyAndClean(created.batch.id, 'curl -T', data);
  return { wall: res.wall, cpu: res.cpu, storageCpu, others: res.others };
}

const uploadSummary = (r) =>
  `upload ${seconds(r.upload)} (delivery ${seconds(r.wall)}, CPU ${seconds(r.cpu)}, peak RSS ${mb(r.peakRss)}, ${storageBusy(r.storageCpu, r.upload)})`;
const curlSummary = (r) => `${seconds(r.wall)} (CPU ${seconds(r.cpu)}, ${storageBusy(r.storageCpu, r.wall)})`;
const quietOnly = ({ quiet }) => quiet;
const uploadShare = (r) => r.storageCpu / r.upload;
const curlShare = (r) => r.storageCpu / r.wall;

/** Medians of an upload case and of curl -T beside it: times, CPU of the command, the storage host's share. */
function medians(uploads, curls = []) {
  return {
    upload: median(uploads.map((r) => r.upload)),
    uploadCpu: median(uploads.map((r) => r.cpu)),
    uploadStorage: median(uploads.map(uploadShare)),
    curl: median(curls.map((r) => r.wall)),
    curlCpu: median(curls.map((r) => r.cpu)),
    curlStorage: median(curls.map(curlShare)),
  };
}

/**
 * The rows of one upload case: bds's upload phase (deliver after check) and curl -T, with the CPU of each command
 * and the storage host's CPU as a share of the upload's time, then their ratio: against the target when `judged`.
 */
function caseRows(c, { where, judged, bytes, n }) {
  const row = (what, time, cpu, storage) => [
    `${what}, ${where}`,
    `${seconds(time)}, ${mbps(bytes, time)} (CPU ${seconds(cpu)}; storage host busy ${ratio(storage)})`,
    '',
    '',
  ];
  return [
    row(`bds upload phase (deliver after check), median of ${n}`, c.upload, c.uploadCpu, c.uploadStorage),
    row(`curl -T, median of ${n}`, c.curl, c.curlCpu, c.curlStorage),
    [
      `**bds upload / curl -T** (throughput), ${where}`,
      ratio(c.curl / c.upload),
      '',
      judged ? verdict(c.curl / c.upload, LIMIT, { atLeast: true }) : 'information',
    ],
  ];
}

export default {
  measures: 'bds upload-phase throughput / `curl -T`',
  contenders: [
    { name: 'curl', isolated: true, when: quietOnly, run: curl, summary: curlSummary, figure: (r) => r.wall },
    {
      name: 'upload',
      isolated: true,
      when: quietOnly,
      run: (bench) => upload(bench),
      summary: uploadSummary,
      figure: (r) => r.upload,
    },
    { name: 'curlShared', when: quietOnly, run: curl, summary: curlSummary, figure: (r) => r.wall },
    {
      name: 'uploadShared',
      when: quietOnly,
      run: (bench) => upload(bench),
      summary: uploadSummary,
      figure: (r) => r.upload,
    },
    {
      name: 'uploadOther',
      isolated: true,
      // Only with --only and --other.
      when: () => false,
      run: (bench) => upload(bench, path.join(bench.other, 'bench', 'bds-timed.js')),
      summary: uploadSummary,
      figure: (r) => r.upload,
    },
  ],
  rows({ loads, data, n, uploadCores }) {
    const quiet = loads.quiet;
    if (!quiet) return [];
    const { runs } = quiet;
    const rows = [];
    if (runs.upload) {
      const where = `storage host on ${coreList(uploadCores.storage)}`;
      rows.push(...caseRows(medians(runs.upload, runs.curl), { where, judged: true, bytes: data.bytes, n }));
    } else {
      // A bench of before the two cases: the storage host shared every core, and the first deliveries' uploads
      // were the figure.
      const phase = median(pick(runs.firstAndRerun, (r) => r.first.upload));
      const curlTime = median(pick(runs.curl, (r) => r.wall));
      rows.push(
        [
          `bds upload phase (first deliveries), median of ${n}`,
          `${seconds(phase)}, ${mbps(data.bytes, phase)}`,
          '',
          '',
        ],
        [`curl -T to the storage host, median of ${n}`, `${seconds(curlTime)}, ${mbps(data.bytes, curlTime)}`, '', ''],
        [
          '**bds upload / curl -T** (throughput)',
          ratio(curlTime / phase),
          '',
          verdict(curlTime / phase, LIMIT, { atLeast: true }),
        ],
      );
    }
    if (runs.uploadShared) {
      const shared = medians(runs.uploadShared, runs.curlShared);
      rows.push(...caseRows(shared, { where: 'cores shared', judged: false, bytes: data.bytes, n }));
    }
    return rows;
  },
  onlyLines(runs) {
    const lines = [];
    for (const [name, share] of Object.entries({
      upload: uploadShare,
      uploadShared: uploadShare,
      curl: curlShare,
      curlShared: curlShare,
    })) {
      if (runs[name])
        lines.push(`  the storage host's CPU / ${name}'s time: ${runs[name].map(share).map(ratio).join(', ')}`);
    }
    for (const [uploads, curls] of [
      ['upload', 'curl'],
      ['uploadShared', 'curlShared'],
    ]) {
      if (!runs[uploads] || !runs[curls]) continue;
      const ratios = runs[uploads].map((r, k) => runs[curls][k].wall / r.upload);
      const ofMedians = median(runs[curls].map((r) => r.wall)) / median(runs[uploads].map((r) => r.upload));
      lines.push(
        `  ${uploads} / ${curls} (throughput), run by run: ${ratios.map(ratio).join(', ')}; of the medians ${ratio(ofMedians)}`,
      );
    }
    return lines;
  },
};
