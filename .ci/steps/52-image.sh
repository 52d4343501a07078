#!/usr/bin/env bash
# The OCI image, loaded and run with podman (else its root file system under unshare and chroot): --version,
# check of the packaged example, deliveries to a sandbox with the key from a variable and from a mounted file,
# a read-only root file system with only the volume writable; with podman, its name (bds:<version>),
# deliveries as other users (an arbitrary uid in group 0, another group with group 0 added) into named
# volumes, and the README's container commands as written (scripts/ci/readme-container-commands.js); the arm64
# image's own files (binary and libraries) under qemu-aarch64. Then action.yml against the schema of action
# metadata, and its pins against the release's binaries (a note, not a failure: they are pinned at release).
# Needs: release/ (20-release.sh), podman and runc, qemu-user (00-packages.sh); root.
. "$(dirname "$0")/../lib.sh"

need_release
need_qemu
packaged_example
IMAGE_TAR=$ROOT/release/bds-$VERSION-oci.tar
# rootfs ARCH DIR: the image's root file system for linux/ARCH, unpacked from the layout by its index.
rootfs() {
  mkdir -p "$SCRATCH/oci" "$2"
  [[ -f $SCRATCH/oci/index.json ]] || tar -xf "$IMAGE_TAR" -C "$SCRATCH/oci"
  local layer
  layer=$(node scripts/ci/image-layer.js "$SCRATCH/oci" "$1") || fail "the image has no linux/$1 image"
  tar -xzf "$layer" -C "$2" --same-owner
  for forbidden in bin/sh usr/bin/apt-get usr/bin/dpkg; do [[ ! -e $2/$forbidden && ! -L $2/$forbidden ]] || fail "the $1 image holds /$forbidden"; done
}

