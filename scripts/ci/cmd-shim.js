#!/usr/bin/env node
// @ts-check
// npm's own cmd-shim, from the npm that runs here, for CI's Windows npm under Wine (.ci/steps/60-wine.sh):
//
//   node scripts/ci/cmd-shim.js NPM_DIR FROM TO    writes TO, TO.cmd and TO.ps1, the shims npm on Windows
//                                                  writes for a global install's bin FROM; NPM_DIR is npm's
//                                                  own folder (the one holding its package.json)

import { createRequire } from 'node:module';
import path from 'node:path';

const [npmDir = '', from = '', to = ''] = process.argv.slice(2);
const cmdShim = createRequire(path.join(npmDir, 'package.json'))('cmd-shim');
await cmdShim(from, to);
