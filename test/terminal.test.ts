// bds on a real pseudo-terminal (util-linux `script`), where ora and its symbols decide on colour by
// themselves: NO_COLOR and --no-color must still mean no colour codes at all.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BDS_COMMAND, makeFolder, newSource, sandbox, sandboxEnv, tempDir } from './helpers.js';

const SGR_COLOUR = /\u001b\[(3\d|9\d|1|2)(;\d+)*m/;
/** A frame of ora's default spinner (dots). */
const SPINNER_FRAME = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;
const hasScript = (() => {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

async function onTerminal(env: Record<string, string>, args: string[], columns = 100): Promise<string> {
  const { spawn } = await import('node:child_process');
  const command = [...BDS_COMMAND, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', `stty cols ${columns}; ${command}`, '/dev/null'], {
      env: { PATH: process.env.PATH ?? '', TERM: 'xterm', HOME: tempDir(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', () => resolve(out));
  });
}

describe.skipIf(!hasScript)('on a real terminal', () => {
  it('colours by default; none with NO_COLOR or --no-color', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder();
    const env = sandboxEnv(box, { BDS_SOURCE_ID: source });
    const coloured = await onTerminal(env, ['deliver', folder.dir, '--period', '2024-05', '--force']);
    expect(coloured).toContain('Delivered');
    expect(coloured).toMatch(SGR_COLOUR);
    expect(coloured).toMatch(SPINNER_FRAME);
    const noColor = await onTerminal({ ...env, NO_COLOR: '1' }, [
      'deliver',
      folder.dir,
      '--period',
      '2024-05',
      '--force',
    ]);
    expect(noColor).toContain('Delivered');
    expect(noColor).not.toMatch(SGR_COLOUR);
    const flag = await onTerminal(env, ['deliver', folder.dir, '--period', '2024-05', '--force', '--no-color']);
    expect(flag).toContain('Delivered');
    expect(flag).not.toMatch(SGR_COLOUR);
  });

  it('--help fits the terminal, narrower or wider than the 80 columns of a pipe', async () => {
    // The part commander lays out (the footer after it is fixed text).
    const widest = (text: string) =>
      Math.max(
        ...text
          .split('Settings (highest first')[0]!
          .split(/\r?\n/)
          .map((line) => line.length),
      );
    const narrow = await onTerminal({}, ['--help'], 72);
    expect(narrow).toContain('Exit codes');
    expect(widest(narrow)).toBeLessThanOrEqual(72);
    const wide = await onTerminal({}, ['--help'], 120);
    expect(wide).toContain('Exit codes');
    expect(widest(wide)).toBeGreaterThan(80);
  });
});
