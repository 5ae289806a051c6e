"""The shared-address-space report (bench/leanmpi_shared.py): its rows and
the streaming target against the best peer, which must fail as well as
pass (LeanMPI's own modes are not peers)."""
import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
SPEC = importlib.util.spec_from_file_location("leanmpi_shared", BENCH / "leanmpi_shared.py")
sh = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(sh)
lb = sh.lb

KEYS = ["leanmpi", sh.SHARED, "openmpi4", "mpich"]
LABELS = {"leanmpi": "LeanMPI", sh.SHARED: "shared", "openmpi4": "Open MPI 4.1", "mpich": "MPICH 4"}


def summary(bw):
    samples = {"bw": {k: [{1 << 20: v}] for k, v in bw.items()}}
    return lb.summarize(samples)


def test_target_passes_against_the_best_peer_only():
    s = summary({"leanmpi": 50000.0, sh.SHARED: 20000.0, "openmpi4": 8000.0, "mpich": 9000.0})
    rows, t = sh.table_and_target(s, KEYS, LABELS)
    assert t["best_mpi"] == "mpich"  # LeanMPI's default mode is not a peer
    assert abs(t["ratio"] - 20000.0 / 9000.0) < 1e-9 and t["status"] == "PASS"
    assert len(rows) == len(sh.ROWS)


def test_target_fails_below_twice_the_best_peer():
    s = summary({sh.SHARED: 15000.0, "openmpi4": 8000.0, "mpich": 9000.0})
    assert sh.table_and_target(s, KEYS, LABELS)[1]["status"] == "FAIL"


def test_missing_shared_measurement_is_not_a_pass():
    s = summary({"openmpi4": 8000.0})
    assert sh.table_and_target(s, KEYS, LABELS)[1]["status"] == "MISSING"
