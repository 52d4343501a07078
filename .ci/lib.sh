# What every step of CI (.ci/steps/*.sh) starts with: `. "$(dirname "$0")/../lib.sh"`. It stops the step at
# the first failure, works from the repository's root, and prints the step's time when it ends.
#
# A step's scratch folder is $SCRATCH, emptied when it starts; what a step leaves for later ones (the npm
# install of the tarball, npm's cache) is in $WORK. .ci/run gives every step of a run one fresh $WORK
# (BDS_CI_WORK) and removes it at the end; a step run alone (`bash .ci/steps/50-binary-vs-npm.sh`) uses a
# folder of this clone's own in /tmp, kept between runs, so that it finds what the steps before it left there
# (out of the clone: npm ci empties node_modules/, and vitest would run the tests of a clone inside it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
STEP=$(basename "$0" .sh)
SECONDS=0
WORK=${BDS_CI_WORK:-${TMPDIR:-/tmp}/bds-ci-$(printf %s "$ROOT" | cksum | cut -d' ' -f1)}
SCRATCH=$WORK/$STEP
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

VERSION=$(node -p 'require("./package.json").version')
BINARIES=(bds-linux-x64 bds-linux-arm64 bds-win-x64.exe bds-darwin-x64)
RELEASE_FILES=(SHA256SUMS THIRD-PARTY-LICENSES.txt "batch-delivery-bds-$VERSION.tgz" "bds-$VERSION.sbom.cdx.json" "${BINARIES[@]}"
  "bds-$VERSION-oci.tar" "bds_${VERSION}_amd64.deb" "bds_${VERSION}_arm64.deb" "bds-$VERSION-1.x86_64.rpm" "bds-$VERSION-1.aarch64.rpm"
  bds.rb bds.json BatchDelivery.bds.yaml BatchDelivery.bds.installer.yaml BatchDelivery.bds.locale.en-US.yaml)
BIN=$ROOT/release/bds-linux-x64
ARM=$ROOT/release/bds-linux-arm64
TARBALL=$ROOT/release/batch-delivery-bds-$VERSION.tgz
PREFIX=$WORK/global # the npm install -g of the tarball (41-npm-install.sh)
PACKAGE=$PREFIX/lib/node_modules/@batch-delivery/bds
NPMRC=$WORK/npmrc # npm's user config for the installs: empty (the machine's ~/.npmrc may hold settings npm warns about)
NPM_CACHE=$WORK/npm-cache # npm's cache for them, filled by the first
NO_NODE=$WORK/no-node-bin # the binaries' PATH: an empty folder, no node
SANDBOX_PID=''
AT_EXIT=() # commands the step's end runs, after stopping the sandbox

fail() {
  printf 'FAILED: %s\n' "$*" >&2
  exit 1
}
at_exit() { AT_EXIT+=("$*"); }
step_end() {
  local code=$? command
  if [[ -n $SANDBOX_PID ]]; then kill "$SANDBOX_PID" 2>/dev/null || true; fi
  for command in "${AT_EXIT[@]}"; do eval "$command" || true; done
  if ((code == 0)); then
    printf '=== %s: done in %ds\n' "$STEP" "$SECONDS"
  else
    printf '=== %s: FAILED (exit %d) after %ds\n' "$STEP" "$code" "$SECONDS" >&2
  fi
}
trap step_end EXIT

# What a step needs from the steps before it; each fails saying which step makes it.
need_commands() { # COMMAND...: installed by 00-packages.sh
  local command
  for command in "$@"; do command -v "$command" >/dev/null || fail "$command is not installed (.ci/steps/00-packages.sh installs it)"; done
}
need_modules() { [[ -x node_modules/.bin/vitest ]] || fail 'no node_modules: npm ci first (.ci/steps/10-npm-ci.sh)'; }
need_release() {
  local file
  for file in "${RELEASE_FILES[@]}"; do
    [[ -f release/$file ]] || fail "no release/$file: npm run release first (.ci/steps/20-release.sh)"
  done
}
need_install() { [[ -x $PREFIX/bin/bds ]] || fail "no npm install of the tarball in $PREFIX: run .ci/steps/41-npm-install.sh first"; }

