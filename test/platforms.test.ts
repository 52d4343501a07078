// What differs on macOS and Windows, tested here on Linux with the system injected (the Runtime's platform):
// folders, path rules, what protects the config file, the crash-safe write's rename and folder flush, a lock's
// holder, the signals that interrupt, and the terminal's marks and hidden prompt. The npm package itself runs
// under Wine in CI (.ci/run).

import { chmodSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { IO } from '../src/cli/output/io.js';
import { ask } from '../src/cli/output/prompt.js';
import { InterruptedError, interruptSignals, LockedError } from '../src/core/errors.js';
import { takeLock } from '../src/core/delivery/lock.js';
import { flushFolder, whileHeld, writeFileAtomic } from '../src/core/files.js';
import { Operation } from '../src/core/operation.js';
import { chosenDataFile } from '../src/core/preflight/folder.js';
import { choosePeriod } from '../src/core/preflight/period.js';
import { searchPlaces } from '../src/core/settings/config-file.js';
import { cacheDir, requireHomeFor, stateDir, userConfigFolder } from '../src/core/settings/dirs.js';
import { resolveSettings } from '../src/core/settings/settings.js';
import { homeFolder, processAlive, processRuntime, startTimes } from '../src/process-runtime.js';
import { CapturedStream, makeFolder, newSource, run, sandbox, sandboxEnv, tempDir } from './helpers.js';
import { OPTION_NAMES } from '../src/core/options.js';

const { compileCacheFolder } = createRequire(import.meta.url)('../bin/compile-cache.js') as {
  compileCacheFolder: (env: Record<string, string>, platform: NodeJS.Platform, homedir: string) => string;
};

it('the Runtime of the running process names its system', () => {
  expect(processRuntime().platform).toBe(process.platform);
});

describe("the home folder, as Node's os.homedir() finds it", () => {
  // Git Bash, MSYS2 and Cygwin set a HOME of their own on Windows; Node (and so npm) takes USERPROFILE there.
  const env = { HOME: 'C:\\msys64\\home\\me', USERPROFILE: 'C:\\Users\\me' };

  it('Windows: USERPROFILE over HOME; elsewhere HOME', () => {
    expect(homeFolder(env, 'win32')).toBe('C:\\Users\\me');
    expect(homeFolder(env, 'linux')).toBe('C:\\msys64\\home\\me');
    expect(homeFolder({ HOME: '/Users/me', USERPROFILE: 'C:\\Users\\me' }, 'darwin')).toBe('/Users/me');
    expect(processRuntime({ env: { HOME: '/srv/home' } }).homedir).toBe(
      process.platform === 'win32' ? os.homedir() : '/srv/home',
    );
  });

  it("without the variable, the system's answer", () => {
    expect(homeFolder({ HOME: '/home/me' }, 'win32')).toBe(os.homedir());
    expect(homeFolder({ USERPROFILE: 'C:\\Users\\me' }, 'linux')).toBe(os.homedir());
  });

  it('a home folder that does not exist is named by the variable it came from', () => {
    const home = path.join(tempDir(), 'nonexistent');
    const state = path.join(home, '.local', 'state', 'bds');
    expect(() => requireHomeFor(state, { homedir: home, platform: 'win32' })).toThrow(
      `the home folder ${home} (USERPROFILE) does not exist, and bds does not create it: set USERPROFILE to an existing folder`,
    );
    expect(() => requireHomeFor(state, { homedir: home, platform: 'linux' })).toThrow(`${home} (HOME) does not exist`);
  });
});

describe('folders per system', () => {
  const windows = (env: Record<string, string>) => ({ env, homedir: 'C:\\Users\\me', platform: 'win32' as const });
  const profile = windows({ APPDATA: 'C:\\Users\\me\\AppData\\Roaming', LOCALAPPDATA: 'D:\\Local' });

  it('Windows: the config in %APPDATA%\\bds, state and cache in %LOCALAPPDATA%\\bds', () => {
    expect(userConfigFolder(profile)).toBe('C:\\Users\\me\\AppData\\Roaming\\bds');
    expect(stateDir(profile)).toBe('D:\\Local\\bds');
    expect(cacheDir(profile)).toBe('D:\\Local\\bds');
    expect(compileCacheFolder(profile.env, 'win32', profile.homedir)).toBe('D:\\Local\\bds\\compile-cache');
  });

  it('Windows without APPDATA and LOCALAPPDATA (or with relative ones): the profile folders under home', () => {
    for (const place of [windows({}), windows({ APPDATA: 'Roaming', LOCALAPPDATA: '.\\Local' })]) {
      expect(userConfigFolder(place)).toBe('C:\\Users\\me\\AppData\\Roaming\\bds');
      expect(stateDir(place)).toBe('C:\\Users\\me\\AppData\\Local\\bds');
      expect(cacheDir(place)).toBe('C:\\Users\\me\\AppData\\Local\\bds');
    }
  });

  it('Windows: an XDG variable wins where set', () => {
    const xdg = windows({
      ...profile.env,
      XDG_CONFIG_HOME: 'E:\\conf',
      XDG_STATE_HOME: 'E:/state',
      XDG_CACHE_HOME: 'E:\\cache',
    });
    expect(userConfigFolder(xdg)).toBe('E:\\conf\\bds');
    expect(stateDir(xdg)).toBe('E:\\state\\bds');
    expect(cacheDir(xdg)).toBe('E:\\cache\\bds');
    expect(compileCacheFolder(xdg.env, 'win32', xdg.homedir)).toBe('E:\\cache\\bds\\compile-cache');
  });

  it('macOS: ~/.config, ~/.local/state and ~/.cache, as gh and the Stripe CLI, never ~/Library', () => {
    const mac = { env: {}, homedir: '/Users/me', platform: 'darwin' as const };
    expect(userConfigFolder(mac)).toBe('/Users/me/.config/bds');
    expect(stateDir(mac)).toBe('/Users/me/.local/state/bds');
    expect(cacheDir(mac)).toBe('/Users/me/.cache/bds');
    expect(compileCacheFolder({}, 'darwin', '/Users/me')).toBe('/Users/me/.cache/bds/compile-cache');
  });
});

it("the temp folder for a plain .jsonl's gzipped copy: TMPDIR, else on Windows TEMP or TMP", () => {
  const tempOn = (platform: NodeJS.Platform, env: Record<string, string>) =>
    new Operation(
      { ...processRuntime(), env, platform },
      { names: OPTION_NAMES },
      { signal: new AbortController().signal },
    ).tempDir();
  expect(tempOn('win32', { TEMP: 'C:\\Temp', TMP: 'C:\\Tmp' })).toBe('C:\\Temp');
  expect(tempOn('win32', { TMP: 'C:\\Tmp' })).toBe('C:\\Tmp');
  expect(tempOn('win32', { TMPDIR: 'D:\\scratch', TEMP: 'C:\\Temp' })).toBe('D:\\scratch');
  expect(tempOn('linux', { TEMP: '/windows/only' })).toBe(os.tmpdir());
});

describe('the config search on Windows', () => {
  const search = (cwd: string) => [
    ...searchPlaces({
      explicit: undefined,
      cwd,
      home: 'C:\\Users\\Me',
      env: { APPDATA: 'C:\\Users\\Me\\AppData\\Roaming' },
      platform: 'win32',
      uid: undefined,
    }),
  ];

  it('climbs from the working folder to home, whatever the case of its letters, then %APPDATA%\\bds', () => {
    const places = search('c:\\users\\me\\work\\out');
    expect(places).toContain('c:\\users\\me\\work\\out\\.bdsrc');
    expect(places).toContain('c:\\users\\me\\work\\.bdsrc');
    expect(places).toContain('c:\\users\\me\\.bdsrc');
    expect(places).not.toContain('c:\\users\\.bdsrc');
    expect(places.at(-1)).toMatch(/^C:\\Users\\Me\\AppData\\Roaming\\bds\\config\./);
    expect(places).toContain('C:\\Users\\Me\\AppData\\Roaming\\bds\\config.json');
  });

  it('a working folder outside home (another drive, a folder beside it) is searched alone', () => {
    for (const cwd of ['D:\\scrub\\out', 'C:\\Users\\Mel\\out']) {
      const climbed = search(cwd).filter((place) => place.endsWith('\\.bdsrc'));
      expect(climbed).toEqual([`${cwd}\\.bdsrc`]);
    }
  });
});

describe('what protects the config file', () => {
  // Windows' stat() makes a mode up from the read-only attribute: 0o666 for any writable file.
  function readableFiles(): { config: string; keyFile: string; cwd: string } {
    const cwd = tempDir();
    const config = path.join(cwd, 'bds.json');
    const keyFile = path.join(cwd, 'key.txt');
    writeFileSync(config, JSON.stringify({ apiKey: 'svc_test_0123456789abcdef' }));
    writeFileSync(keyFile, 'svc_test_0123456789abcdef\n');
    chmodSync(config, 0o666);
    chmodSync(keyFile, 0o666);
    return { config, keyFile, cwd };
  }
  const warningsOn = async (platform: NodeJS.Platform, env: Record<string, string>, config?: string) => {
    const { cwd } = readableFiles();
    const settings = await resolveSettings({ config, names: OPTION_NAMES }, { env, cwd, homedir: cwd, platform });
    return settings.warnings.map((warning) => warning.message);
  };

  it('on POSIX a config file or key file others can read gets the chmod 600 warning; on Windows neither', async () => {
    const { config, keyFile } = readableFiles();
    expect(await warningsOn('linux', {}, config)).toEqual([expect.stringMatching(/other users can read it/)]);
    expect(await warningsOn('darwin', { BDS_API_KEY_FILE: keyFile })).toEqual([
      expect.stringMatching(/can be read by other users/),
    ]);
    expect(await warningsOn('win32', {}, config)).toEqual([]);
    expect(await warningsOn('win32', { BDS_API_KEY_FILE: keyFile })).toEqual([]);
  });
});

it('the crash-safe write flushes the folder on POSIX, and on Windows, which has no such call, does not ask', () => {
  const dir = tempDir();
  expect(flushFolder(dir, 'linux')).toBe(true);
  expect(flushFolder(dir, 'darwin')).toBe(true);
  expect(flushFolder(dir, 'win32')).toBe(false);
  // The write itself is whole either way.
  const steps: string[] = [];
  writeFileAtomic(path.join(dir, 'record.json'), '{}\n', { platform: 'win32', onStep: (step) => steps.push(step) });
  expect(steps).toEqual(['written', 'flushed', 'renamed', 'folder-flushed']);
});

describe('a rename while another process holds the file', () => {
  const held = (code: string) => Object.assign(new Error(`${code}: operation not permitted, rename`), { code });
  /** Fails with `code` the first `times` attempts. */
  function renameFailing(code: string, times: number): { attempt: () => string; attempts: () => number } {
    let attempts = 0;
    return {
      attempt: () => {
        if (++attempts <= times) throw held(code);
        return 'renamed';
      },
      attempts: () => attempts,
    };
  }

  it('on Windows EPERM, EACCES and EBUSY are tried again, with growing pauses, until the file is let go', () => {
    for (const code of ['EPERM', 'EACCES', 'EBUSY']) {
      const pauses: number[] = [];
      const rename = renameFailing(code, 3);
      expect(whileHeld('win32', rename.attempt, (ms) => pauses.push(ms))).toBe('renamed');
      expect(rename.attempts()).toBe(4);
      expect(pauses).toEqual([10, 20, 40]);
    }
  });

  it('on Windows the waiting is bounded: about a second, then the error stands', () => {
    const pauses: number[] = [];
    const rename = renameFailing('EPERM', Infinity);
    expect(() => whileHeld('win32', rename.attempt, (ms) => pauses.push(ms))).toThrow(/EPERM/);
    const waited = pauses.reduce((sum, ms) => sum + ms, 0);
    expect(waited).toBeGreaterThanOrEqual(500);
    expect(waited).toBeLessThanOrEqual(1500);
    expect(rename.attempts()).toBe(pauses.length + 1);
  });

  it('elsewhere, and on Windows for any other error, the first error is thrown at once', () => {
    for (const [platform, code] of [
      ['linux', 'EPERM'],
      ['darwin', 'EBUSY'],
      ['win32', 'ENOENT'],
      ['win32', 'ENOSPC'],
    ] as const) {
      const pauses: number[] = [];
      const rename = renameFailing(code, 1);
      expect(() => whileHeld(platform, rename.attempt, (ms) => pauses.push(ms))).toThrow(code);
      expect(pauses).toEqual([]);
    }
  });
});

describe("a lock's holder, asked without a signal (process.kill(pid, 0))", () => {
  const answering = (code: string) => () => {
    throw Object.assign(new Error(code), { code });
  };

  it('ESRCH (no such process, on Windows too) is gone; EPERM (another user) or no error runs', () => {
    expect(processAlive(answering('ESRCH'))).toBe(false);
    expect(processAlive(answering('EPERM'))).toBe(true);
    expect(processAlive(() => {})).toBe(true);
  });

  it('an answer that says nothing (Windows: access to a protected process) keeps the lock', () => {
    expect(processAlive(answering('EACCES'))).toBe(true);
    expect(processAlive(answering('UNKNOWN'))).toBe(true);
  });

  it('macOS and Windows: a lock written before the machine booted is stale, whoever has its pid now', () => {
    for (const platform of ['darwin', 'win32'] as const) {
      // The pid is taken again, by whatever process.
      const lock = lockOf(path.join(tempDir(), 'src_1-2024-05-records.lock'), platform, 4242);
      const bootedAt = Date.now() - os.uptime() * 1000;
      lock(new Date(bootedAt - 3_600_000).toISOString());
      // Written an hour before the boot: taken over.
      const unlock = lock(new Date().toISOString());
      // Written since the boot by a pid that runs: kept.
      expect(() => lock(new Date().toISOString())).toThrow(LockedError);
      unlock();
    }
  });
});

/** Takes `file` as `pid` wrote it at a time, the process of that pid running, with the platform's start times. */
function lockOf(file: string, platform: 'darwin' | 'win32', pid: number): (startedAt: string) => () => void {
  return (startedAt) =>
    takeLock({
      file,
      subject: 'src_1 2024-05 records',
      owner: { pid, hostname: 'host', startedAt },
      platform,
      isProcessAlive: () => true,
      processStartedAt: startTimes(platform),
    });
}

describe('a lock naming this process', () => {
  it("macOS and Windows: written before this process started, it is a dead process's whose pid it was given", () => {
    for (const platform of ['darwin', 'win32'] as const) {
      const lock = lockOf(path.join(tempDir(), 'src_1-2024-05-records.lock'), platform, process.pid);
      const startedAt = Date.now() - process.uptime() * 1000;
      lock(new Date(startedAt - 60_000).toISOString());
      // Written a minute before this process started (after the boot): taken over.
      const unlock = lock(new Date().toISOString());
      // Written by this process (another delivery of the library's caller): kept.
      expect(() => lock(new Date().toISOString())).toThrow(LockedError);
      unlock();
    }
  });
});

describe('Ctrl-C and Ctrl-Break', () => {
  it('Windows adds SIGBREAK (Ctrl-Break) to the signals that interrupt, with exit 130 as Ctrl-C', () => {
    expect(interruptSignals('win32')).toEqual({ SIGINT: 130, SIGTERM: 143, SIGHUP: 129, SIGBREAK: 130 });
    expect(interruptSignals('linux')).toEqual({ SIGINT: 130, SIGTERM: 143, SIGHUP: 129 });
    expect(interruptSignals('darwin')).toEqual(interruptSignals('linux'));
  });

  it('a delivery stopped by SIGBREAK: exit 130, said by name, and a re-run resumes it', async () => {
    const box = await sandbox();
    const home = tempDir();
    const { dir } = makeFolder();
    const env = sandboxEnv(box, { BDS_SOURCE_ID: newSource(box) });
    const controller = new AbortController();
    const first = await run(['deliver', dir, '--period', '2024-05'], {
      env,
      home,
      signal: controller.signal,
      // Stopped once the upload has begun, as a person pressing Ctrl-Break would.
      onStderrWrite: (chunk) => {
        if (/upload/i.test(chunk)) controller.abort(new InterruptedError('SIGBREAK'));
      },
    });
    expect(first.code, first.stderr).toBe(130);
    expect(first.stderr).toContain('interrupted by SIGBREAK');
    const again = await run(['deliver', dir, '--period', '2024-05'], { env, home });
    expect(again.code, again.stderr).toBe(0);
    expect(box.store.batches()).toHaveLength(1);
  });
});

describe('paths by the rules of Windows', () => {
  it("the period from a folder's name with \\ or / and a drive letter", () => {
    for (const folder of ['C:\\out\\records-2024-05', 'C:/out/records-2024-05', 'D:\\records-2024-05\\']) {
      expect(choosePeriod(undefined, folder, 'win32', OPTION_NAMES)).toEqual({
        period: '2024-05',
        fromName: 'records-2024-05',
      });
    }
    // On POSIX a backslash is part of a name: the whole name holds two months.
    expect(() => choosePeriod(undefined, '/srv/2024-04\\records-2024-05', 'linux', OPTION_NAMES)).toThrow(
      /more than one period/,
    );
  });

  it('--file with \\ or a drive letter is a path from the working folder, never a name in the folder', async () => {
    const folder = 'C:\\work\\out\\records-2024-05';
    expect(await chosenDataFile('exports\\records.jsonl.gz', 'C:\\work', folder, 'win32')).toBe(
      'C:\\work\\exports\\records.jsonl.gz',
    );
    expect(await chosenDataFile('D:\\exports\\records.jsonl.gz', 'C:\\work', folder, 'win32')).toBe(
      'D:\\exports\\records.jsonl.gz',
    );
    expect(await chosenDataFile('..\\other\\records.jsonl.gz', 'C:\\work\\out', folder, 'win32')).toBe(
      'C:\\work\\other\\records.jsonl.gz',
    );
  });
});

describe('the terminal on Windows', () => {
  const io = (platform: NodeJS.Platform, env: Record<string, string> = {}) =>
    new IO({
      stdout: new CapturedStream(true),
      stderr: new CapturedStream(true, 80),
      env,
      platform,
      now: () => new Date(),
      flags: { json: false, quiet: false, verbose: false, color: true },
    });

  it("cmd.exe's and PowerShell's classic console get the marks its fonts have; Windows Terminal the others", () => {
    expect(io('win32').symbols).toMatchObject({ ok: '√', failed: '×', frames: ['-', '\\', '|', '/'] });
    expect(io('win32', { WT_SESSION: '5a7c' }).symbols).toMatchObject({ ok: '✔', failed: '✖' });
    expect(io('win32', { TERM_PROGRAM: 'vscode' }).symbols.ok).toBe('✔');
    expect(io('linux').symbols.ok).toBe('✔');
    expect(io('darwin').symbols.ok).toBe('✔');
    // The Linux console's font has no braille either.
    expect(io('linux', { TERM: 'linux' }).symbols.ok).toBe('√');
  });

  it('colour on a Windows console (TERM unset), off with NO_COLOR, as elsewhere', () => {
    expect(io('win32').err.level).toBeGreaterThan(0);
    expect(io('win32', { NO_COLOR: '1' }).err.level).toBe(0);
  });

  it("the hidden key prompt turns the console's echo off with raw mode (no stty), and back on", async () => {
    const input = Object.assign(new PassThrough(), {
      isTTY: true,
      modes: [] as boolean[],
      setRawMode(mode: boolean) {
        this.modes.push(mode);
        return this;
      },
    });
    const output = new CapturedStream(true, 80);
    const answer = ask(input, output, 'API key: ', { secret: true, signal: new AbortController().signal });
    // A Windows console in raw mode hands Enter over as \r.
    input.write('svc_test_typed_secret_0000\r');
    expect(await answer).toBe('svc_test_typed_secret_0000');
    expect(input.modes).toEqual([true, false]);
    expect(output.text).toContain('API key: ');
    expect(output.text).not.toContain('typed_secret');
  });
});
