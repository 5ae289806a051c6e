"""Tests of the pure parts of bench/leanmpi_mem.py: parsing memscale and
/proc output, the job's process set, fits, projections, targets and the
report."""

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def mm():
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("leanmpi_mem", BENCH / "leanmpi_mem.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["leanmpi_mem"] = mod
    spec.loader.exec_module(mod)
    return mod


MEMSCALE_OUT = """\
phase=init rank=1 size=2 rss_kb=2000 pss_kb=600
some launcher warning
phase=init rank=0 size=2 rss_kb=2100 pss_kb=700
phase=ring rank=0 size=2 rss_kb=2200 pss_kb=-1
phase=ring rank=1 size=2 rss_kb=2300 pss_kb=650
"""


def test_parse_memscale(mm):
    ph = mm.parse_memscale(MEMSCALE_OUT)
    assert set(ph) == {"init", "ring"}
    assert ph["init"][0] == {"rss_kb": 2100, "pss_kb": 700}
    assert ph["ring"][0]["pss_kb"] is None  # -1: not readable


def test_rank_summary_mean_and_max(mm):
    s = mm.rank_summary(mm.parse_memscale(MEMSCALE_OUT)["ring"])
    assert s["ranks"] == 2
    assert s["rss_kb"] == 2250 and s["rss_kb_max"] == 2300
    assert s["pss_kb"] == 650 and s["pss_kb_max"] == 650


def test_parse_stat_with_odd_comm(mm):
    text = "4242 (a (b) c) S 17 4242 99 0 -1 4194304 100 0 0 0"
    assert mm.parse_stat(text) == (4242, 17, 99)


def test_parse_pss_rollup_and_smaps(mm):
    assert mm.parse_pss_kb("Rss:   100 kB\nPss:    42 kB\nPss_Anon: 7 kB\n") == 42
    assert mm.parse_pss_kb("Pss: 1 kB\nRss: 3 kB\nPss: 2 kB\n") == 3
    assert mm.parse_pss_kb("Rss: 1 kB\n") is None


def test_job_pids_descendants_and_session(mm):
    procs = {1: (0, 1), 100: (1, 100), 101: (100, 100), 102: (101, 100),
             103: (1, 100),           # daemon reparented to init, same session
             200: (1, 200), 201: (200, 200)}  # another job
    assert mm.job_pids(procs, 100) == {100, 101, 102, 103}
    assert mm.job_pids(procs, 999) == set()


def test_fit_line_exact_and_degenerate(mm):
    slope, icpt = mm.fit_line([2, 4, 8, 16], [10 + 3 * x for x in (2, 4, 8, 16)])
    assert slope == pytest.approx(3) and icpt == pytest.approx(10)
    slope, icpt = mm.fit_line([1, 2, 3], [1, 3, 2])
    assert slope == pytest.approx(0.5) and icpt == pytest.approx(1.0)
    assert mm.fit_line([4, 4], [1, 2]) is None
    assert mm.fit_line([2, 4], [1, None]) is None


def test_growth_per_peer(mm):
    pts = {2: {"rss_kb": 1000}, 64: {"rss_kb": 1500}, 128: {"rss_kb": 2260}}
    assert mm.growth_per_peer(pts) == pytest.approx(10.0)
    assert mm.growth_per_peer({2: {"rss_kb": 1}}) is None


def test_fit_node_recovers_the_model(mm):
    ns = [2, 4, 8, 16, 32, 64, 128]
    tot = [5000 + n * (2000 + 0.5 * n) for n in ns]
    m = mm.fit_node(ns, tot)
    assert m["fixed_kb"] == pytest.approx(5000)
    assert m["rank_kb"] == pytest.approx(2000)
    assert m["slope_kb"] == pytest.approx(0.5)
    assert m["slope_se_kb"] == pytest.approx(0.0, abs=1e-6)
    assert mm.fit_node([2, 4], [1, 2]) is None
    assert mm.fit_node([2, 4, 8], [1, 2, 3])["slope_se_kb"] is None  # no residual left


def test_fit_node_standard_error_grows_with_noise(mm):
    ns = [2, 4, 8, 16, 32, 64, 128]
    noise = [30, -30, 30, -30, 30, -30, 30]  # KiB of the per-rank share
    tot = [n * (2000 + 0.5 * n + e) for n, e in zip(ns, noise)]
    m = mm.fit_node(ns, tot)
    assert 0 < m["slope_se_kb"] < 1
    assert abs(m["slope_kb"] - 0.5) < 3 * m["slope_se_kb"]
    tot2 = [n * (2000 + 0.5 * n + 3 * e) for n, e in zip(ns, noise)]
    assert mm.fit_node(ns, tot2)["slope_se_kb"] == pytest.approx(3 * m["slope_se_kb"])


def test_project_node(mm):
    model = {"fixed_kb": 5000, "rank_kb": 2000, "slope_kb": 1.0}
    assert mm.project_node_kb(model, 32, nprocs=1 << 20) == pytest.approx(
        5000 + 32 * (2000 + (1 << 20)))
    model["slope_kb"] = -2.0  # noise is no shrinkage
    assert mm.project_node_kb(model, 16) == pytest.approx(5000 + 16 * 2000)


def test_median_summary(mm):
    s = mm.median_summary([{"a": 1, "b": None}, {"a": 3, "b": 5}, {"a": 2, "b": 7}])
    assert s == {"a": 2, "b": 6}
    assert mm.median_summary([None, {}]) is None


def _points(base, per_peer, ns=(2, 16, 32)):
    return {n: {"rss_kb": base + per_peer * n, "pss_kb": base / 2} for n in ns}


def _nodes(base, per_rank, ns=(2, 16, 32), per_peer=0.0):
    return {n: {"total_kb": base + n * (per_rank + per_peer * n), "others_kb": 300,
                "orphan_shm_kb": 0} for n in ns}


def test_analyze_fits_and_projects(mm):
    points = {"leanmpi": {"init": _points(2000, 0.5)}}
    nodes = {"leanmpi": {"init": _nodes(300, 1000, per_peer=0.5)}}
    f = mm.analyze(points, nodes)["leanmpi"]["init"]
    assert f["rss_kb"]["slope_kb"] == pytest.approx(0.5)
    assert f["rss_kb"]["intercept_kb"] == pytest.approx(2000)
    assert f["growth_rss_kb"] == pytest.approx(0.5)
    assert f["node_at_ppn_kb"] == {"16": pytest.approx(300 + 16 * 1008),
                                   "32": pytest.approx(300 + 32 * 1016)}
    assert f["node_model"]["slope_kb"] == pytest.approx(0.5)
    assert f["projection_kb"]["32"] == pytest.approx(300 + 32 * (1000 + 0.5 * (1 << 20)))


def test_analyze_needs_three_sizes_to_project(mm):
    points = {"x": {"init": _points(2000, 2.0, ns=(2, 8))}}
    nodes = {"x": {"init": _nodes(100, 1000, ns=(2, 8))}}
    f = mm.analyze(points, nodes)["x"]["init"]
    assert f["projection_kb"] is None and f["node_at_ppn_kb"] == {}
    assert f["rss_kb"]["slope_kb"] == pytest.approx(2.0)


def _world(lean_per_peer, peer_per_peer):
    phases = ("init", "ring", "alltoall")
    points = {"leanmpi": {ph: _points(2000, lean_per_peer) for ph in phases},
              "mpich": {ph: _points(16000, peer_per_peer) for ph in phases}}
    nodes = {"leanmpi": {ph: _nodes(300, 3000, per_peer=lean_per_peer) for ph in phases},
             "mpich": {ph: _nodes(300, 8000, per_peer=peer_per_peer) for ph in phases}}
    return points, nodes


def test_targets_pass(mm):
    points, nodes = _world(0.01, 17)
    fits = mm.analyze(points, nodes)
    rows = {r["id"]: r for r in mm.evaluate_targets(
        points, fits, {"sim_rss_kb": 2040, "plain_rss_kb": 2000}, ["mpich"])}
    assert rows["growth_alltoall"]["status"] == "PASS"
    assert rows["growth_alltoall"]["peers"]["mpich"] == pytest.approx(17)
    assert rows["simulated_world"]["value"] == 40
    assert rows["simulated_world"]["status"] == "PASS"
    r2 = rows["rss_init_2"]
    assert r2["value"] == pytest.approx((2000 + 0.02) / (16000 + 34))
    assert r2["status"] == "PASS"
    # F = 300, r = 3000 per rank, s = 0.01 KiB per peer.
    assert rows["node_init"]["value"] == pytest.approx(300 + 32 * (3000 + 0.01 * (1 << 20)))
    assert rows["node_init"]["status"] == "PASS"
    # The peer's 17 KiB per peer projects far beyond the limit.
    assert rows["node_init"]["peers"]["mpich"] > mm.NODE_LIMIT_KIB


def test_targets_fail_and_unmeasured(mm):
    points, nodes = _world(3.0, 17)
    fits = mm.analyze(points, nodes)
    rows = {r["id"]: r for r in mm.evaluate_targets(
        points, fits, {"sim_rss_kb": 2200, "plain_rss_kb": 2000}, ["mpich"])}
    assert rows["growth_ring"]["status"] == "FAIL"
    assert rows["simulated_world"]["status"] == "FAIL"
    assert rows["node_alltoall"]["status"] == "FAIL"
    rows = {r["id"]: r for r in mm.evaluate_targets(points, fits, None, [])}
    assert rows["simulated_world"]["status"] == "not measured"
    assert rows["rss_init_2"]["status"] == "no peer"


def test_fmt_kib(mm):
    assert mm.fmt_kib(None) == "–"
    assert mm.fmt_kib(512) == "512 KiB"
    assert mm.fmt_kib(2048) == "2.00 MiB"
    assert mm.fmt_kib(3 * (1 << 20)) == "3.00 GiB"
    assert mm.fmt_kib(64 * (1 << 20)) == "64 GiB"


def test_render_markdown(mm):
    points, nodes = _world(0.01, 17)
    fits = mm.analyze(points, nodes)
    result = {
        "meta": {"started": "2026-01-01T00:00:00", "duration_s": 60, "ns": [2, 16, 32],
                 "reps": 1, "lat_reps": 1, "machine": {"CPU": "test"},
                 "reproduce": "make bench-mem", "method": mm.method_lines([2, 16, 32], 1)},
        "mpis": {"leanmpi": {"label": "LeanMPI", "status": "ok", "launch": "mpirun"},
                 "mpich": {"label": "MPICH 4", "status": "ok", "launch": "mpirun.mpich"},
                 "openmpi5": {"label": "Open MPI 5", "status": "skipped",
                              "note": "wheel not found", "launch": "mpirun"}},
        "points": points, "nodes": nodes, "fits": fits,
        "simulated": {"sim_rss_kb": 2040, "plain_rss_kb": 2000, "reps": 2},
        "latency": {"leanmpi": {"8": {"median": 0.5, "min": 0.4, "max": 0.6, "n": 3}},
                    "leanmpi-rs": {"8": {"median": 0.6, "min": 0.6, "max": 0.6, "n": 3}}},
        "failures": [{"mpi": "mpich", "n": 128, "error": "timed out"}],
    }
    result["targets"] = mm.evaluate_targets(points, fits, result["simulated"], ["mpich"])
    md = mm.render_markdown(result)
    assert md.startswith("# LeanMPI memory scaling")
    assert "| 16 | 1.95 MiB / 1000 KiB / 47.2 MiB | 15.9 MiB / 7.81 MiB / 129.5 MiB |" in md
    assert "**PASS**" in md
    assert "Open MPI 5: wheel not found" in md
    assert "MPICH 4 at 128 ranks: timed out" in md
    assert "1.20×" in md  # resource-saving / default latency at 8 B
    assert "make bench-mem" in md


MEMREPORT = """\
phase=alltoall rank=0 size=2 rss_kb=1 pss_kb=1
LeanMPI memory report, rank 1 (bytes)
component           current         peak       shared
core                   9999         9999            0
total                  9999         9999            0
LeanMPI memory report, rank 0 (bytes)
component           current         peak       shared
core                   8208         8208            0
transport                 0            0      4734976
collectives               0        68808            0
total                 26160        96264      4734976
"""


def test_parse_memreport_picks_the_rank(mm):
    rep = mm.parse_memreport(MEMREPORT)
    assert rep["core"] == {"current": 8208, "peak": 8208, "shared": 0}
    assert rep["collectives"]["peak"] == 68808
    assert rep["total"]["shared"] == 4734976
    assert mm.parse_memreport(MEMREPORT, rank=1) == {
        "core": {"current": 9999, "peak": 9999, "shared": 0},
        "total": {"current": 9999, "peak": 9999, "shared": 0}}
    assert mm.parse_memreport("nothing here") == {}


def test_memreport_section(mm):
    rep = {"2": mm.parse_memreport(MEMREPORT), "128": mm.parse_memreport(MEMREPORT)}
    md = "\n".join(mm.memreport_section(rep))
    assert "| component | 2 ranks | 128 ranks |" in md
    assert "| collectives | 0.00 KiB / 67.2 MiB" not in md
    assert "| collectives | 0.00 KiB / 67 KiB / 0.00 KiB | 0.00 KiB / 67 KiB / 0.00 KiB |" in md
    assert md.splitlines()[-1].startswith("| total |")
    assert mm.memreport_section({}) == []


def test_findings_explain_missed_targets(mm):
    points, nodes = _world(3.0, 17)
    fits = mm.analyze(points, nodes)
    sim = {"sim_rss_kb": 2000 + 1024, "plain_rss_kb": 2000}
    targets = mm.evaluate_targets(points, fits, sim, ["mpich"])
    rep = {"2": mm.parse_memreport(MEMREPORT), "32": mm.parse_memreport(MEMREPORT)}
    text = mm.findings(points, fits, targets, rep)
    assert any("3.00 KiB per peer" in x and "LEANMPI_MEMREPORT" in x for x in text)
    assert any(x.startswith("Projected node memory after MPI_Init") for x in text)
    # 1 MiB for 2^20 - 2 further peers: about one byte per peer.
    assert any("1.00 bytes per peer" in x for x in text)
    points, nodes = _world(0.0, 17)
    fits = mm.analyze(points, nodes)
    assert mm.findings(points, fits, mm.evaluate_targets(points, fits, None, []), rep) == []


def test_direct_section(mm):
    points = {"leanmpi": {"alltoall": {2: {"rss_kb": 2400, "anon_kb": 180, "file_kb": 2200,
                                           "shmem_kb": 20, "pss_kb": 600}}}}
    direct = {"2": {"alltoall": {"rss_kb": 2500, "anon_kb": 181, "file_kb": 2200,
                                 "shmem_kb": 119, "pss_kb": 640}}}
    md = "\n".join(mm.direct_section(points, direct))
    assert "| 2 | default (Bruck for 8 B) | 2.34 MiB | 180 KiB | 2.15 MiB | 20 KiB | 600 KiB |" in md
    assert "| 2 | pairwise | 2.44 MiB | 181 KiB | 2.15 MiB | 119 KiB | 640 KiB |" in md
    assert mm.direct_section(points, {}) == []


def test_reproduce_args_drop_the_venv(mm):
    assert mm.reproduce_args(["--venv", "/x", "--ns", "2,4", "--venv=/y", "--reps", "2"]) == [
        "--ns", "2,4", "--reps", "2"]
