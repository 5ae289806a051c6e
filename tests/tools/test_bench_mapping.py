"""The placement study (bench/leanmpi_mapping.py): split keys of a
placement, the shaped rate in MB/s, and the targets, which must fail as
well as pass."""
import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
SPEC = importlib.util.spec_from_file_location("leanmpi_mapping", BENCH / "leanmpi_mapping.py")
mp = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(mp)


def test_keys_put_each_rank_on_its_slot():
    place = [0, 2, 4, 6, 1, 3, 5, 7]
    keys = mp.keys_of(place)
    # world rank w (slot w) takes the role of the rank placed on slot w
    assert all(keys[place[r]] == r for r in range(8))


def test_rate():
    assert mp.rate_mbs("400mbit") == 50.0 and mp.rate_mbs("1gbit") == 125.0


def times(block, cyclic, mapped):
    return {p: {"block": [block], "cyclic": [cyclic], "mapped": [mapped]} for p in mp.PATTERNS}


def test_targets_pass_and_fail():
    _, t = mp.evaluate(times(150.0, 120.0, 100.0))
    assert all(s == "PASS" for _, s, _ in t)
    _, t = mp.evaluate(times(150.0, 90.0, 100.0))  # mapped slower than cyclic
    assert all(s == "FAIL" for _, s, _ in t)
    _, t = mp.evaluate(times(110.0, 120.0, 100.0))  # 1.1x over block: only the alltoall-heavy one fails
    assert dict((p, s) for p, s, _ in t) == {**{p: "PASS" for p in mp.PATTERNS}, mp.ALLTOALL_HEAVY: "FAIL"}
    rows, t = mp.evaluate({})
    assert all(s == "MISSING" for _, s, _ in t)
