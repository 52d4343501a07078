#!/usr/bin/env bash
# The machine's packages CI needs, installed with apt-get when missing: binutils for both architectures,
# qemu-user and the arm64 runtime libraries, wine64, podman and runc, chromium (the suite's browser test of the
# --html page), rpm, rpmlint, cpio, lintian, debootstrap and ruby.
# Needs: apt-get (through sudo when not root, as on a GitHub runner).
. "$(dirname "$0")/../lib.sh"

APT_PACKAGES=(binutils binutils-aarch64-linux-gnu qemu-user libc6-arm64-cross libstdc++6-arm64-cross libgcc-s1-arm64-cross
  libatomic1-arm64-cross wine64 podman runc chromium fonts-liberation rpm rpmlint cpio lintian debootstrap ruby)
missing=()
for package in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=()
  if ((EUID != 0)); then SUDO=(sudo); fi
  "${SUDO[@]}" apt-get update -q >"$SCRATCH/apt.log" 2>&1 || { cat "$SCRATCH/apt.log"; fail 'apt-get update'; }
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$SCRATCH/apt.log" 2>&1 ||
    { cat "$SCRATCH/apt.log"; fail "apt-get install ${missing[*]}"; }
fi
need_commands qemu-aarch64 chromium
echo "ok: ${APT_PACKAGES[*]}"
