"""The before/after comparison of two LeanMPI builds (bench/leanmpi_ab.py):
its summary (output parsing is the harness's own, tested there)."""
import importlib.util
import math
from pathlib import Path

SPEC = importlib.util.spec_from_file_location(
    "leanmpi_ab", Path(__file__).resolve().parents[2] / "bench" / "leanmpi_ab.py")
ab = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(ab)


def test_summarize_medians_minimums_and_ratio():
    samples = {
        ("x", "base"): [10.0, 12.0, 11.0],
        ("x", "new"): [9.0, 30.0, 11.0, 10.0],
        ("y", "base"): [2.0],
        ("y", "new"): [3.0],
    }
    rows = ab.summarize(samples)
    assert [r[0] for r in rows] == ["x", "y"]
    case, base_med, base_min, new_med, new_min, ratio = rows[0]
    assert (base_med, base_min, new_med, new_min) == (11.0, 10.0, 10.5, 9.0)
    assert math.isclose(ratio, 10.5 / 11.0)
    assert math.isclose(rows[1][5], 1.5)


def test_summarize_skips_cases_measured_on_one_build_only():
    assert ab.summarize({("x", "base"): [1.0], ("z", "new"): [2.0]}) == []
