// Makes the benchmark's delivery folder: a large gzipped JSON Lines file of records that look and compress
// like scrubbed data (roughly 4:1 at gzip level 6), plus schema.json and report.json. Kept between runs.
//
// Fast on any number of cores: worker threads each generate a segment of lines and deflate it on its own
// (level 6, ending with a sync flush so that it ends on a byte boundary). The main thread writes the
// segments in order as ONE gzip member (header, the deflate segments, an empty final block, CRC-32 and
// length), so the file is an ordinary single-member .gz, as gzip or a scrubber would write it. Each
// segment is seeded by its index: the same size always gives the same file.

import { createHash } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import zlib from 'node:zlib';

/** Uncompressed bytes per segment (a worker's unit of work). */
const SEGMENT_RAW_BYTES = 8 << 20;

if (!isMainThread) {
  parentPort.on('message', ({ index }) => {
    const raw = makeLines(index, SEGMENT_RAW_BYTES);
    const deflated = zlib.deflateRawSync(raw, { level: 6, finishFlush: zlib.constants.Z_SYNC_FLUSH });
    const crc = zlib.crc32(raw);
    const lines = countLines(raw);
    parentPort.postMessage({ index, crc, rawLength: raw.length, lines, deflated }, [deflated.buffer]);
  });
}

/**
 * Writes `<dir>/records.jsonl.gz` of about `targetBytes` compressed bytes (it stops at the first segment
 * past the target), schema.json and report.json, then meta.json last: a folder without meta.json is
 * incomplete and made again.
 */
export async function generate(dir, targetBytes, { onProgress = () => {} } = {}) {
  fs.mkdirSync(dir, { recursive: true });
  const meta = path.join(dir, 'meta.json');
  fs.rmSync(meta, { force: true });
  const dataFile = path.join(dir, 'records.jsonl.gz');
  const temp = `${dataFile}.partial`;
  const out = fs.createWriteStream(temp, { highWaterMark: 4 << 20 });

  // gzip header: deflate, no flags, mtime 0, no extra flags, OS unix.
  const header = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03]);
  let written = header.length;
  const sha = createHash('sha256').update(header);
  out.write(header);

  const workerCount = Math.max(1, Math.min(os.availableParallelism?.() ?? os.cpus().length, 8));
  const workers = Array.from({ length: workerCount }, () => new Worker(new URL(import.meta.url)));
  const pending = new Map(); // index -> result that arrived before its turn
  let nextToRequest = 0;
  let nextToWrite = 0;
  let crc = 0;
  let rawBytes = 0;
  let records = 0;
  let done = false;
  const started = Date.now();

  await new Promise((resolve, reject) => {
    let inFlight = 0;
    const request = (worker) => {
      if (done) return;
      inFlight++;
      worker.postMessage({ index: nextToRequest++ });
    };
    const drain = async () => {
      while (pending.has(nextToWrite) && !done) {
        const result = pending.get(nextToWrite);
        pending.delete(nextToWrite);
        nextToWrite++;
        // crc32 of the raw segment is folded in by the worker's value: combine needs the raw bytes' crc
        // in sequence, so the worker sends the crc of its segment and we combine here.
        crc = crc32Combine(crc, result.crc, result.rawLength);
        rawBytes += result.rawLength;
        records += result.lines;
        const chunk = Buffer.from(result.deflated.buffer, result.deflated.byteOffset, result.deflated.byteLength);
        written += chunk.length;
        sha.update(chunk);
        if (!out.write(chunk)) await once(out, 'drain');
        onProgress(written, targetBytes);
        if (written >= targetBytes) done = true;
      }
    };
    let chain = Promise.resolve();
    for (const worker of workers) {
      worker.on('error', reject);
      worker.on('message', (result) => {
        inFlight--;
        pending.set(result.index, result);
        // Keep at most two segments per worker ahead of the writer (constant memory).
        chain = chain
          .then(drain)
          .then(() => {
            if (!done && nextToRequest - nextToWrite < workerCount * 2) request(worker);
            else if (!done) waiting.push(worker);
            while (!done && waiting.length && nextToRequest - nextToWrite < workerCount * 2) request(waiting.shift());
            if (done && inFlight === 0) resolve();
          })
          .catch(reject);
      });
    }
    const waiting = [];
    for (const worker of workers) {
      request(worker);
      request(worker);
    }
  });
  await Promise.all(workers.map((worker) => worker.terminate()));

  // Empty final block (fixed Huffman, BFINAL), then CRC-32 and length mod 2^32, little-endian.
  const trailer = Buffer.alloc(10);
  trailer[0] = 0x03;
  trailer[1] = 0x00;
  trailer.writeUInt32LE(crc >>> 0, 2);
  trailer.writeUInt32LE(rawBytes % 2 ** 32, 6);
  sha.update(trailer);
  out.end(trailer);
  await once(out, 'finish');
  written += trailer.length;
  fs.renameSync(temp, dataFile);

  fs.writeFileSync(path.join(dir, 'schema.json'), `${JSON.stringify(SCHEMA, null, 2)}\n`);
  fs.writeFileSync(
    path.join(dir, 'report.json'),
    `${JSON.stringify(
      {
        tool: 'bds-bench generator',
        files: [{ path: 'records.jsonl.gz', rows_in: records, rows_out: records, columns_redacted: 2 }],
        totals: { rows_in: records, rows_out: records, redactions: 0 },
      },
      null,
      2,
    )}\n`,
  );
  const info = {
    bytes: written,
    rawBytes,
    records,
    sha256: sha.digest('hex'),
    seconds: (Date.now() - started) / 1000,
    generator: 1,
  };
  fs.writeFileSync(meta, `${JSON.stringify(info, null, 2)}\n`);
  return info;
}

