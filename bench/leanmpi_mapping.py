#!/usr/bin/env python3
"""Placement study on the shaped virtual cluster: block, cyclic and the
placement leanmpi-map finds from a profile, side by side.

  python3 bench/leanmpi_mapping.py [--reps 5] [--rate 400mbit] [--bytes 262144] [--npb-dir DIR]
                                                                    (make bench-mapping [NPB_DIR=DIR])

For each program of bench/src/mapping_app.c (IMB-style allreduce,
alltoall, bcast and reduce on all ranks; transpose: alltoall within the
columns of a 2-column grid of ranks, as FT does), and with --npb-dir DIR
(an unpacked NPB 3.4 release) NPB IS class A and DT class S (graph BH),
unmodified programs placed by rankfiles (mpirun --rankfile):
 1. profile: the program runs once on this machine (8 ranks) linked with
    leanmpi-profile;
 2. map: leanmpi-map places its 8 ranks on 4 hosts x 2 slots, whose links
    between hosts are the shaped ones (--rate; tc tbf, tools/vcluster) and
    within a host shared memory (the machine file it writes);
 3. run: on a virtual cluster of 4 hosts with links shaped to --rate,
    LeanMPI's mpirun starts 8 ranks in block order and the program takes
    the placement as MPI_Comm_split keys (block: its own ranks; cyclic:
    round robin over hosts; mapped: leanmpi-map's split format), the three
    alternating, order rotating per repetition; medians.
Writes bench/results/mapping.json and docs/MAPPING_EVALUATION.md.

Targets (issue: process mapping): the mapped placement is never slower
than the better of block and cyclic for any program (medians), and at
least 1.2x faster than block on the alltoall-heavy one (transpose).
Needs root (network namespaces); prints SKIP and exits 77 where the
machine cannot host a virtual cluster.
"""
import argparse
import json
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import leanmpi_hosts as lh  # noqa: E402

ROOT = lh.ROOT
MAP = ROOT / "build" / "bin" / "leanmpi-map"
OMPI_CC = "mpicc.openmpi"
PATTERNS = ("allreduce", "alltoall", "bcast", "reduce", "transpose")
# NPB programs (--npb-dir): (name, benchmark, class, arguments); IS sorts
# with an alltoallv a step, DT class S sends arrays down a binary tree (5
# nodes: 3 of the 8 ranks stay idle)
NPB_PROGRAMS = (("npb-is.A", "is", "A", ()), ("npb-dt.S.BH", "dt", "S", ("BH",)))
PROGRAMS = list(PATTERNS)
ALLTOALL_HEAVY = "transpose"
PLACEMENTS = ("block", "cyclic", "mapped")
HOSTS, SLOTS = 4, 2


def keys_of(place):
    """split keys for a launch in block order: slot s's rank"""
    key = [None] * len(place)
    for r, s in enumerate(place):
        key[s] = r
    return key


def machine_text(rate_mbs):
    lines = [f"host {h} slots={SLOTS}" for h in lh.hosts(HOSTS)]
    lines += ["link node latency_us=0.5 bandwidth_mbs=10000",
              f"link network latency_us=50 bandwidth_mbs={rate_mbs:g}"]
    return "\n".join(lines) + "\n"


def rate_mbs(rate):
    """tc rate ('400mbit', '1gbit') in MB/s"""
    units = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
    for u, f in units.items():
        if rate.endswith(u):
            return float(rate[:-len(u)]) * f / 8 / 1e6
    raise SystemExit(f"--rate {rate}: give kbit, mbit or gbit")


