"""Tests of the pure parts of bench/leanmpi_bench.py: parsing benchmark
output, statistics, ratios, targets and report generation."""

import csv
import importlib.util
import io
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[2] / "bench" / "leanmpi_bench.py"


@pytest.fixture(scope="module")
def hb():
    spec = importlib.util.spec_from_file_location("leanmpi_bench", HARNESS)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["leanmpi_bench"] = mod
    spec.loader.exec_module(mod)
    return mod


PINGPONG_OUT = """\
# library=MPICH Version:\t4.0.2
# bench=pingpong ranks=2
some launcher banner that is not a record
size=1 iters=20000 lat_us=0.5528
size=8 iters=20000 lat_us=0.5428
size=1048576 iters=128 lat_us=189.0057
"""

MEMORY_OUT = """\
phase=init rank=0 rss_kb=16828 pss_kb=10737
phase=init rank=1 rss_kb=16844 pss_kb=10751
phase=p2p rank=0 rss_kb=17052 pss_kb=10853
phase=p2p rank=1 rss_kb=17072 pss_kb=-1
"""


def test_parse_output_records_and_meta(hb):
    recs, meta = hb.parse_output(PINGPONG_OUT)
    assert meta["library"] == "MPICH Version: 4.0.2"
    assert meta["bench"] == "pingpong" and meta["ranks"] == 2
    assert len(recs) == 3
    assert recs[1] == {"size": 8, "iters": 20000, "lat_us": 0.5428}


def test_parse_output_ignores_noise(hb):
    recs, _ = hb.parse_output("warning: x=1 is odd\n=3\n\nsize=2 lat_us=1.5\n")
    assert recs == [{"size": 2, "lat_us": 1.5}]


def test_series_from_records(hb):
    recs, _ = hb.parse_output(PINGPONG_OUT)
    series = hb.series_from_records(recs, "lat_us")
    assert series == {1: 0.5528, 8: 0.5428, 1048576: 189.0057}
    assert hb.series_from_records(recs, "mb_s") == {}


def test_memory_takes_largest_rank_and_skips_missing(hb):
    recs, _ = hb.parse_output(MEMORY_OUT)
    mem = hb.memory_from_records(recs)
    assert mem["init"] == {"rss_kb": 16844, "pss_kb": 10751, "ranks": 2}
    assert mem["p2p"]["rss_kb"] == 17072
    assert mem["p2p"]["pss_kb"] == 10853  # -1 means "could not read"


def test_stats(hb):
    assert hb.stats([3, 1, 2]) == {"median": 2, "min": 1, "max": 3, "n": 3}
    assert hb.stats([1, 2, None, 4])["median"] == 2
    assert hb.stats([]) is None
    assert hb.stats([None]) is None


def synthetic_samples():
    return {
        "pingpong": {
            "leanmpi": [{8: 0.30, 1024: 1.0}, {8: 0.40, 1024: 1.2}, {8: 0.35, 1024: 1.1}],
            "mpich": [{8: 0.50, 1024: 1.0}, {8: 0.60, 1024: 1.0}, {8: 0.55, 1024: 1.0}],
            "openmpi4": [{8: 0.45, 1024: 2.0}],
        },
        "bw": {
            "leanmpi": [{1 << 20: 5000.0}, {1 << 20: 5200.0}],
            "mpich": [{1 << 20: 4000.0}, {1 << 20: 6000.0}],
            "openmpi4": [{1 << 20: 5100.0}],
        },
        "init": {
            "leanmpi": [[0.020, 0.030], [0.025]],
            "mpich": [[0.050, 0.060]],
            "openmpi4": [[0.400]],
        },
        "memory": {
            "leanmpi": [{"init": {"rss_kb": 2000, "pss_kb": 700}}],
            "mpich": [{"init": {"rss_kb": 16000, "pss_kb": 9000}},
                      {"init": {"rss_kb": 17000, "pss_kb": None}}],
            "openmpi4": [{"init": {"rss_kb": 14000, "pss_kb": 5500},
                          "p2p": {"rss_kb": 14100, "pss_kb": 5600}}],
        },
    }


MPIS = ["leanmpi", "openmpi4", "mpich"]


