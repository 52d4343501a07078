// bds whoami: which organization and key the settings point at, checked against the API.

import type { WhoamiResult } from '../../core/service.js';
import { defineCommand } from '../command.js';
import type { CommonFlags } from '../command.js';

export default defineCommand<CommonFlags, WhoamiResult>({
  name: 'whoami',
  description: 'show the organization, key and settings in use',
  async run(op) {
    const { whoami } = await import('../../core/service.js');
    return whoami(op);
  },
  print(io, result) {
    if (result.key.mode === 'test') io.notice('this is a test key: its batches never become billable');
    io.result(result, () =>
      [
        `Base URL:      ${result.baseUrl}`,
        `Organization:  ${result.organization.name}`,
        `Key:           ${result.key.id} (${result.key.mode} mode)`,
        `Key from:      ${result.keySource}`,
        ...(result.profile ? [`Profile:       ${result.profile}`] : []),
      ].join('\n'),
    );
  },
});
