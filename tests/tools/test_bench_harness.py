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
    assert all(b.nranks == hb.NRANKS for b in hb.BENCHES
               if b.kind not in ("coll", "rma_cont", "rma_putall") and b.key not in ("msgrate4", "mbw4"))


def test_pair_benches(hb):
    # the message rate and the multi-pair bandwidth: bandwidth.c in pairs
    for key, n, metric in (("msgrate2", 2, "msgs_s"), ("msgrate4", 4, "msgs_s"), ("mbw4", 4, "mb_s")):
        b = hb.BENCH_BY_KEY[key]
        assert b.program == "bandwidth" and "-p" in b.args and b.nranks == n and b.metric == metric
        assert b.kind == "series" and b.better == "higher"
    assert "-b" in hb.BENCH_BY_KEY["msgrate4"].args and "-b" not in hb.BENCH_BY_KEY["mbw4"].args
    out = ("# bench=bibw ranks=4 pairs=2\n"
           "size=1 iters=200 window=64 mb_s=4.03 msgs_s=4026111\n"
           "size=8 iters=200 window=64 mb_s=34.99 msgs_s=4374354\n")
    recs, _ = hb.parse_output(out)
    assert hb.series_from_records(recs, "msgs_s") == {1: 4026111, 8: 4374354}


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


# ---- one-sided communication (bench/src/rma.c) -------------------------------

RMA_OUT = """\
# library=LeanMPI 0.1.0 (MPI 4.1)
# bench=rma ranks=2 window=4
op=put size=8 iters=20000 lat_us=0.1275
op=get size=8 iters=20000 lat_us=0.1333
op=put_bw size=1048576 iters=64 window=4 mb_s=24471.80
op=get_bw size=1048576 iters=64 window=4 mb_s=26012.91
op=lock_shared size=0 iters=20000 lat_us=0.0661
op=mystery size=4 lat_us=2.5
op=nothing size=4 foo=1
size=8 lat_us=9.9
"""

CONT_OUT = """\
# bench=rma_contention ranks=4
op=contended_shared size=4 iters=1000 lat_us=0.2129
# totals_us=212.9,120.2,125.0,192.7
op=contended_exclusive size=4 iters=1000 lat_us=27.0980
# totals_us=27040.9,27087.0,27098.0,27093.3
# check=ok
"""

PUTALL_OUT = """\
# library=MPICH Version:\t4.0.2
# bench=rma_putall ranks=16
op=one_put_all size=16 private_kb=14552 rss_kb=34484 time_s=2.5804 rounds=1551 planned=18270
"""


def test_rma_from_records(hb):
    recs, meta = hb.parse_output(RMA_OUT)
    assert meta["window"] == 4
    r = hb.rma_from_records(recs)
    assert r["put"] == {8: 0.1275}
    assert r["get_bw"] == {1 << 20: 26012.91}  # bandwidths: mb_s
    assert r["lock_shared"] == {0: 0.0661}
    assert r["mystery"] == {4: 2.5}             # unknown op: whichever metric is there
    assert "nothing" not in r                   # no metric at all
    assert len(r) == 6                          # the line without op= is no operation


def test_rma_contention_output(hb):
    recs, meta = hb.parse_output(CONT_OUT)
    assert meta["check"] == "ok" and meta["totals_us"] == "27040.9,27087.0,27098.0,27093.3"
    sample, err = hb.rma_sample(recs, meta, "rma_cont")
    assert err is None
    assert sample == {"contended_shared": {4: 0.2129}, "contended_exclusive": {4: 27.098}}
    # without the counter check the exclusive result does not count
    recs, meta = hb.parse_output(CONT_OUT.replace("# check=ok\n", ""))
    sample, err = hb.rma_sample(recs, meta, "rma_cont")
    assert list(sample) == ["contended_shared"] and "check=ok" in err
    assert hb.rma_sample([], {}, "rma") == ({}, "no result lines in output")


def test_putall_from_records(hb):
    recs, meta = hb.parse_output(PUTALL_OUT + "op=put size=8 lat_us=1\n")
    assert hb.putall_from_records(recs) == {16: {"private_kb": 14552.0, "rss_kb": 34484.0,
                                                 "time_s": 2.5804, "rounds": 1551.0,
                                                 "planned": 18270.0}}
    assert "one_put_all" not in hb.rma_from_records(recs)
    recs, _ = hb.parse_output("op=one_put_all size=2 private_kb=-1 rss_kb=900\n")
    assert hb.putall_from_records(recs) == {2: {"rss_kb": 900.0}}  # -1: not read


