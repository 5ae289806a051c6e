"""The suite forces every collective algorithm (tests/mpi/CMakeLists.txt,
LM_COLL_ALGORITHMS): check that list against what the library offers, as
`leanmpi-info --algorithms` prints it, so a new algorithm cannot go untested.

usage: check_algorithm_list.py LEANMPI_INFO LIST_FILE"""
import subprocess
import sys


def offered(info):
    out = subprocess.run([info, "--algorithms"], check=True, capture_output=True, text=True).stdout
    rows = set()
    for line in out.splitlines()[1:]:
        if not line.startswith("  "):
            break  # the selection table follows the list
        coll, name = line.split()[:2]
        rows.add(f"{coll}:{name}")
    return rows


def main():
    info, list_file = sys.argv[1], sys.argv[2]
    tested = {e for e in open(list_file).read().strip().split(";") if e}
    have = offered(info)
    missing, stale = sorted(have - tested), sorted(tested - have)
    for e in missing:
        print(f"FAIL algorithm {e} is offered but not forced by any test")
    for e in stale:
        print(f"FAIL LM_COLL_ALGORITHMS names {e}, which the library does not offer")
    if missing or stale or not have:
        return 1
    print(f"PASS {len(have)} algorithms, each forced by a test")
    return 0


if __name__ == "__main__":
    sys.exit(main())
