// bds login: a key typed at a hidden prompt (or piped in with --with-key), checked against the API, stored in
// the user's config file. The key is never an argument: it would stay in shell history and in `ps`.

import { Option } from 'commander';
import { UsageError } from '../../core/errors.js';
import type { LoginResult } from '../../core/login.js';
import { defineCommand } from '../command.js';
import type { CommonFlags } from '../command.js';

const KEY_PROMPT = 'API key (svc_live_... or svc_test_...; not shown as you type): ';

interface LoginFlags extends CommonFlags {
  withKey?: boolean;
}

export default defineCommand<LoginFlags, LoginResult>({
  name: 'login',
  description: 'check a key against the API and store it in your config file',
  options: [new Option('--with-key', 'read the key from standard input instead of asking for it')],
  async run(op, io, flags) {
    const { checkBaseUrl, login, planLogin } = await import('../../core/login.js');
    // Nobody types a key that cannot be stored: the file is checked first.
    const plan = await planLogin(op);
    let baseUrl = plan.baseUrl?.value;
    if (flags.withKey) {
      if (baseUrl === undefined) {
        throw new UsageError('no base URL: with --with-key, name it with --base-url or BDS_BASE_URL', {
          hint: 'bds login --with-key --base-url https://... < key.txt',
        });
      }
      checkBaseUrl(baseUrl, plan);
      // A key pasted at a terminal would show in clear (scrollback, a shared screen): read there without echo.
      if (io.canAsk) {
        const keyText = await io.ask(KEY_PROMPT, { signal: op.signal, secret: true });
        return login(op, { keyText, keyFrom: 'the prompt', baseUrl, plan });
      }
      return login(op, { keyText: await io.readInput(), keyFrom: 'standard input', baseUrl, plan });
    }
    if (!io.canAsk) {
      throw new UsageError('no terminal to ask for the key on: pipe it in with --with-key', {
        hint: 'bds login --with-key < key.txt (or from a CI secret: printf %s "$BDS_KEY" | bds login --with-key)',
      });
    }
    const ask = { signal: op.signal, secret: false };
    if (baseUrl === undefined) baseUrl = await io.ask('Base URL of the API: ', ask);
    // A base URL that will be refused is said before anyone types a key for it.
    checkBaseUrl(baseUrl, plan);
    const keyText = await io.ask(KEY_PROMPT, { ...ask, secret: true });
    return login(op, { keyText, keyFrom: 'the prompt', baseUrl, plan });
  },
  print(io, result) {
    if (result.key.mode === 'test') io.notice('this is a test key: its batches never become billable');
    if (result.overriddenIn?.profile) {
      // The same file, whose default profile has a key of its own.
      io.warn(
        `the default profile ${result.overriddenIn.profile} of ${result.configFile} has a key of its own: bds uses that instead of the key just stored at the file's top level`,
      );
      io.notice(
        `to use the new key, remove "profile": "${result.overriddenIn.profile}" from the file, or log in with --profile <name>`,
      );
    } else if (result.overriddenBy) {
      io.warn(`${result.overriddenBy} comes before ${result.configFile}: bds uses that instead of the key just stored`);
    } else if (result.profile !== null && result.defaultProfile !== result.profile) {
      const otherwise = result.defaultProfile === null ? '' : `; without, the default profile ${result.defaultProfile}`;
      io.notice(
        `commands use this key with --profile ${result.profile} (or BDS_PROFILE=${result.profile})${otherwise}`,
      );
    }
    const where =
      result.profile === null ? '' : ` (profile: ${result.profile}${result.madeDefault ? ', now the default' : ''})`;
    io.result(result, () =>
      [
        `Base URL:      ${result.baseUrl}`,
        `Organization:  ${result.organization.name}`,
        `Key:           ${result.key.id} (${result.key.mode} mode)`,
        `Stored in:     ${result.configFile}${where}`,
      ].join('\n'),
    );
  },
});
