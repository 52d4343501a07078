#!/usr/bin/env bash
# npm run release, and release/ holds exactly the release's files.
# Needs: node_modules (10-npm-ci.sh).
. "$(dirname "$0")/../lib.sh"

need_modules
npm run release
[[ $(ls release | sort) == $(printf '%s\n' "${RELEASE_FILES[@]}" | sort) ]] || fail "release/ holds: $(ls release | tr '\n' ' ')"
