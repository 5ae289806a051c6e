#!/usr/bin/env python3
"""Tests of mpirun's job ownership, driven through the real binary.

  test_launcher.py --bin BUILD/bin --helper PATH [--mpi-abort PATH]
                   [--mpi-segv PATH] CASE...
  test_launcher.py --list

Each case starts mpirun with rank_helper (a plain C program using only the
native bootstrap) or an MPI program, checks the exit status and message, and
then checks that nothing was left behind: every rank process recorded in a
pid file is gone, and no new leanmpi entry exists in /dev/shm or /tmp.
The only time limit checked is the 2-second teardown rule. Python 3 stdlib
only; CTest runs one case per test.
"""
import argparse
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

TEARDOWN_S = 2.0
ARGS = None
JOBS = []  # every Job, so a failed case still cleans up after itself


class Failure(Exception):
    pass


def check(cond, what, result=None):
    if not cond:
        extra = ""
        if result is not None:
            extra = "\n--- exit %s\n--- stdout\n%s\n--- stderr\n%s" % (
                result.returncode, result.stdout[-4000:], result.stderr[-4000:])
        raise Failure(what + extra)


class Result:
    def __init__(self, returncode, stdout, stderr, ended_at):
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.ended_at = ended_at


def leftovers_snapshot():
    found = set()
    for d in ("/dev/shm", "/tmp"):
        try:
            for name in os.listdir(d):
                if "leanmpi" in name.lower():
                    found.add(os.path.join(d, name))
        except OSError:
            pass
    return found


class Job:
    """One mpirun run with a private directory for pid/time files."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="lmtest-")
        self.before = leftovers_snapshot()
        self.proc = None
        JOBS.append(self)

    def start(self, args, stdin=subprocess.DEVNULL, mpirun=None):
        cmd = [mpirun or os.path.join(ARGS.bin, "mpirun")] + args
        self.proc = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)
        return self.proc

    def wait(self, input_text=None, timeout=60):
        try:
            out, err = self.proc.communicate(input=input_text, timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.kill_ranks()
            raise Failure("mpirun did not end within %s s" % timeout)
        return Result(self.proc.returncode, out, err, time.time())

    def run(self, args, input_text=None, timeout=60):
        self.start(args, stdin=subprocess.PIPE if input_text is not None
                   else subprocess.DEVNULL)
        return self.wait(input_text, timeout)

    def files(self, what):
        out = {}
        for name in os.listdir(self.dir):
            m = re.fullmatch(re.escape(what) + r"\.(\d+)", name)
            if m:
                with open(os.path.join(self.dir, name)) as f:
                    out[int(m.group(1))] = f.read().strip()
        return out

    def pids(self):
        return {r: int(v) for r, v in self.files("pid").items()}

    def wait_files(self, what, count, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            if len(self.files(what)) >= count:
                return
            if self.proc and self.proc.poll() is not None:
                raise Failure("mpirun ended (%s) before %d %s files appeared"
                              % (self.proc.returncode, count, what))
            time.sleep(0.02)
        raise Failure("only %d of %d %s files appeared" % (len(self.files(what)), count, what))

    def alive_ranks(self):
        alive = []
        for r, pid in self.pids().items():
            if process_alive(pid):
                alive.append((r, pid))
        return alive

    def kill_ranks(self):
        for _, pid in self.alive_ranks():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def assert_ranks_gone(self, within=TEARDOWN_S, since=None):
        """Every recorded rank is gone within `within` s of `since`."""
        since = since or time.time()
        while True:
            alive = self.alive_ranks()
            if not alive:
                return
            if time.time() - since > within:
                self.kill_ranks()
                raise Failure("ranks still running %.2f s after the failure: %s"
                              % (time.time() - since, alive))
            time.sleep(0.02)

    def finish(self):
        self.assert_ranks_gone(within=TEARDOWN_S)
        new = leftovers_snapshot() - self.before
        check(not new, "files left behind: %s" % sorted(new))
        self.cleanup()

    def cleanup(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        if os.path.isdir(self.dir):
            self.kill_ranks()
            shutil.rmtree(self.dir, ignore_errors=True)


def process_alive(pid):
    """A process that still runs (a zombie has ended; a reused pid running
    something else is not ours)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            cmd = f.read()
    except OSError:
        return False
    state = st[st.rindex(")") + 2]
    if state in "ZX":
        return False
    return any(k in cmd for k in (b"rank_helper", b"mpi_abort", b"mpi_segv"))