/** The folder's meta.json, or undefined when the folder is missing or incomplete. */
export function readMeta(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
  } catch {
    return undefined;
  }
}

const SCHEMA = {
  format: 'jsonl',
  objects: {
    orders: [
      { name: 'order_id', role: 'identifier', kind: 'string', transform: 'keyed hash (HMAC-SHA256)' },
      { name: 'customer', role: 'quasi_identifier', kind: 'string', transform: 'tokenized' },
      { name: 'amount', role: 'measure', kind: 'number', transform: 'rounded to 0.5' },
      { name: 'placed_at', role: 'timestamp', kind: 'datetime', transform: 'truncated to hour' },
      { name: 'items', role: 'attribute', kind: 'array', transform: 'kept' },
      { name: 'note', role: 'free_text', kind: 'string', transform: 'redacted entities' },
    ],
    customers: [
      { name: 'customer', role: 'identifier', kind: 'string', transform: 'tokenized' },
      { name: 'region', role: 'quasi_identifier', kind: 'string', transform: 'generalized to country' },
      { name: 'segment', role: 'attribute', kind: 'string', transform: 'kept' },
    ],
    events: [
      { name: 'event_id', role: 'identifier', kind: 'string', transform: 'keyed hash (HMAC-SHA256)' },
      { name: 'session', role: 'quasi_identifier', kind: 'string', transform: 'tokenized' },
      { name: 'at', role: 'timestamp', kind: 'datetime', transform: 'truncated to minute' },
    ],
  },
};

// ---- record generation: a seeded PRNG writing bytes straight into a buffer (strings would spend the time
// in the garbage collector) ----

