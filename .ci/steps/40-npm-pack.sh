#!/usr/bin/env bash
# npm pack gives the release's tarball, byte for byte; it holds what an install needs and nothing of the
# repository's own (tests, sources, scripts, CI).
# Needs: node_modules (10-npm-ci.sh), release/ (20-release.sh).
. "$(dirname "$0")/../lib.sh"

need_modules
need_release
npm pack --pack-destination "$SCRATCH" >"$SCRATCH/pack.out" 2>"$SCRATCH/pack.err" || { cat "$SCRATCH/pack.err"; fail 'npm pack'; }
[[ $(tail -n 1 "$SCRATCH/pack.out") == "batch-delivery-bds-$VERSION.tgz" ]] || fail "npm pack wrote $(tail -n 1 "$SCRATCH/pack.out")"
cmp "$SCRATCH/batch-delivery-bds-$VERSION.tgz" "$TARBALL" || fail "npm pack's tarball differs from the release's"
tar -tzf "$TARBALL" | sort >"$SCRATCH/files"
for want in package/package.json package/README.md package/bin/bds.js package/bin/answer-quickly.js package/bin/node-check.js package/bin/package.json \
  package/dist/cli/main.js package/dist/cli/quick-answers.json \
  package/examples/records-2024-05/records.jsonl.gz package/examples/records-2024-05/schema.json package/npm-shrinkwrap.json; do
  grep -qx "$want" "$SCRATCH/files" || fail "$want is not in the tarball"
done
if grep -E '^package/(test|src|release|scripts|bench|\.ci)/' "$SCRATCH/files"; then fail 'the tarball holds files it must not'; fi
echo "ok: $(basename "$TARBALL"), $(wc -l <"$SCRATCH/files") files, $(du -k "$TARBALL" | cut -f1) kB"
