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
lib=$root/opt/podbridge/lib/podbridge
bundle=podbridge_HubAPI.resources
unit=$root/etc/systemd/system/podbridge.service
rule=$root/etc/udev/rules.d/70-podbridge.rules
[ -x "$lib/podbridge" ] && [ "$(mode "$lib/podbridge")" = 755 ] && pass "binary at PREFIX/lib/podbridge, mode 755" \
  || fail "binary: $(ls -l "$lib/podbridge" 2>&1)"
[ -L "$bin" ] && [ "$(readlink "$bin")" = ../lib/podbridge/podbridge ] && pass "PREFIX/bin/podbridge links to it" \
  || fail "PREFIX/bin/podbridge: $(ls -l "$bin" 2>&1)"
# The web files the binary reads from beside itself, as the build made them, readable by all.
diff -r "$(dirname "$binary")/$bundle" "$lib/$bundle" > /dev/null && [ -f "$lib/$bundle/Dashboard/index.html" ] \
  && [ -z "$(find "$lib/$bundle" ! -perm -o=r)" ] && pass "the dashboard and OpenAPI files beside it" \
  || fail "web files: $(ls -lR "$lib" 2>&1 | head -20)"
"$bin" --version > /dev/null && pass "installed binary runs" || fail "installed binary does not run"
[ "$(mode "$unit")" = 644 ] && [ "$(mode "$rule")" = 644 ] && pass "unit and rule, mode 644" || fail "unit/rule modes"
grep -qx 'ExecStart=/opt/podbridge/bin/podbridge run --no-console' "$unit" \
  && pass "the unit starts the installed binary" || fail "ExecStart: $(grep ExecStart "$unit")"
diff <(grep -v '^ExecStart=' systemd/podbridge.service) <(grep -v '^ExecStart=' "$unit") > /dev/null \
  && pass "the unit is the repository's otherwise" || fail "the unit differs beyond ExecStart"
cmp -s udev/70-podbridge.rules "$rule" && pass "the udev rule is the repository's" || fail "the rule differs"
[ -z "$(find "$root" \( -type f -o -type l \) ! -path "$bin" ! -path "$unit" ! -path "$rule" ! -path "$lib/*")" ] \
  && pass "nothing else installed" || fail "unexpected files: $(find "$root" -type f)"

# The installed hub under the unit's system-call filter (what `systemd-analyze verify` cannot
# see: a filtered call shows only when the program makes it). Stricter than the unit: a
# filtered call kills here, where the unit answers EPERM. As an unprivileged user, as the
# unit's DynamicUser (root would make SQLite chown its journal, which the unit never sees),
# against the virtual pod, with the API.
run_as=()
[ "$(id -u)" -eq 0 ] && run_as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
chmod 755 "$root"
work=$(mktemp -d)
chmod 777 "$work"
# The checkout may sit where that user cannot read (a CI clone in a 0700 temp directory).
install -m 0755 scripts/unit-syscall-filter.py "$work/unit-syscall-filter.py"
filtered() { "${run_as[@]}" "$work/unit-syscall-filter.py" "$unit" -- "$@"; }
filtered "$bin" --version > /dev/null && pass "--version under the unit's system-call filter" \
  || fail "--version under the unit's system-call filter: exit $?"
filtered "$bin" devices > /dev/null && pass "devices under the unit's system-call filter" \
  || fail "devices under the unit's system-call filter: exit $?"
"${run_as[@]}" "$bin" simulate --seed 3 --speed 60 --duration 1 --link "$work/pod" > "$work/pod.log" 2>&1 &
pod=$!
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${run_as[@]}" "$work/unit-syscall-filter.py" "$unit" -- "$bin" run --no-console --log-level info --path "$work/pod" \
  --state-dir "$work/state" --listen "127.0.0.1:$port" > "$work/run.log" 2>&1 &
hub=$!
healthy=""
for _ in $(seq 1 60); do
  sleep 0.5
  kill -0 "$hub" 2>/dev/null || break
  grep -q "streaming from pod" "$work/run.log" && curl -fsS "http://127.0.0.1:$port/healthz" > /dev/null 2>&1 && { healthy=yes; break; }
done
# The dashboard and the OpenAPI document from the installed files (the build directory may be
# unreadable to this user, and under the unit's ProtectHome it is hidden).
if [ -n "$healthy" ]; then
  curl -fsS "http://127.0.0.1:$port/" | grep -q "<html" && curl -fsS "http://127.0.0.1:$port/api/v1/openapi.json" | grep -q '"openapi"' \
    && pass "the installed hub serves the dashboard and the OpenAPI document" || fail "the installed hub's web files are not served"
fi
kill -TERM "$hub" 2>/dev/null || true
status=0; wait "$hub" || status=$?
kill "$pod" 2>/dev/null || true
wait "$pod" 2>/dev/null || true
[ -n "$healthy" ] && [ "$status" -eq 0 ] && pass "run under the unit's system-call filter: pod connected, API answering, clean stop" \
  || { grep -m5 -iE "fatal|error|crash" "$work/run.log" >&2; tail -20 "$work/run.log" >&2; fail "run under the unit's system-call filter (exit $status; 159 is SIGSYS)"; }

# A binary copied without its web files (by hand, or by an older install script): the hub stops
# at once and says what is missing, where Bundle.module's accessor ended it with a trap.
mkdir "$work/lonely"
install -m 0755 "$lib/podbridge" "$work/lonely/podbridge"
status=0
"${run_as[@]}" "$work/lonely/podbridge" run --no-console --path "$work/no-pod" --state-dir "$work/lonely-state" \
  --listen 127.0.0.1:0 > "$work/lonely.log" 2>&1 || status=$?
# At once: before the database is made or the pod looked for, and in a command's words (no
# HTTP status: it printed "Error: 500 internal: …" after starting the hub).
[ "$status" -eq 1 ] && grep -qx "Error: the dashboard and OpenAPI files are not installed: no $bundle beside $work/lonely/podbridge .*" "$work/lonely.log" \
  && [ "$(wc -l < "$work/lonely.log")" -eq 1 ] && [ ! -e "$work/lonely-state" ] \
  && pass "a binary without its web files stops at once with a message naming them" \
  || fail "a binary without its web files: exit $status: $(tail -5 "$work/lonely.log"); state: $(ls "$work/lonely-state" 2>&1)"
rm -rf "$work"

DESTDIR=$root PREFIX=/opt/podbridge scripts/install.sh --uninstall > "$root.log" 2>&1 \
  || { cat "$root.log" >&2; fail "install.sh --uninstall exited non-zero"; }
[ -z "$(find "$root" \( -type f -o -type l \))" ] && pass "uninstall removes everything it installed" \
  || fail "left behind: $(find "$root" \( -type f -o -type l \))"
rm -f "$root.log"

[ "$failures" -eq 0 ] && echo "install checks passed" || { echo "$failures install check(s) failed" >&2; exit 1; }
