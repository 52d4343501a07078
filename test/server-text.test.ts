// Text from a server reaches a person's terminal: messages and names are printed without escape sequences or
// other control characters, and cut to a readable length, whatever the server sends.
import { describe, expect, it } from 'vitest';
import { newSource, run, sandbox, sandboxEnv } from './helpers.js';

/** Clears the screen, sets the window title, rings the bell, moves the cursor: what a hostile server might send. */
const ESCAPES = '\u001b[2J\u001b[H\u001b]0;owned\u0007\u0007\u001b[31m\u009b1m';
/** Any control character, C0 or C1 (ESC, BEL, CSI included). */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

function errorLine(stderr: string): string {
  return stderr.split('\n').find((line) => line.startsWith('bds:')) ?? '';
}

describe('server text', () => {
  it('an error message with escape sequences and 20 KB of text is one clean, short line', async () => {
    const box = await sandbox();
    const message = `${ESCAPES}your key\r\nis not\tallowed here ${'x'.repeat(20_000)}`;
    box.faults.add({
      route: 'me',
      status: 422,
      body: JSON.stringify({ error: { code: 'nope', message } }),
      contentType: 'application/json',
    });
    const res = await run(['whoami', '--json'], { env: sandboxEnv(box) });
    expect(res.code).toBe(4);
    const line = errorLine(res.stderr);
    expect(line).toContain('422: your key is not allowed here xxx');
    expect(line).toMatch(/x…/);
    expect(line.length).toBeLessThan(500);
    expect(res.stderr).not.toMatch(CONTROL);
    // The JSON document carries the same clean message.
    expect(res.json().error.message).toBe(line.slice('bds: '.length));
  });

  it('a body that is not JSON is summarised without its control characters', async () => {
    const box = await sandbox();
    box.faults.add({ route: 'me', status: 400, body: `${ESCAPES}plain words from a proxy`, contentType: 'text/plain' });
    const res = await run(['whoami'], { env: sandboxEnv(box) });
    expect(res.code).toBe(4);
    expect(errorLine(res.stderr)).toContain('400: "plain words from a proxy" (text/plain');
    expect(res.stderr).not.toMatch(CONTROL);
  });

  it("an organization's name and key id from /me are printed clean", async () => {
    const box = await sandbox();
    const name = `${ESCAPES}Acme\nData ${'y'.repeat(20_000)}`;
    box.faults.add({
      route: 'me',
      replaceJson: { organization: { name }, key: { id: `key_${ESCAPES}1`, mode: 'test' } },
    });
    const res = await run(['whoami'], { env: sandboxEnv(box) });
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^Organization: {2}Acme Data y+…$/m);
    expect(res.stdout).toMatch(/^Key: {11}key_1 \(test mode\)$/m);
    expect(res.stdout.length).toBeLessThan(1_000);
    expect(res.stdout + res.stderr).not.toMatch(CONTROL);
  });

  it("a registered source's name from the API is printed clean", async () => {
    const box = await sandbox();
    newSource(box);
    box.faults.add({
      route: 'sources',
      replaceJson: { source: { id: 'src_0123456789abcdef', name: `${ESCAPES}Orders EU` } },
    });
    const res = await run(['register-source', '--name', 'Orders EU'], { env: sandboxEnv(box) });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('Registered source src_0123456789abcdef (Orders EU).');
    expect(res.stdout + res.stderr).not.toMatch(CONTROL);
  });
});
