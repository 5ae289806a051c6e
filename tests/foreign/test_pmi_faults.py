#!/usr/bin/env python3
"""Bad PMI servers: the program must fail with a clear message, never hang.

    test_pmi_faults.py --prog boot_job CASE

This script plays the PMI server on a socket pair (PMI_FD), the way Hydra
or srun would, and answers as the case says:
  version     the server speaks PMI version 3
  rank        fullinit answers another rank than PMI_RANK
  size        fullinit answers another job size than PMI_SIZE
  mapping     PMI_process_mapping is not a (vector,...) list
  placement   a placement of more blocks than LeanMPI's layout holds (9
              alternating single ranks on 2 nodes with a third node between)
  refused     the segment's key is not found (a server that refuses a key)
  gone        the server closes the connection after the first answer
Each case expects the program to exit non-zero within 30 s with the reason
on stderr; where the server was reached it must also have sent an abort.
"""
import argparse
import os
import socket
import subprocess
import sys
import threading

CASES = {
    # case: (PMI_RANK, size, mapping, expected text in the output, abort expected)
    "version": (0, 1, "(vector,(0,1,1))", "does not speak PMI", False),
    "rank": (1, 2, "(vector,(0,1,2))", "says rank", False),
    "size": (0, 2, "(vector,(0,1,2))", "the environment (PMI_SIZE) 2", False),
    "mapping": (0, 1, "(nonsense)", "process mapping", False),
    "placement": (3, 9, "(vector," + ",".join(f"({i % 3},1,1)" for i in (0, 2, 1, 0, 2, 1, 0, 1, 2)) + ")",
                  "at most 8 blocks", False),
    "refused": (1, 2, "(vector,(0,1,2))", "not in the pmi2 server", True),
    "gone": (0, 1, "(vector,(0,1,1))", "refused fullinit", False),
}


def v2_frame(text):
    return f"{len(text):6d}{text}".encode()


def serve(sock, case, log):
    rank, size, mapping, _, _ = CASES[case]
    f = sock.makefile("rb")
    line = f.readline().decode()
    log.append(line.strip())
    if case == "version":
        sock.sendall(b"cmd=response_to_init pmi_version=3 pmi_subversion=0 rc=0\n")
    else:
        sock.sendall(b"cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n")
    if case in ("version", "gone"):
        sock.shutdown(socket.SHUT_WR) if case == "gone" else None
        f.read()  # until the program closes
        return
    while True:
        head = f.read(6)
        if len(head) < 6:
            return
        body = f.read(int(head)).decode()
        log.append(body)
        cmd = body.split(";")[0].split("=", 1)[1]
        if cmd == "fullinit":
            r = rank + 1 if case == "rank" else rank
            n = size + 1 if case == "size" else size
            sock.sendall(v2_frame(f"cmd=fullinit-response;rc=0;rank={r};size={n};appnum=0;"))
        elif cmd == "job-getid":
            sock.sendall(v2_frame("cmd=job-getid-response;rc=0;jobid=fakejob;"))
        elif cmd == "info-getjobattr":
            if "PMI_process_mapping" in body:
                sock.sendall(v2_frame(f"cmd=info-getjobattr-response;rc=0;found=TRUE;value={mapping};"))
            else:
                sock.sendall(v2_frame("cmd=info-getjobattr-response;rc=0;found=FALSE;"))
        elif cmd == "kvs-put":
            sock.sendall(v2_frame("cmd=kvs-put-response;rc=0;"))
        elif cmd == "kvs-fence":
            sock.sendall(v2_frame("cmd=kvs-fence-response;rc=0;"))
        elif cmd == "kvs-get":
            sock.sendall(v2_frame("cmd=kvs-get-response;rc=0;found=FALSE;"))
        elif cmd == "abort":
            return
        elif cmd == "finalize":
            sock.sendall(v2_frame("cmd=finalize-response;rc=0;"))
        else:
            sock.sendall(v2_frame(f"cmd={cmd}-response;rc=-1;"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prog", required=True)
    ap.add_argument("case", choices=sorted(CASES))
    args = ap.parse_args()
    rank, size, _, expect, want_abort = CASES[args.case]
    ours, theirs = socket.socketpair()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LEANMPI_", "PMI_", "PMIX_"))}
    env.update(PMI_FD=str(theirs.fileno()), PMI_RANK=str(rank), PMI_SIZE=str(size))
    log = []
    server = threading.Thread(target=serve, args=(ours, args.case, log), daemon=True)
    server.start()
    try:
        r = subprocess.run([args.prog, "pmi2", str(size)], env=env, pass_fds=[theirs.fileno()],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        print(f"FAIL: the program hung with a '{args.case}' server")
        sys.exit(1)
    theirs.close()
    server.join(5)
    out = r.stdout
    if r.returncode == 0:
        print(f"FAIL: the program succeeded with a '{args.case}' server\n{out}")
        sys.exit(1)
    if expect not in out:
        print(f"FAIL: expected '{expect}' in the output\n{out}")
        sys.exit(1)
    if want_abort and not any(m.startswith("cmd=abort") for m in log):
        print(f"FAIL: the program did not send an abort to the server; it sent {log}")
        sys.exit(1)
    print(f"PASS {args.case}: exit {r.returncode}, '{expect}' said")


if __name__ == "__main__":
    main()
