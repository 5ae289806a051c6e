#!/usr/bin/env python3
"""Run a command and check how it ended.

Used for MPI program tests whose expected outcome is not a plain exit 0
(a fatal error, MPI_Abort) and by validate_against_peers.sh.  The command runs
in its own process group; on timeout the whole group is killed so no rank is
left behind.

  run_expect.py [--timeout S] [--exit-code N | --nonzero] [--regex R]...
                [--forbid R]... [--no-shm-leftovers] -- command args...

--no-shm-leftovers fails the run when /dev/shm holds an entry afterwards
that it did not hold before and whose name mentions the library.
"""
import argparse
import os
import re
import signal
import resource
import subprocess
import sys


def shm_entries():
    try:
        return set(os.listdir("/dev/shm"))
    except OSError:
        return set()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=60.0)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--exit-code", type=int, default=None,
                   help="required exit status")
    g.add_argument("--nonzero", action="store_true",
                   help="any non-zero exit status (not a timeout)")
    ap.add_argument("--regex", action="append", default=[],
                    help="must match the combined output (multiline)")
    ap.add_argument("--forbid", action="append", default=[],
                    help="must not match the combined output (multiline)")
    ap.add_argument("--no-shm-leftovers", action="store_true")
    ap.add_argument("--memory-limit-mb", type=int, default=0,
                    help="address-space limit of the launcher and every rank (RLIMIT_AS)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no command given")

    shm_before = shm_entries()
    limit = None
    if a.memory_limit_mb:
        n = a.memory_limit_mb << 20

        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (n, n))
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=limit)
    timed_out = False
    try:
        out, _ = p.communicate(timeout=a.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                break
            try:
                out, _ = p.communicate(timeout=5)
                break
            except subprocess.TimeoutExpired:
                out = b""
    # Ranks that outlive the launcher are stragglers: end them too.
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    text = out.decode("utf-8", "replace") if out else ""
    sys.stdout.write(text)

    problems = []
    rc = p.returncode
    if timed_out:
        problems.append("timed out after %.0f s" % a.timeout)
    elif a.nonzero:
        if rc == 0:
            problems.append("exit status 0, expected non-zero")
    elif a.exit_code is not None and rc != a.exit_code:
        problems.append("exit status %s, expected %d" % (rc, a.exit_code))
    for r in a.regex:
        if not re.search(r, text, re.MULTILINE):
            problems.append("output does not match /%s/" % r)
    for r in a.forbid:
        if re.search(r, text, re.MULTILINE):
            problems.append("output matches forbidden /%s/" % r)
    if a.no_shm_leftovers:
        left = sorted(e for e in shm_entries() - shm_before if "leanmpi" in e.lower())
        if left:
            problems.append("left behind in /dev/shm: " + ", ".join(left))
    if problems:
        print("run_expect: FAILED: " + "; ".join(problems))
        return 1
    print("run_expect: ok (exit status %s)" % rc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