def helper(job, *actions):
    return [ARGS.helper, "pidfile:" + job.dir] + list(actions)


def bad_command_line(args, expect_in_stderr, helper_first=True):
    job = Job()
    r = job.run(args(job) if callable(args) else args, timeout=30)
    check(r.returncode != 0, "mpirun accepted a bad command line", r)
    check(re.search(expect_in_stderr, r.stderr, re.I),
          "message does not match %r" % expect_in_stderr, r)
    check(not job.pids(), "a rank was started despite the bad command line", r)
    job.finish()


# ---------------------------------------------------------------- bad input

def case_unknown_option():
    bad_command_line(lambda j: ["--no-such-option", "-n", "2"] + helper(j), r"unknown option")


def case_np_zero():
    bad_command_line(lambda j: ["-n", "0"] + helper(j), r"-n needs a positive")


def case_np_negative():
    bad_command_line(lambda j: ["-n", "-1"] + helper(j), r"-n needs a positive")


def case_np_not_a_number():
    bad_command_line(lambda j: ["-np", "abc"] + helper(j), r"-np needs a positive")


def case_np_missing_value():
    bad_command_line(["-n"], r"needs a value")


def case_no_program():
    bad_command_line(["-n", "2"], r"no program")


def case_missing_program():
    bad_command_line(["-n", "2", "leanmpi-no-such-program-xyz"], r"not found")
    bad_command_line(["-n", "2", "/nonexistent/dir/prog"], r"does not exist")


def case_not_executable():
    job = Job()
    path = os.path.join(job.dir, "not-executable")
    with open(path, "w") as f:
        f.write("#!/bin/sh\necho hi\n")
    os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
    r = job.run(["-n", "2", path])
    os.unlink(path)
    check(r.returncode == 126, "expected status 126 for a non-executable program", r)
    check("not executable" in r.stderr, "message should say 'not executable'", r)
    check("hi" not in r.stdout, "the program ran", r)
    job.finish()


def case_help_and_version():
    r = subprocess.run([os.path.join(ARGS.bin, "mpirun"), "--help"], capture_output=True,
                       text=True, timeout=30)
    check(r.returncode == 0 and "Usage" in r.stdout, "--help", r)
    r = subprocess.run([os.path.join(ARGS.bin, "mpiexec"), "--version"], capture_output=True,
                       text=True, timeout=30)
    check(r.returncode == 0 and r.stdout.startswith("mpiexec (LeanMPI)"), "mpiexec --version", r)


# ---------------------------------------------------------------- normal runs

def case_normal_exit():
    job = Job()
    r = job.run(["-n", "4"] + helper(job, "init", "identity", "kvs", "finalize"))
    check(r.returncode == 0, "all ranks exited 0: mpirun should exit 0", r)
    for rank in range(4):
        check("rank %d size 4 reported 4 local %d/4 singleton 0" % (rank, rank) in r.stdout,
              "identity of rank %d" % rank, r)
        check("rank %d kvs ok" % rank in r.stdout, "kvs of rank %d" % rank, r)
    check(r.stderr == "", "no messages on a clean run", r)
    job.finish()


def case_simulate_world_size():
    job = Job()
    r = job.run(["-n", "2", "--simulate-world-size", "1000"] + helper(job, "init", "identity",
                                                                      "finalize"))
    check(r.returncode == 0, "exit 0", r)
    check("rank 1 size 2 reported 1000 local 1/2" in r.stdout, "reported world size", r)
    job.finish()
    bad_command_line(lambda j: ["-n", "4", "--simulate-world-size", "2"] + helper(j),
                     r"at least")
    bad_command_line(lambda j: ["-n", "4", "--universe-size", "3"] + helper(j),
                     r"--universe-size \(3\) must be at least")
    bad_command_line(lambda j: ["-n", "2", "--simulate-world-size", "8", "-usize", "4"] + helper(j),
                     r"must be at least the size of MPI_COMM_WORLD \(8\)")


