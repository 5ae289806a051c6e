#!/usr/bin/env python3
"""leanmpi-map's placement applied by LeanMPI's mpirun: map a profile onto
a machine file (--format leanmpi), start the job with the rankfile it
wrote on those hosts (names only: tests/launcher/fake_host.sh), and let
hosts_rankfile_placement check that each rank runs where the rankfile put
it and that traffic across the placement arrives.

  map_then_run.py --map LEANMPI_MAP --mpirun MPIRUN --program PROG PROFILE MACHINE
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE_HOST = os.path.join(HERE, "..", "launcher", "fake_host.sh")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--map", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("profile")
    ap.add_argument("machine")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rankfile = os.path.join(tmp, "rankfile")
        r = subprocess.run([a.map, a.profile, "--machine", a.machine, "--engine", "greedy", "--format", "leanmpi",
                            "-o", rankfile], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            print("FAIL leanmpi-map:", r.stderr.strip())
            return 1
        hosts, place = [], []
        for line in open(rankfile):
            m = re.match(r"rank (\d+)=(\S+) slot=(\d+)", line)
            if m:
                if m.group(2) not in hosts:
                    hosts.append(m.group(2))
                place.append(hosts.index(m.group(2)))
        spec = ",".join("%s:%d" % (h, place.count(i)) for i, h in enumerate(hosts))
        placement = ",".join(map(str, place))
        job = [a.mpirun, "--host", spec, "--launch-agent", "sh %s {host}" % FAKE_HOST, "--rankfile", rankfile,
               a.program, placement]
        print("+", " ".join(job), flush=True)
        r = subprocess.run(job, capture_output=True, text=True, timeout=120)
        sys.stdout.write(r.stdout + r.stderr)
        if r.returncode != 0 or not re.search(r"(?m)^PASS", r.stdout):
            print("FAIL: exit status %d or no PASS line" % r.returncode)
            return 1
        if place == sorted(place):
            print("FAIL: the mapped placement is the block order; the test needs one that is not")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