def test_rma_benches(hb):
    assert hb.BENCH_BY_KEY["rma"].nranks == 2 and hb.BENCH_BY_KEY["rma"].kind == "rma"
    cont = [b for b in hb.BENCHES if b.kind == "rma_cont"]
    assert [b.key for b in cont] == ["rma_cont2", "rma_cont4", "rma_cont8", "rma_cont16"]
    assert [b.nranks for b in cont] == [2, 4, 8, 16]
    assert all(b.args == ("-c", "shared,exclusive") for b in cont)
    pa = hb.BENCH_BY_KEY["rma_putall"]
    assert pa.ns == (2, 4, 8, 16) and pa.args == ("-p",) and pa.nranks == 16
    assert "rma" in hb.PROGRAMS and (hb.REPO / "bench" / "src" / "rma.c").exists()
    full, quick = hb.default_benches(False), hb.default_benches(True)
    assert full == [b.key for b in hb.BENCHES]
    assert "rma" in quick and "rma_cont4" in quick
    assert not {"rma_cont8", "rma_cont16", "rma_putall"} & set(quick)


def rma_samples():
    return {
        "rma": {
            "leanmpi": [{"put": {8: 0.10}, "get_bw": {1 << 20: 9000.0}, "lock_shared": {0: 0.05},
                         "lock_exclusive": {0: 0.20}, "lock_all": {0: 0.05}},
                        {"put": {8: 0.12}, "get_bw": {1 << 20: 11000.0}, "lock_shared": {0: 0.07},
                         "lock_exclusive": {0: 0.30}, "lock_all": {0: 0.06}}],
            "openmpi4": [{"put": {8: 0.20}, "get_bw": {1 << 20: 8000.0}, "lock_shared": {0: 0.10},
                          "lock_exclusive": {0: 0.10}, "lock_all": {0: 0.04}}],
            "mpich": [{"put": {8: 0.15}, "get_bw": {1 << 20: 12000.0}, "lock_shared": {0: 1.0},
                       "lock_exclusive": {0: 1.0}, "lock_all": {0: 1.0}}],
        },
        "rma_cont2": {
            "leanmpi": [{"contended_shared": {2: 0.20}, "contended_exclusive": {2: 0.35}}],
            "openmpi4": [{"contended_shared": {2: 0.25}, "contended_exclusive": {2: 0.50}}],
            "mpich": [{"contended_shared": {2: 3.0}, "contended_exclusive": {2: 4.0}}],
        },
        "rma_cont16": {
            "leanmpi": [{"contended_shared": {16: 2.0}}],
            "mpich": [{"contended_shared": {16: 1.0}, "contended_exclusive": {16: 5.0}}],
        },
        "rma_putall": {
            "leanmpi": [{2: {"private_kb": 8400.0, "rss_kb": 14000.0, "time_s": 0.01},
                         16: {"private_kb": 8440.0, "rss_kb": 72000.0, "time_s": 0.1}},
                        {2: {"private_kb": 8410.0, "rss_kb": 14000.0, "time_s": 0.01},
                         16: {"private_kb": 8460.0, "rss_kb": 72000.0, "time_s": 0.2}}],
            "openmpi4": [{2: {"private_kb": 11000.0}, 16: {"private_kb": 11010.0}}],
            "mpich": [{2: {"private_kb": 14000.0, "time_s": 0.1, "rounds": 100.0,
                           "planned": 100.0},
                       16: {"private_kb": 14200.0, "time_s": 7.0, "rounds": 166.0,
                            "planned": 18270.0}}],
        },
    }


