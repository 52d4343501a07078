// The sign-off page (check --html) in a real browser: headless Chromium renders it, and the rendered DOM shows
// the verdict, the record count and a column's role; its network log shows no request made for the page; it
// prints to PDF on A4. The screenshot and the PDF are kept in test-artifacts/ (gitignored) for a person to look at.
//
// The browser is BDS_TEST_CHROMIUM (.ci/run sets it, after installing Debian's chromium: the test must run
// there), else the first of chromium, chromium-browser, google-chrome on PATH; with none the test is skipped and
// says so. One browser run does all of it: Chromium starts slowly on a busy machine, so the timeout is generous.

import { execFile } from 'node:child_process';
import { accessSync, constants, mkdirSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { makeFolder, ROOT, run, tempDir } from './helpers.js';

const BROWSER_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];
const ARTIFACTS = path.join(ROOT, 'test-artifacts');

function findBrowser(): string | undefined {
  if (process.env.BDS_TEST_CHROMIUM) return process.env.BDS_TEST_CHROMIUM;
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  for (const name of BROWSER_NAMES) {
    for (const dir of dirs) {
      try {
        accessSync(path.join(dir, name), constants.X_OK);
        return path.join(dir, name);
      } catch {
        // not in this folder
      }
    }
  }
  return undefined;
}

const browser = process.platform === 'linux' ? findBrowser() : undefined;
const SKIPPED =
  'SKIPPED the page in headless Chromium: no browser found (apt-get install chromium, or set BDS_TEST_CHROMIUM)';
if (!browser) console.warn(SKIPPED);

/** Chromium's requests start with initiator "not an origin" when the browser makes them for itself (updates). */
function pageRequests(netLogFile: string): string[] {
  const log = JSON.parse(readFileSync(netLogFile, 'utf8')) as {
    constants: { logEventTypes: Record<string, number> };
    events: Array<{ type: number; params?: { url?: string; initiator?: string } }>;
  };
  const startJob = log.constants.logEventTypes.URL_REQUEST_START_JOB;
  return log.events
    .filter((event) => event.type === startJob && event.params?.url && event.params.initiator !== 'not an origin')
    .map((event) => event.params!.url!);
}

/** Width and height from a PNG's IHDR chunk. */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

describe.skipIf(!browser)(browser ? `the page in headless Chromium (${browser})` : SKIPPED, () => {
  it('renders the verdict, the record count and a role; makes no request; prints to PDF on A4', async () => {
    const dir = path.join(tempDir(), 'records-2024-05');
    renameSync(makeFolder({ records: 3 }).dir, dir);
    const work = tempDir('bds-browser-');
    const page = path.join(work, 'report.html');
    expect((await run(['check', dir, '--html', page], { now: () => new Date('2024-06-15T12:00:00Z') })).code).toBe(0);

    mkdirSync(ARTIFACTS, { recursive: true });
    const screenshot = path.join(ARTIFACTS, 'report-page.png');
    const pdf = path.join(ARTIFACTS, 'report-page.pdf');
    const netLog = path.join(work, 'net-log.json');
    const { stdout: dom } = await promisify(execFile)(
      browser!,
      [
        '--headless',
        '--disable-gpu',
        '--no-sandbox',
        '--no-first-run',
        '--disable-extensions',
        `--user-data-dir=${path.join(work, 'profile')}`,
        '--hide-scrollbars',
        '--window-size=1000,1400',
        `--log-net-log=${netLog}`,
        `--screenshot=${screenshot}`,
        `--print-to-pdf=${pdf}`,
        '--no-pdf-header-footer',
        '--dump-dom',
        pathToFileURL(page).href,
      ],
      { timeout: 150_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, HOME: work } },
    );

    // The DOM as the browser built it.
    expect(dom).toContain('<h1>Ready to deliver</h1>');
    expect(dom).toContain('<span id="records">3</span>');
    expect(dom).toMatch(/<td>order_id<\/td><td><span class="role c\d">identifier<\/span>/);
    expect(dom).not.toMatch(/<script/i);

    expect(pageRequests(netLog)).toEqual([]);

    expect(pngSize(readFileSync(screenshot))).toEqual({ width: 1000, height: 1400 });
    const printed = readFileSync(pdf).toString('latin1');
    expect(printed.startsWith('%PDF-')).toBe(true);
    const boxes = [...printed.matchAll(/\/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]/g)].map((m) => [+m[1]!, +m[2]!]);
    expect(boxes.length).toBeGreaterThan(0);
    // A4 is 595.28 × 841.89 points.
    for (const [width, height] of boxes) {
      expect(Math.abs(width! - 595.28)).toBeLessThan(2);
      expect(Math.abs(height! - 841.89)).toBeLessThan(2);
    }
  }, 180_000);
});
