#!/usr/bin/env bash
# An old Node (18, this source) gets bds's one-line message and exit 2.
# Needs: nothing (bin/bds.js checks the version before anything else loads).
. "$(dirname "$0")/../lib.sh"

old_node
code=0
"$NODE18" bin/bds.js deliver examples/records-2024-05 >"$SCRATCH/old.out" 2>"$SCRATCH/old.err" || code=$?
[[ $code == 2 ]] || fail "exit $code, not 2"
[[ ! -s $SCRATCH/old.out ]] || fail "stdout is not empty: $(cat "$SCRATCH/old.out")"
[[ $(cat "$SCRATCH/old.err") == "$OLD_NODE_LINE" && $(wc -l <"$SCRATCH/old.err") == 1 ]] || fail "stderr: $(cat "$SCRATCH/old.err")"
echo "ok: $OLD_NODE_LINE (exit 2)"