def test_summarize_rma(hb):
    s = hb.summarize(rma_samples())
    assert s["rma"]["leanmpi"]["put"][8] == {"median": pytest.approx(0.11), "min": 0.10,
                                             "max": 0.12, "n": 2}
    assert hb.value_of(s, "rma", "mpich", size=1 << 20, coll="get_bw") == 12000.0
    assert hb.value_of(s, "rma_cont2", "openmpi4", size=2, coll="contended_exclusive") == 0.5
    assert s["rma_putall"]["leanmpi"][16]["private_kb"]["median"] == 8450.0
    assert "rss_kb" not in s["rma_putall"]["openmpi4"][2]  # never reported: dropped
    assert hb.putall_value(s, "leanmpi", 2) == 8405.0
    assert hb.putall_value(s, "openmpi5", 2) is None
    assert hb.putall_growth(s, "leanmpi") == pytest.approx(45.0)
    assert hb.putall_growth(s, "openmpi4") == pytest.approx(10.0)
    assert hb.putall_growth(s, "leanmpi", metric="rss_kb") == pytest.approx(58000.0)
    assert hb.putall_growth({"rma_putall": {"x": {2: {"private_kb": {"median": 1}}}}}, "x") is None


def test_rma_ratios_per_op_direction(hb):
    s = hb.summarize(rma_samples())
    r = hb.rma_ratios(s, "rma", MPIS)
    assert [k[0] for k in r] == ["put", "get_bw", "lock_shared", "lock_exclusive", "lock_all"]
    assert r[("put", 8)]["best"] == ("mpich", 0.15)                # time: lower is better
    assert r[("get_bw", 1 << 20)]["best"] == ("mpich", 12000.0)    # bandwidth: higher
    assert r[("get_bw", 1 << 20)]["vs_best"] == pytest.approx(10000 / 12000)
    assert hb.rma_better("put_bw") == "higher" and hb.rma_better("unknown") == "lower"


def test_rma_targets(hb):
    s = hb.summarize(rma_samples())
    rows = {r["id"]: r for r in hb.rma_targets(s, MPIS)}
    # only the benchmarks measured: no rma_cont4 / rma_cont8 rows
    assert set(rows) == {"rma_lock_shared", "rma_lock_exclusive", "rma_lock_all",
                         "rma_put_8B", "rma_get_bw_1MiB", "rma_contended_shared_2",
                         "rma_contended_exclusive_2", "rma_contended_shared_16",
                         "rma_contended_exclusive_16", "rma_putall_growth"}
    assert rows["rma_lock_shared"]["status"] == "PASS"       # 0.06 vs 0.10
    assert rows["rma_lock_exclusive"]["status"] == "FAIL"    # 0.25 vs 0.10
    assert rows["rma_lock_all"]["ratio"] == pytest.approx(0.055 / 0.04)
    assert rows["rma_put_8B"]["status"] == "PASS"
    assert rows["rma_get_bw_1MiB"]["status"] == "FAIL"       # 10000 < 12000, >= 1.0 needed
    assert rows["rma_contended_shared_2"]["status"] == "PASS"  # 0.20 / 0.25 = 0.8
    ex2 = rows["rma_contended_exclusive_2"]                  # 0.35 / 0.50 = 0.7 <= 0.8
    assert ex2["limit"] == 0.8 and ex2["status"] == "PASS" and ex2["ranks"] == 2
    assert rows["rma_contended_shared_16"]["status"] == "FAIL"
    assert rows["rma_contended_shared_16"]["ranks"] == 16
    assert rows["rma_contended_exclusive_16"]["status"] == "not measured"
    g = rows["rma_putall_growth"]
    assert g["absolute"] and g["ratio"] is None
    assert g["leanmpi"] == pytest.approx(45.0) and g["status"] == "PASS"  # <= 64 kB
    assert g["best_peer"] == "openmpi4" and g["best_value"] == pytest.approx(10.0)
    # the limit is LeanMPI's own growth, whatever the peers do
    worse = rma_samples()
    worse["rma_putall"]["leanmpi"][0][16]["private_kb"] = 9000.0
    worse["rma_putall"]["leanmpi"][1][16]["private_kb"] = 9000.0
    rows = {r["id"]: r for r in hb.rma_targets(hb.summarize(worse), MPIS)}
    assert rows["rma_putall_growth"]["status"] == "FAIL"
    assert hb.rma_targets({}, MPIS) == []
    # the ordinary targets keep their rows and gain the new keys
    assert all(r["absolute"] is False for r in hb.evaluate_targets(s, MPIS))


