import { describe, expect, it } from 'vitest';
import { makeFolder, newSource, run, sandbox, sandboxEnv } from './helpers.js';

const ANSI = /\u001b\[/;

describe('output rules', () => {
  it('--json prints exactly one JSON document on stdout for every command', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const env = sandboxEnv(box, { BDS_SOURCE_ID: source });
    const folder = makeFolder();
    const commands = [
      ['whoami', '--json'],
      ['register-source', '--name', 'x', '--json'],
      ['deliver', folder.dir, '--period', '2024-05', '--json'],
      ['deliver', folder.dir, '--period', '2024-05', '--dry-run', '--json'],
      ['list', '--json'],
      ['completion', 'bash', '--json'],
    ];
    for (const argv of commands) {
      const res = await run(argv, { env });
      expect(res.code, `${argv.join(' ')}: ${res.stderr}`).toBe(0);
      expect(() => JSON.parse(res.stdout), argv.join(' ')).not.toThrow();
      expect(res.stdout.trim().startsWith('{')).toBe(true);
    }
  });

  it('an error under --json is one JSON object on stdout and one line on stderr', async () => {
    const box = await sandbox();
    const res = await run(['list', '--json', '--source', 'src_nope'], { env: sandboxEnv(box) });
    expect(res.code).toBe(4);
    expect(res.json()).toMatchObject({ error: { exit_code: 4 } });
    expect(res.json().error.message).toMatch(/404/);
    expect(res.stderr.split('\n').filter((l) => l.startsWith('bds:'))).toHaveLength(1);
  });

  it('a usage error under --json is one JSON object on stdout too', async () => {
    const res = await run(['list', '--json', '--status', 'lost']);
    expect(res.code).toBe(2);
    expect(res.json()).toMatchObject({ error: { exit_code: 2 } });
    expect(res.json().error.message).toMatch(/--status/);
    const missing = await run(['deliver', '--json']);
    expect(missing.code).toBe(2);
    expect(missing.json().error.message).toMatch(/missing required argument 'dir'/);
  });

  it('errors are one line without a stack trace; --verbose adds the trace', async () => {
    const box = await sandbox();
    const plain = await run(['list', '--source', 'src_nope'], { env: sandboxEnv(box) });
    expect(plain.code).toBe(4);
    expect(plain.stderr).toMatch(
      /^bds: GET .*\/api\/v1\/batches\?source_id=src_nope → 404: .*src_nope.*\(request id req_[0-9a-f]+\)$/m,
    );
    expect(plain.stderr).not.toMatch(/\n\s+at /);
    const verbose = await run(['list', '--source', 'src_nope', '--verbose'], { env: sandboxEnv(box) });
    expect(verbose.stderr).toMatch(/\n\s+at /);
  });

  it('no ANSI codes in a pipe, with NO_COLOR, or with --no-color; colour on a terminal', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const env = sandboxEnv(box, { BDS_SOURCE_ID: source });
    const folder = makeFolder();
    expect((await run(['deliver', folder.dir, '--period', '2024-05'], { env })).code).toBe(0);

    const coloured = await run(['list'], { env, tty: true });
    expect(coloured.stdout).toMatch(ANSI);
    for (const variant of [
      { tty: false, env },
      { tty: true, env: { ...env, NO_COLOR: '1' } },
      { tty: true, env, argv: ['--no-color'] },
    ]) {
      const res = await run(['list', ...(variant.argv ?? [])], { env: variant.env, tty: variant.tty });
      expect(res.code).toBe(0);
      expect(res.stdout).not.toMatch(ANSI);
      expect(res.stderr).not.toMatch(ANSI);
    }
    const failing = await run(['list', '--source', 'src_nope'], { env, tty: false });
    expect(failing.stderr).not.toMatch(ANSI);
  });

  it('on a terminal deliver shows a spinner and progress, without timestamps', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder({ records: 2000 });
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', source], {
      env: sandboxEnv(box),
      tty: true,
    });
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(/✔|√/);
    expect(res.stderr).not.toMatch(/^\d{4}-\d\d-\d\dT/m);
    expect(res.stdout).toContain('Delivered');
  });

  it('a slow storage host: once every byte is handed over, the bar says it waits for it, with no time left', async () => {
    const box = await sandbox();
    // The sandbox's slow upload: the storage host reads the body only after a while.
    box.faults.add({ route: 'upload', delayMs: 400 });
    const folder = makeFolder();
    const bytes = folder.uploaded.length;
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', newSource(box)], {
      env: sandboxEnv(box),
      tty: true,
    });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(`] 100% ${bytes} B/${bytes} B, waiting for the storage host`);
    expect(res.stderr).not.toMatch(/100% [^\n]* left/);

    // Without a terminal, the line at 100% says it too (a clock 20 s on at each look: every line is due).
    box.faults.add({ route: 'upload', delayMs: 400 });
    let clock = Date.parse('2024-07-01T00:00:00Z');
    const now = () => new Date((clock += 20_000));
    const plain = await run(
      ['deliver', makeFolder({ records: 4 }).dir, '--period', '2024-06', '--source', newSource(box)],
      { env: sandboxEnv(box), now },
    );
    expect(plain.code).toBe(0);
    expect(plain.stderr).toMatch(/uploaded \d+ B of \d+ B \(100%\)[^\n]*; waiting for the storage host$/m);
  });

  it('--verbose logs each request with the key and signatures redacted', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder();
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', source, '--verbose'], {
      env: sandboxEnv(box),
    });
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(/GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/batches\?source_id=\S+ → 200 \(\d+ ms\)/);
    expect(res.stderr).toMatch(/POST http:\/\/127\.0\.0\.1:\d+\/api\/v1\/batches → 201/);
    expect(res.stderr).toMatch(/PUT http:\/\/127\.0\.0\.1:\d+\/objects\/\S*signature=REDACTED\S* → 200/);
    expect(res.stderr).toMatch(/complete → 200/);
    expect(res.stderr).not.toContain(box.keys.test);
    expect(res.stdout).not.toContain(box.keys.test);
    const signature = box.requests.find((r) => r.route === 'upload')!.path.match(/signature=([0-9a-f]+)/)![1]!;
    expect(res.stderr).not.toContain(signature);
  });

  it('--quiet leaves only warnings, errors and the result', async () => {
    const box = await sandbox();
    const source = newSource(box);
    const folder = makeFolder();
    const res = await run(['deliver', folder.dir, '--period', '2024-05', '--source', source, '--quiet'], {
      env: sandboxEnv(box),
    });
    expect(res.code).toBe(0);
    expect(res.stderr).toBe('');
    expect(res.stdout).toMatch(/^delivered bat_\w+ \(received\): 2024-05 records, 3 records, \d+ B\n$/);
  });

  it('one record is "1 record", in the quiet line and in the step lines', async () => {
    const box = await sandbox();
    const folder = makeFolder({ records: 1 });
    const quiet = await run(['deliver', folder.dir, '--period', '2024-05', '--source', newSource(box), '--quiet'], {
      env: sandboxEnv(box),
    });
    expect(quiet.stdout).toMatch(/^delivered bat_\w+ \(received\): 2024-05 records, 1 record, \d+ B\n$/);
    const checked = await run(['check', folder.dir, '--period', '2024-05']);
    expect(checked.stderr).toMatch(/: 1 record, \d+ B, sha256 /);
    expect(checked.stdout + checked.stderr).not.toMatch(/\b1 records\b/);
  });

  it('unknown commands and options exit 2 with a bds: line', async () => {
    const unknownCommand = await run(['shipit']);
    expect(unknownCommand.code).toBe(2);
    expect(unknownCommand.stderr).toMatch(/^bds: unknown command 'shipit'/m);
    const unknownOption = await run(['list', '--frobnicate']);
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toMatch(/^bds: unknown option '--frobnicate'/m);
    const missingArgument = await run(['deliver']);
    expect(missingArgument.code).toBe(2);
    const badChoice = await run(['list', '--status', 'lost']);
    expect(badChoice.code).toBe(2);
  });

  it('--help and --version exit 0 on stdout', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    for (const command of ['whoami', 'register-source', 'deliver', 'list', 'sandbox', 'completion']) {
      expect(help.stdout).toContain(command);
    }
    const deliverHelp = await run(['deliver', '--help']);
    expect(deliverHelp.code).toBe(0);
    expect(deliverHelp.stdout).toContain('--dry-run');
    const version = await run(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