def sh(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise SystemExit(f"leanmpi_mapping: {' '.join(map(str, cmd))} failed: {(p.stderr or p.stdout).strip()[-400:]}")
    return p


def prepare(work, a):
    """Build the program (plain and profiled), profile every pattern, map
    it: {pattern: {"keys": {placement: [...]}, "cost": {...}, "engine": e}}"""
    cc = str(ROOT / "build" / "bin" / "mpicc")
    src = str(ROOT / "bench" / "src" / "mapping_app.c")
    sh([cc, "-O2", "-o", str(work / "mapping_app"), src])
    if a.openmpi:
        sh([OMPI_CC, "-O2", "-o", str(work / "mapping_app_openmpi4"), src], env=lh.clean_env())
    sh([cc, "-O2", "-o", str(work / "mapping_app_prof"), src, "-lleanmpi-profile"])
    (work / "machine.txt").write_text(machine_text(rate_mbs(a.rate)))
    plans = {}
    for p in PATTERNS:
        prof = work / f"{p}.profile.json"
        env = dict(lh.clean_env(), LEANMPI_PROFILE_OUT=str(prof))
        sh([str(ROOT / "build" / "bin" / "mpirun"), "-n", str(HOSTS * SLOTS), str(work / "mapping_app_prof"),
            "-p", p, "-b", str(a.bytes), "-i", "3"], env=env)
        out = work / f"{p}.map.json"
        r = sh([str(MAP), str(prof), "--machine", str(work / "machine.txt"), "--format", "json", "-o", str(out)])
        rep = json.loads(out.read_text())
        slot = {(h, s): i for i, (h, s) in enumerate((h, s) for h in lh.hosts(HOSTS) for s in range(SLOTS))}
        mapped = [slot[(x["host"], x["slot"])] for x in rep["placement"]]
        n = HOSTS * SLOTS
        cyclic = [(r % HOSTS) * SLOTS + r // HOSTS for r in range(n)]
        plans[p] = dict(keys=dict(block=list(range(n)), cyclic=keys_of(cyclic), mapped=keys_of(mapped)),
                        engine=rep["engine"], predicted_cost_us=rep["predicted_cost_us"], note=r.stderr.strip())
        if a.openmpi:
            # the same program's profile, decomposed with Open MPI 4.1's
            # algorithms, as an Open MPI rankfile
            rf = work / f"{p}.openmpi4.rankfile"
            r = sh([str(MAP), str(prof), "--machine", str(work / "machine.txt"), "--kb", "openmpi4", "--format",
                    "openmpi", "-o", str(rf)])
            plans[p]["openmpi4"] = dict(rankfile=rf.read_text(), note=r.stderr.strip(),
                                        engine=r.stderr.rsplit("chosen: ", 1)[-1].strip())
    return plans


def npb_time_us(text):
    """NPB's own time, verified runs only"""
    if not re.search(r"Verification\s*=\s*SUCCESSFUL", text or ""):
        return None
    v = lh.value(text, r"Time in seconds\s*=\s*([\d.]+)")
    return v * 1e6 if v is not None else None


def rankfile_text(place):
    """a rankfile: rank r on slot place[r] (slots numbered host by host)"""
    hl = lh.hosts(HOSTS)
    return "".join(f"rank {r}={hl[s // SLOTS]} slot={s % SLOTS}\n" for r, s in enumerate(place))


def prepare_npb(work, a, plans):
    """NPB programs built with LeanMPI's and Open MPI 4.1's wrappers,
    profiled here (leanmpi-profile preloaded), mapped; the rankfiles of
    block, cyclic and the mapped placement for each."""
    import leanmpi_bench as lb
    import leanmpi_npb as ln
    tree = ln.find_tree(a.npb_dir)
    if not tree:
        raise SystemExit(f"leanmpi_mapping: no NPB 3.4 sources at {a.npb_dir}")
    lean = lb.Mpi("leanmpi", "LeanMPI", str(ROOT / "build" / "bin" / "mpicc"), [])
    is_cls = sorted({c for _, b, c, _ in NPB_PROGRAMS if b == "is"})
    dt_cls = sorted({c for _, b, c, _ in NPB_PROGRAMS if b == "dt"})
    exes, errs = ln.build(lean, tree, work / "npb", is_cls, dt_cls, 600)
    ompi_exes = {}
    if a.openmpi:
        ompi = lb.Mpi("openmpi4", "Open MPI 4.1", OMPI_CC, [], lh.clean_env())
        ompi_exes, e2 = ln.build(ompi, tree, work / "npb", is_cls, dt_cls, 600)
        errs += e2
    if errs:
        raise SystemExit("leanmpi_mapping: " + "; ".join(errs))
    n = HOSTS * SLOTS
    slot = {(h, s): i for i, (h, s) in enumerate((h, s) for h in lh.hosts(HOSTS) for s in range(SLOTS))}
    cyclic = [(r % HOSTS) * SLOTS + r // HOSTS for r in range(n)]
    for name, bench, cls, args in NPB_PROGRAMS:
        prof = work / f"{name}.profile.json"
        env = dict(lh.clean_env(), LEANMPI_PROFILE_OUT=str(prof),
                   LD_PRELOAD=str(ROOT / "build" / "libleanmpi-profile.so"))
        sh([str(ROOT / "build" / "bin" / "mpirun"), "-n", str(n), str(exes[(bench, cls)])] + list(args), env=env)
        out = work / f"{name}.map.json"
        r = sh([str(MAP), str(prof), "--machine", str(work / "machine.txt"), "--format", "json", "-o", str(out)])
        rep = json.loads(out.read_text())
        mapped = [slot[(x["host"], x["slot"])] for x in rep["placement"]]
        files = {}
        for pl, place in (("block", list(range(n))), ("cyclic", cyclic), ("mapped", mapped)):
            f = work / f"{name}.{pl}.rankfile"
            f.write_text(rankfile_text(place))
            files[pl] = str(f)
        plans[name] = dict(keys=dict(block=list(range(n)), cyclic=keys_of(cyclic), mapped=keys_of(mapped)),
                           engine=rep["engine"], predicted_cost_us=rep["predicted_cost_us"], note=r.stderr.strip(),
                           npb=dict(exe=str(exes[(bench, cls)]), args=list(args), rankfiles=files,
                                    exe_openmpi4=str(ompi_exes.get((bench, cls), ""))))
        if a.openmpi:
            rf = work / f"{name}.openmpi4.rankfile"
            r = sh([str(MAP), str(prof), "--machine", str(work / "machine.txt"), "--kb", "openmpi4", "--format",
                    "openmpi", "-o", str(rf)])
            plans[name]["openmpi4"] = dict(rankfile=rf.read_text(), note=r.stderr.strip(),
                                           engine=r.stderr.rsplit("chosen: ", 1)[-1].strip())
        PROGRAMS.append(name)


def same_as(plan):
    """The placement leanmpi-map chose, when it is block's or cyclic's:
    then it is that job, run once and counted for both."""
    for pl in ("block", "cyclic"):
        if plan["keys"]["mapped"] == plan["keys"][pl]:
            return pl
    return None


def ompi_launch(work, p, pl, a, wrapper, plan=None):
    """Open MPI 4.1's mpirun on the cluster: block by slot (its default),
    cyclic by node, mapped by the rankfile leanmpi-map wrote"""
    n = HOSTS * SLOTS
    cmd = ["mpirun.openmpi", "-n", str(n), "--mca", "plm_rsh_agent", wrapper, "--mca", "pml", "ob1",
           "--mca", "btl", "self,vader,tcp", "--oversubscribe"]
    if pl == "mapped":
        rf = work / f"{p}.openmpi4.rankfile"
        cmd += ["--rankfile", str(rf)]
    else:
        # bound to cores as the rankfile binds them (slot s: core s), so
        # that only the placement differs: the virtual hosts share this
        # machine's cores
        cmd += ["--host", ",".join("%s:%d" % (h, SLOTS) for h in lh.hosts(HOSTS)), "--bind-to", "core"]
        if pl == "cyclic":
            cmd += ["--map-by", "node"]
    if plan and "npb" in plan:
        return cmd + [plan["npb"]["exe_openmpi4"]] + list(plan["npb"]["args"])
    return cmd + [str(work / "mapping_app_openmpi4"), "-p", p, "-b", str(a.bytes), "-i", str(a.iters)]


def ompi_same_as(plan):
    """block or cyclic, when the rankfile says exactly what that launch
    does (rank r on the slot block or round robin gives it, bound to that
    slot's core): then it is that job"""
    rf = plan.get("openmpi4", {}).get("rankfile", "")
    got = [line.split("=", 1)[1] for line in rf.splitlines() if line.startswith("rank ")]
    n = HOSTS * SLOTS
    hosts = lh.hosts(HOSTS)
    block = [f"{hosts[r // SLOTS]} slot={r % SLOTS}" for r in range(n)]
    cyclic = [f"{hosts[r % HOSTS]} slot={r // HOSTS}" for r in range(n)]
    return "block" if got == block else "cyclic" if got == cyclic else None


def run_openmpi(work, plans, a, wrapper):
    times, failures = {}, []
    jobs = [(rep, p, pl) for rep in range(a.reps) for p in PROGRAMS for pl in (PLACEMENTS[rep % 3:] + PLACEMENTS[:rep % 3])
            if not (pl == "mapped" and ompi_same_as(plans[p]))]
    for i, (rep, p, pl) in enumerate(jobs):
        sys.stderr.write(f"\r\033[K[Open MPI {i + 1}/{len(jobs)}] rep {rep + 1}: {p} {pl}")
        r, _ = lh.run_on_host0(ompi_launch(work, p, pl, a, wrapper, plans[p]), a.timeout)
        v = npb_time_us(r.stdout) if "npb" in plans[p] else lh.value(r.stdout, r"time_us=([\d.]+)")
        if v is None:
            failures.append(f"Open MPI {p} {pl} rep {rep + 1}: exit {r.returncode}: "
                            f"{(r.stderr or r.stdout).strip()[-200:]}")
        else:
            times.setdefault(p, {}).setdefault(pl, []).append(v)
    for p in PROGRAMS:
        twin = ompi_same_as(plans[p])
        if twin and twin in times.get(p, {}):
            times[p]["mapped"] = list(times[p][twin])
    return times, failures


def run(work, plans, a, wrapper):
    m = lh.Mpi("leanmpi", "LeanMPI", str(ROOT / "build" / "bin" / "mpicc"))
    times, failures = {}, []
    jobs = [(rep, p, pl) for rep in range(a.reps) for p in PROGRAMS
            for pl in (PLACEMENTS[rep % 3:] + PLACEMENTS[:rep % 3]) if not (pl == "mapped" and same_as(plans[p]))]
    for i, (rep, p, pl) in enumerate(jobs):
        sys.stderr.write(f"\r\033[K[{i + 1}/{len(jobs)}] rep {rep + 1}: {p} {pl}")
        if "npb" in plans[p]:
            # an unmodified program: placed by LeanMPI's mpirun --rankfile
            npb = plans[p]["npb"]
            cmd = lh.launch_cmd(m, HOSTS, SLOTS, npb["exe"], list(npb["args"]), wrapper,
                                ["--rankfile", npb["rankfiles"][pl]])
            r, _ = lh.run_on_host0(cmd, a.timeout)
            v = npb_time_us(r.stdout)
        else:
            keys = " ".join(map(str, plans[p]["keys"][pl]))
            cmd = lh.launch_cmd(m, HOSTS, SLOTS, str(work / "mapping_app"),
                                ["-p", p, "-b", str(a.bytes), "-i", str(a.iters), "-k", keys], wrapper)
            r, _ = lh.run_on_host0(cmd, a.timeout)
            v = lh.value(r.stdout, r"time_us=([\d.]+)")
        if v is None:
            failures.append(f"{p} {pl} rep {rep + 1}: exit {r.returncode}: {(r.stderr or r.stdout).strip()[-200:]}")
        else:
            times.setdefault(p, {}).setdefault(pl, []).append(v)
    if a.openmpi:
        times["openmpi4"], fails = run_openmpi(work, plans, a, wrapper)
        failures += fails
    sys.stderr.write("\r\033[K")
    for p in PROGRAMS:
        twin = same_as(plans[p])
        if twin and twin in times.get(p, {}):
            times[p]["mapped"] = list(times[p][twin])
    return times, failures


def evaluate(times):
    rows, targets = [], []
    for p in PROGRAMS:
        med = {pl: statistics.median(times[p][pl]) if times.get(p, {}).get(pl) else None for pl in PLACEMENTS}
        rows.append((p, med))
        if None in med.values():
            targets.append((p, "MISSING", None))
            continue
        best_other = min(med["block"], med["cyclic"])
        ok = med["mapped"] <= best_other
        speedup = med["block"] / med["mapped"]
        if p == ALLTOALL_HEAVY:
            ok = ok and speedup >= 1.2
        targets.append((p, "PASS" if ok else "FAIL", speedup))
    return rows, targets


def render(result):
    L = ["# Placement study on the shaped virtual cluster", "",
         "_Generated by `bench/leanmpi_mapping.py`; do not edit by hand. Raw data: `bench/results/mapping.json`._", "",
         f"Run of {result['date']}: {result['reps']} repetitions, placements alternating (order rotating), medians. "
         f"4 virtual hosts x 2 ranks (`tools/vcluster`, links shaped to {result['rate']} with tc tbf), LeanMPI, "
         f"blocks of {result['bytes']:,} bytes, {result['iters']} iterations a run. Each program was profiled "
         "once (leanmpi-profile, 8 ranks on this machine) and mapped by `leanmpi-map` (knowledge base: LeanMPI's "
         "own schedules; engine best); the ranks are placed by MPI_Comm_split keys on a launch in block order. "
         "Where the placement chosen is block's or cyclic's, it is that job: run once, counted for both. "
         "The `npb-*` programs are NAS Parallel Benchmarks 3.4 built unmodified from the published sources "
         "(bench/leanmpi_npb.py's build; `npb-dt.S.BH`: DT class S, graph BH, whose 5 nodes leave 3 of the 8 "
         "ranks idle): profiled with leanmpi-profile preloaded, placed by LeanMPI's `mpirun --rankfile` (block, "
         "cyclic and mapped each as a rankfile, every rank bound to its slot's CPU), timed by NPB's own clock "
         "(verified runs only).", "",
         "Reproduce:", "", "```sh", result["command"], "```", "",
         "| program | block (us) | cyclic (us) | mapped (us) | speedup over block | mapped <= better of block, cyclic | "
         "engine chosen | predicted cost block / cyclic / mapped (us) |",
         "|---|---|---|---|---|---|---|---|"]
    tg = {p: (s, sp) for p, s, sp in result["targets"]}
    for p, med in result["rows"]:
        c = result["plans"][p]["predicted_cost_us"]
        e = result["plans"][p]["engine"]
        twin = same_as(result["plans"][p])
        e = f"{e} (= {twin}: the same job)" if twin and twin != e else e
        fmt = [f"{med[pl]:,.0f}" if med[pl] is not None else "–" for pl in PLACEMENTS]
        s, sp = tg[p]
        L.append(f"| {p} | " + " | ".join(fmt) + f" | {sp:.2f}× | {s} | {e} | "
                 f"{c.get('block', 0):,.0f} / {c.get('cyclic', 0):,.0f} / {c.get(result['plans'][p]['engine'], 0):,.0f} |"
                 if sp is not None else f"| {p} | " + " | ".join(fmt) + f" | – | {s} | {e} | |")
    om = result.get("openmpi4")
    if om:
        L += ["", "## Open MPI 4.1 with the generated rankfile", "",
              "The same programs built with `mpicc.openmpi`, started by Open MPI 4.1's `mpirun` on the same hosts "
              "(ob1, tcp between hosts): block is its default placement by slot (`--host a:2,...`), cyclic "
              "`--map-by node`, mapped the rankfile `leanmpi-map --kb openmpi4 --format openmpi` wrote from the "
              "same profile (Open MPI's own collective algorithms). A rankfile binds each rank to the core of its slot, "
              "so block and cyclic run bound to cores too (`--bind-to core`): the virtual hosts share this machine's "
              "cores, and only the placement is to differ. A rankfile that says what block or cyclic does is that job: "
              "run once, counted for both.", "",
              "| program | block (us) | cyclic (us) | mapped (us) | speedup over block | mapped <= better of block, "
              "cyclic | engine chosen |", "|---|---|---|---|---|---|---|"]
        otg = {p: (s_, sp) for p, s_, sp in om["targets"]}
        for p, med in om["rows"]:
            fmt = [f"{med[pl]:,.0f}" if med[pl] is not None else "–" for pl in PLACEMENTS]
            s_, sp = otg[p]
            e = result["plans"][p].get("openmpi4", {}).get("engine", "–")
            twin = ompi_same_as(result["plans"][p])
            e = f"{e} (= {twin}: the same job)" if twin and twin != e else e
            L.append(f"| {p} | " + " | ".join(fmt) + (f" | {sp:.2f}× | {s_} | {e} |" if sp is not None
                                                       else f" | – | {s_} | {e} |"))
    L += ["", f"Targets: the mapped placement never slower than the better of block and cyclic for any program, "
          f"and at least 1.2× faster than block on the alltoall-heavy one ({ALLTOALL_HEAVY}): "
          + ("**all hold** with LeanMPI." if all(s == "PASS" for _, s, _ in result["targets"]) else
             "**not all hold** with LeanMPI (see the table)."), ""]
    if result["failures"]:
        L += ["Runs that failed:", ""] + [f"- {f}" for f in result["failures"]] + [""]
    return "\n".join(L)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rate", default="400mbit")
    ap.add_argument("--bytes", type=int, default=262144)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--no-openmpi", dest="openmpi", action="store_false",
                    help="LeanMPI only (default: also Open MPI 4.1 with the rankfile, where mpicc.openmpi exists)")
    ap.add_argument("--npb-dir", help="an unpacked NPB 3.4 release: NPB IS and DT join the programs")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--docs", default=str(ROOT / "docs"))
    a = ap.parse_args(argv)
    a.openmpi = a.openmpi and bool(shutil.which(OMPI_CC)) and bool(shutil.which("mpirun.openmpi"))
    chk = subprocess.run([str(lh.VC), "check"], capture_output=True, text=True)
    if chk.returncode != 0:
        print("SKIP leanmpi_mapping:", (chk.stdout + chk.stderr).strip())
        return 77
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        plans = prepare(work, a)
        if a.npb_dir:
            prepare_npb(work, a, plans)
        wrapper = str(work / "vssh")
        Path(wrapper).write_text("#!/bin/sh\nexec %s ssh %s \"$@\"\n" % (shlex.quote(str(lh.VC)), lh.CLUSTER))
        Path(wrapper).chmod(0o755)
        up = subprocess.run([str(lh.VC), "up", lh.CLUSTER, str(HOSTS), "--subnet", lh.SUBNET, "--rate", a.rate],
                            capture_output=True, text=True)
        if up.returncode != 0:
            raise SystemExit(f"leanmpi_mapping: vcluster up failed: {up.stderr.strip()}")
        try:
            times, failures = run(work, plans, a, wrapper)
        finally:
            subprocess.run([str(lh.VC), "down", lh.CLUSTER], capture_output=True)
    ompi = times.pop("openmpi4", None)
    rows, targets = evaluate(times)
    result = dict(date=time.strftime("%Y-%m-%dT%H:%M:%S%z"), reps=a.reps, rate=a.rate, bytes=a.bytes, iters=a.iters,
                  command="python3 bench/leanmpi_mapping.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                  plans=plans, times=times, rows=rows, targets=targets, failures=failures)
    if ompi is not None:
        result["openmpi4"] = dict(times=ompi, rows=evaluate(ompi)[0], targets=evaluate(ompi)[1])
    Path(a.out).mkdir(parents=True, exist_ok=True)
    (Path(a.out) / "mapping.json").write_text(json.dumps(result, indent=1) + "\n")
    (Path(a.docs) / "MAPPING_EVALUATION.md").write_text(render(result))
    for who, tg in (("LeanMPI", targets), ("Open MPI 4.1", (result.get("openmpi4") or {}).get("targets", []))):
        for p, s, sp in tg:
            print(f"{who}: {s} {p}: speedup over block {sp:.2f}x" if sp is not None else f"{who}: {s} {p}")
    print(f"wrote {Path(a.out) / 'mapping.json'} and {Path(a.docs) / 'MAPPING_EVALUATION.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