def test_summarize(hb):
    s = hb.summarize(synthetic_samples())
    assert s["pingpong"]["leanmpi"][8] == {"median": 0.35, "min": 0.30, "max": 0.40, "n": 3}
    assert s["bw"]["mpich"][1 << 20]["median"] == 5000.0
    assert s["init"]["leanmpi"]["median"] == pytest.approx(25.0)  # ms, 3 samples
    assert s["init"]["leanmpi"]["n"] == 3
    assert s["memory"]["mpich"]["init"]["rss_kb"]["median"] == 16500
    assert s["memory"]["mpich"]["init"]["pss_kb"]["n"] == 1
    assert "p2p" not in s["memory"]["leanmpi"]


def test_best_peer_and_ratio(hb):
    assert hb.best_peer({"leanmpi": 0.1, "a": 0.5, "b": 0.4}, "lower") == ("b", 0.4)
    assert hb.best_peer({"leanmpi": 9, "a": 5, "b": 4}, "higher") == ("a", 5)
    assert hb.best_peer({"leanmpi": 1, "a": None}, "lower") == (None, None)
    assert hb.ratio(1.0, 4.0) == 0.25
    assert hb.ratio(None, 4.0) is None and hb.ratio(1.0, 0) is None


def test_series_ratios(hb):
    s = hb.summarize(synthetic_samples())
    r = hb.series_ratios(s, "pingpong", MPIS)
    assert r[8]["best"] == ("openmpi4", 0.45)
    assert r[8]["vs_best"] == pytest.approx(0.35 / 0.45)
    assert r[8]["vs"]["mpich"] == pytest.approx(0.35 / 0.55)
    assert r[1024]["best"] == ("mpich", 1.0)


def test_evaluate_targets(hb):
    s = hb.summarize(synthetic_samples())
    rows = {r["id"]: r for r in hb.evaluate_targets(s, MPIS)}
    assert rows["latency_8B"]["status"] == "PASS"
    assert rows["latency_8B"]["best_peer"] == "openmpi4"
    bw = rows["bandwidth_1MiB"]  # 5100 vs best peer 5100: exactly 1.0 passes
    assert bw["best_value"] == 5100.0 and bw["ratio"] == pytest.approx(5100 / 5100)
    assert bw["status"] == "PASS"
    init = rows["init_wall"]  # 25 ms vs 55 ms: 0.45 <= 0.5
    assert init["best_peer"] == "mpich" and init["status"] == "PASS"
    rss = rows["rss_init"]
    assert rss["best_value"] == 14000 and rss["ratio"] == pytest.approx(2000 / 14000)


def test_targets_fail_and_not_measured(hb):
    s = hb.summarize({"pingpong": {"leanmpi": [{8: 1.0}], "mpich": [{8: 0.5}]},
                      "init": {"mpich": [[0.05]]}})
    rows = {r["id"]: r for r in hb.evaluate_targets(s, ["leanmpi", "mpich"])}
    assert rows["latency_8B"]["status"] == "FAIL"
    assert rows["latency_8B"]["ratio"] == pytest.approx(2.0)
    assert rows["init_wall"]["status"] == "not measured"
    assert rows["bandwidth_1MiB"]["status"] == "no peer"


def test_formatting(hb):
    assert hb.fmt_size(1) == "1 B"
    assert hb.fmt_size(8) == "8 B"
    assert hb.fmt_size(4096) == "4 KiB"
    assert hb.fmt_size(4 << 20) == "4 MiB"
    assert hb.fmt_num(None) == "–"
    assert hb.fmt_num(0.4321) == "0.432"
    assert hb.fmt_num(12345.6) == "12,346"
    assert hb.fmt_stat({"median": 2.0, "min": 1.0, "max": 3.0, "n": 3}) == "2.00 (1.00–3.00)"
    assert hb.fmt_stat({"median": 2.0, "min": 2.0, "max": 2.0, "n": 1}) == "2.00"
    assert hb.fmt_ratio(0.5) == "0.50×"


