// bds logout: the key (of a profile) out of the user's config file; keys from elsewhere are named, left alone.

import type { LogoutResult } from '../../core/login.js';
import { defineCommand } from '../command.js';
import type { CommonFlags } from '../command.js';

export default defineCommand<CommonFlags, LogoutResult>({
  name: 'logout',
  description: 'remove the key from your config file',
  async run(op) {
    const { logout } = await import('../../core/login.js');
    return logout(op);
  },
  print(io, result) {
    const where = `${result.configFile}${result.profile === null ? '' : ` (profile: ${result.profile})`}`;
    if (result.remainingIn) {
      // Stored by an earlier login, in the same file: named with the logout that removes it.
      const { profile } = result.remainingIn;
      const place =
        profile === null ? `the top level of ${result.configFile}` : `the profile ${profile} of ${result.configFile}`;
      io.warn(
        `bds still has a key, from ${place}: remove it too with bds logout${profile === null ? '' : ` --profile ${profile}`}`,
      );
    } else if (result.remaining) {
      io.warn(`bds still has a key, from ${result.remaining}: left alone, since bds did not store it`);
    }
    io.result(result, () => (result.removed ? `Removed the key from ${where}.` : `No key to remove in ${where}.`));
  },
});
