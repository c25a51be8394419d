#!/usr/bin/python3
"""Runs a command under the system-call filter of a systemd unit, without systemd.

    unit-syscall-filter.py UNIT -- COMMAND [ARGS...]

The unit's `SystemCallFilter=` lines are read as systemd reads them: the first one, unless it
starts with `~`, is an allow list (everything else is filtered); each later `~` line takes its
calls out again; groups (`@system-service`) are expanded by `systemd-analyze syscall-filter`.
A filtered call kills the process (SIGSYS), what the unit does without
`SystemCallErrorNumber=`; with it the unit answers EPERM instead, so a run that survives here
survives there. The rest of the unit's sandbox (namespaces, devices, MemoryDenyWriteExecute …)
is not applied: this checks the filter alone, the one setting `systemd-analyze verify` cannot,
since what it forbids shows only when the program calls it (libdispatch's `setpriority` on
every worker thread killed the hub under `~@resources`).

Needs python3-seccomp (Debian) and systemd-analyze.
"""
import os
import subprocess
import sys

import seccomp


def expand(names, seen=None):
    """The system calls named, groups expanded recursively."""
    seen = set() if seen is None else seen
    calls = set()
    for name in names:
        if not name.startswith("@"):
            calls.add(name)
            continue
        if name in seen:
            continue
        seen.add(name)
        listing = subprocess.run(["systemd-analyze", "syscall-filter", name], check=True,
                                 capture_output=True, text=True).stdout
        members = [line.strip() for line in listing.splitlines()[1:]]
        calls |= expand([m for m in members if m and not m.startswith("#")], seen)
    return calls


def allowed_calls(unit_path):
    allowed = None
    for line in open(unit_path):
        line = line.strip()
        if not line.startswith("SystemCallFilter="):
            continue
        value = line.split("=", 1)[1].strip()
        deny = value.startswith("~")
        names = value.lstrip("~").split()
        if allowed is None:
            if deny:
                sys.exit(f"{unit_path}: a deny-list-first filter is not handled here")
            allowed = expand(names)
        elif deny:
            allowed -= expand(names)
        else:
            allowed |= expand(names)
    if allowed is None:
        sys.exit(f"{unit_path}: no SystemCallFilter= line")
    return allowed


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit(__doc__)
    allowed = allowed_calls(sys.argv[1])
    f = seccomp.SyscallFilter(defaction=seccomp.KILL_PROCESS)
    for name in sorted(allowed):
        try:
            f.add_rule(seccomp.ALLOW, name)
        except (RuntimeError, ValueError, OSError):
            pass  # not a call of this architecture (systemd skips those too)
    f.load()
    os.execvp(sys.argv[3], sys.argv[3:])


if __name__ == "__main__":
    main()
