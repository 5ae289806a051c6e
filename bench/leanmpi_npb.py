#!/usr/bin/env python3
"""NAS Parallel Benchmarks 3.4, IS and DT (the C programs), with LeanMPI
(its default mode and the ranks of a node in one address space) and the
peers of the side-by-side harness (Open MPI 4.1, MPICH 4.0, Open MPI 5),
each built from the published sources with that MPI's compiler wrapper
through NPB's own makefiles (config/make.def from the template, MPICC the
wrapper, CFLAGS -O3). Jobs alternate, the order rotating each repetition;
medians of the benchmark's own "Time in seconds"; every run must print
"Verification = SUCCESSFUL" (a run that does not counts as failed).
Writes docs/NPB.md and bench/results/npb.json.

  python3 bench/leanmpi_npb.py --npb-dir DIR [--reps 3] [--is-classes A,B] [--nranks 2,4]
                               [--dt-classes W,A]           (make bench-npb NPB_DIR=DIR)

DIR is an unpacked NPB 3.4 release (https://www.nas.nasa.gov/software/npb.html,
NPB3.4.x.tar.gz) or its NPB3.4-MPI folder; the sources are not part of
LeanMPI and are never fetched by this script. Without them it reports
SKIP and exits 77.

IS runs at the rank counts given. DT cannot run at 2 or 4 ranks: each
graph needs a process per node, 5 for class S (BH and WH), 11 for class
W, 21 for class A; it runs at those counts, oversubscribed. DT is built
with -O3 -fwrapv: its ipowMod overflows a signed int (undefined
behaviour), and GCC 12 at -O3 then fails class A's verification with
every MPI; -fwrapv gives the published results.

Target (issue: ranks sharing one address space): IS class B on 4 ranks in
one address space faster than LeanMPI's default mode and than every peer.

Profiling overhead (issue: process mapping): the IS runs also go with
leanmpi-profile preloaded into LeanMPI's default mode (LD_PRELOAD, a
profile written at the end of each run); target: at most 5% more time
than without it on IS class A.
"""
import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import leanmpi_bench as lb  # noqa: E402
import leanmpi_shared  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SKIP = 77
DT_RANKS = {"S": 5, "W": 11, "A": 21, "B": 43}
DT_GRAPHS = ("BH", "WH")
TARGET = dict(bench="is", cls="B", nranks=4)
PROFILED = "leanmpi_profiled"
OVERHEAD_LIMIT = 0.05


def find_tree(d):
    for c in (Path(d), Path(d) / "NPB3.4-MPI"):
        if (c / "IS" / "is.c").exists() and (c / "sys" / "setparams.c").exists() and \
                (c / "config" / "make.def.template").exists():
            return c
    return None


def make_def(template: str, mpicc: str) -> str:
    out = []
    for line in template.splitlines():
        if re.match(r"^MPICC\s*=", line):
            line = f"MPICC = {mpicc}"
        out.append(line)
    return "\n".join(out) + "\n"


def build(m: lb.Mpi, tree: Path, where: Path, is_classes, dt_classes, timeout):
    """NPB's makefiles in a copy of the tree per MPI. {(bench, class): exe}, errors"""
    dst = where / m.key / "NPB3.4-MPI"
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(tree, dst)
    (dst / "config" / "make.def").write_text(make_def((tree / "config" / "make.def.template").read_text(), m.mpicc))
    (dst / "bin").mkdir(exist_ok=True)
    exes, errors = {}, []
    jobs = [("is", c, []) for c in is_classes] + \
           [("dt", c, ["CFLAGS=-O3 -fwrapv", "CMPI_LIB=-lm"]) for c in dt_classes]
    for bench, cls, extra in jobs:
        rc, out, err, _ = lb.run_cmd(["make", "-C", str(dst / bench.upper()), f"CLASS={cls}"] + extra,
                                     m.environ(), timeout)
        exe = dst / "bin" / f"{bench}.{cls}.x"
        if rc == 0 and exe.exists():
            exes[(bench, cls)] = exe
        else:
            errors.append(f"{m.key}: building {bench}.{cls} failed: {(err or out).strip()[-300:]}")
    return exes, errors


