#!/usr/bin/env python3
"""LeanMPI across hosts, side by side with the other MPIs, on a virtual
cluster of network namespaces (tools/vcluster): the same benchmark sources
built with each MPI, runs alternating between MPIs (the order rotating each
repetition), medians and ratios to the best peer. Writes docs/MULTINODE.md
and bench/results/hosts.json.

  bench/leanmpi_hosts.py [--reps N] [--mpis leanmpi,leanmpi_ofi,mpich,openmpi4] [--quick]

Every launcher runs on host 0 of the cluster and reaches the others the way
it would reach real hosts: LeanMPI's mpirun through `vcluster exec` as its
--launch-agent, Open MPI's and MPICH's through `vcluster ssh` in place of
ssh. Measured:

  pingpong  8-byte latency, 2 hosts x 1 rank (half the round trip)
  bandwidth 1 MiB, window of 64, 2 hosts x 1 rank
  allreduce 8 B and 1 MiB, 4 hosts x 2 ranks (slowest rank's average);
            in the same group alltoallv of 8 B and 1 KiB blocks, 4 hosts x 2
  startup   wall time of `mpirun ... ./init` (MPI_Init + MPI_Finalize),
            4 hosts x 16 ranks
  memory    VmRSS of each rank right after MPI_Init, 2 and 4 hosts x 16
            ranks (median over ranks); LeanMPI also with
            --simulate-world-size 1000000 (MPI_COMM_WORLD of a million
            ranks of which the 32 run)
  rma       one-sided, 2 hosts x 1 rank, MPI_Win_allocate, passive target
            waiting in a barrier (bench/src/rma.c): 8-byte put and get +
            flush, accumulate of one double + flush, 1 MiB put and get
            bandwidth (4 per flush)

LeanMPI runs with its default network (its tcp backend here) and, as
"LeanMPI (ofi)", on libfabric's tcp;ofi_rxm (`--env LEANMPI_NETWORK=ofi`),
where puts and gets to other hosts are the provider's RMA writes and reads
(the latency, bandwidth, allreduce and rma groups only).

MPICH here is Debian's ch4:ucx; it runs with UCX_TLS=tcp,self, since UCX
would otherwise see that the virtual hosts share one machine and use shared
memory between them. Open MPI 4.1 runs ob1 with the self, vader and tcp
BTLs (vader within a host, tcp between hosts); it has no one-sided
component for windows across hosts on tcp (MPI_Win_allocate fails with
MPI_ERR_WIN: osc/rdma needs a BTL with RDMA, and Debian's build has no UCX
PML), so its rma row reads n/a. Needs root (namespaces).
"""
import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VC = ROOT / "tools" / "vcluster"
SRC = ROOT / "bench" / "src"
CLUSTER = "lmbench"
SUBNET = "10.213.6"
PROGRAMS = ["pingpong", "bandwidth", "coll", "init", "memory", "memscale", "rma"]
CLEAN_ENV_PREFIXES = ("OMPI_", "PMIX_", "PRTE_", "MPICH_", "MPIR_", "HYDRA_", "UCX_", "FI_", "LEANMPI_")


class Mpi:
    def __init__(self, key, label, cc, lean_opts=(), groups=None):
        self.key, self.label, self.cc = key, label, cc
        self.lean_opts = list(lean_opts)  # more options for LeanMPI's mpirun
        self.groups = groups  # the groups it runs (None: all)
        self.status, self.note = "ok", ""
        self.exe_dir = None

    def lean(self):
        return self.key.startswith("leanmpi")


def find_mpis(wanted):
    lb = ROOT / "build" / "bin"
    all_ = [Mpi("leanmpi", "LeanMPI", str(lb / "mpicc")),
            Mpi("leanmpi_ofi", "LeanMPI (ofi)", str(lb / "mpicc"), ["--env", "LEANMPI_NETWORK=ofi"],
                ("latency", "bandwidth", "allreduce", "rma")),
            Mpi("mpich", "MPICH 4.0 (ucx, tcp)", shutil.which("mpicc.mpich") or "mpicc.mpich"),
            Mpi("openmpi4", "Open MPI 4.1 (ob1, tcp)", shutil.which("mpicc.openmpi") or "mpicc.openmpi")]
    out = [m for m in all_ if m.key in wanted]
    for m in out:
        if not Path(m.cc).exists():
            m.status, m.note = "skipped", "%s not found" % m.cc
    return out