def case_singleton():
    """Without mpirun the program is a 1-rank job."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEANMPI_")}
    r = subprocess.run([ARGS.helper, "init", "identity", "kvs", "finalize"], env=env,
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, "singleton run", r)
    check("rank 0 size 1 reported 1 local 0/1 singleton 1" in r.stdout, "singleton identity", r)
    check("rank 0 kvs ok" in r.stdout, "singleton kvs", r)


def case_env_propagation():
    job = Job()
    os.environ["LM_TEST_EXPORTED"] = "from-launcher"
    r = job.run(["-n", "2", "-x", "LM_TEST_A=alpha", "-x", "LM_TEST_EXPORTED",
                 "--env", "LM_TEST_B=beta", "-env", "LM_TEST_C", "gamma", "--env=LM_TEST_D=d d"]
                + helper(job, "env:LM_TEST_A", "env:LM_TEST_B", "env:LM_TEST_C",
                         "env:LM_TEST_D", "env:LM_TEST_EXPORTED", "env:LEANMPI_RANK",
                         "env:LEANMPI_SIZE", "env:LEANMPI_LOCAL_RANK"))
    check(r.returncode == 0, "exit 0", r)
    for rank in range(2):
        for want in ("LM_TEST_A=alpha", "LM_TEST_B=beta", "LM_TEST_C=gamma", "LM_TEST_D=d d",
                     "LM_TEST_EXPORTED=from-launcher", "LEANMPI_RANK=%d" % rank,
                     "LEANMPI_SIZE=2", "LEANMPI_LOCAL_RANK=%d" % rank):
            check("rank %d %s\n" % (rank, want) in r.stdout, "rank %d: %s" % (rank, want), r)
    job.finish()


def case_oversubscribe():
    job = Job()
    n = (os.cpu_count() or 1) * 2 + 1
    r = job.run(["--oversubscribe", "-np", str(n)] + helper(job, "echo:up"))
    check(r.returncode == 0 and r.stdout.count("up\n") == n, "%d ranks ran" % n, r)
    job.finish()


def case_stdin_to_rank0():
    job = Job()
    data = "hello rank zero\nsecond line without newline"
    r = job.run(["-n", "3"] + helper(job, "cat"), input_text=data)
    check(r.returncode == 0, "exit 0", r)
    check(data in r.stdout, "rank 0 echoes mpirun's stdin", r)
    check("rank 0 stdin bytes %d" % len(data) in r.stdout, "rank 0 read all of stdin", r)
    for rank in (1, 2):
        check("rank %d stdin bytes 0" % rank in r.stdout, "rank %d has an empty stdin" % rank, r)
    job.finish()


def check_flood_lines(stdout, nranks, size):
    """Every line the flood:SIZE action of each rank wrote arrived, once and
    in order per rank."""
    pattern = re.compile(r"rank (\d+) line (\d+) abcdefghijklmnopqrstuvwxyz0123456789$")
    counts = {}
    for line in stdout.split("\n"):
        m = pattern.match(line)
        if m:
            rank, num = int(m.group(1)), int(m.group(2))
            check(num == counts.get(rank, 0), "rank %d line %d out of order or lost" % (rank, num))
            counts[rank] = num + 1
    for rank in range(nranks):
        written, expected = 0, 0
        while written < size:
            written += len("rank %d line %d abcdefghijklmnopqrstuvwxyz0123456789\n"
                           % (rank, expected))
            expected += 1
        check(counts.get(rank, 0) == expected, "rank %d: %d of %d lines arrived"
              % (rank, counts.get(rank, 0), expected))


def case_output_forwarding():
    job = Job()
    size = 2 * 1024 * 1024
    r = job.run(["-n", "4"] + helper(job, "flood:%d" % size, "err:to-stderr",
                                     "partial:tail-without-newline"))
    check(r.returncode == 0, "exit 0", r)
    check_flood_lines(r.stdout, 4, size)
    check(r.stdout.count("tail-without-newline") == 4, "last partial line of every rank", r)
    check(r.stderr.count("to-stderr\n") == 4, "stderr of every rank", r)
    job.finish()


def case_tag_output():
    job = Job()
    r = job.run(["-n", "2", "--tag-output"] + helper(job, "echo:hello", "err:oops",
                                                     "partial:end"))
    check(r.returncode == 0, "exit 0", r)
    for rank in range(2):
        check("[1,%d]<stdout>:hello\n" % rank in r.stdout, "tagged stdout of rank %d" % rank, r)
        check("[1,%d]<stderr>:oops\n" % rank in r.stderr, "tagged stderr of rank %d" % rank, r)
        check("[1,%d]<stdout>:end\n" % rank in r.stdout, "tagged partial line of rank %d" % rank,
              r)
    job.finish()


def case_usr1_forwarded():
    job = Job()
    job.start(["-n", "3"] + helper(job, "usr1"))
    job.wait_files("ready", 3)
    os.kill(job.proc.pid, signal.SIGUSR1)
    r = job.wait()
    check(r.returncode == 0, "ranks handle SIGUSR1 and exit 0", r)
    for rank in range(3):
        check("rank %d got SIGUSR1" % rank in r.stdout, "rank %d got SIGUSR1" % rank, r)
    job.finish()


# ---------------------------------------------------------------- failures

def failing_job(n, actions, status, message, stamp_rank=None):
    """A rank fails: mpirun exits with `status`, prints `message`, and every
    rank is gone within the teardown limit of the failure."""
    job = Job()
    r = job.run(["-n", str(n)] + helper(job, "waitpids:%d" % n, *actions))
    check(r.returncode == status, "expected exit status %d" % status, r)
    check(re.search(message, r.stderr), "message should match %r" % message, r)
    check(len(job.pids()) == n, "all %d ranks had started" % n, r)
    if stamp_rank is not None:
        t = float(job.files("time")[stamp_rank])
        check(r.ended_at - t < TEARDOWN_S,
              "job ended %.2f s after the failure (limit %.1f)" % (r.ended_at - t, TEARDOWN_S), r)
    job.finish()
    return r


def case_exit_status():
    failing_job(4, ["r1:stamp", "r1:exit:3", "sleep:-1"], 3,
                r"rank 1 \(pid \d+\) exited with status 3", stamp_rank=1)


def case_segfault():
    failing_job(4, ["init", "r2:sleep:0.2", "r2:stamp", "r2:segv", "sleep:-1"], 139,
                r"rank 2 \(pid \d+\) was killed by signal 11 \(SIGSEGV", stamp_rank=2)


def case_abort():
    failing_job(3, ["init", "r1:stamp", "r1:abort:7:something went wrong", "sleep:-1"], 7,
                r"rank 1 called MPI_Abort with error code 7: something went wrong",
                stamp_rank=1)


def case_abort_code_clipped():
    failing_job(2, ["init", "r0:abort:0:zero", "sleep:-1"], 1, r"error code 0: zero")
    failing_job(2, ["init", "r1:abort:300", "sleep:-1"], 255, r"error code 300")


def case_no_finalize():
    failing_job(3, ["init", "r2:stamp", "r2:exit:0", "sleep:-1"], 1,
                r"rank 2 \(pid \d+\) exited with status 0 after MPI_Init without calling "
                r"MPI_Finalize", stamp_rank=2)


def case_sigterm_ignored():
    """Ranks that ignore SIGTERM are killed all the same, in time."""
    failing_job(3, ["ignoreterm", "r0:sleep:0.2", "r0:stamp", "r0:exit:5", "sleep:-1"], 5,
                r"rank 0 .* exited with status 5", stamp_rank=0)


def case_rank_killed_from_outside():
    job = Job()
    job.start(["-n", "4"] + helper(job, "sleep:-1"))
    job.wait_files("pid", 4)
    victim = job.pids()[2]
    t = time.time()
    os.kill(victim, signal.SIGKILL)
    r = job.wait()
    check(r.returncode == 137, "expected 128+9", r)
    check(re.search(r"rank 2 \(pid %d\) was killed by signal 9 \(SIGKILL" % victim, r.stderr),
          "message names rank 2 and SIGKILL", r)
    check(r.ended_at - t < TEARDOWN_S, "teardown took %.2f s" % (r.ended_at - t), r)
    job.finish()


def interrupt_launcher(sig, status, extra_actions=()):
    job = Job()
    job.start(["-n", "4"] + helper(job, *extra_actions, "sleep:-1"))
    job.wait_files("pid", 4)
    t = time.time()
    os.kill(job.proc.pid, sig)
    r = job.wait()
    check(r.returncode == status, "expected exit status %d" % status, r)
    check(r.ended_at - t < TEARDOWN_S, "teardown took %.2f s" % (r.ended_at - t), r)
    job.assert_ranks_gone(since=t)
    job.finish()
    return r


def case_sigint_launcher():
    r = interrupt_launcher(signal.SIGINT, 130)
    check("SIGINT" in r.stderr, "message names SIGINT", r)


def case_sigterm_launcher():
    interrupt_launcher(signal.SIGTERM, 143, ("ignoreterm",))


def case_sighup_launcher():
    interrupt_launcher(signal.SIGHUP, 129)


def case_launcher_sigkilled():
    """Ranks die with mpirun even when it cannot clean up (PR_SET_PDEATHSIG)."""
    job = Job()
    job.start(["-n", "3"] + helper(job, "ignoreterm", "sleep:-1"))
    job.wait_files("pid", 3)
    t = time.time()
    os.kill(job.proc.pid, signal.SIGKILL)
    job.wait()
    job.assert_ranks_gone(since=t)
    job.finish()


def case_timeout():
    job = Job()
    t = time.time()
    r = job.run(["-n", "2", "--timeout", "1"] + helper(job, "sleep:-1"))
    check(r.returncode == 124, "expected 124 on timeout", r)
    check("--timeout" in r.stderr, "message mentions --timeout", r)
    check(r.ended_at - t < 1 + TEARDOWN_S, "took %.2f s" % (r.ended_at - t), r)
    job.finish()
    bad_command_line(lambda j: ["--timeout", "soon"] + helper(j), r"positive number")


# ---------------------------------------------------------------- MPI programs

def mpi_failure(prog, n, status, message, stamp_rank):
    job = Job()
    r = job.run(["-n", str(n), prog, job.dir])
    check(r.returncode == status, "expected exit status %d" % status, r)
    check(re.search(message, r.stderr), "message should match %r" % message, r)
    t = float(job.files("time")[stamp_rank])
    check(r.ended_at - t < TEARDOWN_S, "job ended %.2f s after the failure" % (r.ended_at - t), r)
    job.finish()


def case_mpi_abort():
    mpi_failure(ARGS.mpi_abort, 4, 7, r"rank 1 called MPI_Abort with error code 7", 1)


def case_mpi_segv():
    mpi_failure(ARGS.mpi_segv, 4, 139, r"rank 2 \(pid \d+\) was killed by signal 11 \(SIGSEGV",
                2)


# ---------------------------------------------------------------- wrappers

def case_compiler_wrappers():
    mpicc = os.path.join(ARGS.bin, "mpicc")
    def out(*a, env=None):
        r = subprocess.run([mpicc] + list(a), capture_output=True, text=True, timeout=30,
                           env=env)
        check(r.returncode == 0, "mpicc %s" % " ".join(a), r)
        return r.stdout.strip()
    show = out("-show", "x.c", "-o", "x")
    check(show.split()[0] == "cc" and "-lleanmpi" in show and "-I" in show
          and "-Wl,-rpath," in show, "mpicc -show: %r" % show)
    check("-lleanmpi" not in out("-show", "-c", "x.c"), "no link flags with -c")
    check(out("-showme:compile").startswith("-I"), "-showme:compile")
    check("-lleanmpi" in out("-showme:link"), "-showme:link")
    check(out("-showme:libs") == "leanmpi", "-showme:libs")
    check(out("-compile_info").startswith("cc "), "-compile_info")
    check("-lleanmpi" in out("-link_info"), "-link_info")
    env = dict(os.environ, LEANMPI_CC="gcc -m64")
    check(out("-show", "x.c", env=env).startswith("gcc -m64 "), "LEANMPI_CC")
    check(out("-showme", "a b.c").find("'a b.c'") > 0, "-showme quotes arguments")
    mpicxx = os.path.join(ARGS.bin, "mpicxx")
    r = subprocess.run([mpicxx, "-show", "x.cc"], capture_output=True, text=True, timeout=30)
    check(r.returncode == 0 and r.stdout.startswith("c++ "), "mpicxx -show", r)


CASES = {name[5:]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}


def run_cases(cases, names, skip=(), after=lambda name: 0):
    """Run the named cases, each followed by the cleanup of its jobs and by
    after(name) (the number of further failures it found). Returns the
    numbers of failed and skipped cases; exceptions of the types in skip
    mark a case skipped."""
    failed = skipped = 0
    for name in names:
        try:
            cases[name]()
            print("PASS", name)
        except skip as e:
            skipped += 1
            print("SKIP", name + ":", e)
        except Failure as e:
            failed += 1
            print("FAIL", name + ":", e)
        finally:
            for job in JOBS:
                job.cleanup()
            JOBS.clear()
            failed += after(name)
    return failed, skipped


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin")
    ap.add_argument("--helper")
    ap.add_argument("--mpi-abort", "--mpi_abort", dest="mpi_abort")
    ap.add_argument("--mpi-segv", "--mpi_segv", dest="mpi_segv")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("cases", nargs="*")
    ARGS = ap.parse_args()
    if ARGS.list:
        print("\n".join(CASES))
        return 0
    failed, _ = run_cases(CASES, ARGS.cases or list(CASES))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
