#!/usr/bin/env bash
# Builds the Debian package (what `make deb` runs): .build-deb/podbridge_<version>_<arch>.deb.
#
# The files are laid out by scripts/install.sh (the one place for the layout) into a staging
# root, with PREFIX=/usr and the unit and the rule where Debian's own go:
#   /usr/lib/podbridge/podbridge (+ podbridge_HubAPI.resources)  the stripped static-Swift binary
#   /usr/bin/podbridge                                            a link to it
#   /lib/systemd/system/podbridge.service, /lib/udev/rules.d/70-podbridge.rules
# then this script adds what only the package has: /etc/podbridge/config.json (a conffile),
# the docs, copyright and changelog, the lintian overrides and the maintainer scripts
# (packaging/debian/). dpkg-shlibdeps names the C libraries' packages, dpkg-gencontrol writes
# the control file, dpkg-deb builds the package.
#
# The version: HubVersion.current (Sources/Hub/HubVersion.swift), what `podbridge --version`
# prints. A build of a commit that is not tagged v<that version> gets +git<commits>.g<hash>
# after it, so each commit's package is newer than the one before (an upgrade, as dpkg
# orders versions), and a release later bumps HubVersion past them all.
#
# Environment: PODBRIDGE_BINARY (package this binary instead of building one; its
# podbridge_HubAPI.resources beside it), DEB_HOST_ARCH (the binary's Debian architecture, for
# a binary built for another one; default this machine's), DEB_OUT (the output folder,
# default .build-deb), DEBFULLNAME and DEBEMAIL (the maintainer; default the last commit's author).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

out=${DEB_OUT:-$repo/.build-deb}
arch=${DEB_HOST_ARCH:-$(dpkg --print-architecture)}
upstream=$(sed -n 's/^ *package static let current = "\(.*\)"$/\1/p' Sources/Hub/HubVersion.swift)
[ -n "$upstream" ] || { echo "no version in Sources/Hub/HubVersion.swift" >&2; exit 1; }
version=$upstream
commit="" when=$(date -u -R)
if git rev-parse --verify -q HEAD > /dev/null 2>&1; then
  commit=$(git rev-parse --short=10 HEAD)
  when=$(git log -1 --format=%aD)
  [ "$(git rev-parse --is-shallow-repository)" = false ] \
    || echo "warning: a shallow clone: the version counts only its depth (git fetch --unshallow)" >&2
  if [ "$(git tag --points-at HEAD | grep -cx "v$upstream")" -eq 0 ]; then
    version=$upstream+git$(git rev-list --count HEAD).g$commit
  fi
fi
maintainer="${DEBFULLNAME:-$(git log -1 --format=%an 2> /dev/null || echo podbridge maintainers)} <${DEBEMAIL:-$(git log -1 --format=%ae 2> /dev/null)}>"
# Reproducible: the files' times and the archive's are the commit's.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2> /dev/null || date +%s)}

# dpkg-shlibdeps and dpkg-gencontrol work in a source tree's debian/ folder, as debhelper's do.
work=$out/work
rm -rf "$work"
mkdir -p "$work/debian"
root=$work/debian/podbridge
DESTDIR=$root PREFIX=/usr SYSCONFDIR=/etc SYSTEMDUNITDIR=/lib/systemd/system UDEVRULESDIR=/lib/udev/rules.d \
  scripts/install.sh
"$root/usr/lib/podbridge/podbridge" --version > /dev/null 2>&1 || [ -n "${DEB_HOST_ARCH:-}" ] \
  || { echo "the packaged binary does not run" >&2; exit 1; }

# The settings: `{}` (JSON has no comments, and the hub refuses keys it does not know), root's
# alone since it may come to hold passwords and tokens; the unit reads it as root. Every key,
# with its default and what it does: /usr/share/doc/podbridge/configuration.md.
install -D -m 0600 packaging/debian/config.json "$root/etc/podbridge/config.json"
doc=$root/usr/share/doc/podbridge
install -d "$doc"
install -m 0644 README.md "$doc/README.md"
for f in install configuration device api mqtt schedule smart-wake store export-format; do
  install -m 0644 "docs/$f.md" "$doc/$f.md"
done
install -m 0644 packaging/debian/copyright "$doc/copyright"
cat > "$work/debian/changelog" << EOF
podbridge ($version) unstable; urgency=medium

  * podbridge $upstream${commit:+, built from commit $commit}.

 -- $maintainer  $when
EOF
gzip -9 -n -c "$work/debian/changelog" > "$doc/changelog.gz"
# gzip -n leaves the time out of the archive; the file's own time is the commit's.
touch -d "@$SOURCE_DATE_EPOCH" "$doc/changelog.gz"
install -D -m 0644 packaging/debian/lintian-overrides "$root/usr/share/lintian/overrides/podbridge"

install -d "$root/DEBIAN"
for s in postinst prerm postrm; do install -m 0755 "packaging/debian/$s" "$root/DEBIAN/$s"; done
echo /etc/podbridge/config.json > "$root/DEBIAN/conffiles"
sed "s|@MAINTAINER@|$maintainer|" packaging/debian/control > "$work/debian/control"
(
  cd "$work"
  dpkg-shlibdeps -Tdebian/podbridge.substvars debian/podbridge/usr/lib/podbridge/podbridge
  # Installed-Size from the files, as dpkg-gencontrol counts them.
  dpkg-gencontrol -ppodbridge -Pdebian/podbridge -Tdebian/podbridge.substvars -v"$version" -DArchitecture="$arch"
)
(cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums"
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

deb=$out/podbridge_${version}_$arch.deb
rm -f "$out"/podbridge_*.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" > /dev/null
echo "built $deb ($(du -k "$deb" | cut -f1) KiB; installed $(dpkg-deb -f "$deb" Installed-Size) KiB)"
