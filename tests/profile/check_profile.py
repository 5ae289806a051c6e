#!/usr/bin/env python3
"""Run tests/profile/profile_app.c under leanmpi-profile and check the
profile against what the program does (its header says what that is).

  check_profile.py --out PROFILE.json --np N [--preload LIB] -- LAUNCH... PROGRAM
  check_profile.py --peer openmpi|mpich --build-dir DIR --np N --source-dir SRC

The first form runs the given command (the program linked with the
profiler, or LD_PRELOAD set by the caller) with LEANMPI_PROFILE_OUT set.
The second builds the profiler and the program with another MPI's
compiler wrapper (tools/profile/build.sh) and runs them with that MPI's
launcher and LD_PRELOAD; it reports SKIP (exit 77) where that MPI's
wrapper or launcher is not installed."""
import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

SKIP = 77


def expected(n, mpi4):
    """(p2p {(src, dst): [bytes, msgs]}, rma likewise, collectives per rank
    as a set of tuples)."""
    p2p = collections.defaultdict(lambda: [0, 0])
    rma = collections.defaultdict(lambda: [0, 0])

    def add(table, src, dst, nbytes):
        table[(src, dst)][0] += nbytes
        table[(src, dst)][1] += 1

    for r in range(n):
        right, left = (r + 1) % n, (r - 1) % n
        p2p[(r, right)][0] += 3 * 400 + 2 * 400 + 4 * 80
        p2p[(r, right)][1] += 3 + 2 + 4
        add(p2p, r, left, 200)
        add(p2p, r, left, 24)   # neighbor_alltoall on the ring: to -1, then +1
        add(p2p, r, right, 24)
        add(p2p, r, right, 40)  # neighbor_allgather along the edge r -> r+1
        if mpi4:
            add(p2p, r, right, 44)
        add(rma, r, right, 12)
        add(rma, r, right, 16)
        add(rma, r, left, 8)
        add(rma, r, 0, 8)
    colls = {}
    for r in range(n):
        half = [x for x in range(n) if x % 2 == r % 2]
        c = {("bcast", "world", 1 if n > 1 else 0, 2, 1000),
             ("allreduce", "world", -1, 3, 64),
             ("alltoall", "world", -1, 1, 64),
             ("barrier", "world", -1, 1, 0),
             ("gather", "world", 0, 1, 16),
             ("alltoallv", "world", -1, 1, tuple(4 * (i + 1) for i in range(n))),
             ("allgatherv", "world", -1, 1, tuple(4 * (i + 1) for i in range(n))),
             ("allreduce", "world" if len(half) == n else tuple(half), -1, 2, 16)}
        if mpi4:
            c.add(("allreduce", "world", -1, 3, 16))
        colls[r] = c
    return dict(p2p), dict(rma), colls


def observed(profile):
    n = profile["world_size"]
    p2p, rma, colls = {}, {}, {}
    world = tuple(range(n))
    for rec in profile["ranks"]:
        r = rec["rank"]
        members = {c["id"]: tuple(c["members"]) for c in rec["comms"]}
        for dst, nbytes, msgs in rec["p2p"]:
            p2p[(r, dst)] = [nbytes, msgs]
        for dst, nbytes, msgs in rec.get("rma", []):
            rma[(r, dst)] = [nbytes, msgs]
        s = set()
        for c in rec["collectives"]:
            m = members[c["comm"]]
            comm = "world" if m == world else m
            size = tuple(c["counts"]) if "counts" in c else c["bytes"]
            s.add((c["op"], comm, c["root"], c["calls"], size))
        colls[r] = s
    return p2p, rma, colls