def test_rma_contention_limits(hb):
    t = {x["id"]: x for x in hb.RMA_TARGETS}
    for n in (2, 4, 8, 16):
        for mode in ("shared", "exclusive"):
            x = t[f"rma_contended_{mode}_{n}"]
            assert x["bench"] == f"rma_cont{n}" and x["size"] == n
            assert x["limit"] == (0.8 if (mode, n) == ("exclusive", 2) else 1.0)
    assert hb.rma_target_of("rma", "put", 8)["id"] == "rma_put_8B"
    assert hb.rma_target_of("rma", "get", 8) is None
    assert hb.verdict(1.0, "<=", 1.0) == "PASS" and hb.verdict(0.99, ">=", 1.0) == "FAIL"


def test_targets_table_oversubscribed_and_absolute(hb):
    s = hb.summarize(rma_samples())
    rows = hb.rma_targets(s, MPIS)
    t = hb.targets_table(rows, {"leanmpi": "LeanMPI", "openmpi4": "Open MPI 4.1",
                                "mpich": "MPICH 4"}, cpus=2)
    line16 = next(x for x in t.splitlines() if "Contended shared lock on rank 0, 16 ranks" in x)
    assert "oversubscribed (16 ranks on 2 CPUs)" in line16 and "**FAIL**" in line16
    line2 = next(x for x in t.splitlines() if "Contended shared lock on rank 0, 2 ranks" in x)
    assert "oversubscribed" not in line2 and "<= 1.0× best peer" in line2
    growth = next(x for x in t.splitlines() if "One_put_all" in x)
    assert "<= 64 kB (absolute)" in growth and "45.0 kB" in growth and "| – |" in growth
    assert "oversubscribed" not in hb.targets_table(rows, {}, cpus=None)


def test_rma_table(hb):
    s = hb.summarize(rma_samples())
    labels = {"leanmpi": "LeanMPI", "openmpi4": "Open MPI 4.1", "mpich": "MPICH 4"}
    t = hb.rma_table(s, ["rma"], MPIS, labels).splitlines()
    assert t[0] == ("| operation | ranks | size | unit | LeanMPI | Open MPI 4.1 | MPICH 4 "
                    "| best peer | LeanMPI / best | vs Open MPI 4.1 | vs MPICH 4 | target |")
    assert t[2].startswith("| put | 2 | 8 B | µs | 0.110 (0.100–0.120) | 0.200 | 0.150 | MPICH 4 ")
    assert t[2].endswith("| **PASS** (<= 1.0×) |")
    bw = next(x for x in t if x.startswith("| get_bw"))
    assert "| 1 MiB | MB/s |" in bw and bw.endswith("| **FAIL** (>= 1.0×) |")
    lk = next(x for x in t if x.startswith("| lock_shared"))
    assert "| 2 | – | µs |" in lk
    c = hb.rma_table(s, ["rma_cont2", "rma_cont4", "rma_cont16"], MPIS, labels).splitlines()
    assert [x.split(" | ")[0:2] for x in c[2:]] == [
        ["| contended_shared", "2"], ["| contended_exclusive", "2"],
        ["| contended_shared", "16"], ["| contended_exclusive", "16"]]
    assert c[3].endswith("| **PASS** (<= 0.8×) |")
    assert c[5].endswith("| not measured |")           # LeanMPI has no exclusive at 16
    only_lean = hb.rma_table(s, ["rma_cont16"], ["leanmpi", "openmpi4"], labels).splitlines()
    assert only_lean[2].endswith("| 2.00 | – | – | no peer |")  # openmpi4: no 16-rank result
    assert hb.rma_table(s, ["rma_cont8"], MPIS, labels) == "_No results._\n"
    assert "target" not in hb.rma_table(s, ["rma"], ["mpich"], labels).splitlines()[0]


def test_putall_tables(hb):
    s = hb.summarize(rma_samples())
    labels = {"leanmpi": "LeanMPI", "openmpi4": "Open MPI 4.1", "mpich": "MPICH 4"}
    out = hb.putall_tables(s, MPIS, labels)
    lines = out.splitlines()
    assert lines[0] == ("| MPI | private, 2 ranks [kB] | private, 16 ranks [kB] "
                        "| growth 2 → 16 ranks [kB] | target |")
    assert lines[2] == ("| LeanMPI | 8,405 (8,400–8,410) | 8,450 (8,440–8,460) | +45 "
                        "| **PASS** (<= 64 kB) |")
    assert lines[3] == "| Open MPI 4.1 | 11,000 | 11,010 | +10 | – |"
    mp = next(x for x in lines if x.startswith("| MPICH 4") and "rounds" in x)
    assert "7.00 (166 of 18,270 rounds)" in mp and "0.100 |" in mp  # 2 ranks: all rounds
    assert "not comparable" in out
    assert hb.putall_tables({}, MPIS, labels) == "_No results._\n"


