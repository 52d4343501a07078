#!/usr/bin/env bash
# The GitHub Action (action.yml at the repository's root) runs this: `mask`, `install`, then `deliver`. Kept out of
# the YAML so that test/action.test.ts runs it as a runner would, with the runner's variables set. Written for the
# bash of every runner: Git Bash on Windows, and no bash 4 features (a self-hosted Mac's /bin/bash is 3.2).
#
#   mask      masks the key in the job's log; the only step besides deliver that is given it
#   install   puts the release binary for RUNNER_OS/RUNNER_ARCH into RUNNER_TOOL_CACHE/bds/<version>/<arch>/,
#             checked against the SHA-256 that action.yml pins for that version (BDS_PINNED_VERSION,
#             BDS_SHA256_<OS>_<ARCH>) before it ever runs, also when it is already cached; where no binary is
#             pinned for the runner or the version asked for, `npm install --ignore-scripts` of that exact version
#             into a new folder of this job's RUNNER_TEMP (an npm install is never reused). Outputs `bin` (what
#             deliver runs), `root` (the file or folder it is) and `sha256` (that root's fingerprint)
#   deliver   checks the root's fingerprint again, then `bds deliver` with the inputs, its --json result kept;
#             outputs exit-code, batch-ids, result
#
# Inputs come as INPUT_* variables; the key only ever as BDS_API_KEY (masked first), never on a command line.
set -euo pipefail

error() {
  printf '::error title=bds action::%s\n' "$*"
  exit 1
}

if command -v sha256sum >/dev/null; then SHA256=sha256sum; else SHA256='shasum -a 256'; fi # macOS: shasum

# fingerprint PATH: a file's SHA-256; for a folder, the SHA-256 of its files' names and sums and of its links'
# names and targets, in byte order.
fingerprint() {
  local sum
  if [[ -f $1 ]]; then
    sum=$($SHA256 "$1")
  else
    sum=$(
      cd "$1"
      find . -type f -print0 | LC_ALL=C sort -z | xargs -0 $SHA256
      find . -type l -print0 | LC_ALL=C sort -z | while IFS= read -r -d '' link; do
        printf '%s -> %s\n' "$link" "$(readlink "$link")"
      done
    )
    sum=$(printf '%s\n' "$sum" | $SHA256)
  fi
  printf '%s\n' "${sum%% *}"
}

install() {
  # The version asked for, `0.1.0` or `v0.1.0`; an exact one, so that npm never resolves a range or a tag.
  VERSION=${INPUT_VERSION:-$BDS_PINNED_VERSION}
  VERSION=${VERSION#v}
  [[ $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
    error "the input version is '$INPUT_VERSION': an exact version of bds, such as $BDS_PINNED_VERSION"
  local os arch asset pinned exe=bds
  case "${RUNNER_OS:-}" in
  Linux) os=linux ;;
  macOS) os=darwin ;;
  Windows) os=win ;;
  *) os='' ;;
  esac
  case "${RUNNER_ARCH:-}" in
  X64) arch=x64 ;;
  ARM64) arch=arm64 ;;
  *) arch='' ;;
  esac
  asset="bds-$os-$arch"
  if [[ $os == win ]]; then
    asset+=.exe
    exe=bds.exe
  fi
  pinned=''
  if [[ -n $os && -n $arch && $VERSION == "$BDS_PINNED_VERSION" ]]; then
    local var
    var="BDS_SHA256_$(printf '%s_%s' "$os" "$arch" | tr '[:lower:]' '[:upper:]')"
    pinned=${!var:-}
  fi
  if [[ -z $pinned ]]; then
    install_from_npm "$os"
    return
  fi
  local dir="$RUNNER_TOOL_CACHE/bds/$VERSION/$os-$arch"
  if [[ ! -x $dir/$exe ]]; then
    local url="${BDS_RELEASE_URL:-https://github.com/batch-delivery/bds/releases/download}/v$VERSION/$asset"
    mkdir -p "$RUNNER_TEMP"
    local download
    download=$(mktemp "$RUNNER_TEMP/bds-XXXXXX")
    curl -fsSL --retry 3 -o "$download" "$url" || error "could not download $url"
    verify "$download" "$pinned" "$url"
    mkdir -p "$dir"
    chmod 755 "$download"
    mv "$download" "$dir/$exe"
  fi
  # Every time, the cached one too: a tool cache is a folder anyone on a self-hosted runner may write.
  verify "$dir/$exe" "$pinned" "$dir/$exe"
  echo "bds $VERSION: $dir/$exe (SHA-256 $pinned, as action.yml pins it)"
  use "$dir/$exe" "$dir/$exe" "$pinned"
}

