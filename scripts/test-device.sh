#!/bin/sh
# Device-layer checks that need more than a plain `swift test`:
#   1. the umockdev suite of PodDeviceTests (discovery, tty script replay, usbdevfs replay),
#      run alone under the umockdev preload because the testbed is process-global, then
#      the daemon's hot-plug suite (HubTests.HubUmockdevTests) the same way, and
#      `podbridge devices` on the mocked pod;
#   2. udev/70-podbridge.rules through the real rule engine (`udevadm test`) on mocked
#      devices, unprivileged inside a user+mount namespace so nothing touches the real /dev;
#   3. systemd/podbridge.service through `systemd-analyze verify`, where any output fails.
# Usage: scripts/test-device.sh [all|swift|udev|systemd]   (PACKAGE_DIR overrides the package)
# Needs: umockdev, udev (udevadm), systemd (systemd-analyze), util-linux (unshare).
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PACKAGE_DIR=${PACKAGE_DIR:-$ROOT}
FIXTURES=$ROOT/Tests/PodDeviceTests/Fixtures
WHAT=${1:-all}
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

run_swift() {
    # Build without the preload (the compiler must not see a mocked /dev), then run only
    # the serialized umockdev suite with it.
    (cd "$PACKAGE_DIR" && swift build --build-tests)
    if (cd "$PACKAGE_DIR" && umockdev-wrapper swift test --skip-build --filter 'PodDeviceTests.UmockdevTests'); then
        pass "umockdev suite"
    else
        fail "umockdev suite"
    fi
    # The daemon with hot-plug: a testbed of its own, so a run of its own.
    if (cd "$PACKAGE_DIR" && umockdev-wrapper swift test --skip-build --filter 'HubTests.HubUmockdevTests'); then
        pass "daemon hot-plug under umockdev"
    else
        fail "daemon hot-plug under umockdev"
    fi
    # The command a user runs first: `podbridge devices` on the fixture pod, which udev lists
    # and which cannot answer (its tty and usbdevfs are mocked without a script). Every row an
    # error is a failure a script must see; without the HELLO the listing succeeds.
    bin=$(cd "$PACKAGE_DIR" && swift build --show-bin-path)/podbridge
    status=0
    out=$(umockdev-run -d "$FIXTURES/pod.umockdev" -- "$bin" devices 2>&1) || status=$?
    if [ "$status" = 1 ] && printf '%s\n' "$out" | grep -q '^POD-0001 .*/dev/ttyACM0 .*error: '; then
        pass "devices: a pod found that does not answer is named and fails the command"
    else
        fail "devices on a pod that does not answer: status $status, output:"; printf '%s\n' "$out" >&2
    fi
    status=0
    out=$(umockdev-run -d "$FIXTURES/pod.umockdev" -- "$bin" devices --no-hello 2>&1) || status=$?
    if [ "$status" = 0 ] && printf '%s\n' "$out" | grep -q '^POD-0001 .*/dev/ttyACM0 '; then
        pass "devices --no-hello: the pod udev lists"
    else
        fail "devices --no-hello: status $status, output:"; printf '%s\n' "$out" >&2
    fi
}

# udevadm test of one mocked syspath with only our rules added to the system's. As root,
# `unshare -r` maps to the real root, and udevadm then wrote the pod's links and its database
# into the host's /dev and /run/udev (which later umockdev runs read back); so root runs it as
# nobody, on a copy of the rules and fixtures nobody can read (a fresh clone may be 0700).
udev_test() {
    as=""
    rules_dir=$ROOT/udev
    fixtures=$FIXTURES
    if [ "$(id -u)" = 0 ]; then
        copy=$(mktemp -d)
        cp -r "$ROOT/udev" "$copy/rules"
        cp "$FIXTURES/pod.umockdev" "$FIXTURES/other-serial.umockdev" "$copy/"
        chmod -R a+rX "$copy"
        as="setpriv --reuid=65534 --regid=65534 --clear-groups"
        rules_dir=$copy/rules
        fixtures=$copy
    fi
    $as unshare -rm sh -c 'mount --bind "$1" /etc/udev/rules.d && exec umockdev-run -d "$2/pod.umockdev" -d "$2/other-serial.umockdev" -- udevadm test --action=add "$3"' \
        sh "$rules_dir" "$fixtures" "$1" 2>&1 | sed 's/\(70-podbridge\.rules\):[0-9]*/\1:N/'
    if [ -n "$as" ]; then rm -rf "$copy"; fi
}

