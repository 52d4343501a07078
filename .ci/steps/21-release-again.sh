#!/usr/bin/env bash
# The release again in a fresh clone at another path (npm ci, npm run release): byte for byte the same.
# Needs: release/ (20-release.sh) built from the commit checked out (a clone has no uncommitted change).
. "$(dirname "$0")/../lib.sh"

need_release
git clone -q "$ROOT" "$SCRATCH/rebuild"
(cd "$SCRATCH/rebuild" && npm ci >"$SCRATCH/rebuild.log" 2>&1 && npm run release >>"$SCRATCH/rebuild.log" 2>&1) ||
  { cat "$SCRATCH/rebuild.log"; fail 'the second release build'; }
echo "built in $SCRATCH/rebuild (commit $(git -C "$SCRATCH/rebuild" rev-parse --short HEAD))"
for file in "${RELEASE_FILES[@]}"; do
  cmp "$SCRATCH/rebuild/release/$file" "release/$file" || fail "release/$file differs from $SCRATCH/rebuild/release/$file"
  printf 'identical: %s (%s bytes)\n' "$file" "$(stat -c %s "release/$file")"
done
rm -rf "$SCRATCH/rebuild"
