// Makes docs/report-page.png, the picture of the --html page that docs/commands.md shows: `bds check --html` of
// the packaged example (examples/records-2024-05, with its report's redactions counted per column, so the chart
// shows), rendered by headless Chromium. Run after `npm run build`, with Chromium installed (Debian's
// `chromium`, or set CHROMIUM): `node scripts/report-picture.js`.

import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'docs', 'report-page.png');
const BROWSER = process.env.CHROMIUM ?? 'chromium';
/** What the docs can afford to carry. */
const MAX_BYTES = 150_000;

const work = path.join(os.tmpdir(), 'bds-report-picture');
rmSync(work, { recursive: true, force: true });
const dir = path.join(work, 'records-2024-05');
cpSync(path.join(ROOT, 'examples', 'records-2024-05'), dir, { recursive: true });
const report = JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8'));
report.totals.redactions = { customer: 4120, region: 2210, placed_at: 1380, order_id: 413 };
writeFileSync(path.join(dir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);

const page = path.join(work, 'report.html');
const home = path.join(work, 'home');
mkdirSync(home);
execFileSync(process.execPath, [path.join(ROOT, 'bin', 'bds.js'), 'check', dir, '--html', page, '--quiet'], {
  cwd: work,
  env: { ...process.env, HOME: home, XDG_STATE_HOME: '', XDG_CACHE_HOME: '', XDG_CONFIG_HOME: '' },
  stdio: ['ignore', 'ignore', 'inherit'],
});
execFileSync(
  BROWSER,
  [
    '--headless',
    '--disable-gpu',
    '--no-sandbox',
    '--no-first-run',
    `--user-data-dir=${path.join(work, 'profile')}`,
    '--hide-scrollbars',
    '--force-device-scale-factor=1',
    '--window-size=900,1180',
    `--screenshot=${OUT}`,
    pathToFileURL(page).href,
  ],
  { stdio: 'ignore', env: { ...process.env, HOME: home }, timeout: 180_000 },
);
const bytes = statSync(OUT).size;
if (bytes > MAX_BYTES) throw new Error(`${OUT} is ${bytes} bytes, over ${MAX_BYTES}: make the window smaller`);
rmSync(work, { recursive: true, force: true });
console.log(`${path.relative(ROOT, OUT)}: ${bytes} bytes`);
