#!/usr/bin/env bash
# The .deb and .rpm packages: lintian and rpmlint (no error, no warning but those each keeps with its reason),
# their files, owners, scripts and requirements, /usr/bin/bds the release's binary; the Homebrew, Scoop and
# winget manifests against SHA256SUMS (scripts/ci/check-manifests.js), ruby -c of the formula.
# Needs: release/ (20-release.sh), lintian, rpm, rpmlint, cpio and ruby (00-packages.sh).
. "$(dirname "$0")/../lib.sh"

need_release
need_commands lintian rpm rpmlint rpm2cpio cpio ruby
DEBS=("bds_${VERSION}_amd64.deb" "bds_${VERSION}_arm64.deb")
RPMS=("bds-$VERSION-1.x86_64.rpm" "bds-$VERSION-1.aarch64.rpm")
# lintian reads the package's own overrides (/usr/share/lintian/overrides/bds, each with its reason:
# scripts/packaging/linux-packages.js); any other error or warning fails.
for deb in "${DEBS[@]}"; do
  lintian --tag-display-limit 0 "release/$deb" >"$SCRATCH/lintian.out" 2>&1 || true
  if grep -E '^[EW]: ' "$SCRATCH/lintian.out"; then fail "lintian: $deb"; fi
  echo "ok: lintian $deb: no error, no warning but the package's overrides ($(grep -c '^[IPX]: ' "$SCRATCH/lintian.out" || true) notes)"
  dpkg-deb --contents "release/$deb" | awk '{print $2 " " $6}' >"$SCRATCH/deb.files"
  for want in 'root/root ./usr/bin/bds' 'root/root ./usr/share/man/man1/bds.1.gz' 'root/root ./usr/share/bash-completion/completions/bds' \
    'root/root ./usr/share/zsh/vendor-completions/_bds' 'root/root ./usr/share/fish/vendor_completions.d/bds.fish' 'root/root ./usr/share/doc/bds/copyright'; do
    grep -qxF "$want" "$SCRATCH/deb.files" || fail "$deb has no ${want#* } owned by root"
  done
done
# rpmlint with the findings we keep filtered out, each with its reason (.ci/rpmlint.toml): none may be left.
for rpm in "${RPMS[@]}"; do
  rpmlint -c "$ROOT/.ci/rpmlint.toml" "release/$rpm" >"$SCRATCH/rpmlint.out" 2>&1 || true
  if grep -E ': [EW]: ' "$SCRATCH/rpmlint.out"; then fail "rpmlint: $rpm"; fi
  grep -q '^ *1 packages and 0 specfiles checked; 0 errors, 0 warnings' "$SCRATCH/rpmlint.out" || { cat "$SCRATCH/rpmlint.out"; fail "rpmlint: $rpm"; }
  echo "ok: rpmlint $rpm: no error, no warning but those .ci/rpmlint.toml keeps"
done
rpm_files=$(printf '%s\n' /usr/bin/bds /usr/share/bash-completion/completions/bds /usr/share/fish/vendor_completions.d/bds.fish \
  /usr/share/licenses/bds/LICENSE /usr/share/licenses/bds/THIRD-PARTY-LICENSES.txt /usr/share/man/man1/bds.1.gz /usr/share/zsh/site-functions/_bds)
for rpm in "${RPMS[@]}"; do
  arch=${rpm%.rpm}
  arch=${arch##*.}
  [[ $(rpm -qp --queryformat '%{NAME} %{VERSION}-%{RELEASE} %{ARCH} %{LICENSE} %{BUILDHOST}' "release/$rpm") == "bds $VERSION-1 $arch MIT reproducible" ]] ||
    fail "$rpm: $(rpm -qp --queryformat '%{NAME} %{VERSION}-%{RELEASE} %{ARCH} %{LICENSE} %{BUILDHOST}' "release/$rpm")"
  rpm -qp --list "release/$rpm" >"$SCRATCH/rpm.files"
  [[ $(cat "$SCRATCH/rpm.files") == "$rpm_files" ]] || fail "$rpm holds: $(tr '\n' ' ' <"$SCRATCH/rpm.files")"
  [[ -z $(rpm -qp --scripts "release/$rpm") ]] || fail "$rpm has scripts: $(rpm -qp --scripts "release/$rpm")"
  rpm -qp --queryformat '[%{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILENAMES}\n]' "release/$rpm" | grep -v ' root:root /' && fail "$rpm: a file not owned by root"
  rpm -qp --requires "release/$rpm" | grep -q '^libc.so.6(GLIBC_2.28)' || fail "$rpm requires: $(rpm -qp --requires "release/$rpm" | tr '\n' ' ')"
  rpm2cpio "release/$rpm" | (cd "$SCRATCH" && rm -rf rpm-root && mkdir rpm-root && cd rpm-root && cpio -id --quiet ./usr/bin/bds)
  binary=release/bds-linux-x64
  [[ $arch == aarch64 ]] && binary=release/bds-linux-arm64
  cmp "$SCRATCH/rpm-root/usr/bin/bds" "$binary" || fail "$rpm: /usr/bin/bds is not $binary"
  echo "ok: $rpm: $(wc -l <"$SCRATCH/rpm.files") files owned by root, no scripts, requires $(rpm -qp --requires "release/$rpm" | grep -c .) capabilities, /usr/bin/bds the release's binary"
done
node scripts/ci/check-manifests.js "$ROOT/release" "$VERSION" || fail 'the manifests'
ruby -c release/bds.rb || fail 'ruby -c release/bds.rb'