def test_series_table(hb):
    s = hb.summarize(synthetic_samples())
    labels = {"leanmpi": "LeanMPI", "openmpi4": "Open MPI 4.1", "mpich": "MPICH 4"}
    t = hb.series_table(s, "pingpong", MPIS, labels).splitlines()
    assert t[0] == ("| size | LeanMPI [µs] | Open MPI 4.1 [µs] | MPICH 4 [µs] "
                    "| best peer | LeanMPI / best |")
    assert t[2].startswith("| 8 B | 0.350 (0.300–0.400) | 0.450 | 0.550 (0.500–0.600) "
                           "| Open MPI 4.1 | 0.78× |")
    assert len(t) == 4
    # without LeanMPI there is no ratio column
    t2 = hb.series_table(s, "pingpong", ["mpich"], labels).splitlines()
    assert t2[0] == "| size | MPICH 4 [µs] |"


def test_csv_rows(hb):
    s = hb.summarize(synthetic_samples())
    rows = hb.csv_rows(s)
    assert all(len(r) == len(hb.CSV_HEADER) for r in rows)
    pp = [r for r in rows if r[0] == "pingpong" and r[1] == "leanmpi"]
    assert [r[2] for r in pp] == [8, 1024]
    mem = [r for r in rows if r[0] == "memory" and r[1] == "openmpi4"]
    assert {(r[3], r[4]) for r in mem} == {("init", "rss_kb"), ("init", "pss_kb"),
                                           ("p2p", "rss_kb"), ("p2p", "pss_kb")}
    buf = io.StringIO()
    csv.writer(buf).writerows([hb.CSV_HEADER] + rows)
    assert buf.getvalue().startswith("benchmark,mpi,size_bytes,phase,metric")


def test_schedule_round_robin(hb):
    jobs = hb.schedule(["a", "b", "c"], ["x", "y"], 2)
    assert len(jobs) == 12
    assert [m for r, b, m in jobs[:3]] == ["a", "b", "c"]
    assert {b for r, b, m in jobs[:3]} == {"x"}
    assert [m for r, b, m in jobs[6:9]] == ["b", "c", "a"]  # rotated
    assert hb.schedule([], ["x"], 3) == []


def test_busy_warning(hb):
    assert hb.busy_warning([1.0, 2.5], 2) is None
    assert "busy" in hb.busy_warning([1.0, 6.0], 2)
    assert hb.busy_warning([None], 2) is None


def test_render_markdown(hb):
    samples = synthetic_samples()
    s = hb.summarize(samples)
    result = {
        "meta": {"started": "2025-01-01T00:00:00+00:00", "duration_s": 12.0,
                 "quick": True, "reps": 3, "machine": {"CPU": "Test CPU", "cores": "2"},
                 "reproduce": "make bench-quick", "method": ["one line"],
                 "busy_warning": None, "plots": True},
        "mpis": {"leanmpi": {"label": "LeanMPI", "status": "ok", "version": "LeanMPI 0.1",
                             "launch": "mpirun -n 2 ./PROGRAM", "note": ""},
                 "openmpi4": {"label": "Open MPI 4.1", "status": "ok", "version": "",
                              "launch": "x", "note": ""},
                 "mpich": {"label": "MPICH 4", "status": "ok", "version": "", "launch": "y",
                           "note": ""},
                 "openmpi5": {"label": "Open MPI 5", "status": "skipped", "version": "",
                              "launch": "", "note": "wheel not found"}},
        "summary": s, "failures": [{"mpi": "mpich", "bench": "bibw", "error": "exit 1"}],
    }
    result["targets"] = hb.evaluate_targets(s, MPIS)
    md = hb.render_markdown(result)
    assert md.startswith("# LeanMPI performance")
    for heading in ("## Machine", "## Targets", "## Latency", "## Streaming bandwidth",
                    "## Bidirectional bandwidth", "## Init wall time",
                    "## Memory after MPI_Init", "## Failures"):
        assert heading in md
    assert "| Test CPU |" in md
    assert "**PASS**" in md
    assert "wheel not found" in md
    assert "![Latency](img/latency.png)" in md
    assert "make bench-quick" in md


# ---- collectives -----------------------------------------------------------

COLL_OUT = """\
# library=Open MPI v4.1.4
# bench=coll ranks=4
coll=barrier size=0 iters=50000 lat_us=1.25
coll=bcast size=8 iters=50000 lat_us=0.50
coll=bcast size=1048576 iters=128 lat_us=190.5
coll=allreduce size=8 iters=50000 lat_us=0.75
size=8 lat_us=9.9
"""


