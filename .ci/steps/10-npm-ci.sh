#!/usr/bin/env bash
# npm ci installs and builds, with no warning of install scripts (README.md, "Install": a clone).
# Needs: nothing.
. "$(dirname "$0")/../lib.sh"

echo "npm ci on Node $(node --version)"
npm ci 2>&1 | tee "$SCRATCH/ci.out"
if grep -E 'allowScripts|install-scripts' "$SCRATCH/ci.out"; then fail 'npm ci warned of install scripts'; fi
