#!/usr/bin/env bash
# The .deb in a Debian 12 root: installed with dpkg, bds --version --verbose, man bds, the bash completion,
# removed with dpkg -r, every file with it.
# Needs: release/ (20-release.sh), debootstrap (00-packages.sh) unless the root is cached in
# ~/.cache/bds-ci; root (unshare, mount and chroot).
. "$(dirname "$0")/../lib.sh"

need_release
# The root: debootstrap (minbase, with man-db and bash-completion, and libatomic1, which bds links) from the
# mirror apt is set up with here, kept as a tar in the cache between runs and unpacked afresh for each run.
BOOKWORM=${XDG_CACHE_HOME:-$HOME/.cache}/bds-ci/debian-12-minbase.tar
if [[ ! -f $BOOKWORM ]]; then
  need_commands debootstrap
  mirror=$(sed -nE 's/^URIs:[[:space:]]*([^[:space:]]+).*/\1/p; s/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+).*/\2/p' \
    /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -n 1)
  [[ -n $mirror ]] || fail 'no Debian mirror in /etc/apt/sources.list*'
  echo "debootstrap bookworm from $mirror (once; cached in $BOOKWORM)"
  started=$SECONDS
  debootstrap --variant=minbase --include=man-db,bash-completion,libatomic1 bookworm "$SCRATCH/bookworm" "$mirror" >"$SCRATCH/debootstrap.log" 2>&1 ||
    { tail -n 30 "$SCRATCH/debootstrap.log"; fail 'debootstrap'; }
  mkdir -p "$(dirname "$BOOKWORM")"
  tar -C "$SCRATCH/bookworm" -cf "$BOOKWORM.part" . && mv "$BOOKWORM.part" "$BOOKWORM"
  echo "debootstrap took $((SECONDS - started))s"
  rm -rf "$SCRATCH/bookworm"
fi
DEB_ROOT=$SCRATCH/bookworm
mkdir -p "$DEB_ROOT"
tar -C "$DEB_ROOT" -xf "$BOOKWORM"
cp "release/bds_${VERSION}_amd64.deb" "$DEB_ROOT/tmp/"
# in_root COMMAND...: COMMAND in the root, with /proc and /dev of a mount namespace of its own.
in_root() {
  unshare --mount --fork sh -c 'mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" && root=$1 && shift && exec chroot "$root" "$@"' \
    sh "$DEB_ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb "$@"
}
in_root dpkg -i "/tmp/bds_${VERSION}_amd64.deb" >"$SCRATCH/dpkg.out" 2>&1 || { cat "$SCRATCH/dpkg.out"; fail 'dpkg -i'; }
echo "ok: $(grep -m1 '^Setting up' "$SCRATCH/dpkg.out")"
in_root bds --version --verbose >"$SCRATCH/verbose.out" || fail 'bds --version --verbose in the root'
grep -qx "bds:      $VERSION" "$SCRATCH/verbose.out" && grep -qx 'install:  binary' "$SCRATCH/verbose.out" || fail "bds --version --verbose: $(cat "$SCRATCH/verbose.out")"
echo "ok: /usr/bin/bds --version --verbose: $(tr -s ' \n' ' ' <"$SCRATCH/verbose.out")"
in_root sh -c 'MANWIDTH=80 man --warnings bds | col -b' >"$SCRATCH/man.out" 2>"$SCRATCH/man.err" || { cat "$SCRATCH/man.err"; fail 'man bds'; }
[[ ! -s $SCRATCH/man.err ]] || fail "man bds warns: $(cat "$SCRATCH/man.err")"
grep -q '^NAME' "$SCRATCH/man.out" && grep -q 'bds deliver \[options\] <dir...>' "$SCRATCH/man.out" || fail "man bds: $(head -n 20 "$SCRATCH/man.out")"
echo "ok: man bds renders, $(wc -l <"$SCRATCH/man.out") lines, no warning"
# _completion_loader answers 124 ("try again") when it has loaded a completion.
in_root bash -c '. /usr/share/bash-completion/bash_completion && { _completion_loader bds || true; } && complete -p bds &&
  COMP_WORDS=(bds del) COMP_CWORD=1 && _bds && printf "%s\n" "${COMPREPLY[@]}"' >"$SCRATCH/complete.out" 2>&1 || { cat "$SCRATCH/complete.out"; fail 'the bash completion'; }
[[ $(cat "$SCRATCH/complete.out") == $'complete -o filenames -F _bds bds\ndeliver' ]] || fail "the bash completion: $(cat "$SCRATCH/complete.out")"
echo 'ok: bash-completion loads /usr/share/bash-completion/completions/bds on demand: bds del<TAB> is deliver'
in_root dpkg -r bds >"$SCRATCH/dpkg.out" 2>&1 || { cat "$SCRATCH/dpkg.out"; fail 'dpkg -r bds'; }
left=$(in_root dpkg-query -W -f='${Status}' bds 2>/dev/null || true)
[[ $left == *not-installed* || $left == 'deinstall ok config-files' || -z $left ]] || fail "dpkg -r left bds as: $left"
for gone in usr/bin/bds usr/share/man/man1/bds.1.gz usr/share/bash-completion/completions/bds usr/share/doc/bds; do
  [[ ! -e $DEB_ROOT/$gone ]] || fail "dpkg -r left /$gone"
done
echo 'ok: dpkg -r bds removes every file it installed'
rm -rf "$DEB_ROOT"