def parse(text):
    t = re.search(r"Time in seconds\s*=\s*([\d.]+)", text)
    mops = re.search(r"Mop/s total\s*=\s*([\d.]+)", text)
    ok = re.search(r"Verification\s*=\s*SUCCESSFUL", text)
    return (float(t.group(1)) if t else None, float(mops.group(1)) if mops else None, bool(ok))


def runs(is_classes, nranks, dt_classes):
    """(bench, class, nranks, args) of every measurement"""
    out = [("is", c, n, ()) for c in is_classes for n in nranks]
    out += [("dt", c, DT_RANKS[c], (g,)) for c in dt_classes for g in DT_GRAPHS]
    return out


def key(bench, cls, n, args):
    return f"{bench}.{cls}" + (f".{args[0]}" if args else "") + f".np{n}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--npb-dir", help="an unpacked NPB 3.4 release or its NPB3.4-MPI folder")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--is-classes", default="A,B")
    ap.add_argument("--nranks", default="2,4")
    ap.add_argument("--dt-classes", default="W,A")
    ap.add_argument("--mpis", help="comma-separated keys (default: all found)")
    ap.add_argument("--venv", default=None)
    ap.add_argument("--leanmpi-prefix", default=str(REPO / "build"))
    ap.add_argument("--build-dir", default=str(REPO / "build" / "bench-npb"))
    ap.add_argument("--out", default=str(REPO / "bench" / "results"))
    ap.add_argument("--docs", default=str(REPO / "docs"))
    ap.add_argument("--timeout", type=float, default=600)
    a = ap.parse_args(argv)
    tree = find_tree(a.npb_dir) if a.npb_dir else None
    if not tree:
        print("SKIP: NPB 3.4 sources not given or not found (unpack NPB3.4.x.tar.gz from "
              "https://www.nas.nasa.gov/software/npb.html and pass --npb-dir / NPB_DIR)")
        return SKIP
    is_classes = [c for c in a.is_classes.split(",") if c]
    dt_classes = [c for c in a.dt_classes.split(",") if c]
    nranks = [int(n) for n in a.nranks.split(",") if n]
    mpis = lb.discover(Path(a.leanmpi_prefix), Path(a.venv) if a.venv else None)
    mpis.insert(1, leanmpi_shared.shared_mpi(mpis[0]))
    prof_lib = Path(a.leanmpi_prefix) / "libleanmpi-profile.so"
    if mpis[0].status == "ok" and prof_lib.exists():
        lean = mpis[0]
        mpis.insert(2, lb.Mpi(PROFILED, "LeanMPI, leanmpi-profile preloaded", lean.mpicc, list(lean.mpirun),
                              dict(lean.env, LD_PRELOAD=str(prof_lib),
                                   LEANMPI_PROFILE_OUT=str(Path(a.build_dir) / "is.profile.json"))))
    if a.mpis:
        mpis = [m for m in mpis if m.key in a.mpis.split(",")]
    measures = runs(is_classes, nranks, dt_classes)
    prog = lb.Progress(len(mpis) + a.reps * len(mpis) * len(measures))
    exes, errors = {}, []
    for m in mpis:
        prog.step(f"building IS and DT with {m.key}")
        if m.status != "ok":
            continue
        if m.key in (leanmpi_shared.SHARED, PROFILED):
            exes[m.key] = exes.get(lb.LEAN, {})  # the same programs, started another way
            if m.key == PROFILED:  # the profiler costs what it costs on IS
                exes[m.key] = {k: v for k, v in exes[m.key].items() if k[0] == "is"}
            continue
        exes[m.key], errs = build(m, tree, Path(a.build_dir), is_classes, dt_classes, a.timeout)
        errors += errs
    live = [m for m in mpis if m.status == "ok" and exes.get(m.key)]
    samples = {}
    for rep in range(a.reps):
        for bench, cls, n, args in measures:
            order = live[rep % len(live):] + live[:rep % len(live)] if live else []
            for m in order:
                k = key(bench, cls, n, args)
                prog.step(f"rep {rep + 1}/{a.reps}: {k} with {m.key}")
                exe = exes[m.key].get((bench, cls))
                if not exe:
                    continue
                rc, out, err, wall = lb.run_cmd(m.launch(exe, args, nranks=n), m.environ(), a.timeout)
                t, mops, ok = parse(out or "")
                if rc != 0 or t is None or not ok:
                    errors.append(f"{m.key} {k} rep {rep + 1}: exit {rc}, "
                                  f"{'verification failed' if t is not None and not ok else 'no result'}: "
                                  f"{(err or out or '').strip()[-200:]}")
                    continue
                samples.setdefault(k, {}).setdefault(m.key, []).append(dict(seconds=t, mops=mops, wall=wall))
    prog.done()
    summary = {k: {mk: dict(seconds=lb.stats([s["seconds"] for s in v]), mops=lb.stats([s["mops"] for s in v]),
                            wall=lb.stats([s["wall"] for s in v]))
                   for mk, v in per.items()} for k, per in samples.items()}
    result = dict(date=time.strftime("%Y-%m-%dT%H:%M:%S%z"), reps=a.reps,
                  command="python3 bench/leanmpi_npb.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                  machine=lb.machine_info(), labels={m.key: m.label for m in mpis}, keys=[m.key for m in live],
                  measures=[key(*x) for x in measures], summary=summary, errors=errors,
                  notes={m.key: m.note for m in mpis if m.status != "ok"})
    result["target"] = target_of(result)
    result["overhead"] = overhead_of(result)
    Path(a.out).mkdir(parents=True, exist_ok=True)
    (Path(a.out) / "npb.json").write_text(json.dumps(lb._jsonable(result), indent=1))
    Path(a.docs).mkdir(parents=True, exist_ok=True)
    (Path(a.docs) / "NPB.md").write_text(render(result))
    t = result["target"]
    print(f"{t['status']} {t['title']}: {lb.fmt_num(t['value'])} s, default {lb.fmt_num(t['default'])} s, "
          f"best peer {lb.fmt_num(t['best'])} s")
    for o in result["overhead"]:
        print(f"{o['status']} profiling overhead on {o['run']}: {lb.fmt_num(o['overhead'] * 100 if o['overhead'] is not None else None)}%")
    print(f"wrote {Path(a.out) / 'npb.json'} and {Path(a.docs) / 'NPB.md'}")
    return 0


