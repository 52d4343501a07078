// A fuzz test of the config loader: JSON and YAML config files (and package.json's "bds" key) with odd types,
// huge values, deep nesting, byte order marks, invalid UTF-8, truncation, and a key planted in every field
// (values, names of settings and profiles, paths). Whatever the file holds, bds never fails as a bug (exit 1)
// and never prints the key. Seeded, so that a failure is the same on every run; a few seconds long.

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../src/sandbox/emulator.js';
import { run, sandbox, seededRandom, tempDir } from './helpers.js';

const SECRET = 'svc_live_FuzzPlanted7q3x9k2m4w';
/** What would show if any of the key did. */
const TELLTALE = 'FuzzPlanted';
const RUNS = 80;
const SETTINGS = ['apiKey', 'apiKeyFile', 'baseUrl', 'sourceId'];

type Random = () => number;

function generator(random: Random, box: Sandbox) {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const names = [
    'apiKey',
    'apiKeyFile',
    'baseUrl',
    'sourceId',
    'profile',
    'profiles',
    'apikey',
    'sourceID',
    '$import',
    '__proto__',
    'constructor',
    '',
    SECRET,
    'ß✓\u0000\u001b[2J',
  ];
  const strings = [
    SECRET,
    ` \t${SECRET}\n`,
    `# comment\n${SECRET}`,
    `${SECRET}${SECRET}`,
    `https://${SECRET}.example/`,
    `http://127.0.0.1/${SECRET}`,
    box.baseUrl,
    `${box.baseUrl}/${SECRET}`,
    'http://[::1',
    'https://api.example.com',
    path.join(tempDir(), SECRET),
    'src_x',
    '',
    '\u001b]0;pwned\u0007',
    'x'.repeat(200_000),
    `${SECRET}${'y'.repeat(50_000)}`,
  ];

  function value(depth: number): unknown {
    const r = random();
    if (depth > 4 || r < 0.45) return pick(strings);
    if (r < 0.55) return pick([0, -1, 1e308, -0, 3.5, Number.MAX_SAFE_INTEGER + 2]);
    if (r < 0.6) return pick([true, false, null]);
    if (r < 0.75) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
    return object(depth + 1);
  }

  function object(depth: number): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    const count = Math.floor(random() * 6);
    for (let i = 0; i < count; i++) {
      const name = random() < 0.8 ? pick(names) : `k${Math.floor(random() * 1e6)}`;
      // Mostly strings where bds expects them, so that many files get past the first check.
      const item = SETTINGS.includes(name) && random() < 0.7 ? pick(strings) : value(depth);
      Object.defineProperty(result, name, { value: item, enumerable: true, writable: true, configurable: true });
    }
    if (random() < 0.4) {
      const profiles: Record<string, unknown> = {};
      for (const name of [pick(['live', 'test', SECRET, '__proto__', 'toString']), pick(['live', SECRET])]) {
        Object.defineProperty(profiles, name, {
          value: random() < 0.8 ? object(depth + 2) : value(depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      result.profiles = profiles;
    }
    if (random() < 0.3) result.profile = pick(['live', SECRET, 'nope', 7]);
    // Often the key itself where it belongs, so that many files get as far as the API.
    if (depth === 0 && random() < 0.5) result.apiKey = pick([SECRET, ` ${SECRET}\n`, ...strings]);
    return result;
  }

  /** YAML of a value: block style, with JSON's quoting for strings (a subset of YAML). */
  function yaml(v: unknown, indent: string): string {
    if (v !== null && typeof v === 'object') {
      const entries = Array.isArray(v)
        ? v.map((item) => ['-', item] as const)
        : Object.entries(v).map(([k, item]) => [`${JSON.stringify(k)}:`, item] as const);
      if (entries.length === 0) return Array.isArray(v) ? ' []' : ' {}';
      return entries.map(([key, item]) => `\n${indent}${key}${yaml(item, `${indent}  `)}`).join('');
    }
    return ` ${JSON.stringify(v) ?? 'null'}`;
  }

  /** The bytes of one config file, and its name. */
  return function configFile(): { name: string; bytes: Buffer } {
    const settings = random() < 0.9 ? object(0) : value(0);
    const kind = pick(['.bdsrc.json', '.bdsrc.yaml', '.bdsrc', 'package.json'] as const);
    const content = kind === 'package.json' ? { name: 'pipeline', bds: settings } : settings;
    let text =
      kind === '.bdsrc.json' || kind === 'package.json'
        ? JSON.stringify(content, null, pick([0, 2]))
        : yaml(content, '').trimStart();
    const r = random();
    if (r < 0.1) text = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    else if (r < 0.15) text = `apiKey: ${SECRET}\nprofiles: {live: [unclosed\n`;
    else if (r < 0.2) text = `apiKey: *nowhere\n${SECRET}: &a [*a]\n`;
    else if (r < 0.3) text = text.slice(0, Math.floor(random() * text.length));
    let bytes = Buffer.from(text);
    if (random() < 0.2) bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]);
    if (random() < 0.15) {
      const at = Math.floor(random() * bytes.length);
      bytes = Buffer.concat([
        bytes.subarray(0, at),
        Buffer.from(pick([[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0x00]])),
        bytes.subarray(at),
      ]);
    }
    return { name: kind, bytes };
  };
}

describe('config loader fuzz', () => {
  it(`never exit 1, never the key: ${RUNS} config files`, async () => {
    const box = await sandbox();
    const configFile = generator(seededRandom(27), box);
    const codes = new Map<number, number>();
    for (let runs = 0; runs < RUNS; runs++) {
      const home = tempDir('bds-fuzz-');
      const { name, bytes } = configFile();
      writeFileSync(path.join(home, name), bytes, { mode: 0o600 });
      const args =
        runs % 4 === 3 ? ['doctor', '--json'] : runs % 4 === 1 ? ['whoami', '--json', '--verbose'] : ['whoami'];
      // A third of the runs get a base URL from the environment, so that more files get as far as their key.
      const env = runs % 3 === 0 ? { BDS_BASE_URL: box.baseUrl } : {};
      const res = await run(args, { home, env, http: { maxAttempts: 1 } });
      const what = `run ${runs} (${args.join(' ')}), ${name}: ${bytes.subarray(0, 300).toString('utf8')}`;
      expect(res.code, `${what}\n${res.stderr}`).not.toBe(1);
      expect(res.stderr, what).not.toContain('a bug in bds');
      expect(`${res.stdout}${res.stderr}`, what).not.toContain(TELLTALE);
      codes.set(res.code, (codes.get(res.code) ?? 0) + 1);
    }
    // Files refused (2), and files whose key got as far as its own checks or the API (3).
    expect(codes.get(2) ?? 0).toBeGreaterThan(0);
    expect(codes.get(3) ?? 0).toBeGreaterThan(0);
  });
});