def check(path, n, mpi4):
    try:
        profile = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        return [f"cannot read the profile {path}: {e}"]
    errs = []
    if profile.get("format") != "leanmpi-profile" or profile.get("version") != 1:
        errs.append(f"format/version: {profile.get('format')!r} {profile.get('version')!r}")
    if profile.get("world_size") != n or len(profile.get("ranks", [])) != n:
        errs.append(f"world_size {profile.get('world_size')} and {len(profile.get('ranks', []))} ranks, expected {n}")
        return errs
    want_p2p, want_rma, want_colls = expected(n, mpi4)
    got_p2p, got_rma, got_colls = observed(profile)
    if got_p2p != want_p2p:
        errs.append(f"p2p: got {sorted(got_p2p.items())}, expected {sorted(want_p2p.items())}")
    if got_rma != want_rma:
        errs.append(f"rma: got {sorted(got_rma.items())}, expected {sorted(want_rma.items())}")
    # the algorithm each collective ran: LeanMPI tells it (MPI_T's
    # coll_algorithm), the other libraries do not
    leanmpi = str(profile.get("library", "")).startswith("LeanMPI")
    for rec in profile["ranks"]:
        for c in rec["collectives"]:
            has = bool(c.get("algorithm"))
            if has != (leanmpi and n > 1) and not (leanmpi and n == 1):
                errs.append(f"rank {rec['rank']} {c['op']}: algorithm {c.get('algorithm')!r} "
                            f"({'expected' if leanmpi else 'not expected'} from {profile.get('library')!r})")
    for r in range(n):
        if got_colls.get(r) != want_colls[r]:
            errs.append(f"rank {r} collectives: missing {sorted(map(str, want_colls[r] - got_colls.get(r, set())))}, "
                        f"unexpected {sorted(map(str, got_colls.get(r, set()) - want_colls[r]))}")
    return errs


def run(cmd, env, timeout=120):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        sys.stdout.write(p.stdout + p.stderr)
        raise SystemExit(f"FAIL: {' '.join(map(str, cmd))} exited with {p.returncode}")
    return p


PEERS = {"openmpi": ("mpicc.openmpi", ["mpirun.openmpi", "--oversubscribe", "-x", "LD_PRELOAD",
                                        "-x", "LEANMPI_PROFILE_OUT"]),
         "mpich": ("mpicc.mpich", ["mpirun.mpich", "-genvlist", "LD_PRELOAD,LEANMPI_PROFILE_OUT"])}


def peer_run(a):
    cc, launch = PEERS[a.peer]
    if not shutil.which(cc) or not shutil.which(launch[0]):
        print(f"SKIP: {cc} or {launch[0]} is not installed (Debian: libopenmpi-dev / libmpich-dev)")
        raise SystemExit(SKIP)
    d = Path(a.build_dir)
    d.mkdir(parents=True, exist_ok=True)
    src = Path(a.source_dir)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for k in [k for k in env if k.startswith(("LEANMPI_", "PMIX_", "PMI_"))]:
        del env[k]
    lib, app = d / f"libleanmpi-profile-{a.peer}.so", d / f"profile_app_{a.peer}"
    probe = subprocess.run(["sh", str(src / "tools/profile/build.sh"), cc, str(lib)], env=env, capture_output=True,
                           text=True)
    if probe.returncode != 0 and "mpi.h" in probe.stderr:
        print(f"SKIP: {cc} has no mpi.h here (Debian: libopenmpi-dev / libmpich-dev): {probe.stderr.strip()[:200]}")
        raise SystemExit(SKIP)
    run([cc, "-O2", "-o", str(app), str(src / "tests/profile/profile_app.c")], env)
    env.update(LD_PRELOAD=str(lib), LEANMPI_PROFILE_OUT=a.out)
    return launch + ["-n", str(a.np), str(app)], env


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--peer", choices=sorted(PEERS))
    ap.add_argument("--preload", help="the profiler, preloaded into the job (LD_PRELOAD)")
    ap.add_argument("--build-dir")
    ap.add_argument("--source-dir")
    ap.add_argument("cmd", nargs="*")
    a = ap.parse_args()
    out = Path(a.out)
    if out.exists():
        out.unlink()
    if a.peer:
        cmd, env = peer_run(a)
    else:
        cmd, env = a.cmd, dict(os.environ, LEANMPI_PROFILE_OUT=str(out))
        if a.preload:
            env["LD_PRELOAD"] = a.preload
    p = run(cmd, env)
    mpi4 = "MPI_VERSION 4" in p.stdout
    leftovers = [p for p in out.parent.glob(out.name + ".tmp*")]
    errs = check(out, a.np, mpi4) + [f"temporary file left behind: {p}" for p in leftovers]
    for e in errs:
        print("FAIL:", e)
    if errs:
        raise SystemExit(1)
    print(f"PASS leanmpi-profile at {a.np} ranks ({a.peer or 'LeanMPI'}{', MPI-4 forms' if mpi4 else ''})")


if __name__ == "__main__":
    main()