def test_coll_from_records(hb):
    recs, meta = hb.parse_output(COLL_OUT)
    assert meta["ranks"] == 4
    c = hb.coll_from_records(recs, "lat_us")
    assert c == {"barrier": {0: 1.25}, "bcast": {8: 0.5, 1048576: 190.5},
                 "allreduce": {8: 0.75}}  # a line without coll= is not a collective
    assert hb.coll_from_records(recs, "mb_s") == {}


def test_coll_benches_cover_rank_counts(hb):
    coll = [b for b in hb.BENCHES if b.kind == "coll"]
    assert [b.nranks for b in coll] == [2, 4, 8]
    assert {b.program for b in coll} == {"coll"} and "coll" in hb.PROGRAMS
    assert all(b.nranks == hb.NRANKS for b in hb.BENCHES if b.kind != "coll")


def coll_samples():
    return {
        "coll2": {
            "leanmpi": [{"barrier": {0: 0.30}, "allreduce": {8: 0.40, 1 << 20: 200.0}},
                        {"barrier": {0: 0.50}, "allreduce": {8: 0.50, 1 << 20: 180.0}},
                        {"barrier": {0: 0.40}, "allreduce": {8: 0.45}}],
            "openmpi4": [{"barrier": {0: 0.35}, "allreduce": {8: 0.44, 1 << 20: 190.0}}],
            "mpich": [{"barrier": {0: 0.60}, "allreduce": {8: 0.50, 1 << 20: 250.0}}],
        },
        "coll8": {
            "leanmpi": [{"bcast": {8: 9.0}}],
            "mpich": [{"bcast": {8: 3.0}}],
        },
    }


def test_summarize_coll(hb):
    s = hb.summarize(coll_samples())
    assert s["coll2"]["leanmpi"]["barrier"][0] == {"median": 0.40, "min": 0.30,
                                                    "max": 0.50, "n": 3}
    assert s["coll2"]["leanmpi"]["allreduce"][1 << 20]["n"] == 2  # missing in one rep
    assert hb.value_of(s, "coll2", "openmpi4", size=8, coll="allreduce") == 0.44
    assert hb.value_of(s, "coll2", "openmpi4", size=8, coll="bcast") is None


def test_coll_ratios_and_targets(hb):
    s = hb.summarize(coll_samples())
    r = hb.coll_ratios(s, "coll2", MPIS)
    assert list(r) == [("barrier", 0), ("allreduce", 8), ("allreduce", 1 << 20)]  # report order
    assert r[("allreduce", 8)]["best"] == ("openmpi4", 0.44)
    assert r[("allreduce", 8)]["vs_best"] == pytest.approx(0.45 / 0.44)
    assert r[("allreduce", 8)]["vs"]["mpich"] == pytest.approx(0.45 / 0.50)
    rows = {(t["ranks"], t["coll"], t["size"]): t for t in hb.coll_targets(s, MPIS)}
    assert rows[(2, "barrier", 0)]["status"] == "FAIL"          # 0.40 vs 0.35
    assert rows[(2, "allreduce", 1 << 20)]["status"] == "PASS"  # 190 vs 190: 1.0 holds
    assert rows[(2, "allreduce", 8)]["status"] == "FAIL"
    assert not any(t["ranks"] == 8 for t in rows.values())      # oversubscribed: no target
    assert hb.coll_target_status(5.0, 8) == "no target"
    assert hb.coll_target_status(None, 2) == "not measured"


def test_coll_table(hb):
    s = hb.summarize(coll_samples())
    labels = {"leanmpi": "LeanMPI", "openmpi4": "Open MPI 4.1", "mpich": "MPICH 4"}
    t = hb.coll_table(s, "coll2", MPIS, labels).splitlines()
    assert t[0] == ("| collective | size | LeanMPI [µs] | Open MPI 4.1 [µs] | MPICH 4 [µs] "
                    "| best peer | LeanMPI / best | vs Open MPI 4.1 | vs MPICH 4 | target |")
    assert t[2] == ("| barrier | – | 0.400 (0.300–0.500) | 0.350 | 0.600 | Open MPI 4.1 "
                    "| 1.14× | 1.14× | 0.67× | **FAIL** |")
    assert t[4].startswith("| allreduce | 1 MiB | 190 (180–200) | 190 | 250 |")
    assert t[4].endswith("| **PASS** |")
    t8 = hb.coll_table(s, "coll8", MPIS, labels).splitlines()
    assert t8[2].endswith("| 3.00× | 3.00× | no target |")
    assert hb.coll_table(s, "coll4", MPIS, labels) == "_No results._\n"


