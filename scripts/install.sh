#!/usr/bin/env bash
# Installs the hub on this machine (what `make install` runs, as root):
#   $PREFIX/lib/podbridge/podbridge                the binary, with the Swift runtime linked in
#                                                  (--static-swift-stdlib), so it runs without
#                                                  the toolchain; Debian's C libraries stay shared
#   $PREFIX/lib/podbridge/podbridge_HubAPI.resources
#                                                  the dashboard and the OpenAPI document, which
#                                                  the binary reads from beside itself
#   $PREFIX/bin/podbridge                          a link to the binary
#   $SYSCONFDIR/systemd/system/podbridge.service   the unit, its ExecStart pointed at that binary
#   $SYSCONFDIR/udev/rules.d/70-podbridge.rules    the rule that hands the pod to the daemon and
#                                                  starts the unit when a pod appears
# then reloads systemd and udev, and replays the add event of a pod already plugged in.
# `scripts/install.sh --uninstall` (`make uninstall`) stops the service and removes what was
# installed; the database in /var/lib/podbridge and /etc/podbridge/config.json are kept.
#
# Environment: PREFIX (/usr/local), SYSCONFDIR (/etc), DESTDIR (empty: this machine; set, a
# staging root, and nothing is reloaded), PODBRIDGE_BINARY (install this binary instead of
# building one), SYSTEMDUNITDIR ($SYSCONFDIR/systemd/system) and UDEVRULESDIR
# ($SYSCONFDIR/udev/rules.d): the Debian package (scripts/build-deb.sh) puts the unit and the
# rule where a distribution's own go, /lib/systemd/system and /lib/udev/rules.d.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/opt/swift/usr/bin:$PATH

PREFIX=${PREFIX:-/usr/local}
SYSCONFDIR=${SYSCONFDIR:-/etc}
DESTDIR=${DESTDIR:-}
BIN=$DESTDIR$PREFIX/bin/podbridge
LIB=$DESTDIR$PREFIX/lib/podbridge
# Where SwiftPM puts the HubAPI module's resources, beside the binary it builds.
RESOURCES=podbridge_HubAPI.resources
UNIT=$DESTDIR${SYSTEMDUNITDIR:-$SYSCONFDIR/systemd/system}/podbridge.service
RULE=$DESTDIR${UDEVRULESDIR:-$SYSCONFDIR/udev/rules.d}/70-podbridge.rules
# The pod's USB id (udev/70-podbridge.rules, firmware-protocol.md section 1).
VENDOR=1209 PRODUCT=0001

live() { [ -z "$DESTDIR" ]; }
systemd_running() { live && [ -d /run/systemd/system ] && command -v systemctl > /dev/null; }

reload() {
  if systemd_running; then systemctl daemon-reload; fi
  if live && command -v udevadm > /dev/null && udevadm control --reload 2> /dev/null; then
    # A pod plugged in before the rule existed gets it now, as if plugged in again.
    udevadm trigger --action=add --subsystem-match=usb --attr-match=idVendor=$VENDOR --attr-match=idProduct=$PRODUCT || true
    udevadm trigger --action=add --subsystem-match=tty --property-match=ID_VENDOR_ID=$VENDOR || true
  fi
}

if [ "${1:-}" = "--uninstall" ]; then
  if systemd_running; then systemctl disable --now podbridge.service 2> /dev/null || true; fi
  # Named only if it was there: an uninstall with another PREFIX than the install's removes nothing of it.
  removed=()
  for f in "$BIN" "$LIB" "$UNIT" "$RULE"; do
    if [ -e "$f" ] || [ -L "$f" ]; then rm -rf "$f"; removed+=("$f"); fi
  done
  reload
  if [ ${#removed[@]} -eq 0 ]; then
    echo "nothing to remove under PREFIX=$PREFIX and SYSCONFDIR=$SYSCONFDIR (installed with other ones?)"
  else
    echo "removed ${removed[*]} (the database in /var/lib/podbridge and /etc/podbridge/config.json are kept)"
  fi
  exit 0
fi

if [ -n "${PODBRIDGE_BINARY:-}" ]; then
  built=$PODBRIDGE_BINARY
else
  # Under sudo, built as the user who owns the checkout: a root build would leave .build
  # owned by root, and their next `swift build` would fail on it.
  as_user=()
  if [ "$(id -u)" -eq 0 ] && [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ] && [ "$(stat -c %U .)" = "$SUDO_USER" ]; then
    as_user=(sudo -u "$SUDO_USER" env "PATH=$PATH")
  fi
  "${as_user[@]}" swift build -c release --product podbridge --static-swift-stdlib
  built=$("${as_user[@]}" swift build -c release --show-bin-path)/podbridge
fi
[ -x "$built" ] || { echo "no podbridge binary at $built" >&2; exit 1; }
bundle=$(dirname "$built")/$RESOURCES
[ -d "$bundle" ] || { echo "no $RESOURCES beside $built (the dashboard and the OpenAPI document)" >&2; exit 1; }

# Stripped: the symbols are most of its size (180 MB → 89 MB for the static release build).
install -D -s -m 0755 "$built" "$LIB/podbridge"
# The bundle replaced whole, so a file an older version had does not linger.
rm -rf "${LIB:?}/$RESOURCES"
cp -R "$bundle" "$LIB/$RESOURCES"
chmod -R u=rwX,go=rX "$LIB/$RESOURCES"
# Relative, so it holds inside a DESTDIR staging root; replaces the binary an older install put here.
mkdir -p "$(dirname "$BIN")"
ln -sfn ../lib/podbridge/podbridge "$BIN"
unit=$(mktemp)
trap 'rm -f "$unit"' EXIT
sed "s|^ExecStart=/usr/local/bin/podbridge |ExecStart=$PREFIX/bin/podbridge |" systemd/podbridge.service > "$unit"
grep -q "^ExecStart=$PREFIX/bin/podbridge " "$unit" || { echo "systemd/podbridge.service: no ExecStart to point at $PREFIX/bin" >&2; exit 1; }
install -D -m 0644 "$unit" "$UNIT"
install -D -m 0644 udev/70-podbridge.rules "$RULE"
reload
# An upgrade: a hub already running goes on with the old binary until restarted (a re-plugged
# pod does not restart a running unit), so it is restarted now; a stopped one stays stopped.
if systemd_running && systemctl is-active --quiet podbridge.service; then
  systemctl try-restart podbridge.service && echo "restarted the running hub on the new binary"
fi

echo "installed $LIB (binary and web files), $BIN, $UNIT and $RULE"
if live; then
  cat << EOF
The hub starts when a pod is plugged in (the udev rule wants podbridge.service); to run it
at boot as well: systemctl enable --now podbridge. Its settings: /etc/podbridge/config.json
(optional, docs/configuration.md; it may hold passwords and tokens: chmod 600 it, the unit
reads it as root; systemctl restart podbridge after a change); its log: journalctl -u
podbridge; its dashboard: http://127.0.0.1:8380/.
EOF
fi
