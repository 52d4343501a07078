#!/usr/bin/env bash
# The release: sha256sum -c SHA256SUMS, the SBOM's shape (scripts/ci/check-sbom.js), and both Linux binaries'
# --version --verbose (install binary, their platform; the arm64 one under qemu-aarch64).
# Needs: release/ (20-release.sh), qemu-user (00-packages.sh).
. "$(dirname "$0")/../lib.sh"

need_release
need_qemu
(cd release && sha256sum -c SHA256SUMS) || fail 'sha256sum -c SHA256SUMS'
node scripts/ci/check-sbom.js "release/bds-$VERSION.sbom.cdx.json" || fail 'the SBOM'
for binary in "$BIN" "$ARM"; do
  runner=()
  [[ $binary == "$ARM" ]] && runner=("$QEMU" -L /usr/aarch64-linux-gnu)
  "${runner[@]}" "$binary" --version --verbose >"$SCRATCH/verbose.out" || fail "$(basename "$binary") --version --verbose"
  arch=${binary##*-}
  grep -qx "install:  binary" "$SCRATCH/verbose.out" && grep -qx "platform: linux-$arch" "$SCRATCH/verbose.out" ||
    fail "$(basename "$binary") --version --verbose: $(cat "$SCRATCH/verbose.out")"
  echo "ok: $(basename "$binary") --version --verbose: $(tr -s ' \n' ' ' <"$SCRATCH/verbose.out")"
done
