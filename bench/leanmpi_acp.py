#!/usr/bin/env python3
"""LeanMPI's ACP basic layer beside MPI one-sided communication, on this
machine: bench/src/acp.c built with LeanMPI's acpcc, bench/src/rma.c built
with every MPI of the side-by-side harness (bench/leanmpi_bench.py: Open MPI
4.1, MPICH 4.0, Open MPI 5 and LeanMPI), jobs alternating with the order
rotating each repetition, medians. Writes docs/ACP_PERFORMANCE.md and
bench/results/acp.json.

  python3 bench/leanmpi_acp.py [--reps 5] [--quick] [--venv DIR]   (make bench-acp)

Measured (each job as bench/src/acp.c and rma.c describe):
  ACP, 3 processes, process 0 acting while the others wait: acp_copy of
  8 bytes + acp_complete local to remote, remote to local and between two
  other processes, acp_add8 and acp_cas8, on starter memory (node-shared)
  and on registered (private) memory; rounds of 4 copies of 1 MiB +
  acp_complete; One_put_all with acp_copy at 2, 4, 8 and 16 processes.
  MPI, 2 ranks: MPI_Put / MPI_Get of 8 bytes + MPI_Win_flush,
  MPI_Fetch_and_op, rounds of 4 MPI_Get / MPI_Put of 1 MiB + flush, on
  windows from MPI_Win_allocate; One_put_all with MPI_Put.
Targets (issue: the ACP basic layer): acp_copy 8 B local to remote <= 1.0x
the best peer's MPI_Put latency; acp_copy 1 MiB remote to local bandwidth
>= 1.0x the best peer's MPI_Get bandwidth; One_put_all: process 0's private
memory at 16 processes <= 6.6 MB and growing by at most 64 KiB from 2 to 16.
"""
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import leanmpi_bench as lb  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
ACP_KEY = "leanmpi_acp"
PUTALL_NS = (2, 4, 8, 16)
# (ACP operation, size, MPI operation it stands beside, target limit or None)
PAIRS = [
    ("copy_l2r", 8, "put", 1.0),
    ("copy_r2l", 8, "get", None),
    ("copy_r2r", 8, "put", None),
    ("reg_copy_l2r", 8, "put", None),
    ("reg_copy_r2l", 8, "get", None),
    ("add8", 8, "fop", None),
    ("cas8", 8, "fop", None),
    ("copy_l2r_bw", 1 << 20, "put_bw", None),
    ("copy_r2l_bw", 1 << 20, "get_bw", 1.0),
    ("copy_r2r_bw", 1 << 20, "get_bw", None),
    ("reg_copy_l2r_bw", 1 << 20, "put_bw", None),
    ("reg_copy_r2l_bw", 1 << 20, "get_bw", None),
]
WHAT = {
    "copy_l2r": "acp_copy, caller's starter memory to process 1's",
    "copy_r2l": "acp_copy, process 1's starter memory to the caller's",
    "copy_r2r": "acp_copy, process 1's starter memory to process 2's",
    "reg_copy_l2r": "acp_copy, caller's registered memory to process 1's",
    "reg_copy_r2l": "acp_copy, process 1's registered memory to the caller's",
    "add8": "acp_add8 on process 1's starter memory",
    "cas8": "acp_cas8 on process 1's starter memory",
}
PUTALL_LIMIT_KB = 6.6e6 / 1024  # 6.6 MB
PUTALL_GROWTH_KB = 64


def acp_mpi(lean: lb.Mpi) -> lb.Mpi:
    bindir = Path(lean.mpicc).parent
    return lb.Mpi(ACP_KEY, "LeanMPI ACP", str(bindir / "acpcc"), [str(bindir / "mpirun"), "-n", "3"],
                  status=lean.status, note=lean.note)


def run_jobs(mpis, acp, exe_root, reps, quick, timeout, prog):
    """samples[(kind, mpi)] = list of per-repetition samples."""
    rma = lb.BENCH_BY_KEY["rma"]
    putall = lb.BENCH_BY_KEY["rma_putall"]
    acp_ops = lb.Bench("acp", "acp", (), "rma", nranks=3)
    acp_putall = lb.Bench("acp_putall", "acp", ("-p",), "rma_putall", ns=PUTALL_NS)
    runners = [(m, rma, putall) for m in mpis] + [(acp, acp_ops, acp_putall)]
    samples, errors = {}, []
    for rep in range(reps):
        k = rep % len(runners)
        for m, ops, pa in runners[k:] + runners[:k]:
            for b in (ops, pa):
                prog.step(f"rep {rep + 1}/{reps}: {b.key} with {m.key}")
                sample, _, err = lb.run_one(m, b, exe_root / m.key, quick, timeout, 1)
                if err:
                    errors.append(f"{m.key} {b.key} rep {rep + 1}: {err}")
                if sample:
                    samples.setdefault((b.kind, m.key), []).append(sample)
    return samples, errors


