#!/usr/bin/env bash
# npm test on this machine's Node: build, typecheck, lint, the import check and the whole suite, with the
# browser test of the --html page (test/html-browser.test.ts skips without a browser: not here).
# Needs: node_modules (10-npm-ci.sh), chromium (00-packages.sh).
. "$(dirname "$0")/../lib.sh"

need_modules
need_chromium
echo "npm test on Node $(node --version)"
npm test