def median(summary, k, mpi, what="seconds"):
    st = summary.get(k, {}).get(mpi, {}).get(what)
    return st["median"] if st else None


def target_of(result):
    k = key(TARGET["bench"], TARGET["cls"], TARGET["nranks"], ())
    s, keys = result["summary"], result["keys"]
    ours, default = median(s, k, leanmpi_shared.SHARED), median(s, k, lb.LEAN)
    peers = {m: median(s, k, m) for m in keys if m not in (lb.LEAN, leanmpi_shared.SHARED, PROFILED)}
    best_k, best = lb.best_peer(peers, "lower", exclude=None)
    others = [v for v in [default] + list(peers.values()) if v is not None]
    if ours is None or default is None or best is None:
        status = "MISSING"
    else:
        status = "PASS" if all(ours < v for v in others) else "FAIL"
    return dict(title="NPB IS class B on 4 ranks, one address space: faster than the default mode and every peer",
                value=ours, default=default, best=best, best_mpi=best_k, status=status)


def overhead_of(result):
    """leanmpi-profile's cost on each IS run of class A: on the job's whole
    time (start, the run, writing the profile at the end), since NPB's own
    clock counts in hundredths of a second and covers only the sort"""
    out = []
    for k in result["measures"]:
        if not k.startswith("is.A."):
            continue
        s = result["summary"]
        plain, prof = median(s, k, lb.LEAN, "wall"), median(s, k, PROFILED, "wall")
        o = prof / plain - 1 if plain and prof else None
        out.append(dict(run=k, plain=plain, profiled=prof, npb_plain=median(s, k, lb.LEAN),
                        npb_profiled=median(s, k, PROFILED), overhead=o, limit=OVERHEAD_LIMIT,
                        status="MISSING" if o is None else "PASS" if o <= OVERHEAD_LIMIT else "FAIL"))
    return out