def test_coll_csv_rows(hb):
    s = hb.summarize(coll_samples())
    rows = [r for r in hb.csv_rows(s) if r[0] == "coll2" and r[1] == "leanmpi"]
    assert all(len(r) == len(hb.CSV_HEADER) for r in rows)
    i_coll, i_ranks = hb.CSV_HEADER.index("collective"), hb.CSV_HEADER.index("ranks")
    assert {(r[i_coll], r[2]) for r in rows} == {("barrier", 0), ("allreduce", 8),
                                                  ("allreduce", 1 << 20)}
    assert {r[i_ranks] for r in rows} == {2}


def test_schedule_with_own_repetitions(hb):
    benches = [hb.BENCH_BY_KEY["pingpong"], hb.BENCH_BY_KEY["coll2"]]
    jobs = hb.schedule(["a", "b"], benches, 2,
                       lambda b: 3 if b.kind == "coll" else 2)
    per = {}
    for rep, b, m in jobs:
        per[(b.key, m)] = per.get((b.key, m), 0) + 1
    assert per == {("pingpong", "a"): 2, ("pingpong", "b"): 2,
                   ("coll2", "a"): 3, ("coll2", "b"): 3}
    assert [m for r, b, m in jobs if r == 2] == ["a", "b"]  # rotation continues


def test_launch_rank_count(hb):
    m = hb.Mpi("x", "X", "mpicc", ["mpirun", "-n", "2", "--oversubscribe"])
    assert m.launch("prog", ["-q"]) == ["mpirun", "-n", "2", "--oversubscribe", "prog", "-q"]
    assert m.launch("prog", (), 8) == ["mpirun", "-n", "8", "--oversubscribe", "prog"]
    assert m.mpirun[2] == "2"  # the launcher itself is unchanged


def test_render_markdown_collectives(hb):
    s = hb.summarize({**synthetic_samples(), **coll_samples()})
    result = {
        "meta": {"started": "2025-01-01T00:00:00+00:00", "duration_s": 12.0,
                 "quick": False, "reps": 3, "machine": {"CPU": "Test CPU", "cores": "2"},
                 "reproduce": "make bench", "method": ["one line"],
                 "busy_warning": None},
        "mpis": {m: {"label": m, "status": "ok", "version": "", "launch": "x", "note": ""}
                 for m in MPIS},
        "summary": s, "failures": [],
    }
    result["targets"] = hb.evaluate_targets(s, MPIS)
    result["coll_targets"] = hb.coll_targets(s, MPIS)
    md = hb.render_markdown(result)
    assert "## Collectives" in md and "### 2 ranks" in md and "### 8 ranks" in md
    assert "### 4 ranks" not in md  # not measured
    # the CPU count comes from the machine's "cores" when meta has none
    assert "8 ranks on 2 CPUs: ranks share cores, oversubscribed, reported without a target." in md
    result["meta"]["cpus"] = 16
    md = hb.render_markdown(result)
    assert "share cores" not in md and "Reported without a target." in md
    assert "**1 of 3 hold**" in md and "barrier at 2 ranks (1.14×)" in md


def test_result_from_json_round_trip(hb):
    import json
    s = hb.summarize({**synthetic_samples(), **coll_samples()})
    back = hb.result_from_json(json.loads(json.dumps(hb._jsonable({"summary": s}))))
    assert back["summary"] == s


def test_noncontig_sections(hb):
    """The non-contiguous benchmarks run bench/src/noncontig.c and get their
    own sections only when they were measured."""
    assert hb.BENCH_BY_KEY["strided"].program == "noncontig"
    assert hb.BENCH_BY_KEY["pack"].args == ("-p",)
    assert (hb.REPO / "bench" / "src" / "noncontig.c").exists()
    summary = hb.summarize({"strided": {"leanmpi": [{61440: 4.0}], "mpich": [{61440: 2.0}]}})
    table = hb.series_table(summary, "strided", ["leanmpi", "mpich"], {"leanmpi": "LeanMPI", "mpich": "MPICH"})
    assert "60 KiB" in table and "2.00×" in table
