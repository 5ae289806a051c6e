#!/usr/bin/env python3
"""Tests of mpirun across hosts: one launch agent per host, started through
the --launch-agent template in a tree, relaying streams, signals and exits.

  test_hosts.py --bin BUILD/bin --helper PATH [--vcluster TOOL] CASE...
  test_hosts.py --list

Without --vcluster the hosts are names only and the launch command is
fake_host.sh, which runs each agent on this machine as if it were on its
host: the tree of agents, the framed links and every failure path run
without namespaces or root. With --vcluster TOOL (tools/vcluster) each case
brings up a virtual cluster of three hosts, runs the agents in their network
namespaces under their host names, and removes the cluster; where this
machine cannot host one, the case reports itself skipped (exit 77) with the
reason. The checks are those of test_launcher.py: exit status, message,
nothing left behind, and the 2-second teardown rule.
"""
import argparse
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

import test_launcher as tl
from test_launcher import Failure, check

ARGS = None
CLUSTER_NAME = "lmhosts"
CLUSTER_SUBNET = "10.213.9"
PER_HOST = 2


class Skip(Exception):
    pass


class Cluster:
    """Three hosts and the launch template that reaches them."""

    def __init__(self, nhosts=3):
        self.up = False
        if ARGS.vcluster:
            chk = subprocess.run([ARGS.vcluster, "check"], capture_output=True, text=True)
            if chk.returncode == 77:
                raise Skip((chk.stdout + chk.stderr).strip())
            check(chk.returncode == 0, "vcluster check failed: %s" % chk.stderr)
            r = subprocess.run([ARGS.vcluster, "up", CLUSTER_NAME, str(nhosts), "--subnet",
                                CLUSTER_SUBNET], capture_output=True, text=True, timeout=60)
            check(r.returncode == 0, "vcluster up failed: %s" % r.stderr)
            self.up = True
            self.hosts = ["%s-%d" % (CLUSTER_NAME, i) for i in range(nhosts)]
            self.agent = "%s exec %s {host}" % (shlex.quote(ARGS.vcluster), CLUSTER_NAME)
            self.unreachable = "%s-%d" % (CLUSTER_NAME, nhosts + 5)  # not in the cluster
        else:
            self.hosts = ["h%d" % i for i in range(nhosts)]
            fake = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_host.sh")
            self.agent = "sh %s {host}" % shlex.quote(fake)
            self.unreachable = "unreachable-1"

    def args(self, hosts=None, per_host=PER_HOST, fanout=None):
        spec = ",".join("%s:%d" % (h, per_host) for h in (hosts or self.hosts))
        extra = ["--launch-fanout", str(fanout)] if fanout else []
        return ["--host", spec, "--launch-agent", self.agent] + extra

    def host_of(self, rank):
        return self.hosts[rank // PER_HOST]

    def down(self):
        if not self.up:
            return
        r = subprocess.run([ARGS.vcluster, "down", CLUSTER_NAME], capture_output=True, text=True,
                           timeout=60)
        self.up = False
        check(r.returncode == 0, "vcluster down failed: %s" % r.stderr)
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        check("lmvc-%s-" % CLUSTER_NAME not in left, "namespaces left behind:\n%s" % left)


CLUSTERS = []


def cluster():
    c = Cluster()
    CLUSTERS.append(c)
    return c


def nranks(c):
    return PER_HOST * len(c.hosts)


# ---------------------------------------------------------------- normal runs

def case_identity():
    """Every rank knows its place and reads the key every other rank put
    (direct modex: a key of another host comes through the agents), in a
    tree of fanout 32 (all agents started by mpirun) and of fanout 1 (a
    chain: each agent starts the next)."""
    c = cluster()
    n = nranks(c)
    for fanout in (None, 1):
        job = tl.Job()
        r = job.run(c.args(fanout=fanout) + tl.helper(job, "init", "identity", "kvs", "finalize"))
        check(r.returncode == 0, "exit 0 (fanout %s)" % fanout, r)
        for rank in range(n):
            want = "rank %d size %d reported %d local %d/%d singleton 0" % (
                rank, n, n, rank % PER_HOST, PER_HOST)
            check(want in r.stdout, "identity of rank %d (fanout %s)" % (rank, fanout), r)
            check("rank %d kvs ok" % rank in r.stdout,
                  "rank %d read every rank's key, those of other hosts through the agents" % rank, r)
        check(r.stderr == "", "no messages on a clean run", r)
        job.finish()


def case_stdin():
    """mpirun's stdin reaches rank 0 through its agent, all of it, in order;
    the other ranks read an empty stdin."""
    c = cluster()
    rnd = random.Random(16)
    data = "".join("line %d %s\n" % (i, "%032x" % rnd.getrandbits(128)) for i in range(6000))
    job = tl.Job()
    r = job.run(c.args(fanout=1) + tl.helper(job, "cat"), input_text=data)
    check(r.returncode == 0, "exit 0", r)
    echoed = "".join(l for l in r.stdout.splitlines(True) if l.startswith("line "))
    check(echoed == data, "rank 0 echoes all of mpirun's stdin in order", r)
    check("rank 0 stdin bytes %d" % len(data) in r.stdout, "rank 0 read %d bytes" % len(data), r)
    for rank in range(1, nranks(c)):
        check("rank %d stdin bytes 0" % rank in r.stdout, "rank %d has an empty stdin" % rank, r)
    job.finish()


def case_output():
    """Output of ranks on every host arrives whole and in order per rank,
    tagged with the rank when asked."""
    c = cluster()
    n = nranks(c)
    size = 256 * 1024
    job = tl.Job()
    r = job.run(c.args() + ["--tag-output"] + tl.helper(job, "flood:%d" % size, "err:to-stderr",
                                                        "partial:end"))
    check(r.returncode == 0, "exit 0", r)
    untagged = re.sub(r"(?m)^\[1,\d+\]<stdout>:", "", r.stdout)
    tl.check_flood_lines(untagged, n, size)
    for rank in range(n):
        check("[1,%d]<stderr>:to-stderr\n" % rank in r.stderr, "tagged stderr of rank %d" % rank, r)
        check("[1,%d]<stdout>:end\n" % rank in r.stdout, "last partial line of rank %d" % rank, r)
    job.finish()


# ---------------------------------------------------------------- failures

def failing_job(c, actions, status, message, stamp_rank):
    n = nranks(c)
    job = tl.Job()
    r = job.run(c.args() + tl.helper(job, "waitpids:%d" % n, *actions))
    check(r.returncode == status, "expected exit status %d" % status, r)
    check(re.search(message, r.stderr), "message should match %r" % message, r)
    check(len(job.pids()) == n, "all %d ranks had started" % n, r)
    t = float(job.files("time")[stamp_rank])
    check(r.ended_at - t < tl.TEARDOWN_S,
          "job ended %.2f s after the failure (limit %.1f)" % (r.ended_at - t, tl.TEARDOWN_S), r)
    job.finish()


def case_rank_fails():
    """A rank on a host other than mpirun's first ends the whole job in time,
    and the message names the rank and its host."""
    c = cluster()
    last = nranks(c) - 1
    failing_job(c, ["r%d:stamp" % last, "r%d:exit:3" % last, "sleep:-1"], 3,
                r"rank %d \(pid \d+ on host %s\) exited with status 3" % (last, c.host_of(last)),
                last)
    failing_job(c, ["init", "r3:stamp", "r3:segv", "sleep:-1"], 139,
                r"rank 3 \(pid \d+ on host %s\) was killed by signal 11" % c.host_of(3), 3)
    failing_job(c, ["init", "r4:stamp", "r4:abort:7:broken on a far host", "sleep:-1"], 7,
                r"rank 4 called MPI_Abort with error code 7: broken on a far host", 4)
    failing_job(c, ["init", "r2:stamp", "r2:exit:0", "sleep:-1"], 1,
                r"rank 2 \(pid \d+ on host %s\) exited with status 0 after MPI_Init without "
                r"calling MPI_Finalize" % c.host_of(2), 2)


def kill_mid_job(c, victim, sig, fanout=None, actions=("sleep:-1",)):
    """Start sleeping ranks on every host, send sig to victim(job) once all
    of them run; every rank must be gone within the teardown limit."""
    job = tl.Job()
    job.start(c.args(fanout=fanout) + tl.helper(job, *actions))
    job.wait_files("pid", nranks(c))
    target = victim(job)
    check(target > 1, "the process to signal was found")
    t = time.time()
    os.kill(target, sig)
    r = job.wait()
    check(r.ended_at - t < tl.TEARDOWN_S, "teardown took %.2f s" % (r.ended_at - t), r)
    job.assert_ranks_gone(since=t)
    job.finish()
    return r


def case_agent_killed():
    """An agent killed mid-job: the job ends everywhere within the limit and
    the message names the host."""
    c = cluster()
    last = nranks(c) - 1
    # ranks are children of their host's agent
    r = kill_mid_job(c, lambda job: parent_pid(job.pids()[last]), signal.SIGKILL)
    victim_host = c.host_of(last)
    check(r.returncode != 0, "the job failed", r)
    check(re.search(r"host %s: .*(launch agent|launch command)" % victim_host, r.stderr),
          "message names host %s and its agent" % victim_host, r)


def case_link_down():
    """A host's network link taken down mid-job (its port on the virtual
    switch): the job ends everywhere within the limit, and the message
    names the host and the link. Needs the virtual cluster: names on one
    machine have no link of their own to take down."""
    if not ARGS.vcluster:
        raise Skip("link_down needs a virtual cluster (--vcluster)")
    c = cluster()
    job = tl.Job()
    job.start(c.args() + tl.helper(job, "sleep:-1"))
    job.wait_files("pid", nranks(c))
    victim = len(c.hosts) - 1
    t = time.time()
    d = subprocess.run(["ip", "-n", "lmvc-%s-sw" % CLUSTER_NAME, "link", "set", "p%d" % victim, "down"],
                       capture_output=True, text=True)
    check(d.returncode == 0, "taking the link down failed: %s" % d.stderr)
    r = job.wait()
    check(r.returncode != 0, "the job failed", r)
    check(re.search(r"host %s: network link eth0 went down" % c.hosts[victim], r.stderr),
          "message names host %s and its link" % c.hosts[victim], r)
    check(r.ended_at - t < tl.TEARDOWN_S, "teardown took %.2f s" % (r.ended_at - t), r)
    job.assert_ranks_gone(since=t)
    job.finish()


def case_interrupt():
    """SIGINT to mpirun ends the ranks on every host."""
    c = cluster()
    r = kill_mid_job(c, lambda job: job.proc.pid, signal.SIGINT, fanout=1, actions=("ignoreterm", "sleep:-1"))
    check(r.returncode == 130, "expected exit status 130", r)


def case_timeout():
    c = cluster()
    job = tl.Job()
    t = time.time()
    r = job.run(c.args() + ["--timeout", "1"] + tl.helper(job, "sleep:-1"))
    check(r.returncode == 124, "expected 124 on timeout", r)
    check(r.ended_at - t < 1 + tl.TEARDOWN_S, "took %.2f s" % (r.ended_at - t), r)
    job.finish()


def case_unreachable():
    """A host the launch command cannot reach: the job does not run, the
    message names the host, and what started elsewhere ends."""
    c = cluster()
    job = tl.Job()
    r = job.run(c.args(hosts=[c.hosts[0], c.unreachable]) + tl.helper(job, "sleep:-1"))
    check(r.returncode != 0, "the job failed", r)
    check(re.search(r"host %s: the launch command ended with status \d+ before the agent started"
                    % c.unreachable, r.stderr), "message names host %s" % c.unreachable, r)
    job.finish()


# ---------------------------------------------------------------- placement

def case_placement():
    """Host lists and host files: what is accepted, and clear refusals."""
    bad = tl.bad_command_line
    bad(lambda j: ["--host", "a:1,a:1"] + tl.helper(j), r"host a is listed twice")
    bad(lambda j: ["--host", "a:1,b:1", "-n", "3"] + tl.helper(j), r"only 2 slots.*--oversubscribe")
    bad(lambda j: ["--host", "a:1,b:2,c:1,d:2,e:1,f:2,g:1,h:2,i:1"] + tl.helper(j), r"more than 8 runs of hosts")
    bad(lambda j: ["--host", ""] + tl.helper(j), r"at least one host")
    bad(lambda j: ["--host", "a:2", "--launch-fanout", "0"] + tl.helper(j), r"positive whole number")
    bad(lambda j: ["--hostfile", "/nonexistent/leanmpi-hosts"] + tl.helper(j), r"cannot read")
    with tempfile.NamedTemporaryFile("w", suffix=".hosts", delete=False) as f:
        f.write("a slots=x\n")
    try:
        bad(lambda j: ["--hostfile", f.name] + tl.helper(j), r"line 1: 'x' is not a positive")
    finally:
        os.unlink(f.name)

    c = cluster()
    with tempfile.NamedTemporaryFile("w", suffix=".hosts", delete=False) as f:
        f.write("# two hosts, two slots each\n%s slots=2 max_slots=4\n\n%s:2\n" % tuple(c.hosts[:2]))
    try:  # no -n: one rank per slot
        job = tl.Job()
        r = job.run(["--hostfile", f.name, "--launch-agent", c.agent]
                    + tl.helper(job, "init", "identity", "finalize"))
        check(r.returncode == 0, "host file run", r)
        for rank in range(4):
            check("rank %d size 4 reported 4 local %d/2" % (rank, rank % 2) in r.stdout,
                  "identity of rank %d" % rank, r)
        job.finish()
        job = tl.Job()  # more ranks than slots, allowed: spread evenly
        r = job.run(["--hostfile", f.name, "--launch-agent", c.agent, "--oversubscribe", "-n", "6"]
                    + tl.helper(job, "init", "identity", "finalize"))
        check(r.returncode == 0, "oversubscribed host file run", r)
        check("rank 5 size 6 reported 6 local 2/3" in r.stdout, "3 ranks per host", r)
        job.finish()
    finally:
        os.unlink(f.name)


def rankfile(lines):
    with tempfile.NamedTemporaryFile("w", prefix="rankfile.", delete=False) as f:
        f.write("".join(line + "\n" for line in lines))
    return f.name


def usable_cpus():
    return sorted(os.sched_getaffinity(0))


def case_rankfile():
    """mpirun --rankfile: ranks where the file puts them (hosts out of
    order: every rank's local index and its node's size follow the file),
    bound to the slots it names; bad files refused with the reason."""
    c = cluster()
    h0, h1, h2 = c.hosts
    cpus = usable_cpus()
    last = len(cpus) - 1
    files = []
    try:
        # ranks 0..5 on hosts 1,0,2,0,1,0: local ranks in world order per host
        place = [1, 0, 2, 0, 1, 0]
        files.append(rankfile(["# mapped", "rank 0=%s slot=%d" % (h1, last)]
                              + ["rank %d=%s" % (r, c.hosts[h]) for r, h in enumerate(place) if r]))
        job = tl.Job()
        r = job.run(["--rankfile", files[-1], "--launch-agent", c.agent]
                    + tl.helper(job, "init", "identity", "cpus", "finalize"))
        check(r.returncode == 0, "rankfile run across hosts", r)
        for rank, h in enumerate(place):
            local = place[:rank].count(h)
            want = "rank %d size 6 reported 6 local %d/%d" % (rank, local, place.count(h))
            check(want in r.stdout, "identity of rank %d (%s)" % (rank, want), r)
        check("rank 0 cpus %d\n" % cpus[last] in r.stdout, "rank 0 bound to slot %d" % last, r)
        job.finish()
        # this machine alone: a job of one node, bound
        files.append(rankfile(["rank 0=localhost slot=0", "rank 1=localhost slot=%d" % last,
                               "rank 2=localhost"]))
        job = tl.Job()
        r = job.run(["--rankfile", files[-1]] + tl.helper(job, "init", "identity", "cpus", "finalize"))
        check(r.returncode == 0, "rankfile run on this machine", r)
        check("rank 0 cpus %d\n" % cpus[0] in r.stdout and "rank 1 cpus %d\n" % cpus[last] in r.stdout,
              "ranks bound to their slots", r)
        check("rank 2 cpus %s\n" % ",".join(map(str, cpus)) in r.stdout, "rank 2 unbound", r)
        job.finish()

        bad = tl.bad_command_line
        def bad_file(lines, message, extra=()):
            files.append(rankfile(lines))
            bad(lambda j: list(extra) + ["--rankfile", files[-1], "--launch-agent", c.agent] + tl.helper(j),
                message)
        bad_file(["rank 0=%s" % h0, "rank 2=%s" % h1], r"places ranks up to 2 but not rank 1")
        bad_file(["rank 0=%s" % h0, "rank 0=%s" % h1], r"line 2: rank 0 is placed twice")
        bad_file(["rank 0=%s slot=0:1" % h0], r"line 1: slot '0:1' is not a list of CPUs")
        bad_file(["rank 0=+n1"], r"relative host '\+n1' is not supported")
        bad_file(["rank x=%s" % h0], r"'x' is not a rank number")
        bad_file(["host %s" % h0], r"expected 'rank N=host slot=CPUS'")
        bad_file(["# nothing"], r"places no rank")
        bad_file(["rank 0=%s color=red" % h0], r"unknown word 'color=red'")
        bad_file(["rank 0=%s" % h0, "rank 1=%s" % h1], r"-n 3, but the rankfile .* places 2 ranks", ["-n", "3"])
        bad_file(["rank 0=%s" % h0, "rank 1=%s" % h2], r"host %s is not among the hosts of --host" % h2,
                 ["--host", "%s:1,%s:1" % (h0, h1)])
        bad_file(["rank 0=%s" % h0, "rank 1=%s" % h0], r"puts 2 ranks on host %s, which has 1 slots" % h0,
                 ["--host", "%s:1,%s:1" % (h0, h1)])
        bad_file(["rank 0=localhost slot=%d" % len(cpus)], r"slot %d is past the %d CPUs" % (len(cpus), len(cpus)))
        bad(lambda j: ["--rankfile", "/nonexistent/leanmpi-rankfile"] + tl.helper(j), r"cannot read the rankfile")
        # a slot the far host lacks: the job ends with the reason, nothing runs
        files.append(rankfile(["rank 0=%s" % h0, "rank 1=%s slot=%d" % (h1, len(cpus) + 3)]))
        job = tl.Job()
        r = job.run(["--rankfile", files[-1], "--launch-agent", c.agent] + tl.helper(job, "init", "finalize"))
        check(r.returncode != 0 and re.search(r"rank 1 of the rankfile: slot %d is past" % (len(cpus) + 3),
                                              r.stderr), "bad slot on another host refused", r)
        job.finish()
    finally:
        for f in files:
            os.unlink(f)


def parent_pid(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
    except OSError:
        return 0
    return int(st[st.rindex(")") + 2:].split()[1])


CASES = {name[5:]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin")
    ap.add_argument("--helper")
    ap.add_argument("--vcluster", help="tools/vcluster: run the agents on a virtual cluster")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("cases", nargs="*")
    ARGS = ap.parse_args()
    tl.ARGS = ARGS
    if ARGS.list:
        print("\n".join(CASES))
        return 0
    names = ARGS.cases or list(CASES)
    failed, skipped = tl.run_cases(CASES, names, skip=Skip, after=take_down_clusters)
    if failed:
        return 1
    return 77 if skipped == len(names) else 0


def take_down_clusters(name):
    """Remove the clusters a case brought up; the number of failures."""
    failed = 0
    for c in CLUSTERS:
        try:
            c.down()
        except Failure as e:
            failed += 1
            print("FAIL", name + ": cleanup:", e)
    CLUSTERS.clear()
    return failed

if __name__ == "__main__":
    sys.exit(main())