def render(result):
    labels, keys, s = result["labels"], result["keys"], result["summary"]
    t = result["target"]
    w = ["# NAS Parallel Benchmarks IS and DT\n",
         "_Generated by `bench/leanmpi_npb.py`; do not edit by hand. Raw data: `bench/results/npb.json`._\n",
         f"Run of {result['date']}, {result['reps']} repetitions, jobs alternating (order rotating); medians of "
         "the benchmark's own time. Every run verified (`Verification = SUCCESSFUL`); runs that were not are "
         "listed at the end and not counted.\n",
         "NPB 3.4 (the MPI C benchmarks), built from the published sources with each MPI's compiler wrapper through "
         "NPB's makefiles (CFLAGS -O3; DT -O3 -fwrapv, see the script's header). The sources are not part of "
         "LeanMPI: give an unpacked release.\n",
         "Reproduce:\n\n```sh\n" + result["command"] + "\n```\n",
         "Machine: " + "; ".join(f"{k}: {v}" for k, v in result["machine"].items()) + "\n",
         "## Target\n",
         lb.md_table(["target", "one address space (s)", "default mode (s)", "best peer (s)", "verdict"],
                     [[t["title"], lb.fmt_num(t["value"]), lb.fmt_num(t["default"]),
                       f"{labels.get(t['best_mpi'], '–')} {lb.fmt_num(t['best'])}", t["status"]]], numeric=False),
         "\n## Profiling overhead\n",
         "leanmpi-profile preloaded into LeanMPI's default mode (LD_PRELOAD; the profile is written at the end of "
         "each run), against the same runs without it; target: at most 5% on IS class A. The overhead is taken on "
         "the whole job's time (mpirun to its exit: start, the run, the profile written), as NPB's clock counts "
         "hundredths of a second and only the sort; NPB's time is beside it.\n",
         lb.md_table(["run", "job without (s)", "job profiled (s)", "overhead", "NPB time without / profiled (s)",
                      "verdict"],
                     [[o["run"], lb.fmt_num(o["plain"]), lb.fmt_num(o["profiled"]),
                       "–" if o["overhead"] is None else f"{o['overhead'] * 100:+.1f}%",
                       f"{lb.fmt_num(o.get('npb_plain'))} / {lb.fmt_num(o.get('npb_profiled'))}", o["status"]]
                      for o in result.get("overhead", [])], numeric=False),
         "\n## Times\n",
         "Seconds (median); the last columns: one address space and the default mode against the best peer "
         "(below 1: faster), and the speedup of one address space over the default mode.\n"]
    rows = []
    peers = [k for k in keys if k not in (lb.LEAN, leanmpi_shared.SHARED, PROFILED)]
    for k in result["measures"]:
        vals = {m: median(s, k, m) for m in keys}
        _, best = lb.best_peer({m: vals[m] for m in peers}, "lower", exclude=None)
        sh, de = vals.get(leanmpi_shared.SHARED), vals.get(lb.LEAN)
        rows.append([k] + [lb.fmt_num(vals[m]) for m in keys]
                    + [lb.fmt_ratio(lb.ratio(sh, best)), lb.fmt_ratio(lb.ratio(de, best)),
                       lb.fmt_ratio(lb.ratio(de, sh))])
    w.append(lb.md_table(["run"] + [labels[m] for m in keys] + ["shared / best peer", "default / best peer",
                                                               "speedup of shared"], rows, numeric=False))
    w.append("\nNPB's clock counts hundredths of a second: DT's class W runs last one or two of them, so its "
             "rows say little. ")
    w.append("IS sorts integer keys: a bucket-size allreduce and a large MPI_Alltoallv of the keys each "
             "iteration. DT moves arrays along a graph (BH: binary tree up, WH: down) with point-to-point "
             "messages; `dt.A.BH.np21` is class A, graph BH, 21 ranks (more than one address space holds: two groups "
             "talk through the default transports).\n")
    if result["notes"]:
        w.append("\nNot measured: " + "; ".join(f"{labels.get(k, k)} ({v})" for k, v in result["notes"].items())
                 + "\n")
    if result["errors"]:
        w.append("\n## Runs that failed\n\n" + "\n".join(f"- {e}" for e in result["errors"]) + "\n")
    return "\n".join(w)


if __name__ == "__main__":
    sys.exit(main())
