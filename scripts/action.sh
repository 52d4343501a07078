#!/usr/bin/env bash
# The GitHub Action (action.yml at the repository's root) runs this: `install`, then `deliver`. Kept out of the
# YAML so that test/action.test.ts runs it as a runner would, with the runner's variables set.
#
#   install   puts the release binary for RUNNER_OS/RUNNER_ARCH into RUNNER_TOOL_CACHE/bds/<version>/<arch>/,
#             checked against the SHA-256 that action.yml pins for that version (BDS_PINNED_VERSION,
#             BDS_SHA256_<OS>_<ARCH>) before it ever runs, also when it is already cached; where no binary is
#             pinned for the runner or the version asked for, `npm install` of that version of the package
#   deliver   `bds deliver` with the inputs, its --json result kept; outputs exit-code, batch-ids, result
#
# Inputs come as INPUT_* variables; the key only ever as BDS_API_KEY (masked first), never on a command line.
set -euo pipefail

error() {
  printf '::error title=bds action::%s\n' "$*"
  exit 1
}

bin_dir() { printf '%s\n' "$RUNNER_TOOL_CACHE/bds/$VERSION/$1"; }

VERSION=${INPUT_VERSION:-$BDS_PINNED_VERSION}

install() {
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
    local var="BDS_SHA256_${os^^}_${arch^^}"
    pinned=${!var:-}
  fi
  if [[ -z $pinned ]]; then
    install_from_npm
    return
  fi
  local dir
  dir=$(bin_dir "$os-$arch")
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
  use "$dir" "$exe"
}

install_from_npm() {
  local prefix
  prefix=$(bin_dir npm)
  if [[ ! -x $prefix/bin/bds ]]; then
    echo "no binary pinned for ${RUNNER_OS:-?} ${RUNNER_ARCH:-?} and bds $VERSION: npm install -g @batch-delivery/bds@$VERSION"
    npm install -g --prefix "$prefix" --no-fund --no-audit "@batch-delivery/bds@$VERSION" || error "npm install @batch-delivery/bds@$VERSION failed"
  fi
  use "$prefix/bin" bds
}

# verify FILE SHA256 WHAT: the file's SHA-256 must be the pinned one; a mismatch deletes it and fails the step.
verify() {
  local got
  if command -v sha256sum >/dev/null; then got=$(sha256sum "$1"); else got=$(shasum -a 256 "$1"); fi
  got=${got%% *}
  if [[ $got != "$2" ]]; then
    rm -f "$1"
    error "$3 has SHA-256 $got, not $2 as action.yml pins for bds $VERSION: refused, not run"
  fi
}

# use FOLDER EXECUTABLE: the deliver step runs FOLDER/EXECUTABLE; later steps find bds in PATH.
use() {
  printf 'BDS_ACTION_BIN=%s\n' "$1/$2" >>"$GITHUB_ENV"
  if [[ -n ${GITHUB_PATH:-} ]]; then printf '%s\n' "$1" >>"$GITHUB_PATH"; fi
}

deliver() {
  local bds=${BDS_ACTION_BIN:-bds}
  local args=(deliver)
  local folder
  # One folder per line (or separated by spaces): a multi-line input is how several months are given.
  while read -r -a words; do
    for folder in "${words[@]}"; do args+=("$folder"); done
  done <<<"${INPUT_FOLDERS:-}"
  ((${#args[@]} > 1)) || error 'the input folders is empty'
  [[ -z ${INPUT_PERIOD:-} ]] || args+=(--period "$INPUT_PERIOD")
  [[ -z ${INPUT_SOURCE:-} ]] || args+=(--source "$INPUT_SOURCE")
  [[ -z ${INPUT_BASE_URL:-} ]] || args+=(--base-url "$INPUT_BASE_URL")
  [[ ${INPUT_WAIT:-false} != true ]] || args+=(--wait)
  [[ -z ${INPUT_FAIL_ON:-} ]] || args+=(--fail-on "$INPUT_FAIL_ON")
  if [[ -n ${INPUT_ARGS:-} ]]; then
    local extra
    read -r -a extra <<<"$INPUT_ARGS"
    args+=("${extra[@]}")
  fi
  args+=(--json)
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
install)
  # The key is masked before anything could print it.
  if [[ -n ${INPUT_API_KEY:-} ]]; then echo "::add-mask::$INPUT_API_KEY"; fi
  install
  ;;
deliver) deliver ;;
*) error "usage: action.sh install|deliver" ;;
esac
