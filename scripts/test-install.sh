#!/usr/bin/env bash
# `make install` into a staging root (DESTDIR), the way a packager or a user's first install
# lays it out, then `make uninstall` from it: what lands where, with which modes, the unit's
# ExecStart pointing at the installed binary, and the binary running from there. Nothing
# outside the staging root is touched (DESTDIR set: no reloads). Installs the debug binary
# `swift build` made (PODBRIDGE_BINARY); the static release build is what `make install` makes.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/opt/swift/usr/bin:$PATH
binary=${PODBRIDGE_BINARY:-$(swift build --show-bin-path)/podbridge}
[ -x "$binary" ] || swift build --product podbridge
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
mode() { stat -c %a "$1"; }

DESTDIR=$root PREFIX=/opt/podbridge PODBRIDGE_BINARY=$binary scripts/install.sh > "$root.log" 2>&1 \
  || { cat "$root.log" >&2; fail "install.sh exited non-zero"; }
bin=$root/opt/podbridge/bin/podbridge
unit=$root/etc/systemd/system/podbridge.service
rule=$root/etc/udev/rules.d/70-podbridge.rules
[ -x "$bin" ] && [ "$(mode "$bin")" = 755 ] && pass "binary at PREFIX/bin, mode 755" || fail "binary: $(ls -l "$bin" 2>&1)"
"$bin" --version > /dev/null && pass "installed binary runs" || fail "installed binary does not run"
[ "$(mode "$unit")" = 644 ] && [ "$(mode "$rule")" = 644 ] && pass "unit and rule, mode 644" || fail "unit/rule modes"
grep -qx 'ExecStart=/opt/podbridge/bin/podbridge run --no-console --log-level info' "$unit" \
  && pass "the unit starts the installed binary" || fail "ExecStart: $(grep ExecStart "$unit")"
diff <(grep -v '^ExecStart=' systemd/podbridge.service) <(grep -v '^ExecStart=' "$unit") > /dev/null \
  && pass "the unit is the repository's otherwise" || fail "the unit differs beyond ExecStart"
cmp -s udev/70-podbridge.rules "$rule" && pass "the udev rule is the repository's" || fail "the rule differs"
[ -z "$(find "$root" -type f ! -path "$bin" ! -path "$unit" ! -path "$rule")" ] \
  && pass "nothing else installed" || fail "unexpected files: $(find "$root" -type f)"

DESTDIR=$root PREFIX=/opt/podbridge scripts/install.sh --uninstall > "$root.log" 2>&1 \
  || { cat "$root.log" >&2; fail "install.sh --uninstall exited non-zero"; }
[ -z "$(find "$root" -type f)" ] && pass "uninstall removes all three" || fail "left behind: $(find "$root" -type f)"
rm -f "$root.log"

[ "$failures" -eq 0 ] && echo "install checks passed" || { echo "$failures install check(s) failed" >&2; exit 1; }