def medians(samples):
    """{mpi: {"ops": {op: {size: stats}}, "putall": {n: {metric: stats}}}}"""
    out = {}
    for (kind, key), reps in samples.items():
        dest = out.setdefault(key, {"ops": {}, "putall": {}})
        if kind == "rma":
            ops = {}
            for s in reps:
                for op, by_size in s.items():
                    for size, v in by_size.items():
                        ops.setdefault(op, {}).setdefault(size, []).append(v)
            dest["ops"] = {op: {sz: lb.stats(v) for sz, v in d.items()} for op, d in ops.items()}
        else:
            pa = {}
            for s in reps:
                for n, metrics in s.items():
                    for mname, v in metrics.items():
                        pa.setdefault(n, {}).setdefault(mname, []).append(v)
            dest["putall"] = {n: {mn: lb.stats(v) for mn, v in d.items()} for n, d in pa.items()}
    return out


def med(summary, key, op, size):
    st = summary.get(key, {}).get("ops", {}).get(op, {}).get(size)
    return st["median"] if st else None


def rows_and_targets(summary, peers, labels):
    rows, targets = [], []
    for op, size, mop, limit in PAIRS:
        ours = med(summary, ACP_KEY, op, size)
        bw = op.endswith("_bw")
        peer_vals = {k: med(summary, k, mop, size) for k in peers}
        got = {k: v for k, v in peer_vals.items() if v is not None}
        best = (max if bw else min)(got.items(), key=lambda kv: kv[1]) if got else None
        ratio = ours / best[1] if ours is not None and best else None
        lean_mpi = med(summary, lb.LEAN, mop, size)
        rows.append([op, lb.fmt_size(size), lb.fmt_num(ours), mop, lb.fmt_num(lean_mpi)]
                    + [lb.fmt_num(peer_vals[k]) for k in peers]
                    + [f"{labels[best[0]]}" if best else "–", lb.fmt_ratio(ratio)])
        if limit is not None:
            ok = ratio is not None and (ratio >= limit if bw else ratio <= limit)
            targets.append(dict(id=f"acp_{op}", title=f"acp_copy {'1 MiB remote to local bandwidth' if bw else '8 B local to remote latency'} "
                                f"against the best peer's MPI_{'Get bandwidth' if bw else 'Put latency'}",
                                value=ours, best=best[1] if best else None, best_mpi=best[0] if best else None,
                                ratio=ratio, limit=limit, op=">=" if bw else "<=",
                                status="PASS" if ok else ("FAIL" if ratio is not None else "MISSING")))
    pa = summary.get(ACP_KEY, {}).get("putall", {})
    at16 = pa.get(16, {}).get("private_kb")
    at2 = pa.get(2, {}).get("private_kb")
    v16 = at16["median"] if at16 else None
    targets.append(dict(id="acp_putall_16", title="One_put_all: process 0's private memory at 16 processes",
                        value=v16, limit=PUTALL_LIMIT_KB, op="<=", unit="kB",
                        status="MISSING" if v16 is None else ("PASS" if v16 <= PUTALL_LIMIT_KB else "FAIL")))
    growth = v16 - at2["median"] if at16 and at2 else None
    targets.append(dict(id="acp_putall_growth", title="One_put_all: growth of process 0's private memory, 2 to 16",
                        value=growth, limit=PUTALL_GROWTH_KB, op="<=", unit="kB",
                        status="MISSING" if growth is None else ("PASS" if growth <= PUTALL_GROWTH_KB else "FAIL")))
    return rows, targets


