#!/usr/bin/env python3
"""LeanMPI against LeanMPI: two builds side by side, to show that a change
did not change speed.

The peers' harness (leanmpi_bench.py) compares LeanMPI with other MPIs;
its targets sit within a few percent of 1.0 for some collectives, where the
noise of a shared 2-core machine decides them. A change that must not alter
speed is better judged against the build before it: the same benchmark
programs (bench/src) are built with each build's mpicc and run in
alternation (base, new, base, new, ...), so that both see the same machine,
and the report gives medians, minimums and the ratio new / base.

  bench/leanmpi_ab.py --base OLD_BUILD_DIR [--new NEW_BUILD_DIR]
                      [--reps 10] [--np 2,4] [--sizes 8,1048576]
                      [--colls bcast,reduce,allreduce,allgather,alltoall,barrier]

A build directory is one that holds bin/mpicc and bin/mpirun (for example a
worktree of the commit before the change, built with `make build`).
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import leanmpi_bench as lb  # noqa: E402  (output parsing, environment)

SRC = lb.SRC


def summarize(samples):
    """samples: {(case, build): [values]} -> rows (case, base median, base
    min, new median, new min, ratio of medians), in case order."""
    rows = []
    for case in sorted({c for c, _ in samples}):
        b, n = samples.get((case, "base"), []), samples.get((case, "new"), [])
        if not b or not n:
            continue
        mb, mn = statistics.median(b), statistics.median(n)
        rows.append((case, mb, min(b), mn, min(n), mn / mb if mb else float("nan")))
    return rows


def build(prefix, program, out):
    cc = Path(prefix) / "bin" / "mpicc"
    subprocess.run([str(cc), "-O2", "-I", str(SRC), "-o", str(out), str(SRC / f"{program}.c")],
                   check=True)


def run(prefix, np, exe, args):
    cmd = [str(Path(prefix) / "bin" / "mpirun"), "-n", str(np), str(exe)] + args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=lb.clean_env())
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {p.stdout}{p.stderr}")
    return lb.parse_output(p.stdout)[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="build directory of the build before the change")
    ap.add_argument("--new", default=str(lb.REPO / "build"), help="build directory of the change (default: build)")
    ap.add_argument("--reps", type=int, default=10, help="alternations (default 10)")
    ap.add_argument("--np", default="2,4", help="process counts of the collectives (default 2,4)")
    ap.add_argument("--sizes", default="8,1048576", help="message sizes in bytes (default 8,1048576)")
    ap.add_argument("--colls", default="barrier,bcast,reduce,allreduce,allgather,alltoall")
    a = ap.parse_args()
    builds = {"base": a.base, "new": a.new}
    nps = [int(x) for x in a.np.split(",") if x]
    sizes = [int(x) for x in a.sizes.split(",") if x]
    samples = {}
    with tempfile.TemporaryDirectory(prefix="lmab.") as tmp:
        exes = {}
        for b, prefix in builds.items():
            for prog in ("pingpong", "bandwidth", "coll"):
                exes[(b, prog)] = Path(tmp) / f"{prog}_{b}"
                build(prefix, prog, exes[(b, prog)])
        for i in range(a.reps):
            print(f"alternation {i + 1}/{a.reps}", file=sys.stderr)
            for b, prefix in builds.items():
                # the point-to-point programs sweep sizes up to -m; only the
                # sizes asked for are kept
                p2p = ["-m", str(max(sizes)), "-t", "0.1"]
                for r in run(prefix, 2, exes[(b, "pingpong")], p2p):
                    if int(r["size"]) in sizes:
                        samples.setdefault((f"pingpong {int(r['size']):>8} B np2 [us]", b), []).append(
                            float(r["lat_us"]))
                for r in run(prefix, 2, exes[(b, "bandwidth")], p2p):
                    if int(r["size"]) in sizes:
                        # lower is better everywhere in the table: time per MB
                        samples.setdefault((f"bandwidth {int(r['size']):>7} B np2 [us/MB]", b), []).append(
                            1e6 / float(r["mb_s"]))
                for np in nps:
                    for r in run(prefix, np, exes[(b, "coll")], ["-c", a.colls, "-s", a.sizes]):
                        samples.setdefault((f"{r['coll']:<9} {int(r['size']):>8} B np{np} [us]", b), []).append(
                            float(r["lat_us"]))
    print(f"# new = {a.new}, base = {a.base}, {a.reps} alternations; lower is better; ratio = new / base medians")
    print(f"{'case':<40} {'base med':>10} {'base min':>10} {'new med':>10} {'new min':>10} {'ratio':>7}")
    for case, mb, nb, mn, nn, ratio in summarize(samples):
        print(f"{case:<40} {mb:>10.4g} {nb:>10.4g} {mn:>10.4g} {nn:>10.4g} {ratio:>7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
