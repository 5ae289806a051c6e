"""The page-table study (bench/leanmpi_pagetables.py): a job's figure is
its reading during the run minus the settled reading before it; a job with
no reading or a failed data check gives no sample; the target compares one
address space with the default mode at 16 ranks and must fail as well as
pass; the MEMORY.md section renders from the saved JSON."""
import importlib.util
import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
SPEC = importlib.util.spec_from_file_location("leanmpi_pagetables", BENCH / "leanmpi_pagetables.py")
pt = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(pt)
lb, SHARED = pt.lb, pt.ls.SHARED


def test_sample_is_during_minus_before():
    out = "pagetables_kb=5000 pagetables_start_kb=1300 ranks=16 buffer_mib=64\n# check=ok\n"
    assert pt.job_sample(1000, out) == dict(during_kb=5000, before_kb=1000, added_kb=4000)


def test_no_reading_or_failed_check_is_no_sample():
    assert pt.job_sample(1000, "mpirun: rank 1 exited\n") is None
    assert pt.job_sample(1000, "pagetables_kb=5000 ranks=2\n# check=FAILED\n") is None
    assert pt.job_sample(None, "pagetables_kb=5000 ranks=2\n") is None


def test_meminfo_reader(tmp_path):
    f = tmp_path / "meminfo"
    f.write_text("MemTotal: 100 kB\nSecPageTables:  7 kB\nPageTables:  1234 kB\n")
    assert pt.read_pagetables_kb(str(f)) == 1234
    f.write_text("MemTotal: 100 kB\n")
    assert pt.read_pagetables_kb(str(f)) is None


def samples(by_mpi):
    return {m: {n: [dict(added_kb=v) for v in vs] for n, vs in byn.items()} for m, byn in by_mpi.items()}


def test_target_passes_and_fails():
    med = pt.medians(samples({"leanmpi": {16: [4000, 4200, 9000]}, SHARED: {16: [900, 1000, 1100]}}))
    assert med["leanmpi"][16] == 4200
    t = pt.evaluate(med)
    assert t["status"] == "PASS" and abs(t["ratio"] - 1000 / 4200) < 1e-9
    med = pt.medians(samples({"leanmpi": {16: [4000]}, SHARED: {16: [3600]}}))
    assert pt.evaluate(med)["status"] == "FAIL"
    assert pt.evaluate(pt.medians(samples({"leanmpi": {16: [4000]}})))["status"] == "MISSING"


def test_section_renders_from_saved_json():
    med = pt.medians(samples({"leanmpi": {n: [n * 300] for n in pt.NS}, SHARED: {n: [n * 250] for n in pt.NS}}))
    result = dict(date="2026-01-01", reps=1, buffer_mib=64, ns=list(pt.NS), command="python3 bench/leanmpi_pagetables.py",
                  labels={"leanmpi": "LeanMPI", SHARED: "one address space"}, keys=["leanmpi", SHARED],
                  medians=med, errors=[], target=pt.evaluate(med))
    text = "\n".join(pt.render_section(json.loads(json.dumps(result))))
    assert "| one address space | 500 | 1,000 | 2,000 | 4,000 | 0.83× |" in text
    assert "**FAIL**" in text
    assert pt.render_section(None) == []
