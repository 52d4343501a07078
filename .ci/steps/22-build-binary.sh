#!/usr/bin/env bash
# npm run build:binary gives the binaries (and their licences) of npm run release, byte for byte.
# Needs: release/ (20-release.sh).
. "$(dirname "$0")/../lib.sh"

need_release
for file in "${BINARIES[@]}" THIRD-PARTY-LICENSES.txt; do cp -p "release/$file" "$SCRATCH/"; done
npm run build:binary
for file in "${BINARIES[@]}" THIRD-PARTY-LICENSES.txt; do
  cmp "release/$file" "$SCRATCH/$file" || fail "npm run build:binary: release/$file differs from npm run release's"
done
echo "identical: ${BINARIES[*]}, THIRD-PARTY-LICENSES.txt"