def test_render_markdown_rma(hb):
    s = hb.summarize({**synthetic_samples(), **rma_samples()})
    result = {
        "meta": {"started": "2025-01-01T00:00:00+00:00", "duration_s": 12.0,
                 "quick": False, "reps": 2, "machine": {"CPU": "Test CPU", "cores": "2"},
                 "reproduce": "make bench", "method": ["one line"], "busy_warning": None},
        "mpis": {m: {"label": m, "status": "ok", "version": "", "launch": "x", "note": ""}
                 for m in MPIS + ["openmpi5"]},
        "summary": s,
        "failures": [{"mpi": "openmpi5", "bench": "rma", "rep": 0,
                      "error": "exit status 1: MPI_Win_allocate refused"}],
    }
    result["targets"] = hb.evaluate_targets(s, MPIS)
    result["rma_targets"] = hb.rma_targets(s, MPIS)
    md = hb.render_markdown(result)
    for heading in ("## One-sided communication (RMA)", "### Operations, 2 ranks",
                    "### Contended locks", "### One_put_all: memory of the origin"):
        assert heading in md
    assert md.index("## Targets") < md.index("One-sided communication (RMA): **") < md.index("## Method")
    assert "**5 of 10 hold**" in md
    assert "16 ranks on 2 CPUs are oversubscribed" in md
    assert "— oversubscribed (16 ranks on 2 CPUs)" in md
    assert ("_Missing: openmpi5 has no result for rma: exit status 1: MPI_Win_allocate "
            "refused_") in md
    # a failure of an MPI that has results (from other repetitions or rank
    # counts) marks its results incomplete
    result["failures"].append({"mpi": "mpich", "bench": "rma_putall", "rep": 1,
                               "error": "at 16 ranks: timed out"})
    md = hb.render_markdown(result)
    assert ("_Incomplete: mpich failed in some runs of rma_putall (the table keeps what "
            "was measured): at 16 ranks: timed out_") in md
    assert "Incomplete: mpich failed in some runs of rma:" not in md
    # without one-sided results, no section and no RMA targets
    plain = dict(result, summary=hb.summarize(synthetic_samples()), rma_targets=[])
    md = hb.render_markdown(plain)
    assert "One-sided" not in md


def test_rma_csv_and_json(hb):
    import json
    s = hb.summarize({**coll_samples(), **rma_samples()})
    rows = hb.csv_rows(s)
    assert all(len(r) == len(hb.CSV_HEADER) for r in rows)
    i_op, i_ranks = hb.CSV_HEADER.index("collective"), hb.CSV_HEADER.index("ranks")
    bw = [r for r in rows if r[0] == "rma" and r[1] == "mpich" and r[i_op] == "get_bw"]
    assert bw and bw[0][4:6] == ["mb_s", "MB/s"] and bw[0][2] == 1 << 20
    pa = [r for r in rows if r[0] == "rma_putall" and r[1] == "leanmpi"]
    assert {(r[i_ranks], r[4]) for r in pa} == {(n, k) for n in (2, 16)
                                                for k in ("private_kb", "rss_kb", "time_s")}
    cont = [r for r in rows if r[0] == "rma_cont16"]
    assert {r[i_ranks] for r in cont} == {16}
    back = hb.result_from_json(json.loads(json.dumps(hb._jsonable({"summary": s}))))
    assert back["summary"] == s