def hosts(n):
    return ["%s-%d" % (CLUSTER, i) for i in range(n)]


def launch_cmd(m, nhosts, per_host, exe, args, wrapper, lean_opts=()):
    """The command, to be run on host 0, that starts exe on nhosts x per_host
    (lean_opts: more options for LeanMPI's mpirun)."""
    hl = hosts(nhosts)
    n = nhosts * per_host
    if m.lean():
        return ([str(ROOT / "build" / "bin" / "mpirun"), "--host",
                 ",".join("%s:%d" % (h, per_host) for h in hl),
                 "--launch-agent", "%s exec %s {host}" % (VC, CLUSTER)] + m.lean_opts + list(lean_opts) +
                [exe] + args)
    if m.key == "mpich":
        return (["mpirun.mpich", "-hosts", ",".join("%s:%d" % (h, per_host) for h in hl), "-n", str(n),
                 "-launcher", "ssh", "-launcher-exec", wrapper, "-bind-to", "none",
                 "-genv", "UCX_TLS", "tcp,self", exe] + args)
    return (["mpirun.openmpi", "--host", ",".join("%s:%d" % (h, per_host) for h in hl), "-n", str(n),
             "--mca", "plm_rsh_agent", wrapper, "--mca", "pml", "ob1", "--mca", "btl", "self,vader,tcp",
             "--bind-to", "none", "--oversubscribe", exe] + args)


def clean_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith(CLEAN_ENV_PREFIXES)}
    if os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    return env


class Failed:
    returncode, stdout, stderr = -1, "", "timed out"


def run_on_host0(cmd, timeout):
    """Run cmd on host 0; on timeout its whole process group is killed and
    the run counts as failed (no value)."""
    full = [str(VC), "exec", CLUSTER, hosts(1)[0]] + cmd
    t0 = time.monotonic()
    p = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env(),
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        p.communicate()
        print("  timed out after %d s: %s" % (timeout, " ".join(cmd[:2] + cmd[-3:])), flush=True)
        return Failed(), None
    r = subprocess.CompletedProcess(full, p.returncode, out, err)
    return r, time.monotonic() - t0


def build(m, work):
    d = work / m.key
    d.mkdir(parents=True, exist_ok=True)
    for p in PROGRAMS:
        r = subprocess.run([m.cc, "-O2", "-I", str(SRC), "-o", str(d / p), str(SRC / ("%s.c" % p))],
                           capture_output=True, text=True, env=clean_env())
        if r.returncode != 0:
            m.status, m.note = "skipped", "compile of %s failed: %s" % (p, r.stderr.strip()[-300:])
            return
    m.exe_dir = d


def value(text, pattern):
    mm = re.search(pattern, text, re.M)
    return float(mm.group(1)) if mm else None


TIMED_OUT = set()  # (mpi, run): not tried again in later repetitions


def run_bench(m, name, nhosts, per_host, args, wrapper, lean_opts=()):
    if (m.key, name) in TIMED_OUT:
        return Failed(), None
    r, wall = run_on_host0(
        launch_cmd(m, nhosts, per_host, str(m.exe_dir / name.split(":")[0]), args, wrapper, lean_opts), 120)
    if wall is None:
        TIMED_OUT.add((m.key, name))
    return r, wall


GROUPS = ("latency", "bandwidth", "allreduce", "startup", "memory", "rma")


