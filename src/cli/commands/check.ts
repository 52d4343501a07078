// bds check: the pre-flight of deliver alone, offline, with a preview of what the portal will show reviewers
// (output/check-result.ts). Several folders are checked one after the other (the library's checkMany), one
// result each; exit 2 if any fails.

import type { DeliveryEvent } from '../../core/delivery/events.js';
import { defineCommand } from '../command.js';
import { printCheck, type Checked } from '../output/check-result.js';
import { folderOf, folderOptions, foldersOf, refuseOneFolderFlags, type FolderFlags } from './folder-options.js';

export default defineCommand<FolderFlags, Checked>({
  name: 'check',
  description: 'check folders as deliver would, offline, and preview what reviewers will see',
  arguments: [{ syntax: '<dir...>', description: 'one or more folders written by the scrubber' }],
  options: folderOptions("compare the schema with this source's deliveries only (BDS_SOURCE_ID)"),
  async run(op, io, flags, [dirs]) {
    const folders = foldersOf(dirs, op.runtime);
    refuseOneFolderFlags(folders, flags, 'check');
    const [{ check, checkMany }, { DeliveryView }] = await Promise.all([
      import('../../core/delivery/check.js'),
      import('../output/delivery-view.js'),
    ]);
    const view = new DeliveryView(io, op.runtime.now, op.runtime.cwd);
    // The preview lists the schema changes with the folder they belong to.
    const checking = op.with({
      onEvent: (event: DeliveryEvent) =>
        event.type === 'notice' && event.code === 'schema_changes' ? undefined : view.onEvent(event),
    });
    const result =
      folders.length === 1
        ? await check(folderOf(folders[0]!, flags), checking)
        : await checkMany({ dirs: folders, product: flags.product, sourceId: flags.source }, checking);
    return { dirs: folders, result };
  },
  print: printCheck,
});
