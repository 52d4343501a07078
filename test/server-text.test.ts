// Text from a server reaches a person's terminal: messages, names, ids, statuses and request ids are printed
// without escape sequences or other control characters, and cut to a readable length, whatever the server sends;
// so is the text of a delivery folder, and --json escapes what a terminal could obey.
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { cleanLines, cleanText, terminalJson } from '../src/core/clean-text.js';
import { listenUntilTestEnds, makeFolder, newSource, RECORDS_SCHEMA, run, sandbox, sandboxEnv } from './helpers.js';

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

describe('server text: ids, statuses and headers', () => {
  it('a request id header with C1 bytes (CSI, OSC) is shown clean: the error, --verbose, the annotation, --json', async () => {
    // A header can carry bytes 0x80-0xFF: 0x9B and 0x9D are CSI and OSC to a terminal that obeys C1.
    const requestId = 'req_1\u009b2J\u009d0;owned\u009c\u00852';
    const server = http.createServer((_req, res) => {
      res.writeHead(422, { 'content-type': 'application/json', 'x-request-id': requestId });
      res.end(JSON.stringify({ error: { code: 'nope', message: 'not for you' } }));
    });
    const port = await listenUntilTestEnds(server);
    const env = {
      BDS_BASE_URL: `http://127.0.0.1:${port}`,
      BDS_API_KEY: 'svc_test_0123456789abcdef',
      GITHUB_ACTIONS: 'true',
    };
    const res = await run(['whoami', '--verbose', '--json'], { env });
    expect(res.code).toBe(4);
    expect(errorLine(res.stderr)).toContain('422: not for you (request id req_12)');
    expect(res.stderr).toMatch(/^\S+ GET .*\/me → 422 \(\d+ ms\) \[req_12\]$/m);
    expect(res.stderr).toMatch(/^::error title=bds::.*\(request id req_12\)$/m);
    expect(res.stderr).not.toMatch(CONTROL);
    expect(res.stdout).not.toMatch(CONTROL);
    expect(res.json().error.message).toContain('(request id req_12)');
  });

  it("list shows the server's batch ids, periods, products and statuses clean, one row each", async () => {
    const box = await sandbox();
    const source = newSource(box);
    box.faults.add({
      route: 'list',
      replaceJson: {
        batches: [
          {
            id: `bat_1${ESCAPES}\n::warning::faked\tline`,
            period: '2024-05\u001b[1A',
            product: 'records\u009b2K',
            record_count: 3,
            status: `received${ESCAPES}`,
            created_at: '2024-06-01T00:00:00Z\r',
          },
        ],
      },
    });
    const res = await run(['list'], { env: sandboxEnv(box, { BDS_SOURCE_ID: source }) });
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(
      ['bat_1 ::warning::faked line', '2024-05', 'records', '3', 'received', '2024-06-01T00:00:00Z'].join('\t') + '\n',
    );
    expect(res.stdout + res.stderr).not.toMatch(CONTROL);
  });

  it("deliver's progress, retry notices and result show the server's batch id, status and messages clean", async () => {
    const box = await sandbox();
    const source = newSource(box);
    box.faults.add({
      route: 'create',
      status: 503,
      body: JSON.stringify({ error: { code: 'busy', message: `${ESCAPES}busy\n::error::faked` } }),
      contentType: 'application/json',
    });
    box.faults.add({ route: 'complete', replaceJson: { batch: { id: `bat_9${ESCAPES}`, status: 'received' } } });
    const env = sandboxEnv(box, { BDS_SOURCE_ID: source, GITHUB_ACTIONS: 'true' });
    const res = await run(['deliver', makeFolder().dir, '--period', '2024-05'], { env });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('busy ::error::faked');
    expect(res.stdout).toContain('bat_9');
    expect(res.stdout + res.stderr).not.toMatch(CONTROL);
    // No line a CI log would read as a workflow command.
    expect((res.stdout + res.stderr).split('\n').filter((line) => line.trim().startsWith('::'))).toEqual([]);
  });

  it('check --json keeps a schema value as it is, with DEL and C1 escaped: nothing a terminal obeys', async () => {
    const transform = 'keyed\u009b2J hash\u007f\u001b]0;t\u0007';
    const schema = structuredClone(RECORDS_SCHEMA);
    schema.objects.orders[0]!.transform = transform;
    const res = await run(['check', makeFolder({ schema }).dir, '--json']);
    expect(res.code).toBe(0);
    expect(res.stdout).not.toMatch(CONTROL);
    expect(res.stdout).toContain('keyed\\u009b2J hash\\u007f\\u001b]0;t\\u0007');
    expect(JSON.stringify(res.json())).toContain(JSON.stringify(transform).slice(1, -1));
  });
});

describe('the cleaner', () => {
  it('cleanText: one line, no escape sequence or control character, C0, DEL and C1 alike', () => {
    expect(cleanText('a\u001b[2Jb\u001b]0;title\u0007c\u009b1md\u009d8;;x\u009ce\u007ff\u0085g\r\nh')).toBe(
      'abcdefg h',
    );
  });

  it('cleanLines keeps line breaks and tabs; an escape left open takes no line after it along', () => {
    expect(cleanLines('one\u001b]0;open title\ntwo\tthree\r\nfour\rfive\u009b2K')).toBe('one\ntwo\tthree\nfourfive');
  });

  it('terminalJson escapes DEL and C1 and means the same as JSON.stringify', () => {
    const value = { a: 'x\u009by\u007fz\u0085', b: ['\u001b', 'é€'] };
    const text = terminalJson(value);
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(JSON.parse(text)).toEqual(value);
  });
});
