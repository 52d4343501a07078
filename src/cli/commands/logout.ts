// bds logout: the key (of a profile) out of the user's config file; keys from elsewhere are named, left alone.

import type { LogoutResult } from '../../core/login.js';
import { defineCommand } from '../command.js';
import type { CommonOptions } from '../command.js';

export default defineCommand<CommonOptions, LogoutResult>({
  name: 'logout',
  description: 'remove the key from your config file',
  async run(op) {
    const { logout } = await import('../../core/login.js');
    return logout(op);
  },
  print(io, result) {
    const where = `${result.configFile}${result.profile === null ? '' : ` (profile: ${result.profile})`}`;
    if (result.remaining)
      io.warn(`bds still has a key, from ${result.remaining}: left alone, since bds did not store it`);
    io.result(result, () => (result.removed ? `Removed the key from ${where}.` : `No key to remove in ${where}.`));
  },
});