FAKE_LAUNCHER = r'''
import sys
n = int(sys.argv[sys.argv.index("-n") + 1])
args = sys.argv[sys.argv.index("-n") + 3:]
print("# library=Fake MPI 1.0")
if "-p" in args:
    if n >= 8:
        print("rank 3: MPI_Win_allocate failed", file=sys.stderr)
        sys.exit(2)
    print(f"op=one_put_all size={n} private_kb={1000 + n} rss_kb={2000 + n} time_s=0.5")
elif "-c" in args:
    print(f"op=contended_shared size={n} iters=10 lat_us=1.5")
    print(f"op=contended_exclusive size={n} iters=10 lat_us=2.5")
    print("# check=ok")
else:
    print("op=put size=8 iters=10 lat_us=0.25")
    print("op=lock_all size=0 iters=10 lat_us=0.5")
    print("MPI_Win_lock: something broke", file=sys.stderr)
    sys.exit(1)
'''


def test_run_one_keeps_partial_rma_results(hb, tmp_path):
    fake = tmp_path / "fake_mpirun.py"
    fake.write_text(FAKE_LAUNCHER)
    m = hb.Mpi("fake", "Fake", "cc", [sys.executable, str(fake), "-n", "2"])
    sample, lib, err = hb.run_one(m, hb.BENCH_BY_KEY["rma"], tmp_path, True, 30, 1)
    assert sample == {"put": {8: 0.25}, "lock_all": {0: 0.5}}
    assert lib == "Fake MPI 1.0"
    assert err.startswith("exit status 1: ") and "something broke" in err
    assert "(after: put, lock_all)" in err
    sample, _, err = hb.run_one(m, hb.BENCH_BY_KEY["rma_cont4"], tmp_path, False, 30, 1)
    assert err is None and sample == {"contended_shared": {4: 1.5},
                                      "contended_exclusive": {4: 2.5}}
    sample, lib, err = hb.run_one(m, hb.BENCH_BY_KEY["rma_putall"], tmp_path, True, 30, 1)
    assert set(sample) == {2, 4} and sample[4]["private_kb"] == 1004.0
    assert lib == "Fake MPI 1.0"
    assert err.startswith("at 8 ranks: exit status 2") and "MPI_Win_allocate" in err


def test_floor_target_and_note(hb):
    # LeanMPI 0.3 us, the floor 0.2 us: 1.5x <= 2.0; without a floor the
    # target is not judged against a peer
    s = hb.summarize({"pingpong": {"leanmpi": [{8: 0.3}], "mpich": [{8: 0.5}]},
                      "floor": {hb.MACHINE: [{8: 0.2}, {8: 0.25}, {8: 0.15}]}})
    rows = {r["id"]: r for r in hb.evaluate_targets(s, ["leanmpi", "mpich"])}
    fl = rows["latency_8B_floor"]
    assert fl["best_peer"] == hb.MACHINE and fl["best_value"] == pytest.approx(0.2)
    assert fl["ratio"] == pytest.approx(1.5) and fl["status"] == "PASS"
    assert rows["latency_8B"]["best_peer"] == "mpich"  # the floor is no peer
    table = hb.targets_table([fl], {hb.MACHINE: "cache-line floor"})
    assert "<= 2.0× cache-line floor" in table
    note = hb.floor_note(s, ["leanmpi", "mpich"], {"leanmpi": "LeanMPI", "mpich": "MPICH 4"})
    assert "LeanMPI 1.50×" in note and "MPICH 4 2.50×" in note
    s2 = hb.summarize({"pingpong": {"leanmpi": [{8: 0.3}], "mpich": [{8: 0.5}]}})
    rows2 = {r["id"]: r for r in hb.evaluate_targets(s2, ["leanmpi", "mpich"])}
    assert rows2["latency_8B_floor"]["status"] == "no peer"
    assert hb.floor_note(s2, ["leanmpi"], {}) == ""


def test_floor_runs_before_each_repetitions_pingpong(hb):
    benches = [hb.BENCH_BY_KEY["pingpong"], hb.BENCH_BY_KEY["bw"]]
    jobs = hb.with_floor(hb.schedule(["leanmpi", "mpich"], benches, 2))
    floors = [i for i, (_, b, _) in enumerate(jobs) if b.key == "floor"]
    assert len(floors) == 2
    for i in floors:
        rep, _, mk = jobs[i]
        assert mk == hb.MACHINE and jobs[i + 1][1].key == "pingpong" and jobs[i + 1][0] == rep
    assert hb.with_floor(hb.schedule(["leanmpi"], [hb.BENCH_BY_KEY["bw"]], 2)) == \
        hb.schedule(["leanmpi"], [hb.BENCH_BY_KEY["bw"]], 2)