def measure(m, wrapper, quick, only=GROUPS):
    """One repetition of the benchmarks of the groups in only for one MPI:
    {metric: value}."""
    q = ["-q"] if quick else []
    out = {}
    if m.groups is not None:
        only = [g for g in only if g in m.groups]
    if "rma" in only:
        r, _ = run_bench(m, "rma", 2, 1, q, wrapper)
        for op in ("put", "get", "acc"):
            out["rma_%s8_us" % op] = value(r.stdout, r"^op=%s size=8 .*lat_us=([\d.]+)" % op)
        for op in ("put", "get"):
            out["rma_%s_bw1m_mbs" % op] = value(r.stdout, r"^op=%s_bw size=1048576 .*mb_s=([\d.]+)" % op)
    if "latency" in only:
        r, _ = run_bench(m, "pingpong", 2, 1, q + ["-m", "8"], wrapper)
        out["lat8_us"] = value(r.stdout, r"^size=8 .*lat_us=([\d.]+)")
    if "bandwidth" in only:
        r, _ = run_bench(m, "bandwidth", 2, 1, q + ["-m", "1048576"], wrapper)
        out["bw1m_mbs"] = value(r.stdout, r"^size=1048576 .*mb_s=([\d.]+)")
    if "allreduce" not in only:
        return out
    r, _ = run_bench(m, "coll", 4, 2, q + ["-c", "allreduce"], wrapper)
    out["allreduce8_us"] = value(r.stdout, r"^coll=allreduce size=8 .*lat_us=([\d.]+)")
    out["allreduce1m_us"] = value(r.stdout, r"^coll=allreduce size=1048576 .*lat_us=([\d.]+)")
    r, _ = run_bench(m, "coll", 4, 2, q + ["-c", "alltoallv", "-s", "8,1024"], wrapper)
    out["alltoallv8_us"] = value(r.stdout, r"^coll=alltoallv size=8 .*lat_us=([\d.]+)")
    out["alltoallv1k_us"] = value(r.stdout, r"^coll=alltoallv size=1024 .*lat_us=([\d.]+)")
    if "startup" not in only:
        return out
    r, wall = run_bench(m, "init", 4, 16, [], wrapper)
    out["startup_4x16_s"] = wall if r.returncode == 0 else None
    if "memory" not in only:
        return out
    for nh in (2, 4):
        r, _ = run_bench(m, "memory:%d" % nh, nh, 16, [], wrapper)
        rss = [int(x) for x in re.findall(r"^phase=init rank=\d+ rss_kb=(\d+)", r.stdout, re.M)]
        out["rss_init_%dx16_kb" % nh] = statistics.median(rss) if len(rss) == nh * 16 else None
    if m.lean():  # only LeanMPI can make MPI_COMM_WORLD report more ranks than run
        # memscale -p init: no communication, which ranks that do not run could not answer
        r, _ = run_bench(m, "memscale", 2, 16, ["-p", "init"], wrapper, ["--simulate-world-size", "1000000"])
        rss = [int(x) for x in re.findall(r"^phase=init rank=\d+ size=\d+ rss_kb=(\d+)", r.stdout, re.M)]
        out["rss_init_2x16_sim1m_kb"] = statistics.median(rss) if len(rss) == 32 else None
    return out


LEAN_NOTE = ("LeanMPI opens its network endpoint at a rank's first message to another host (or when "
             "a rank there asks for its address): its RSS after init is that of a rank that has not "
             "opened one, as it stays for a rank that talks only within its host. Here the network is "
             "LeanMPI's tcp backend (libfabric has no provider for network hardware on this machine). "
             "Opening it and running memscale's phases, 2 hosts x 4 ranks, raised a rank's RSS from "
             "4.0 MiB after init to 4.2 MiB after the ring and 4.3 MiB after the alltoall; with "
             "libfabric's net provider (LEANMPI_OFI_PROVIDER=net) to 5.1 and 6.1 MiB, with tcp;ofi_rxm "
             "to 22 and 40 MiB.")
LOWER_BETTER = {"rma_put8_us", "rma_get8_us", "rma_acc8_us", "rss_init_2x16_sim1m_kb", "lat8_us", "allreduce8_us", "allreduce1m_us", "alltoallv8_us", "alltoallv1k_us", "startup_4x16_s", "rss_init_2x16_kb",
                "rss_init_4x16_kb"}
