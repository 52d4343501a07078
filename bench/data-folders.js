// The bench's data: bench/data/<size>/ (records.jsonl.gz, schema.json, report.json), made by generate.js the
// first time and kept; and the plain .jsonl, the inflated file of a smaller size.

import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { sizeLabel } from './format.js';
import { generate, readMeta } from './generate.js';
import { DATA } from './harness.js';
import { log } from './measure.js';

/** The data folder of this size (records.jsonl.gz, schema.json, report.json), made if it is missing. */
export async function dataFolder(size) {
  const dir = path.join(DATA, sizeLabel(size));
  let meta = readMeta(dir);
  if (!meta) {
    const free = fs.statfsSync ? fs.statfsSync(DATA) : undefined;
    if (free && free.bavail * free.bsize < size * 2.5) {
      throw new Error(`not enough free disk under ${DATA} for a ${sizeLabel(size)} file and its upload`);
    }
    log(`making ${dir} (${sizeLabel(size)} compressed; kept for later runs)`);
    let shown = 0;
    meta = await generate(dir, size, {
      onProgress: (written, target) => {
        const percent = Math.floor((written / target) * 100);
        if (percent >= shown + 10) {
          shown = percent - (percent % 10);
          log(`  ${shown}%`);
        }
      },
    });
    log(
      `made ${(meta.bytes / 2 ** 20).toFixed(0)} MiB (${(meta.rawBytes / meta.bytes).toFixed(2)}:1, ${meta.records} records) in ${meta.seconds.toFixed(0)} s`,
    );
  }
  return { dir, file: path.join(dir, 'records.jsonl.gz'), ...meta };
}

/** A folder with the inflated data file of the folder of this size, as a plain records.jsonl. */
export async function plainFolder(size) {
  const gz = await dataFolder(size);
  const dir = path.join(DATA, `${sizeLabel(size)}-plain`);
  const file = path.join(dir, 'records.jsonl');
  if (!fs.existsSync(file) || fs.statSync(file).size !== gz.rawBytes) {
    log(`inflating ${gz.file} into ${file} (kept for later runs)`);
    fs.mkdirSync(dir, { recursive: true });
    for (const name of ['schema.json', 'report.json']) fs.copyFileSync(path.join(gz.dir, name), path.join(dir, name));
    await pipeline(fs.createReadStream(gz.file), zlib.createGunzip(), fs.createWriteStream(`${file}.partial`));
    fs.renameSync(`${file}.partial`, file);
  }
  return { dir, file, bytes: gz.rawBytes, records: gz.records };
}