def render(result):
    labels, peers = result["labels"], result["peers"]
    summary = result["summary"]
    rows, targets = rows_and_targets(summary, peers, labels)
    w = []
    w.append("# The ACP basic layer beside MPI one-sided communication\n")
    w.append("_Generated by `bench/leanmpi_acp.py`; do not edit by hand. Raw data: `bench/results/acp.json`._\n")
    w.append(f"Run of {result['date']}, {result['reps']} repetitions, jobs alternating (order rotating); medians."
             + (" Quick mode." if result["quick"] else "") + "\n")
    w.append("Reproduce:\n\n```sh\n" + result["command"] + "\n```\n")
    w.append("Machine: " + "; ".join(f"{k}: {v}" for k, v in result["machine"].items()) + "\n")
    w.append("## Targets\n")
    w.append(lb.md_table(["target", "LeanMPI ACP", "against", "ratio / limit", "verdict"], [
        [t["title"], lb.fmt_num(t["value"]) + (f" {t['unit']}" if t.get("unit") else ""),
         (f"{labels.get(t['best_mpi'], '')} {lb.fmt_num(t['best'])}" if t.get("best") is not None else "–"),
         (f"{lb.fmt_ratio(t['ratio'])} {t['op']} {t['limit']}" if "ratio" in t
          else f"{t['op']} {t['limit']:.0f} kB"), t["status"]] for t in targets], numeric=False))
    w.append("\n## Operations\n")
    w.append("Time of one operation (µs) or bandwidth (MB/s, 10^6 bytes) of rounds of 4 copies of 1 MiB; "
             "ACP with 3 processes (process 0 acts, the others wait in acp_sync), MPI with 2 ranks (rank 0 "
             "acts on rank 1's window from MPI_Win_allocate, rank 1 waits in MPI_Barrier); ratio: LeanMPI ACP "
             "against the best peer's MPI operation beside it (LeanMPI's own MPI shown, not counted).\n")
    head = ["ACP operation", "size", "LeanMPI ACP", "MPI operation", "LeanMPI MPI"] + \
        [labels[k] for k in peers] + ["best peer", "ratio"]
    w.append(lb.md_table(head, rows, numeric=False))
    w.append("\n" + "\n".join(f"- `{op}`: {text}" for op, text in WHAT.items()) + "\n")
    w.append("\n## One_put_all\n")
    w.append("Process 0 copies (ACP: acp_copy from its starter memory) or puts (MPI_Put under "
             "MPI_Win_lock_all) to every other process, 0 B to 4 MiB, then completes (acp_complete / "
             "MPI_Win_flush_all); process 0's private memory (Private_Clean + Private_Dirty) afterwards, kB.\n")
    keys = [ACP_KEY, lb.LEAN] + peers
    prow = []
    for n in PUTALL_NS:
        r = [str(n)]
        for k in keys:
            st = summary.get(k, {}).get("putall", {}).get(n, {}).get("private_kb")
            r.append(lb.fmt_num(st["median"]) if st else "–")
        prow.append(r)
    w.append(lb.md_table(["processes", "LeanMPI ACP", "LeanMPI MPI"] + [labels[k] for k in peers], prow,
                         numeric=False))
    if result["errors"]:
        w.append("\n## Jobs that failed\n")
        w.append("\n".join(f"- {e}" for e in result["errors"]) + "\n")
    return "\n".join(w), targets


def main(argv=None):
    a = lb.side_by_side_args(__doc__, "acp", argv)
    mpis = lb.discover(Path(a.leanmpi_prefix), Path(a.venv) if a.venv else None)
    acp = acp_mpi(mpis[0])
    build = Path(a.build_dir)
    runs = 2 * (len(mpis) + 1) * a.reps
    prog = lb.Progress(len(mpis) + 1 + runs)
    lb.build_all(mpis, build, prog, programs=["rma"])
    lb.build_all([acp], build, prog, programs=["acp"])
    live = [m for m in mpis if m.status == "ok"]
    if acp.status != "ok":
        sys.exit(f"leanmpi_acp: LeanMPI's ACP bench cannot be built: {acp.note}")
    samples, errors = run_jobs(live, acp, build, a.reps, a.quick, a.timeout, prog)
    prog.done()
    peers = [m.key for m in live if m.key != lb.LEAN]
    labels = {m.key: m.label for m in mpis + [acp]}
    result = dict(date=time.strftime("%Y-%m-%dT%H:%M:%S%z"), reps=a.reps, quick=a.quick,
                  command="python3 bench/leanmpi_acp.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                  machine=lb.machine_info(), labels=labels, peers=peers, summary=medians(samples),
                  errors=errors, skipped={m.key: m.note for m in mpis if m.status != "ok"})
    text, targets = render(result)
    result["targets"] = targets
    Path(a.out).mkdir(parents=True, exist_ok=True)
    (Path(a.out) / "acp.json").write_text(json.dumps(lb._jsonable(result), indent=1))
    Path(a.docs).mkdir(parents=True, exist_ok=True)
    (Path(a.docs) / "ACP_PERFORMANCE.md").write_text(text)
    for t in targets:
        print(f"{t['status']:7} {t['title']}: {lb.fmt_num(t['value'])}"
              + (f" (ratio {lb.fmt_ratio(t['ratio'])})" if t.get("ratio") is not None else ""))
    print(f"wrote {Path(a.out) / 'acp.json'} and {Path(a.docs) / 'ACP_PERFORMANCE.md'}")


if __name__ == "__main__":
    main()