METRICS = [("lat8_us", "8-byte latency, 2 hosts (us)"),
           ("bw1m_mbs", "1 MiB bandwidth, 2 hosts (MB/s)"),
           ("allreduce8_us", "allreduce 8 B, 4 hosts x 2 (us)"),
           ("allreduce1m_us", "allreduce 1 MiB, 4 hosts x 2 (us)"),
           ("alltoallv8_us", "alltoallv 8 B blocks, 4 hosts x 2 (us)"),
           ("alltoallv1k_us", "alltoallv 1 KiB blocks, 4 hosts x 2 (us)"),
           ("startup_4x16_s", "startup, 4 hosts x 16 (s)"),
           ("rss_init_2x16_kb", "RSS after init, 2 hosts x 16 (KiB)"),
           ("rss_init_4x16_kb", "RSS after init, 4 hosts x 16 (KiB)"),
           ("rss_init_2x16_sim1m_kb", "RSS after init, 2 hosts x 16 of a world of 10^6 (KiB)"),
           ("rma_put8_us", "MPI_Put 8 B + flush, 2 hosts (us)"),
           ("rma_get8_us", "MPI_Get 8 B + flush, 2 hosts (us)"),
           ("rma_acc8_us", "MPI_Accumulate 1 double + flush, 2 hosts (us)"),
           ("rma_put_bw1m_mbs", "MPI_Put 1 MiB bandwidth, 2 hosts (MB/s)"),
           ("rma_get_bw1m_mbs", "MPI_Get 1 MiB bandwidth, 2 hosts (MB/s)")]


def medians(reps):
    res = {}
    for key, _ in METRICS:
        vals = [r[key] for r in reps if r.get(key) is not None]
        res[key] = {"median": statistics.median(vals) if vals else None,
                    "min": min(vals) if vals else None, "max": max(vals) if vals else None,
                    "n": len(vals)}
    return res


def ratio(lean, peers, key):
    vals = [p[key]["median"] for p in peers if p[key]["median"]]
    if lean[key]["median"] is None or not vals:
        return None
    best = min(vals) if key in LOWER_BETTER else max(vals)
    return lean[key]["median"] / best


