#!/usr/bin/env bash
# The binary and the npm install, each as a user runs it: help, version, usage errors, bad input, whoami, dry
# runs, a delivery of the packaged example each and the re-runs and lists, to a sandbox the binary serves, with
# no node reachable by the binary; their output byte-identical. Ctrl-C stops the sandbox with 130.
# Needs: release/ (20-release.sh), the npm install of 42-npm-install-offline.sh.
. "$(dirname "$0")/../lib.sh"

need_release
need_install
NODE_DIR=$(dirname "$(command -v node)") # the npm install's PATH: its bin/ and a node
EXAMPLE=$PACKAGE/examples/records-2024-05 # the packaged example

# as bin|npm HOME [VAR=value...] -- ARGS...: bds as the binary (env -i, PATH with no node) or as the npm install.
as() {
  local how=$1 home=$2
  shift 2
  local vars=()
  while [[ $1 != -- ]]; do
    vars+=("$1")
    shift
  done
  shift
  mkdir -p "$home"
  if [[ $how == bin ]]; then
    (cd "$home" && env -i HOME="$home" PATH="$NO_NODE" "${vars[@]}" "$BIN" "$@")
  else
    (cd "$home" && env -i HOME="$home" PATH="$PREFIX/bin:$NODE_DIR" "${vars[@]}" bds "$@")
  fi
}
# same HOME [VAR=value...] -- ARGS...: stdout, stderr and the exit code of both must be byte-identical. Only
# what differs between any two runs is masked: the UTC timestamp that starts each progress line on stderr (off
# a terminal), the time a delivery took ("Took: 387 ms", "uploaded 6.69 kB in 64 ms (104.5 kB/s)"), and whether
# the pass was remembered: both share the HOME, so the one that runs second finds the first one's pass.
same() {
  local run
  for run in bin npm; do
    local code=0
    as "$run" "$@" >"$SCRATCH/$run.out" 2>"$SCRATCH/$run.err" || code=$?
    echo "exit $code" >>"$SCRATCH/$run.out"
    sed -i -E -e 's/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z /<time> /' \
      -e 's/^(Took: +)[0-9.]+ m?s$/\1<duration>/' -e 's/ in [0-9.]+ m?s \([0-9.]+ [kMG]?B\/s\)$/ in <duration>/' \
      -e 's/ \(remembered from an earlier pass\)$//' \
      "$SCRATCH/$run.out" "$SCRATCH/$run.err"
  done
  local args=("$@")
  while [[ ${args[0]} != -- ]]; do args=("${args[@]:1}"); done
  if ! cmp -s "$SCRATCH/bin.out" "$SCRATCH/npm.out" || ! cmp -s "$SCRATCH/bin.err" "$SCRATCH/npm.err"; then
    diff -u --label npm-install --label binary "$SCRATCH/npm.out" "$SCRATCH/bin.out" || true
    diff -u --label npm-install --label binary "$SCRATCH/npm.err" "$SCRATCH/bin.err" || true
    fail "bds ${args[*]:1}: the binary's output differs from the npm install's"
  fi
  printf 'identical (%s): bds %s\n' "$(tail -n 1 "$SCRATCH/bin.out")" "${args[*]:1}"
}

sandbox_start
H1=$SCRATCH/h1 HB=$SCRATCH/hb HN=$SCRATCH/hn # the HOMEs: no network, the binary's deliveries, the npm install's
# No network: help, version, usage errors, a missing base URL, a malformed key, bad input.
same "$H1" -- --version
same "$H1" -- --help
same "$H1" -- deliver --help
same "$H1" -- nope
same "$H1" -- deliver "$EXAMPLE" --period 2024-13
same "$H1" -- whoami
same "$H1" BDS_API_KEY=not-a-key BDS_BASE_URL=http://127.0.0.1:9 -- whoami --json
same "$H1" "${API[@]}" BDS_SOURCE_ID="$SOURCE" -- deliver "$SCRATCH/no-such-folder" --period 2024-05
same "$H1" "${API[@]}" BDS_SOURCE_ID="$SOURCE" -- deliver "$EXAMPLE" --period 2099-01
# The API: whoami, a dry run, then a delivery by each (each to its own source, the ids masked), then re-runs
# and lists.
same "$H1" "${API[@]}" -- whoami
same "$H1" "${API[@]}" -- whoami --json
same "$H1" "${API[@]}" BDS_SOURCE_ID="$SOURCE" -- deliver "$EXAMPLE" --period 2024-05 --dry-run
same "$H1" "${API[@]}" BDS_SOURCE_ID="$SOURCE" -- deliver "$EXAMPLE" --period 2024-05 --dry-run --json
code=0
as bin "$HB" "${API[@]}" BDS_SOURCE_ID="$SOURCE" -- deliver "$EXAMPLE" --period 2024-05 --json >"$SCRATCH/bin.json" 2>"$SCRATCH/bin.log" || code=$?
[[ $code == 0 ]] || { cat "$SCRATCH/bin.log"; fail "the binary's delivery: exit $code"; }
grep -q ' confirming bat_' "$SCRATCH/bin.log" || fail "the binary's delivery shows no steps"
other=$(as npm "$HN" "${API[@]}" -- register-source --name 'npm install' --json | json - id)
as npm "$HN" "${API[@]}" BDS_SOURCE_ID="$other" -- deliver "$EXAMPLE" --period 2024-05 --json >"$SCRATCH/npm.json" 2>"$SCRATCH/npm.log" ||
  { cat "$SCRATCH/npm.log"; fail "the npm install's delivery"; }
mask_ids "$SCRATCH/bin.json" >"$SCRATCH/bin.masked"
mask_ids "$SCRATCH/npm.json" >"$SCRATCH/npm.masked"
cmp -s "$SCRATCH/bin.masked" "$SCRATCH/npm.masked" || { diff -u "$SCRATCH/npm.masked" "$SCRATCH/bin.masked"; fail 'deliver --json differs'; }
grep -q '"status": "received"' "$SCRATCH/bin.json" || fail "not received: $(cat "$SCRATCH/bin.json")"
echo "identical but for the ids: bds deliver $EXAMPLE --period 2024-05 --json ($(json "$SCRATCH/bin.json" batch.id) and $(json "$SCRATCH/npm.json" batch.id), received)"
same "$HB" "${API[@]}" BDS_SOURCE_ID="$SOURCE" -- deliver "$EXAMPLE" --period 2024-05
same "$HB" "${API[@]}" BDS_SOURCE_ID="$SOURCE" -- deliver "$EXAMPLE" --period 2024-05 --json
same "$HB" "${API[@]}" BDS_SOURCE_ID="$SOURCE" -- deliver "$EXAMPLE" --period 2024-05 --quiet
same "$HB" "${API[@]}" BDS_SOURCE_ID="$SOURCE" -- list
same "$HB" "${API[@]}" BDS_SOURCE_ID="$SOURCE" -- list --json
sandbox_stop