expect_line() { # output, fixed string, what
    if printf '%s\n' "$1" | grep -qF -- "$2"; then pass "$3"; else fail "$3 (missing: $2)"; fi
}
expect_no_line() {
    if printf '%s\n' "$1" | grep -qF -- "$2"; then fail "$3 (unexpected: $2)"; else pass "$3"; fi
}

run_udev() {
    rules=/etc/udev/rules.d/70-podbridge.rules
    dialout=$(getent group dialout | cut -d: -f3)
    plugdev=$(getent group plugdev | cut -d: -f3)
    [ -n "$dialout" ] && [ -n "$plugdev" ] || { fail "groups dialout/plugdev missing on this system"; return; }
    had_link=no
    [ -e /dev/sleeppod-POD-0001 ] || [ -L /dev/sleeppod-POD-0001 ] && had_link=yes

    tty=$(udev_test /sys/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0/tty/ttyACM0)
    printf '%s\n' "$tty" | grep -q "Reading rules file: $rules" || { fail "udevadm test did not run (output below)"; printf '%s\n' "$tty" | tail -5; return; }
    expect_line "$tty" "$rules:N GROUP $dialout" "pod tty: group dialout"
    expect_line "$tty" "$rules:N MODE 0660" "pod tty: mode 0660 (not world)"
    expect_line "$tty" "$rules:N LINK 'sleeppod-POD-0001'" "pod tty: symlink keyed on the USB serial"
    expect_line "$tty" "$rules:N LINK 'sleeppod'" "pod tty: stable symlink"
    expect_line "$tty" "ID_MM_DEVICE_IGNORE=1" "pod tty: ModemManager ignores it"
    expect_line "$tty" "SYSTEMD_WANTS=podbridge.service" "pod tty: starts the daemon"
    printf '%s\n' "$tty" | grep -q '^TAGS=.*:systemd:' && pass "pod tty: tagged systemd" || fail "pod tty: tagged systemd"

    usb=$(udev_test /sys/devices/pci0000:00/0000:00:14.0/usb1/1-1)
    expect_line "$usb" "$rules:N GROUP $plugdev" "pod usbfs node: group plugdev"
    expect_line "$usb" "$rules:N MODE 0660" "pod usbfs node: mode 0660"

    other=$(udev_test /sys/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/ttyUSB0/tty/ttyUSB0)
    printf '%s\n' "$other" | grep -q "Reading rules file: $rules" || { fail "udevadm test did not run for the other device"; return; }
    expect_no_line "$other" "$rules:" "other USB serial: untouched by our rules"
    expect_no_line "$other" "ID_MM_DEVICE_IGNORE=1" "other USB serial: ModemManager not disabled"
    if [ $had_link = no ] && { [ -e /dev/sleeppod-POD-0001 ] || [ -L /dev/sleeppod-POD-0001 ]; }; then
        fail "udevadm test wrote the mocked pod's link into the real /dev"
    else
        pass "the real /dev untouched"
    fi
}

run_systemd() {
    # verify checks that ExecStart exists; point it at an installed binary for the check.
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    sed 's#^ExecStart=/usr/local/bin/podbridge#ExecStart=/bin/true#' "$ROOT/systemd/podbridge.service" > "$dir/podbridge.service"
    out=$(systemd-analyze verify --man=no "$dir/podbridge.service" 2>&1) || true
    if [ -z "$out" ]; then pass "systemd-analyze verify: no output"; else fail "systemd-analyze verify said:"; printf '%s\n' "$out" >&2; fi
}

case $WHAT in
    all) run_swift; run_udev; run_systemd ;;
    swift) run_swift ;;
    udev) run_udev ;;
    systemd) run_systemd ;;
    *) echo "usage: $0 [all|swift|udev|systemd]" >&2; exit 2 ;;
esac

if [ "$failures" -ne 0 ]; then echo "$failures device check(s) failed" >&2; exit 1; fi
echo "device checks passed"