def report(mpis, res, args, cmdline):
    ok = [m for m in mpis if m.status == "ok"]
    lean = res.get("leanmpi")
    lean_ofi = res.get("leanmpi_ofi")
    peers = [res[m.key] for m in ok if not m.lean()]
    lines = ["# LeanMPI across hosts", "",
             "Written by `bench/leanmpi_hosts.py` (%s, %d repetitions); reproduce with" % (
                 time.strftime("%Y-%m-%d"), args.reps), "", "```", cmdline, "```", "",
             "Hosts are network namespaces of one machine (`tools/vcluster`, veth pairs to a "
             "bridge, no shaping); every launcher runs on host 0. Medians over repetitions "
             "(min-max in parentheses); runs alternate between MPIs.", ""]
    hdr = "| metric | " + " | ".join(m.label for m in ok) + " | LeanMPI / best peer |"
    if lean_ofi:
        hdr += " LeanMPI (ofi) / best peer |"
    lines += [hdr, "|" + "---|" * (len(ok) + 2 + (1 if lean_ofi else 0))]
    for key, label in METRICS:
        row = ["| %s" % label]
        for m in ok:
            v = res[m.key][key]
            row.append("%.4g (%.4g-%.4g)" % (v["median"], v["min"], v["max"]) if v["median"] else "n/a")
        for le in (lean, lean_ofi) if lean_ofi else (lean,):
            rt = ratio(le, peers, key) if le else None
            row.append("%.2fx" % rt if rt else "n/a")
        lines.append(" | ".join(row) + " |")
    lines += ["", "## Targets (issue 16)", ""]
    targets = [("lat8_us", "8-byte latency <= 1.0x the best peer", lambda r: r <= 1.0),
               ("bw1m_mbs", "1 MiB bandwidth >= 1.0x the best peer", lambda r: r >= 1.0),
               ("startup_4x16_s", "startup of 4 hosts x 16 ranks <= 0.5x the best peer", lambda r: r <= 0.5)]
    for key, text, good in targets:
        rt = ratio(lean, peers, key) if lean else None
        lines.append("- %s: %s" % (text, "n/a" if rt is None else "%.2fx, %s" % (rt, "PASS" if good(rt) else "FAIL")))
    if lean and lean["rss_init_2x16_kb"]["median"] and lean["rss_init_4x16_kb"]["median"]:
        d = lean["rss_init_4x16_kb"]["median"] - lean["rss_init_2x16_kb"]["median"]
        lines.append("- a rank's RSS after init does not grow with hosts (4 vs 2 hosts x 16, within 64 KiB): "
                     "%+.0f KiB, %s" % (d, "PASS" if d <= 64 else "FAIL"))
    if TIMED_OUT:
        lines += ["", "Did not end within 120 s (given up after the first try, n/a above): " +
                  "; ".join("%s %s" % (k, n.replace(":", " at ") + (" hosts" if ":" in n else ""))
                            for k, n in sorted(TIMED_OUT)) + "."]
    skipped = [m for m in mpis if m.status != "ok"]
    if skipped:
        lines += ["", "Skipped: " + "; ".join("%s (%s)" % (m.label, m.note) for m in skipped)]
    lines += ["", "Notes: MPICH here " + __doc__.split("MPICH here")[1].strip().replace("\n", " "),
              "", LEAN_NOTE]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mpis", default="leanmpi,leanmpi_ofi,mpich,openmpi4")
    ap.add_argument("--quick", action="store_true", help="shorter timed loops")
    ap.add_argument("--only", default=",".join(GROUPS),
                    help="comma-separated subset of: " + ", ".join(GROUPS) + " (the others read n/a)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "MULTINODE.md"))
    ap.add_argument("--json", default=str(ROOT / "bench" / "results" / "hosts.json"))
    args = ap.parse_args()
    chk = subprocess.run([str(VC), "check"], capture_output=True, text=True)
    if chk.returncode != 0:
        print("leanmpi_hosts: cannot make a virtual cluster here: %s" % (chk.stdout + chk.stderr).strip())
        return 77
    mpis = find_mpis(args.mpis.split(","))
    work = Path(tempfile.mkdtemp(prefix="lmhosts-"))
    wrapper = str(work / "vssh")
    Path(wrapper).write_text("#!/bin/sh\nexec %s ssh %s \"$@\"\n" % (shlex.quote(str(VC)), CLUSTER))
    os.chmod(wrapper, 0o755)
    r = subprocess.run([str(VC), "up", CLUSTER, "4", "--subnet", SUBNET], capture_output=True, text=True)
    if r.returncode != 0:
        print("leanmpi_hosts: vcluster up failed: %s" % r.stderr)
        return 1
    try:
        for m in mpis:
            if m.status == "ok":
                build(m, work)
            print("%-10s %s %s" % (m.key, m.status, m.note), flush=True)
        ok = [m for m in mpis if m.status == "ok"]
        reps = {m.key: [] for m in ok}
        for rep in range(args.reps):
            order = ok[rep % len(ok):] + ok[:rep % len(ok)]
            for m in order:
                v = measure(m, wrapper, args.quick, args.only.split(","))
                reps[m.key].append(v)
                print("rep %d %-10s %s" % (rep, m.key, " ".join("%s=%s" % (k, "%.4g" % x if x else x)
                                                              for k, x in v.items())), flush=True)
    finally:
        subprocess.run([str(VC), "down", CLUSTER], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    res = {k: medians(v) for k, v in reps.items()}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"raw": reps, "medians": res}, indent=1))
    cmdline = "python3 bench/leanmpi_hosts.py --reps %d --mpis %s%s%s" % (
        args.reps, args.mpis, " --quick" if args.quick else "",
        "" if args.only == ",".join(GROUPS) else " --only " + args.only)
    Path(args.out).write_text(report(mpis, res, args, cmdline))
    print("wrote %s and %s" % (args.out, args.json))
    return 0


if __name__ == "__main__":
    sys.exit(main())
