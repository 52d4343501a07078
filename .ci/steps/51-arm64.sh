#!/usr/bin/env bash
# bds-linux-arm64 under qemu-aarch64, as the x64 binary does it (stdout, stderr and exit code byte-identical):
# --version, --help, `check` of a generated 5 MiB file (scripts/ci/big-example.js: worker threads, the
# WebAssembly validator) and of a broken one, and a delivery of it to a sandbox the x64 binary serves.
# Needs: release/ (20-release.sh), qemu-user and the arm64 runtime libraries (00-packages.sh).
. "$(dirname "$0")/../lib.sh"

need_release
need_qemu
packaged_example
no_node_path
ARM_ENV=() # the variables both binaries run with
# arm64 RUN_HOME ARGS...: the arm64 binary as a user runs it, env -i and no node in PATH, under qemu.
arm64() {
  local home=$1
  shift
  mkdir -p "$home"
  (cd "$home" && env -i HOME="$home" PATH="$NO_NODE" "${ARM_ENV[@]}" "$QEMU" -L /usr/aarch64-linux-gnu "$ARM" "$@")
}
x64() {
  local home=$1
  shift
  mkdir -p "$home"
  (cd "$home" && env -i HOME="$home" PATH="$NO_NODE" "${ARM_ENV[@]}" "$BIN" "$@")
}
# both NAME ARGS...: the arm64 and the x64 binary, each in a fresh HOME (no remembered pass); stdout, stderr
# (progress timestamps masked) and exit code byte-identical.
both() {
  local name=$1 run arm_took
  shift
  for run in arm64 x64; do
    local code=0 started=$SECONDS
    "$run" "$SCRATCH/$name-$run" "$@" >"$SCRATCH/$name.$run.out" 2>"$SCRATCH/$name.$run.err" || code=$?
    echo "exit $code" >>"$SCRATCH/$name.$run.out"
    sed -i -E 's/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z /<time> /' "$SCRATCH/$name.$run.err"
    [[ $run == arm64 ]] && arm_took=$((SECONDS - started))
  done
  if ! cmp -s "$SCRATCH/$name.arm64.out" "$SCRATCH/$name.x64.out" || ! cmp -s "$SCRATCH/$name.arm64.err" "$SCRATCH/$name.x64.err"; then
    diff -u --label x64 --label arm64 "$SCRATCH/$name.x64.out" "$SCRATCH/$name.arm64.out" || true
    diff -u --label x64 --label arm64 "$SCRATCH/$name.x64.err" "$SCRATCH/$name.arm64.err" || true
    fail "bds $*: the arm64 binary's output differs from the x64 one's"
  fi
  printf 'identical (%s, arm64 in %ds): bds %s\n' "$(tail -n 1 "$SCRATCH/$name.arm64.out")" "$arm_took" "$*"
}

[[ $(arm64 "$SCRATCH/a0" --version) == "$VERSION" ]] || fail 'bds-linux-arm64 --version'
echo "ok: bds-linux-arm64 --version is $VERSION"
both help --help
both deliver-help deliver --help
# A plain .jsonl over 4 MiB, then the same folder with one broken line near the end.
BIG=$SCRATCH/big/records-2024-05
mkdir -p "$BIG"
node scripts/ci/big-example.js "$EXAMPLE" "$BIG"
both check check "$BIG" --period 2024-05 --json
grep -q '"record_count": *[0-9]' "$SCRATCH/check.arm64.out" || fail "check --json: $(cat "$SCRATCH/check.arm64.out")"
BROKEN=$SCRATCH/big/broken-2024-05
cp -r "$BIG" "$BROKEN"
sed -i '$s/}$/,}/' "$BROKEN/records.jsonl" # the last line: {"...": ...,}
both broken check "$BROKEN" --period 2024-05
grep -q '^exit 2$' "$SCRATCH/broken.arm64.out" || fail "a broken line: $(cat "$SCRATCH/broken.arm64.out" "$SCRATCH/broken.arm64.err")"
# A delivery of the 5 MiB folder to the sandbox, each binary to a source of its own.
sandbox_start
ARM_ENV=("${API[@]}" BDS_SOURCE_ID="$(source_id arm64)")
started=$SECONDS
arm64 "$SCRATCH/a2" deliver "$BIG" --period 2024-05 --json >"$SCRATCH/arm.json" 2>"$SCRATCH/arm.log" || { cat "$SCRATCH/arm.log"; fail 'the arm64 delivery'; }
arm_took=$((SECONDS - started))
ARM_ENV=("${API[@]}" BDS_SOURCE_ID="$(source_id x64)")
x64 "$SCRATCH/a4" deliver "$BIG" --period 2024-05 --json >"$SCRATCH/x64.json" 2>"$SCRATCH/x64.log" || { cat "$SCRATCH/x64.log"; fail 'the x64 delivery'; }
mask_ids "$SCRATCH/arm.json" >"$SCRATCH/arm.masked"
mask_ids "$SCRATCH/x64.json" >"$SCRATCH/x64.masked"
cmp -s "$SCRATCH/arm.masked" "$SCRATCH/x64.masked" || { diff -u "$SCRATCH/x64.masked" "$SCRATCH/arm.masked"; fail 'deliver --json differs between arm64 and x64'; }
grep -q '"status": "received"' "$SCRATCH/arm.json" || fail "not received: $(cat "$SCRATCH/arm.json")"
echo "identical but for the ids (arm64 in ${arm_took}s): bds deliver $BIG --period 2024-05 --json ($(json "$SCRATCH/arm.json" batch.id), received, sha256 $(json "$SCRATCH/arm.json" sha256))"
sandbox_stop
