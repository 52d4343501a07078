#!/usr/bin/env bash
# The standalone binary: the spawned tests (signals, pipes, a terminal, the sandbox banner, cron) run against
# bds-linux-x64.
# Needs: node_modules (10-npm-ci.sh), release/ (20-release.sh).
. "$(dirname "$0")/../lib.sh"

need_modules
need_release
BDS_TEST_BIN=$BIN ./node_modules/.bin/vitest run test/spawn.test.ts test/interrupt.test.ts test/terminal.test.ts test/sandbox-command.test.ts test/recipes.test.ts