need_chromium() { # BDS_TEST_CHROMIUM: the suite renders the --html page in it (test/html-browser.test.ts)
  need_commands chromium
  BDS_TEST_CHROMIUM=$(command -v chromium)
  export BDS_TEST_CHROMIUM
}
need_qemu() { # QEMU: qemu-aarch64's path (the arm64 binaries run under it with env -i)
  need_commands qemu-aarch64
  QEMU=$(command -v qemu-aarch64)
}

# json FILE PATH: a field of a JSON document (PATH like keys.test), FILE - for stdin.
json() { node scripts/ci/json-field.js "$@"; }
# old_node: NODE18, the pinned Node 18, and OLD_NODE_LINE, all that bds prints on it.
old_node() {
  NODE18=$(node scripts/node-from-npm.js 18)
  OLD_NODE_LINE="bds: Node.js $("$NODE18" -p process.versions.node) is too old; bds needs Node.js 20.19 or newer"
}
# no_node_path: NO_NODE, a PATH in which no node is found.
no_node_path() {
  mkdir -p "$NO_NODE"
  (PATH=$NO_NODE && ! command -v node >/dev/null) || fail "node is reachable through $NO_NODE"
}
# packaged_example: EXAMPLE, the example delivery folder as the release tarball packs it.
packaged_example() {
  tar -xzf "$TARBALL" -C "$SCRATCH" package/examples
  EXAMPLE=$SCRATCH/package/examples/records-2024-05
}

# npm_install PREFIX [npm options...]: npm install -g of the release tarball into PREFIX with npm's config
# NPMRC and cache NPM_CACHE; any warning fails.
npm_install() {
  local prefix=$1
  shift
  npm install -g --prefix "$prefix" --userconfig "$NPMRC" --cache "$NPM_CACHE" "$@" "$TARBALL" \
    >"$SCRATCH/install.out" 2>"$SCRATCH/install.err" || { cat "$SCRATCH/install.out" "$SCRATCH/install.err"; fail 'npm install -g'; }
  cat "$SCRATCH/install.out" "$SCRATCH/install.err"
  if grep -i 'warn' "$SCRATCH/install.out" "$SCRATCH/install.err"; then fail 'npm install -g printed a warning'; fi
}

# sandbox_start: a sandbox on 127.0.0.1 served by the x64 binary (env -i, no node in PATH); sets API (its
# BDS_BASE_URL and BDS_API_KEY, as VAR=value) and SOURCE, its source. The step's end kills it.
sandbox_start() {
  no_node_path
  env -i HOME="$SCRATCH/sandbox-home" PATH="$NO_NODE" "$BIN" sandbox --port 0 --json >"$SCRATCH/sandbox.json" 2>"$SCRATCH/sandbox.err" &
  SANDBOX_PID=$!
  for _ in $(seq 100); do
    grep -q '"sourceId"' "$SCRATCH/sandbox.json" 2>/dev/null && grep -q '^}' "$SCRATCH/sandbox.json" && break
    kill -0 "$SANDBOX_PID" 2>/dev/null || { cat "$SCRATCH/sandbox.err"; fail 'the sandbox did not start'; }
    sleep 0.1
  done
  API=(BDS_BASE_URL="$(json "$SCRATCH/sandbox.json" baseUrl)" BDS_API_KEY="$(json "$SCRATCH/sandbox.json" keys.test)")
  SOURCE=$(json "$SCRATCH/sandbox.json" sourceId)
  echo "sandbox (the binary, pid $SANDBOX_PID): ${API[0]#*=}, source $SOURCE"
}
# sandbox_stop: Ctrl-C stops the binary's sandbox with 130.
sandbox_stop() {
  local code=0
  kill -INT "$SANDBOX_PID"
  wait "$SANDBOX_PID" || code=$?
  SANDBOX_PID=''
  [[ $code == 130 ]] || fail "the sandbox exited $code on SIGINT, not 130"
  echo 'ok: the binary stopped its sandbox on SIGINT with exit 130'
}
# source_id NAME: the id of a new source of the sandbox, registered by the x64 binary.
source_id() {
  mkdir -p "$SCRATCH/sources-home"
  (cd "$SCRATCH/sources-home" && env -i HOME="$SCRATCH/sources-home" PATH="$NO_NODE" "${API[@]}" "$BIN" register-source --name "$1" --json) | json - id
}
# mask_ids FILE: FILE with its batch and source ids masked, for comparing two deliveries' --json.
mask_ids() { sed -E 's/(bat|src)_[0-9a-f]+/\1_…/g' "$1"; }
