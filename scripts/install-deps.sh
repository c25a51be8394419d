#!/usr/bin/env bash
# Installs the Debian packages podbridge builds, tests and runs with, when missing.
# Needs root (or sudo) only if something is missing. Swift itself is not a Debian
# package: it is expected on PATH or at /opt/swift (https://swift.org/install).
set -euo pipefail
packages=(
  pkg-config
  libudev-dev libusb-1.0-0-dev libsqlite3-dev   # the C libraries the hub links
  umockdev libumockdev-dev                       # mocked udev/sysfs/usbdevfs for device tests
  udev systemd                                   # udevadm test (rules), systemd-analyze verify (unit)
  util-linux socat                               # unshare for rule tests; socat for poking at ttys
)
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
if ! command -v swift >/dev/null 2>&1 && [ ! -x /opt/swift/usr/bin/swift ]; then
  echo "error: Swift 6 is needed (swift on PATH or /opt/swift); see https://swift.org/install" >&2
  exit 1
fi