const enc = (text) => new Uint8Array(Buffer.from(text, 'utf8'));
const HEX_CHARS = enc('0123456789abcdef');
const list = (words) => words.map(enc);
const WORDS = list(
  (
    'the a of to and in for on with at by from delivery parcel order returned refund late damaged ' +
    'customer asked called again please thanks invoice address changed warehouse courier box missing ' +
    'item size colour exchange priority standard express gift wrap note weekend Zürich café naïve ' +
    'São Paulo Kraków 東京 東京都 Ελλάδα ok fine great slow quick broken new used'
  ).split(' '),
);
const COUNTRIES = list(['DE', 'FR', 'JP', 'US', 'GB', 'NL', 'SE', 'BR', 'IN', 'ES', 'PL', 'IT', 'CA', 'AU', 'MX']);
const SEGMENTS = list(['smb', 'mid', 'ent', 'consumer']);
const STATUSES = list(['paid', 'pending', 'shipped', 'delivered', 'refunded', 'cancelled']);
const CURRENCIES = list(['EUR', 'USD', 'GBP', 'JPY', 'SEK', 'PLN']);
const EVENT_TYPES = list(['page_view', 'add_to_cart', 'checkout', 'search', 'login', 'logout']);
const PATHS = list(['/', '/cart', '/checkout', '/search', '/product', '/account', '/help']);
const DOMAINS = list(['com', 'org', 'net']);
const BOOLS = list(['false', 'true']);
const T = (text) => enc(text);
const S = {
  order: T('{"_object":"orders","order_id":"'),
  seq: T('","seq":'),
  customer: T(',"customer":"tok_'),
  ref: T('","payment_ref":"pay_'),
  amount: T('","amount":'),
  currency: T(',"currency":"'),
  placed: T('","placed_at":"2024-05-'),
  hour: T(':00:00Z","status":"'),
  items: T('","items":['),
  sku: T('{"sku":"SKU-'),
  qty: T('","qty":'),
  price: T(',"price":'),
  note: T('],"note":'),
  nul: T('null'),
  quoted: T(' \\"'),
  unquoted: T('\\"'),
  gift: T(',"gift":'),
  discount: T(',"discount":'),
  exp: T('e-1'),
  cust: T('{"_object":"customers","customer":"tok_'),
  region: T(',"region":"'),
  segment: T('","segment":"'),
  since: T('","since":"20'),
  tags: T('","tags":["'),
  tagSep: T('","'),
  consent: T('"],"consent":{"email":'),
  sms: T(',"sms":'),
  event: T('{"_object":"events","event_id":"'),
  session: T(',"session":"ses_'),
  type: T('","type":"'),
  path: T('","path":"'),
  query: T('?q='),
  at: T('","at":"2024-05-'),
  atEnd: T(':00Z","duration_ms":'),
  referrer: T(',"referrer":'),
  url: T('"https://example.'),
  urlEnd: T('/"'),
  zulu: T('T'),
};

