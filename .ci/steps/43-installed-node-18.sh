#!/usr/bin/env bash
# The tarball's bds, installed, on Node 18: the one-line message and exit 2.
# Needs: the npm install of 42-npm-install-offline.sh.
. "$(dirname "$0")/../lib.sh"

need_install
old_node
code=0
PATH="$(dirname "$NODE18"):$PATH" "$PREFIX/bin/bds" --version >"$SCRATCH/old.out" 2>"$SCRATCH/old.err" || code=$?
[[ $code == 2 && ! -s $SCRATCH/old.out && $(cat "$SCRATCH/old.err") == "$OLD_NODE_LINE" ]] || fail "exit $code: $(cat "$SCRATCH/old.err")"
echo "ok: exit 2, $(cat "$SCRATCH/old.err")"
