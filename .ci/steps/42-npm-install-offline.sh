#!/usr/bin/env bash
# A second npm install -g of the release tarball, with --offline, from npm's cache: the same tree, and the
# installed bds says its version and that it is the tarball's install.
# Needs: release/ (20-release.sh), npm's cache of 41-npm-install.sh.
. "$(dirname "$0")/../lib.sh"

need_release
[[ -d $NPM_CACHE ]] || fail "no npm cache in $NPM_CACHE: run .ci/steps/41-npm-install.sh first"
rm -rf "$PREFIX"
npm_install "$PREFIX" --offline
node scripts/check-installed.js "$PREFIX/lib" || fail 'npm install -g --offline did not install the tree npm-shrinkwrap.json locks'
[[ $("$PREFIX/bin/bds" --version) == "$VERSION" ]] || fail 'bds --version'
echo "ok: $PREFIX/bin/bds --version is $("$PREFIX/bin/bds" --version)"
"$PREFIX/bin/bds" --version --verbose >"$SCRATCH/verbose.out"
grep -qx 'install:  tarball' "$SCRATCH/verbose.out" || fail "bds --version --verbose: $(cat "$SCRATCH/verbose.out")"
echo "ok: bds --version --verbose: $(tr -s ' \n' ' ' <"$SCRATCH/verbose.out")"
