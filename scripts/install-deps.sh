#!/usr/bin/env bash
# Installs the Debian packages podbridge builds, tests and runs with, when missing.
# Needs root (or sudo) only if something is missing. Swift itself is not a Debian
# package: it is expected on PATH or at /opt/swift (https://swift.org/install).
# `--hub`: only what building and running the hub needs (`make install` on a hub: no browser,
# broker or test tools). `--deb`: what `make deb` needs beyond that (Debian's packaging tools).
set -euo pipefail
hub_packages=(
  pkg-config
  libudev-dev libusb-1.0-0-dev libsqlite3-dev libmosquitto-dev   # the C libraries the hub links
  libavahi-client-dev avahi-daemon libqrencode-dev               # HomeKit: DNS-SD advertisement, setup QR code
  udev systemd                                                   # the rule and the unit it installs
)
packages=(
  pkg-config
  libudev-dev libusb-1.0-0-dev libsqlite3-dev   # the C libraries the hub links
  umockdev libumockdev-dev                       # mocked udev/sysfs/usbdevfs for device tests
  udev systemd                                   # udevadm test (rules), systemd-analyze verify (unit)
  util-linux socat                               # unshare for rule tests; socat for poking at ttys
  python3-seccomp                                # the unit's system-call filter applied to the hub (test-install)
  sqlite3                                        # a second process holding the database's write lock (upload tests)
  libmosquitto-dev mosquitto mosquitto-clients   # MQTT: the client library; the broker the tests and demo start; mosquitto_sub (demo)
  chromium                                       # the dashboard test's headless browser
  wrk curl                                       # make bench: API latency under load, live clients; curl: the tests' raw SSE reader
  python3-pip                                    # schemathesis (below), when no pip is installed
  dpkg-dev lintian debootstrap                   # make deb; make test-deb: the package checked, a fresh Debian chroot
  libavahi-client-dev avahi-daemon avahi-utils dbus   # HomeKit: the advertisement; a daemon and bus the tests start
  libqrencode-dev zbar-tools                          # HomeKit: the setup QR code on the dashboard; zbarimg reads it back
)
deb_packages=("${hub_packages[@]}" dpkg-dev)     # dpkg-shlibdeps, dpkg-gencontrol
[ "${1:-}" = "--hub" ] && packages=("${hub_packages[@]}")
[ "${1:-}" = "--deb" ] && packages=("${deb_packages[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# schemathesis (PyPI) checks the running API against its OpenAPI document in the tests.
if [ -z "${1:-}" ] && ! command -v st >/dev/null 2>&1; then
  echo "installing: schemathesis (pip)"
  PIP=(python3 -m pip install --quiet)
  # Debian's own python refuses system-wide installs without this flag (PEP 668).
  python3 -m pip install --help 2>/dev/null | grep -q -- --break-system-packages && PIP+=(--break-system-packages)
  "${PIP[@]}" "schemathesis>=4,<5"
fi
# aiohomekit (PyPI), Home Assistant's HomeKit controller, pairs with the hub in the HomeKit tests.
if [ "${1:-}" != "--hub" ] && ! python3 -c "import aiohomekit" >/dev/null 2>&1; then
  echo "installing: aiohomekit (pip)"
  PIP=(python3 -m pip install --quiet)
  python3 -m pip install --help 2>/dev/null | grep -q -- --break-system-packages && PIP+=(--break-system-packages)
  "${PIP[@]}" "aiohomekit>=4,<5"
fi
if ! command -v swift >/dev/null 2>&1 && [ ! -x /opt/swift/usr/bin/swift ]; then
  echo "error: Swift 6 is needed (swift on PATH or /opt/swift); see https://swift.org/install" >&2
  # sudo runs make with root's PATH: a toolchain on the user's own PATH (swiftly's, in the home
  # directory) is not on it.
  if [ -n "${SUDO_USER:-}" ]; then
    echo "       under sudo, PATH is root's; if swift is on yours, keep it: sudo env \"PATH=\$PATH\" make install" >&2
  fi
  exit 1
fi
