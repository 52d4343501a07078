// The standalone binary's main script (scripts/build-binary.js bundles it): `bds --version` and `bds --help`
// answered at once, and only otherwise the program, bin/bds.js bundled, read from the binary's assets and run.
//
// Why: the binary has no V8 code cache (it would make two builds of a commit differ), so V8 parses whatever
// the main script holds at every start; the program's 2 MB took longer than Node's own start. Kept apart, it
// costs only the commands that need it.
'use strict';
const { answeredQuickly } = require('../bin/answer-quickly.js');

if (!answeredQuickly(process.argv.slice(2))) {
  const { getAsset } = require('node:sea');
  const { compileFunction } = require('node:vm');
  const program = compileFunction(
    getAsset('bds.cjs', 'utf8'),
    ['exports', 'require', 'module', '__filename', '__dirname'],
    {
      filename: 'bds.cjs',
    },
  );
  const bundled = { exports: {} };
  program(bundled.exports, require, bundled, __filename, __dirname);
}
