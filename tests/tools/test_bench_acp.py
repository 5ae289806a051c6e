"""The ACP side-by-side report (bench/leanmpi_acp.py): medians of the
samples, and the targets (ratios against the best peer, the One_put_all
limits), which must fail as well as pass."""
import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
SPEC = importlib.util.spec_from_file_location("leanmpi_acp", BENCH / "leanmpi_acp.py")
acp = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(acp)

PEERS = ["openmpi4", "mpich"]
LABELS = {"openmpi4": "Open MPI 4.1", "mpich": "MPICH 4", "leanmpi": "LeanMPI", acp.ACP_KEY: "LeanMPI ACP"}


def summary(copy_lat, get_bw, at2, at16):
    samples = {
        ("rma", "openmpi4"): [{"put": {8: 0.020}, "get_bw": {1 << 20: 50000.0}}] * 3,
        ("rma", "mpich"): [{"put": {8: 0.250}, "get_bw": {1 << 20: 30000.0}}] * 3,
        ("rma", acp.ACP_KEY): [{"copy_l2r": {8: v}, "copy_r2l_bw": {1 << 20: get_bw}} for v in copy_lat],
        ("rma_putall", acp.ACP_KEY): [{2: {"private_kb": at2}, 16: {"private_kb": at16}}],
    }
    return acp.medians(samples)


def targets(s):
    return {t["id"]: t for t in acp.rows_and_targets(s, PEERS, LABELS)[1]}


def test_medians_and_passing_targets():
    t = targets(summary([0.010, 0.012, 0.500], 60000.0, 4300.0, 4320.0))
    assert t["acp_copy_l2r"]["value"] == 0.012  # the median, not the mean
    assert t["acp_copy_l2r"]["best_mpi"] == "openmpi4"
    assert abs(t["acp_copy_l2r"]["ratio"] - 0.6) < 1e-9
    assert t["acp_copy_l2r"]["status"] == "PASS"
    assert t["acp_copy_r2l_bw"]["status"] == "PASS"
    assert t["acp_putall_16"]["status"] == "PASS"
    assert t["acp_putall_growth"]["value"] == 20.0
    assert t["acp_putall_growth"]["status"] == "PASS"


def test_failing_targets():
    t = targets(summary([0.030], 40000.0, 4300.0, 7000.0))
    assert t["acp_copy_l2r"]["status"] == "FAIL"
    assert t["acp_copy_r2l_bw"]["status"] == "FAIL"  # a bandwidth must be higher
    assert t["acp_putall_16"]["status"] == "FAIL"  # above 6.6 MB
    assert t["acp_putall_growth"]["status"] == "FAIL"  # 2,700 kB of growth


def test_missing_measurements_are_not_passes():
    t = targets(acp.medians({("rma", "openmpi4"): [{"put": {8: 0.02}}]}))
    assert {v["status"] for v in t.values()} == {"MISSING"}