sandbox_start
IMAGE_SOURCE=$(source_id image)
KEY=${API[1]#*=}
printf '%s\n' "$KEY" >"$SCRATCH/image-key"
chmod 600 "$SCRATCH/image-key"
IMAGE_HOME=$SCRATCH/image-home # the volume: the records of the deliveries
mkdir -p "$IMAGE_HOME"
chown 10001:0 "$SCRATCH/image-key" "$IMAGE_HOME" 2>/dev/null || sudo chown 10001:0 "$SCRATCH/image-key" "$IMAGE_HOME"
export CONTAINERS_CONF=$SCRATCH/containers.conf # podman 4.3: no rlimits crun or this machine refuses
printf '[containers]\ndefault_ulimits = []\n' >"$CONTAINERS_CONF"
PODMAN=(podman --runtime runc --cgroup-manager cgroupfs)
if command -v podman >/dev/null && "${PODMAN[@]}" load -i "$IMAGE_TAR" >"$SCRATCH/load.out" 2>&1 &&
  "${PODMAN[@]}" run --rm "bds:$VERSION" --version >"$SCRATCH/podman.out" 2>&1; then
  echo "podman $(podman --version | cut -d' ' -f3): $(tail -n 1 "$SCRATCH/load.out")"
  grep -qx "Loaded image: localhost/bds:$VERSION" "$SCRATCH/load.out" || fail "the image is not named bds:$VERSION: $(tail -n 1 "$SCRATCH/load.out")"
  # image [podman run options...] -- ARGS...
  image() {
    local opts=()
    while [[ $1 != -- ]]; do opts+=("$1"); shift; done
    shift
    "${PODMAN[@]}" run --rm --network host -v "$EXAMPLE:/data/records-2024-05:ro" "${opts[@]}" "bds:$VERSION" "$@"
  }
  VOLUME=(-v "$IMAGE_HOME:/home/bds")
  RO=(--read-only)
  KEYFILE=(-v "$SCRATCH/image-key:/run/secrets/bds-key:ro" -e BDS_API_KEY_FILE=/run/secrets/bds-key)
  VAR=(-e "${API[0]}" -e "BDS_SOURCE_ID=$IMAGE_SOURCE")
  KEYVAR=(-e "BDS_API_KEY=$KEY")
else
  echo "podman cannot run a container here ($(cat "$SCRATCH/load.out" "$SCRATCH/podman.out" 2>/dev/null | tail -n 1)): the image's root file system under unshare and chroot"
  ROOT_X64=$SCRATCH/rootfs-x64
  CHROOT=$(command -v chroot)
  rootfs amd64 "$ROOT_X64"
  mkdir -p "$ROOT_X64/data/records-2024-05" "$ROOT_X64/run/secrets"
  : >"$ROOT_X64/run/secrets/bds-key"
  # image [VAR=value...] -- ARGS...: the image's user and environment by hand, in a mount namespace of its own
  # where the root file system is read-only and only the volume (and the example, the key file) are mounted.
  image() {
    local vars=()
    while [[ $1 != -- ]]; do vars+=("$1"); shift; done
    shift
    unshare --mount --fork sh -c 'set -e; mount --bind "$2" "$2"; mount -o remount,bind,ro "$2"
      mount --bind "$1" "$2/data/records-2024-05"; mount --bind "$3" "$2/home/bds"; mount --bind "$4" "$2/run/secrets/bds-key"
      shift 4; exec "$@"' sh "$EXAMPLE" "$ROOT_X64" "$IMAGE_HOME" "$SCRATCH/image-key" \
      env -i PATH=/usr/local/bin HOME=/home/bds XDG_CONFIG_HOME=/home/bds/.config XDG_STATE_HOME=/home/bds/.local/state \
      XDG_CACHE_HOME=/home/bds/.cache TMPDIR=/home/bds SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt "${vars[@]}" \
      "$CHROOT" --userspec=10001:0 "$ROOT_X64" /usr/local/bin/bds "$@"
  }
  VOLUME=()
  RO=()
  KEYFILE=(BDS_API_KEY_FILE=/run/secrets/bds-key)
  VAR=("${API[0]}" "BDS_SOURCE_ID=$IMAGE_SOURCE")
  KEYVAR=("BDS_API_KEY=$KEY")
fi
[[ $(image -- --version) == "$VERSION" ]] || fail "the image's bds --version"
echo "ok: the image's bds --version is $VERSION"
image -- check /data/records-2024-05 --period 2024-05 >"$SCRATCH/image-check.out" 2>&1 || { cat "$SCRATCH/image-check.out"; fail "the image's bds check"; }
echo "ok: bds check of the packaged example, in the image"
image "${VAR[@]}" "${VOLUME[@]}" "${KEYVAR[@]}" -- deliver /data/records-2024-05 --period 2024-05 --json >"$SCRATCH/image.json" 2>"$SCRATCH/image.log" ||
  { cat "$SCRATCH/image.log"; fail "the image's delivery, key from a variable"; }
grep -q '"status": "received"' "$SCRATCH/image.json" || fail "not received: $(cat "$SCRATCH/image.json")"
echo "ok: a delivery from the image, key from BDS_API_KEY, records in the volume: $(json "$SCRATCH/image.json" batch.id)"
# Again with the root file system read-only, the volume the only place written, the key from a mounted file:
# the volume's records (the pass remembered, the batch delivered) skip the month.
image "${VAR[@]}" "${VOLUME[@]}" "${RO[@]}" "${KEYFILE[@]}" -- deliver /data/records-2024-05 --period 2024-05 --json >"$SCRATCH/image2.json" 2>"$SCRATCH/image2.log" ||
  { cat "$SCRATCH/image2.log"; fail "the image's delivery, read-only, key from a file"; }
[[ $(json "$SCRATCH/image2.json" batch.id) == $(json "$SCRATCH/image.json" batch.id) ]] || fail "the re-run: $(cat "$SCRATCH/image2.json")"
grep -q '"skipped": true' "$SCRATCH/image2.json" && grep -q 'remembered from an earlier pass' "$SCRATCH/image2.log" ||
  fail "the re-run did not use the records in the volume: $(cat "$SCRATCH/image2.json" "$SCRATCH/image2.log")"
echo "ok: read-only root, key from a mounted file: already delivered as $(json "$SCRATCH/image2.json" batch.id); the volume holds $(find "$IMAGE_HOME" -type f | sed "s|$IMAGE_HOME/||" | tr '\n' ' ')"
if [[ ${VOLUME[*]} ]]; then
  # Other users, each with a named volume of its own as its home: OpenShift's arbitrary uid in group 0, and a
  # user of another group (`--user "$(id -u):$(id -g)"` on a desktop) with group 0 added.
  for user in 123456:0 '4242:4242 --group-add 0'; do
    read -r uid_gid add_group <<<"$user"
    volume=bds-ci-home-${uid_gid%%:*}
    "${PODMAN[@]}" volume rm -f "$volume" >/dev/null 2>&1 || true
    user_source=$(source_id "image as $uid_gid")
    image -e "${API[0]}" -e "BDS_SOURCE_ID=$user_source" "${KEYVAR[@]}" --user "$uid_gid" ${add_group:+--group-add 0} -v "$volume:/home/bds" -- \
      deliver /data/records-2024-05 --period 2024-05 --json >"$SCRATCH/image-user.json" 2>"$SCRATCH/image-user.log" ||
      { cat "$SCRATCH/image-user.log"; fail "the image's delivery as --user $user"; }
    grep -q '"status": "received"' "$SCRATCH/image-user.json" || fail "not received as --user $user: $(cat "$SCRATCH/image-user.json")"
    records=$("${PODMAN[@]}" volume inspect "$volume" --format '{{.Mountpoint}}')/.local/state/bds
    [[ $(find "$records" -type f -user "${uid_gid%%:*}" | wc -l) -gt 0 ]] || fail "no delivery record of uid ${uid_gid%%:*} in the volume $volume"
    "${PODMAN[@]}" volume rm -f "$volume" >/dev/null
    echo "ok: a delivery from the image as --user $user, records in a named volume: $(json "$SCRATCH/image-user.json" batch.id)"
  done
  # The README's container commands as written (podman with this machine's runtime options): the load, and the
  # delivery to a sandbox on this machine, its variables set as the sandbox's export line sets them.
  node scripts/ci/readme-container-commands.js README.md >"$SCRATCH/readme-container.sh" || fail "the README's container commands"
  README_DIR=$SCRATCH/readme-container
  mkdir -p "$README_DIR/out"
  cp -r "$EXAMPLE" "$README_DIR/out/2024-05"
  chmod -R a+rX "$README_DIR"
  ln -s "$IMAGE_TAR" "$README_DIR/bds-$VERSION-oci.tar"
  "${PODMAN[@]}" rmi -f "bds:$VERSION" >/dev/null
  "${PODMAN[@]}" volume rm -f bds-home >/dev/null 2>&1 || true
  readme_source=$(source_id readme)
  (cd "$README_DIR" && export "${API[@]}" BDS_SOURCE_ID="$readme_source" &&
    podman() { command podman --runtime runc --cgroup-manager cgroupfs "$@"; } && set -x && . "$SCRATCH/readme-container.sh") >"$SCRATCH/readme.out" 2>&1 ||
    { cat "$SCRATCH/readme.out"; fail "the README's container commands"; }
  grep -q '^Delivered bat_.* (received)\.$' "$SCRATCH/readme.out" || fail "the README's container delivery: $(cat "$SCRATCH/readme.out")"
  "${PODMAN[@]}" volume rm -f bds-home >/dev/null
  echo "ok: the README's container commands as written: $(grep -c '^+* command podman' "$SCRATCH/readme.out") of them, the month received"
fi
# The arm64 image: its binary with its own libraries (no sysroot of this machine's) under qemu-aarch64.
ROOT_ARM=$SCRATCH/rootfs-arm64
rootfs arm64 "$ROOT_ARM"
[[ $(stat -c '%u:%g %a' "$ROOT_ARM/home/bds" "$ROOT_ARM/home/bds/.local/state" | sort -u) == '10001:0 775' ]] ||
  fail "the image's home is not bds's and group 0's, mode 0775: $(stat -c '%n %u:%g %a' "$ROOT_ARM/home/bds" "$ROOT_ARM/home/bds/.local/state")"
[[ $(env -i PATH="$NO_NODE" "$QEMU" -L "$ROOT_ARM" "$ROOT_ARM/usr/local/bin/bds" --version) == "$VERSION" ]] || fail "the arm64 image's bds --version"
(cd "$EXAMPLE/.." && env -i HOME="$SCRATCH/arm-image-home" PATH="$NO_NODE" "$QEMU" -L "$ROOT_ARM" "$ROOT_ARM/usr/local/bin/bds" check records-2024-05 --period 2024-05 >"$SCRATCH/arm-image.out" 2>&1) ||
  { cat "$SCRATCH/arm-image.out"; fail "the arm64 image's bds check"; }
echo "ok: the arm64 image's bds --version and check, on the image's own libraries under qemu-aarch64"
cmp -s "$ROOT_ARM/usr/local/bin/bds" "$ARM" || fail "the arm64 image's bds is not release/bds-linux-arm64"
# action.yml against the schema of action metadata (SchemaStore's), by a validator npm has; not a dependency.
npx -y @action-validator/cli@0.6.0 action.yml || fail 'action.yml does not validate'
echo 'ok: action.yml validates (@action-validator/cli)'
node scripts/pin-action.js --check || echo 'note: action.yml pins another build (pinned at release time: docs/releasing.md)'
sandbox_stop
