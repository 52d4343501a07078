#!/usr/bin/env bash
# npm install -g of the release tarball with no warning: runtime dependencies only, exactly the versions its
# npm-shrinkwrap.json locks (scripts/check-installed.js), dist/ as packed. Leaves the install in $PREFIX and
# npm's cache in $NPM_CACHE (.ci/lib.sh) for the steps after it.
# Needs: release/ (20-release.sh).
. "$(dirname "$0")/../lib.sh"

need_release
rm -rf "$PREFIX" "$NPM_CACHE" # a fresh cache
: >"$NPMRC"
npm_install "$PREFIX"
for dev in typescript vitest esbuild postject @types/node assemblyscript binaryen; do
  [[ ! -e $PACKAGE/node_modules/$dev ]] || fail "the install holds the dev dependency $dev"
done
cmp -s "$PACKAGE/dist/cli/main.js" <(tar -xzOf "$TARBALL" package/dist/cli/main.js) || fail 'dist/ changed on install'
echo "ok: no dev dependency installed, dist/ as packed"
node scripts/check-installed.js "$PREFIX/lib" || fail 'npm install -g did not install the tree npm-shrinkwrap.json locks'
cmp -s "$PACKAGE/npm-shrinkwrap.json" npm-shrinkwrap.json || fail "the tarball's npm-shrinkwrap.json is not the repository's"
