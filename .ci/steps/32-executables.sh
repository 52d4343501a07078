#!/usr/bin/env bash
# bds-win-x64.exe and bds-darwin-x64, which nothing here runs: their PE and Mach-O structure, the same SEA blob
# (the same program) as the Linux binaries, and the macOS one's ad-hoc signature, every page hash
# (scripts/ci/check-executables.js).
# Needs: release/ (20-release.sh).
. "$(dirname "$0")/../lib.sh"

need_release
node scripts/ci/check-executables.js "$ROOT/release" || fail 'the Windows and macOS binaries'
