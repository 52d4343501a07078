// bds check: the pre-flight of deliver alone, offline, with a preview of what the portal will show reviewers
// (output/check-result.ts). Several folders are checked one after the other (the library's checkMany), one
// result each; exit 2 if any fails. --html also writes the sign-off page (html-option.ts), failed or not.

import type { DeliveryEvent } from '../../core/events.js';
import { defineCommand } from '../command.js';
import { printCheck, type Checked } from '../output/check-result.js';
import { folderOptions, foldersOf, refuseOneFolderFlags, type FolderFlags } from './folder-options.js';
import { runCheck, htmlOption, writeReportPage, type HtmlFlags } from './html-option.js';

export default defineCommand<FolderFlags & HtmlFlags, Checked>({
  name: 'check',
  description: 'check folders as deliver would, offline, and preview what reviewers will see',
  arguments: [{ syntax: '<dir...>', description: 'one or more folders written by the scrubber' }],
  options: [...folderOptions("compare the schema with this source's deliveries only (BDS_SOURCE_ID)"), htmlOption],
  async run(op, io, flags, [dirs]) {
    const folders = foldersOf(dirs, op.runtime);
    refuseOneFolderFlags(folders, flags, 'check');
    const { DeliveryView } = await import('../output/delivery-view.js');
    const view = new DeliveryView(io, op.runtime.now, op.runtime.cwd);
    // The preview lists the schema changes with the folder they belong to.
    const checking = op.with({
      onEvent: (event: DeliveryEvent) =>
        event.type === 'notice' && event.code === 'schema_changes' ? undefined : view.onEvent(event),
    });
    const checkRun = await runCheck(checking, folders, flags);
    if (flags.html !== undefined) await writeReportPage(op, io, flags.html, 'check', folders, checkRun);
    if ('thrown' in checkRun) throw checkRun.thrown;
    return { dirs: folders, result: checkRun.result };
  },
  print: printCheck,
});
