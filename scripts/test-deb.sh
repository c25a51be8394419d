#!/usr/bin/env bash
# The Debian package as users install it (`make test-deb`, part of `make test`; as root):
#  1. the packages of the previous commit and of this one (HEAD as committed), built with each
#     commit's scripts/build-deb.sh in one clone, .build-deb/clone: the previous commit's first
#     (a full release build in a fresh clone), then this one's, which rebuilds only the modules
#     the commit changed; a package already built for its commit is reused;
#  2. lintian on this commit's package: no error and no warning (the ones that do not apply are
#     overridden, each with its reason, in packaging/debian/lintian-overrides);
#  3. a fresh Debian bookworm chroot (debootstrap --variant=minbase from Debian's mirror, the
#     finished tree cached in .build-deb/cache/ so a rerun starts in seconds; CI starts without);
#  4. there `apt-get install ./podbridge_….deb`: the binary, its unit and rule and the conffile
#     in place, the maintainer scripts silent where systemd is not running, `podbridge
#     --version` (the package's version), `podbridge devices`, a short `podbridge simulate`
#     whose ground truth `podbridge analyze` stages; then purge;
#  5. the previous commit's package installed, a night stored by its hub (the virtual pod at
#     600x) and the configuration edited; the upgrade to this commit's keeps both and the new
#     binary reads the night; remove keeps the database and the configuration; purge removes
#     both.
# A commit without scripts/build-deb.sh (the one before the package existed) is packaged with
# this checkout's.
#
# Environment: PODBRIDGE_DEB (the package under test instead of HEAD's, e.g. `make deb`'s with
# changes not committed), PODBRIDGE_PREVIOUS_DEB (the package to upgrade from instead of the
# previous commit's), DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
export PATH=/opt/swift/usr/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Root for debootstrap, chroot and mounts: through sudo when run as a user (as install-deps.sh
# does); what it makes stays in .build-deb, apart from .build.
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo > /dev/null || { echo "test-deb.sh needs root (debootstrap, chroot, mounts)" >&2; exit 1; }
  exec sudo --preserve-env=PODBRIDGE_DEB,PODBRIDGE_PREVIOUS_DEB,PODBRIDGE_BINARY,DEBIAN_MIRROR "$0" "$@"
fi
out=$repo/.build-deb
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
step() { echo "== $*"; }

one_deb() { # the one podbridge_*.deb in folder $1
  local found=("$1"/podbridge_*.deb)
  [ ${#found[@]} -eq 1 ] && [ -f "${found[0]}" ] || { echo "expected one podbridge_*.deb in $1: ${found[*]}" >&2; exit 1; }
  echo "${found[0]}"
}
clone=$out/clone
package_of() { # commit $1's package, built in the clone into folder $2 (kept while it is that commit's)
  local commit=$1 dest=$2 short start
  short=$(git rev-parse --short=10 "$commit")
  if compgen -G "$dest/podbridge_*.g${short}_*.deb" > /dev/null; then one_deb "$dest"; return; fi
  if [ ! -d "$clone/.git" ]; then
    rm -rf "$clone"
    # A clone sharing this repository's objects: nothing in this repository changes.
    git clone --quiet --shared --no-checkout "$repo" "$clone" >&2
  fi
  git -C "$clone" fetch --quiet "$repo" "$commit" >&2
  git -C "$clone" checkout --quiet --force --detach "$commit" >&2
  git -C "$clone" clean --quiet -fdx -e .build >&2
  if [ ! -x "$clone/scripts/build-deb.sh" ]; then
    echo "(commit $short has no scripts/build-deb.sh: packaged with this checkout's)" >&2
    mkdir -p "$clone/packaging"
    cp -R packaging/debian "$clone/packaging/"
    cp scripts/build-deb.sh scripts/install.sh "$clone/scripts/"
    [ -f "$clone/docs/install.md" ] || cp docs/install.md "$clone/docs/"
  fi
  start=$(date +%s)
  # The build's progress lines in a log; its end shown if it fails.
  (cd "$clone" && DEB_OUT=$dest scripts/build-deb.sh) > "$dest.log" 2>&1 \
    || { tail -n 40 "$dest.log" >&2; echo "commit $short's package failed (log: $dest.log)" >&2; exit 1; }
  grep -E '^built ' "$dest.log" >&2
  echo "(commit $short's package: $(($(date +%s) - start)) s)" >&2
  one_deb "$dest"
}

# Both packages from the one clone: the previous commit's first, then this one's, which
# rebuilds only the modules the commit changed (a second full release build would not fit CI).
previous=${PODBRIDGE_PREVIOUS_DEB:-}
if [ -z "$previous" ] || [ -z "${PODBRIDGE_DEB:-}" ]; then
  # The versions count the commits: a shallow clone's count is its depth. A shallow clone (CI's,
  # perhaps) is made whole from where it came from, if that is reachable.
  if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    git fetch --quiet --unshallow 2> /dev/null || echo "(could not fetch the whole history)" >&2
  fi
  [ "$(git rev-parse --is-shallow-repository)" = false ] && git rev-parse -q --verify HEAD~1 > /dev/null \
    || { echo "test-deb.sh needs the whole history (a shallow clone? git fetch --unshallow)" >&2; exit 1; }
fi
if [ -z "$previous" ]; then
  step "the previous commit's package ($(git log -1 --format='%h %s' HEAD~1 | cut -c1-70))"
  previous=$(package_of "$(git rev-parse HEAD~1)" "$out/previous-deb")
fi
new=${PODBRIDGE_DEB:-}
if [ -z "$new" ]; then
  step "this commit's package ($(git log -1 --format='%h %s' HEAD | cut -c1-70))"
  [ -z "$(git status --porcelain --untracked-files=no)" ] \
    || echo "(the commit as committed: changes not committed are not in it; PODBRIDGE_DEB=… to test another package)"
  new=$(package_of "$(git rev-parse HEAD)" "$out/head-deb")
fi
new_version=$(dpkg-deb -f "$new" Version)
upstream=$(sed -n 's/^ *package static let current = "\(.*\)"$/\1/p' Sources/Hub/HubVersion.swift)

step "lintian $(basename "$new")"
lintian_log=$(mktemp)
status=0
lintian --fail-on error,warning --display-info "$new" > "$lintian_log" 2>&1 || status=$?
cat "$lintian_log"
[ "$status" -eq 0 ] && ! grep -qE '^[EW]: ' "$lintian_log" && pass "lintian: no error, no warning" \
  || fail "lintian (exit $status)"
rm -f "$lintian_log"

previous_version=$(dpkg-deb -f "$previous" Version)
dpkg --compare-versions "$previous_version" lt "$new_version" \
  || { echo "the previous package's version $previous_version is not older than $new_version" >&2; exit 1; }

step "a fresh Debian bookworm chroot"
cache=$out/cache/bookworm-minbase.tar
mkdir -p "$out/cache"
if [ ! -s "$cache" ]; then
  base=$(mktemp -d /var/tmp/podbridge-debootstrap.XXXXXX)
  debootstrap --variant=minbase bookworm "$base" "$mirror" > "$out/cache/debootstrap.log" 2>&1 \
    || { tail -20 "$out/cache/debootstrap.log" >&2; rm -rf --one-file-system "$base"; exit 1; }
  rm -f "$base"/var/cache/apt/archives/*.deb
  tar -C "$base" --numeric-owner -cf "$cache.part" . && mv "$cache.part" "$cache"
  rm -rf --one-file-system "$base"
fi
root=$(mktemp -d /var/tmp/podbridge-chroot.XXXXXX)
mounts=()
cleanup() {
  local m failed=""
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    m=${mounts[$i]}
    umount "$m" 2> /dev/null || umount -l "$m" 2> /dev/null || true
    mountpoint -q "$m" && failed=yes
  done
  # Never a recursive delete through a mount.
  if [ -z "$failed" ]; then rm -rf --one-file-system "$root"; else echo "left $root (still mounted)" >&2; fi
}
trap cleanup EXIT
tar -C "$root" --numeric-owner -xf "$cache"
# mktemp made the root 0700: apt drops to its _apt user to download, who must reach /var/cache/apt.
chmod 755 "$root"
mount -t proc proc "$root/proc" && mounts+=("$root/proc")
# A devpts of its own for the virtual pod's pseudo-terminals, apart from the host's.
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$root/dev/pts" && mounts+=("$root/dev/pts")
rm -f "$root/dev/ptmx" && ln -s pts/ptmx "$root/dev/ptmx"
cp /etc/resolv.conf "$root/etc/resolv.conf"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
in_root apt-get update -qq
cp "$new" "$previous" "$root/root/"
new_name=$(basename "$new") previous_name=$(basename "$previous")
apt_install() { # the way a user installs a downloaded package: apt-get install ./FILE
  in_root sh -c "cd /root && apt-get install -y -q -o Dpkg::Use-Pty=0 ./$1" > "$root/root/apt.log" 2>&1 \
    || { tail -30 "$root/root/apt.log" >&2; return 1; }
}
installed_version() { in_root dpkg-query -W -f='${Version}' podbridge 2> /dev/null || true; }

step "apt-get install ./$new_name"
apt_install "$new_name" && [ "$(installed_version)" = "$new_version" ] && pass "installed $new_version with its dependencies" \
  || fail "apt-get install ./$new_name"
# What podbridge's postinst printed: from its "Setting up" to the next package's or trigger's.
ours=$(awk '/^Setting up podbridge /{ on = 1; next } /^(Setting up|Processing triggers) /{ on = 0 } on' "$root/root/apt.log")
grep -q "^Setting up podbridge " "$root/root/apt.log" && ! grep -qE "^(E|W): " "$root/root/apt.log" && [ -z "$ours" ] \
  && pass "its maintainer scripts ran silently where systemd is not running; no error or warning from apt" \
  || fail "apt's log: $(grep -E "^(E|W): " "$root/root/apt.log"); podbridge's postinst: $ours"
version=$(in_root podbridge --version 2>&1) || true
[ "$version" = "$upstream" ] && [ "${new_version%%+*}" = "$upstream" ] \
  && pass "podbridge --version: $version, the package's $new_version" || fail "podbridge --version: '$version' (package $new_version)"
[ -L "$root/usr/bin/podbridge" ] && [ -x "$root/usr/lib/podbridge/podbridge" ] \
  && [ -f "$root/usr/lib/podbridge/podbridge_HubAPI.resources/Dashboard/index.html" ] \
  && pass "the binary in /usr/lib/podbridge with its web files, linked from /usr/bin" || fail "binary layout"
grep -qx 'ExecStart=/usr/bin/podbridge run --no-console' "$root/lib/systemd/system/podbridge.service" 2> /dev/null \
  && pass "the unit in /lib/systemd/system starts /usr/bin/podbridge" || fail "the unit"
cmp -s udev/70-podbridge.rules "$root/lib/udev/rules.d/70-podbridge.rules" && pass "the udev rule in /lib/udev/rules.d" \
  || fail "the udev rule"
[ "$(stat -c '%a %U' "$root/etc/podbridge/config.json" 2> /dev/null)" = "600 root" ] \
  && in_root dpkg-query --showformat='${Conffiles}' -W podbridge | grep -q ' /etc/podbridge/config.json ' \
  && pass "/etc/podbridge/config.json: a conffile, root's alone" || fail "the conffile"
in_root podbridge devices > "$root/root/devices.log" 2>&1 && pass "podbridge devices: $(head -1 "$root/root/devices.log")" \
  || fail "podbridge devices: $(cat "$root/root/devices.log")"
# A night of an hour at 3600x, nobody listening (the pod's queue drops what no hub reads);
# its ground truth's heartbeats, staged.
if in_root podbridge simulate --seed 7 --speed 3600 --duration 1 --left occupied --right empty \
    --in-bed 5 --out-of-bed 5 --link /root/pod --truth /root/truth > "$root/root/simulate.log" 2>&1 \
  && in_root podbridge analyze --beats /root/truth/beats-left.csv --json /root/night.json > "$root/root/analyze.log" 2>&1 \
  && grep -q '^session 1: ' "$root/root/analyze.log" && grep -q '"epochs"' "$root/root/night.json"; then
  pass "podbridge simulate + podbridge analyze: $(grep -m1 '^session 1: ' "$root/root/analyze.log")"
else
  fail "simulate + analyze: $(tail -n 5 "$root/root/simulate.log" "$root/root/analyze.log" 2>&1)"
fi
in_root apt-get purge -y -q podbridge > "$root/root/apt.log" 2>&1 && [ -z "$(installed_version)" ] \
  && [ ! -e "$root/usr/lib/podbridge" ] && [ ! -e "$root/etc/podbridge" ] && pass "purged again: nothing left" \
  || fail "purge after the fresh install: $(tail -5 "$root/root/apt.log")"

step "upgrade: apt-get install ./$previous_name, a night stored, then ./$new_name"
apt_install "$previous_name" && [ "$(installed_version)" = "$previous_version" ] && pass "installed $previous_version" \
  || fail "apt-get install ./$previous_name"
# The old hub and a virtual pod at 600x: an hour in bed, stored and exported as the night ends.
# chroot itself in the background (not in_root, a function: a subshell), so $! is the hub.
chroot "$root" env -i PATH=/usr/bin:/bin LANG=C.UTF-8 podbridge run --no-console --no-api --log-level info \
  --state-dir /var/lib/podbridge --path /root/night-pod --clock-speed 600 > "$root/root/hub.log" 2>&1 &
hub=$!
in_root podbridge simulate --seed 11 --speed 600 --duration 1.5 --left occupied --right empty --in-bed 5 --out-of-bed 5 \
  --link /root/night-pod > "$root/root/night-pod.log" 2>&1 || fail "the old package's virtual pod: $(tail -3 "$root/root/night-pod.log")"
# Stored when the hub's clock has seen the bed empty for the session's gap (20 simulated
# minutes, 2 s here); a hub that never stores it fails the check below after 5 minutes.
for _ in $(seq 600); do
  compgen -G "$root/var/lib/podbridge/exports/*" > /dev/null && break
  kill -0 "$hub" 2> /dev/null || break
  sleep 0.5
done
kill -TERM "$hub" 2> /dev/null || true
wait "$hub" || true
night=$(ls "$root/var/lib/podbridge/exports" 2> /dev/null | head -1) || true
[ -n "$night" ] && pass "the old hub stored and exported a night: $night" || fail "no night stored: $(tail -5 "$root/root/hub.log")"
# The sessions the old binary reads, by their ids (the export's first column), to find again.
in_root podbridge export --all --state-dir /var/lib/podbridge --format csv 2> /dev/null | tail -n +2 | cut -d, -f1 | sort -u > "$root/root/sessions.old" || true
echo '{ "logLevel": "debug" }' > "$root/etc/podbridge/config.json"
apt_install "$new_name" && [ "$(installed_version)" = "$new_version" ] && grep -qF "Unpacking podbridge ($new_version) over ($previous_version)" "$root/root/apt.log" \
  && pass "upgraded $previous_version -> $new_version" || fail "the upgrade"
in_root podbridge export --all --state-dir /var/lib/podbridge --format csv > "$root/root/export.csv" 2> "$root/root/export.log" \
  && [ -s "$root/root/sessions.old" ] && [ -z "$(tail -n +2 "$root/root/export.csv" | cut -d, -f1 | sort -u | comm -23 "$root/root/sessions.old" -)" ] \
  && pass "the new binary reads the old hub's night from the kept database: $(tr '\n' ' ' < "$root/root/sessions.old")" \
  || fail "the night after the upgrade: $(cat "$root/root/export.log")"
[ "$(cat "$root/etc/podbridge/config.json")" = '{ "logLevel": "debug" }' ] && pass "the edited configuration kept" \
  || fail "the configuration after the upgrade: $(cat "$root/etc/podbridge/config.json")"

step "apt-get remove podbridge"
in_root apt-get remove -y -q podbridge > "$root/root/apt.log" 2>&1 && [ ! -e "$root/usr/bin/podbridge" ] \
  && [ ! -e "$root/lib/systemd/system/podbridge.service" ] && pass "removed: binary, unit and rule gone" \
  || fail "remove: $(tail -5 "$root/root/apt.log")"
[ -s "$root/var/lib/podbridge/podbridge.sqlite" ] && [ -f "$root/etc/podbridge/config.json" ] \
  && pass "remove keeps /var/lib/podbridge (the database) and /etc/podbridge/config.json" || fail "remove lost the data"
step "apt-get purge podbridge"
in_root apt-get purge -y -q podbridge > "$root/root/apt.log" 2>&1 || fail "purge: $(tail -5 "$root/root/apt.log")"
[ ! -e "$root/var/lib/podbridge" ] && [ ! -e "$root/etc/podbridge" ] && [ -z "$(installed_version)" ] \
  && pass "purge removes /var/lib/podbridge and /etc/podbridge" || fail "purge left: $(ls -d "$root"/var/lib/podbridge "$root"/etc/podbridge 2>&1)"

[ "$failures" -eq 0 ] && echo "package checks passed" || { echo "$failures package check(s) failed" >&2; exit 1; }