function makeLines(segment, targetBytes) {
  const buf = Buffer.allocUnsafe(targetBytes + 4096);
  let pos = 0;
  // xorshift32, seeded by the segment index: the same file every time.
  let state = (Math.imul(segment + 1, 0x9e3779b1) ^ 0x5bd1e995) >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  const put = (bytes) => {
    for (let i = 0; i < bytes.length; i++) buf[pos++] = bytes[i];
  };
  const byte = (b) => {
    buf[pos++] = b;
  };
  const pick = (items) => put(items[next() % items.length]);
  const hex = (n) => {
    for (let i = 0; i < n; i++) {
      const r = next();
      buf[pos++] = HEX_CHARS[r & 15];
      buf[pos++] = HEX_CHARS[(r >>> 4) & 15];
    }
  };
  const int = (n) => {
    if (n >= 10) int(Math.floor(n / 10));
    buf[pos++] = 0x30 + (n % 10);
  };
  const two = (n) => {
    buf[pos++] = 0x30 + Math.floor(n / 10);
    buf[pos++] = 0x30 + (n % 10);
  };
  /** cents as a JSON number: 1234 -> 12.34, 1230 -> 12.3, 1200 -> 12 */
  const money = (cents) => {
    int(Math.floor(cents / 100));
    const frac = cents % 100;
    if (frac === 0) return;
    byte(0x2e);
    if (frac % 10 === 0) byte(0x30 + frac / 10);
    else two(frac);
  };
  const words = (n) => {
    pick(WORDS);
    for (let i = 1; i < n; i++) {
      byte(0x20);
      pick(WORDS);
    }
  };
  let seq = segment * 1e6;
  while (pos < targetBytes) {
    seq++;
    const kind = next() % 10;
    if (kind < 6) {
      (put(S.order),
        hex(16),
        put(S.seq),
        int(seq),
        put(S.customer),
        hex(6),
        put(S.ref),
        hex(10),
        put(S.amount),
        money((next() % 400000) * 50));
      (put(S.currency), pick(CURRENCIES), put(S.placed), two(1 + (next() % 28)), put(S.zulu), two(next() % 24));
      (put(S.hour), pick(STATUSES), put(S.items));
      const items = 1 + (next() % 3);
      for (let i = 0; i < items; i++) {
        if (i) byte(0x2c);
        (put(S.sku),
          int(next() % 20000),
          put(S.qty),
          int(1 + (next() % 5)),
          put(S.price),
          money(next() % 100000),
          byte(0x7d));
      }
      put(S.note);
      if (next() % 3 === 0) put(S.nul);
      else {
        (byte(0x22), words(3 + (next() % 8)));
        if (next() % 8 === 0) (put(S.quoted), pick(WORDS), put(S.unquoted));
        byte(0x22);
      }
      (put(S.gift), pick(BOOLS), put(S.discount));
      if (next() % 4 === 0) (byte(0x30), byte(0x2e), int(1 + (next() % 4999)), put(S.exp));
      else byte(0x30);
      byte(0x7d);
    } else if (kind < 8) {
      (put(S.cust), hex(6), put(S.seq), int(seq), put(S.region), pick(COUNTRIES), put(S.segment), pick(SEGMENTS));
      (put(S.since),
        two(10 + (next() % 14)),
        byte(0x2d),
        two(1 + (next() % 12)),
        put(S.tags),
        pick(WORDS),
        put(S.tagSep));
      (pick(WORDS), put(S.consent), pick(BOOLS), put(S.sms), pick(BOOLS), byte(0x7d), byte(0x7d));
    } else {
      (put(S.event), hex(12), put(S.seq), int(seq), put(S.session), hex(8), put(S.type), pick(EVENT_TYPES));
      (put(S.path), pick(PATHS), put(S.query), pick(WORDS), put(S.at), two(1 + (next() % 28)), put(S.zulu));
      (two(next() % 24), byte(0x3a), two(next() % 60), put(S.atEnd), int(next() % 60000), put(S.referrer));
      if (next() % 2) put(S.nul);
      else (put(S.url), pick(DOMAINS), put(S.urlEnd));
      byte(0x7d);
    }
    byte(0x0a);
  }
  return buf.subarray(0, pos);
}

function countLines(buffer) {
  let n = 0;
  for (let i = buffer.indexOf(0x0a); i !== -1; i = buffer.indexOf(0x0a, i + 1)) n++;
  return n;
}

// ---- CRC-32 combine (zlib's crc32_combine, GF(2) matrices), so that workers can hash their own segment ----

function gf2Times(mat, vec) {
  let sum = 0;
  for (let i = 0; vec !== 0; i++, vec >>>= 1) if (vec & 1) sum ^= mat[i];
  return sum >>> 0;
}

function gf2Square(square, mat) {
  for (let n = 0; n < 32; n++) square[n] = gf2Times(mat, mat[n]);
}

function crc32Combine(crc1, crc2, len2) {
  if (len2 <= 0) return crc1 >>> 0;
  const even = new Uint32Array(32);
  const odd = new Uint32Array(32);
  odd[0] = 0xedb88320;
  let row = 1;
  for (let n = 1; n < 32; n++) {
    odd[n] = row;
    row <<= 1;
  }
  gf2Square(even, odd);
  gf2Square(odd, even);
  let c1 = crc1 >>> 0;
  do {
    gf2Square(even, odd);
    if (len2 & 1) c1 = gf2Times(even, c1);
    len2 = Math.floor(len2 / 2);
    if (len2 === 0) break;
    gf2Square(odd, even);
    if (len2 & 1) c1 = gf2Times(odd, c1);
    len2 = Math.floor(len2 / 2);
  } while (len2 !== 0);
  return (c1 ^ crc2) >>> 0;
}