# install_from_npm OS: no binary is pinned for this runner or version. A new folder each time: an npm install
# left in a shared cache could have been changed by anyone, and nothing pins its files. No package's install
# script runs, and the key is not in this step's environment.
install_from_npm() {
  local prefix bin
  mkdir -p "$RUNNER_TEMP"
  prefix=$(mktemp -d "$RUNNER_TEMP/bds-npm-XXXXXX")
  echo "no binary pinned for ${RUNNER_OS:-?} ${RUNNER_ARCH:-?} and bds $VERSION: npm install -g --ignore-scripts @batch-delivery/bds@$VERSION"
  npm install -g --prefix "$prefix" --ignore-scripts --no-fund --no-audit "@batch-delivery/bds@$VERSION" ||
    error "npm install @batch-delivery/bds@$VERSION failed"
  # npm puts a global install's commands in <prefix>/bin, on Windows in <prefix> itself (bds, bds.cmd, bds.ps1).
  if [[ $1 == win ]]; then bin=$prefix/bds; else bin=$prefix/bin/bds; fi
  [[ -f $bin ]] || error "npm install @batch-delivery/bds@$VERSION put no bds in $(dirname "$bin")"
  use "$bin" "$prefix" "$(fingerprint "$prefix")"
}

# verify FILE SHA256 WHAT: the file's SHA-256 must be the pinned one; a mismatch deletes it and fails the step.
verify() {
  local got
  got=$(fingerprint "$1")
  if [[ $got != "$2" ]]; then
    rm -f "$1"
    error "$3 has SHA-256 $got, not $2 as action.yml pins for bds $VERSION: refused, not run"
  fi
}

# use BIN ROOT SHA256: the deliver step runs BIN once ROOT's fingerprint is SHA256 again; later steps find bds in PATH.
use() {
  printf 'bin=%s\nroot=%s\nsha256=%s\n' "$1" "$2" "$3" >>"$GITHUB_OUTPUT"
  if [[ -n ${GITHUB_PATH:-} ]]; then dirname "$1" >>"$GITHUB_PATH"; fi
}

deliver() {
  local bds=${BDS_ACTION_BIN:-} root=${BDS_ACTION_ROOT:-} wait
  [[ -n $bds && -n $root ]] || error 'the install step gave no bds to run'
  # true or false in any case (YAML's true and True both come as text), empty for false.
  wait=$(printf '%s' "${INPUT_WAIT:-}" | tr '[:upper:]' '[:lower:]')
  [[ $wait == true || $wait == false || -z $wait ]] || error "the input wait is '$INPUT_WAIT': true or false"
  local args=(deliver)
  local folder
  # One folder per line (or separated by spaces): a multi-line input is how several months are given. A pattern
  # (out/2023-*) reaches bds as written; bds expands it.
  while read -r -a words; do
    for folder in ${words[@]+"${words[@]}"}; do args+=("$folder"); done
  done <<<"${INPUT_FOLDERS:-}"
  ((${#args[@]} > 1)) || error 'the input folders is empty'
  [[ -z ${INPUT_PERIOD:-} ]] || args+=(--period "$INPUT_PERIOD")
  [[ -z ${INPUT_SOURCE:-} ]] || args+=(--source "$INPUT_SOURCE")
  [[ -z ${INPUT_BASE_URL:-} ]] || args+=(--base-url "$INPUT_BASE_URL")
  [[ $wait != true ]] || args+=(--wait)
  [[ -z ${INPUT_FAIL_ON:-} ]] || args+=(--fail-on "$INPUT_FAIL_ON")
  if [[ -n ${INPUT_ARGS:-} ]]; then
    local extra
    read -r -a extra <<<"$INPUT_ARGS"
    args+=(${extra[@]+"${extra[@]}"})
  fi
  args+=(--json)
  # What runs is what install checked: a file or folder changed since (a shared tool cache) is refused.
  local got
  got=$(fingerprint "$root")
  [[ $got == "${BDS_ACTION_SHA256:-}" ]] ||
    error "$root has changed since the install step (SHA-256 $got, not ${BDS_ACTION_SHA256:-}): refused, not run"
  if [[ -n ${INPUT_API_KEY:-} ]]; then export BDS_API_KEY=$INPUT_API_KEY; fi
  unset INPUT_API_KEY

  local result code=0
  result=$(mktemp "$RUNNER_TEMP/bds-result-XXXXXX")
  "$bds" "${args[@]}" >"$result" || code=$?
  local ids
  ids=$(grep -oE '"id": *"bat_[0-9A-Za-z]+"' "$result" | grep -oE 'bat_[0-9A-Za-z]+' | awk '!seen[$0]++' | paste -sd ' ' -) || true
  {
    printf 'exit-code=%s\n' "$code"
    printf 'batch-ids=%s\n' "$ids"
    local eof="BDS_RESULT_$RANDOM$RANDOM"
    printf 'result<<%s\n%s\n%s\n' "$eof" "$(cat "$result")" "$eof"
  } >>"$GITHUB_OUTPUT"
  cat "$result"
  exit "$code"
}

case "${1:-}" in
mask)
  # Before any step could print the key; install is never given it.
  if [[ -n ${INPUT_API_KEY:-} ]]; then echo "::add-mask::$INPUT_API_KEY"; fi
  ;;
install) install ;;
deliver) deliver ;;
*) error "usage: action.sh mask|install|deliver" ;;
esac
