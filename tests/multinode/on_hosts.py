#!/usr/bin/env python3
"""Run an MPI test program across hosts and check it as run_expect.py does.

  on_hosts.py --mpirun PATH (--hosts N --per-host K | --counts K1,K2,... | --placement H0,H1,...)
              [--vcluster TOOL] [--name NAME] [--timeout S] -- program [args...]

--placement gives the host of each rank (host numbers from 0): the job is
started with a rankfile (mpirun --rankfile) that places them so.

Without --vcluster the hosts are names only (h0, h1, ...): the launch
command is tests/launcher/fake_host.sh, which starts every host's agent on
this machine, so the job runs as N hosts of K ranks (one node segment per
host, the network transport between hosts) without namespaces or root.
With --vcluster the job runs on a virtual cluster of N hosts brought up for
this run (tools/vcluster) and removed afterwards; where this machine cannot
host one the test exits 77 (skipped) with the reason.

Passes when the job exits 0, prints a PASS or SKIP line and no FAIL line,
within the time limit; the job's process group is killed on timeout.
"""
import argparse
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE_HOST = os.path.join(HERE, "..", "launcher", "fake_host.sh")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--hosts", type=int, default=2)
    ap.add_argument("--per-host", type=int, default=2)
    ap.add_argument("--last-host", type=int, help="ranks on the last host (default: --per-host)")
    ap.add_argument("--counts", help="ranks per host, comma-separated (instead of --hosts and --per-host)")
    ap.add_argument("--placement", help="host number of each rank, comma-separated: run with a rankfile")
    ap.add_argument("--vcluster")
    ap.add_argument("--name", default="lmmpi", help="virtual cluster name (1-8 letters/digits)")
    ap.add_argument("--subnet", default="10.213.5")
    ap.add_argument("--timeout", type=float, default=90.0)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        ap.error("no program given")

    placement = None
    if a.placement:
        placement = [int(x) for x in a.placement.split(",")]
        a.hosts = max(placement) + 1
        a.counts = ",".join(str(placement.count(h)) for h in range(a.hosts))
    if a.counts:
        counts = [int(x) for x in a.counts.split(",")]
        a.hosts = len(counts)
    up = False
    if a.vcluster:
        chk = subprocess.run([a.vcluster, "check"], capture_output=True, text=True)
        if chk.returncode == 77:
            print("SKIP", (chk.stdout + chk.stderr).strip())
            return 77
        r = subprocess.run([a.vcluster, "up", a.name, str(a.hosts), "--subnet", a.subnet],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            print("FAIL vcluster up:", r.stderr.strip())
            return 1
        up = True
        hosts = ["%s-%d" % (a.name, i) for i in range(a.hosts)]
        agent = "%s exec %s {host}" % (shlex.quote(a.vcluster), a.name)
    else:
        hosts = ["h%d" % i for i in range(a.hosts)]
        agent = "sh %s {host}" % shlex.quote(os.path.normpath(FAKE_HOST))
    if not a.counts:
        counts = [a.per_host] * len(hosts)
        if a.last_host:
            counts[-1] = a.last_host
    spec = ",".join("%s:%d" % (h, n) for h, n in zip(hosts, counts))
    job = [a.mpirun, "--host", spec, "--launch-agent", agent]
    rankfile = None
    if placement:
        with tempfile.NamedTemporaryFile("w", prefix="rankfile.", delete=False) as f:
            f.write("".join("rank %d=%s\n" % (r, hosts[h]) for r, h in enumerate(placement)))
            rankfile = f.name
        job += ["--rankfile", rankfile]
    job += cmd
    print("+", " ".join(shlex.quote(x) for x in job), flush=True)
    try:
        rc = run(job, a.timeout)
    finally:
        if rankfile:
            os.unlink(rankfile)
        if up:
            r = subprocess.run([a.vcluster, "down", a.name], capture_output=True, text=True,
                               timeout=60)
            if r.returncode != 0:
                print("FAIL vcluster down:", r.stderr.strip())
                rc = 1
    return rc


def run(job, timeout):
    p = subprocess.Popen(job, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        sys.stdout.write(out)
        print("FAIL: the job did not end within %g s" % timeout)
        return 1
    sys.stdout.write(out)
    ok = (p.returncode == 0 and re.search(r"(?m)^(PASS|SKIP)", out)
          and not re.search(r"(?m)^FAIL", out))
    if not ok:
        print("FAIL: exit status %d, or no PASS line, or a FAIL line" % p.returncode)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
