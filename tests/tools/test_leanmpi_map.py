"""leanmpi-map (tools/map): decompositions that conserve what the
collectives must move, the communication graph of a profile, placements
that beat block and cyclic where the traffic says they should, the output
formats, and bad input refused with a message naming it and no output file
left behind."""
import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

MAP = Path(__file__).resolve().parents[2] / "tools" / "map"
sys.path.insert(0, str(MAP))
SPEC = importlib.util.spec_from_file_location("leanmpi_map", MAP / "leanmpi_map.py")
lm = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(lm)
dec = lm.decompose

LEANMPI_INFO = os.environ.get("LEANMPI_INFO")


def sent_by(msgs, n):
    out = [0] * n
    for s, _, b in msgs:
        out[s] += b
    return out


def received_by(msgs, n):
    out = [0] * n
    for _, d, b in msgs:
        out[d] += b
    return out


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8])
def test_decompositions_move_what_the_collective_needs(n):
    b = 1000
    for alg in ("binomial", "binary", "chain", "linear", "scatter_allgather_ring"):
        got = received_by(dec.messages("bcast", alg, n, b * n, root=1 % n), n)
        assert all(got[r] >= b * n for r in range(n) if r != 1 % n), (alg, got)
    for alg in ("ring", "bruck", "recursive_doubling", "neighbor_exchange", "linear"):
        got = received_by(dec.messages("allgather", alg, n, b), n)
        assert all(x >= (n - 1) * b for x in got), (alg, got)
    for alg in ("pairwise", "linear", "bruck"):
        msgs = dec.messages("alltoall", alg, n, b)
        assert all(x >= (n - 1) * b for x in received_by(msgs, n)), alg
        if alg != "bruck":
            assert sorted(sent_by(msgs, n)) == [(n - 1) * b] * n
    for alg in ("binomial", "linear"):
        msgs = dec.messages("gather", alg, n, b, root=0)
        assert received_by(msgs, n)[0] == (n - 1) * b, alg
    for alg in ("recursive_doubling", "ring", "rabenseifner", "reduce_bcast"):
        msgs = dec.messages("allreduce", alg, n, b * n)
        # every rank hears about every other rank's data
        assert all(x > 0 for x in received_by(msgs, n)), alg


def test_ring_allreduce_talks_to_neighbours_only():
    msgs = dec.messages("allreduce", "ring", 6, 6000)
    assert {(s, d) for s, d, _ in msgs} == {(v, (v + 1) % 6) for v in range(6)}
    assert sum(b for _, _, b in msgs) == 2 * 5 * 6 * 1000


def test_unknown_algorithm_is_named():
    with pytest.raises(KeyError, match="quantum"):
        dec.messages("bcast", "quantum", 4, 10)


def profile(n, pairs=(), colls=(), library="Open MPI v4.1.4"):
    """pairs: (src, dst, bytes); colls: (op, bytes, calls) on world, seen
    by every rank"""
    ranks = []
    for r in range(n):
        ranks.append(dict(rank=r, comms=[dict(id=0, members=list(range(n)))],
                          p2p=[[d, b, 10] for s, d, b in pairs if s == r],
                          collectives=[dict(op=op, comm=0, root=-1, calls=calls, bytes=b) for op, b, calls in colls]))
    return dict(format="leanmpi-profile", version=1, world_size=n, library=library, ranks=ranks)


MACHINE = """host a slots=2
host b slots=2
host c slots=2
host d slots=2
link node latency_us=0.3 bandwidth_mbs=20000
link network latency_us=40 bandwidth_mbs=100
"""


def run_map(tmp_path, prof, *args, machine=MACHINE):
    pf, mf, out = tmp_path / "p.json", tmp_path / "m.txt", tmp_path / "out"
    pf.write_text(json.dumps(prof) if isinstance(prof, dict) else prof)
    mf.write_text(machine)
    rc = lm.main([str(pf), "--machine", str(mf), "-o", str(out)] + list(args))
    return rc, out


def test_heavy_pairs_go_together(tmp_path, capsys):
    # ranks i and i+4 exchange a lot: block puts them on different hosts
    pairs = [(i, i + 4, 10 ** 8) for i in range(4)] + [(i + 4, i, 10 ** 8) for i in range(4)]
    rc, out = run_map(tmp_path, profile(8, pairs), "--format", "json")
    assert rc == 0
    rep = json.loads(out.read_text())
    hosts = {p["rank"]: p["host"] for p in rep["placement"]}
    assert all(hosts[i] == hosts[i + 4] for i in range(4))
    c = rep["predicted_cost_us"]
    assert c[rep["engine"]] < c["block"] and c[rep["engine"]] <= c["cyclic"]
    assert sorted((p["host"], p["slot"]) for p in rep["placement"]) == \
        sorted((h, s) for h in "abcd" for s in range(2))


def test_collectives_decompose_into_the_graph(tmp_path):
    kb = lm.KnowledgeBase("openmpi4")
    g = lm.build_graph(profile(4, colls=[("alltoall", 1000, 3)]), kb, lm.Progress(False))
    alg = kb.algorithm("alltoall", 4, 1000)
    want = {}
    for s, d, b in dec.messages("alltoall", alg, 4, 1000):
        e = want.setdefault((s, d), [0, 0])
        e[0] += 3 * b
        e[1] += 3
    assert g == want


def test_v_forms(tmp_path):
    p = profile(3)
    for r in p["ranks"]:
        r["collectives"] = [dict(op="alltoallv", comm=0, root=-1, calls=2, counts=[10 * (r["rank"] + 1)] * 3)]
    g = lm.build_graph(p, lm.KnowledgeBase("mpich4"), lm.Progress(False))
    assert g[(2, 0)] == [30, 2] and g[(0, 1)] == [10, 2] and (1, 1) not in g


def test_one_sided_traffic_counts(tmp_path):
    p = profile(4)
    p["ranks"][0]["rma"] = [[3, 5000, 2]]
    g = lm.build_graph(p, lm.KnowledgeBase("mpich4"), lm.Progress(False))
    assert g[(0, 3)] == [5000, 2]
    p["ranks"][1]["rma"] = [[9, 1, 1]]
    (tmp_path / "bad.json").write_text(json.dumps(p))
    with pytest.raises(lm.MapError, match="rank 1 sent to rank 9"):
        lm.load_profile(tmp_path / "bad.json")


def test_formats(tmp_path):
    pairs = [(0, 1, 10 ** 6)]
    for fmt, check in (("openmpi", lambda t: t.splitlines()[0].startswith("rank 0=")),
                       ("leanmpi", lambda t: t.startswith("# LeanMPI rankfile") and t.splitlines()[1].startswith("rank 0=")),
                       ("hydra", lambda t: len([x for x in t.splitlines() if not x.startswith("#")]) == 8),
                       ("slurm", lambda t: "map_cpu" in t),
                       ("split", lambda t: sorted(map(int, t.splitlines()[1].split())) == list(range(8)))):
        rc, out = run_map(tmp_path, profile(8, pairs), "--format", fmt)
        assert rc == 0 and check(out.read_text()), fmt


@pytest.mark.parametrize("bad,says", [
    ('{"format": "leanmpi-profile", "version": 1, "world_size": 8, "ranks": [', "not complete JSON"),
    (json.dumps(dict(profile(8), world_size=9)), "world_size is 9"),
    (json.dumps(profile(16)), "16 ranks but"),
    (json.dumps(profile(8, colls=[("allfoo", 8, 1)])), "unknown collective 'allfoo'"),
    (json.dumps(profile(8, library="SomeMPI 1.0")), "no knowledge base"),
])
def test_bad_input_is_named_and_leaves_nothing(tmp_path, capsys, bad, says):
    rc, out = run_map(tmp_path, bad)
    assert rc == 2
    assert says in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.glob(".leanmpi-map.*"))


SMT8 = Path(__file__).resolve().parent / "data" / "smt8.xml"  # 2 NUMA nodes x L3 x 2 cores x 2 threads


def test_hwloc_levels_inside_a_host(tmp_path, capsys):
    # ranks i and 7 - i exchange a lot: in block order they sit on
    # different NUMA nodes of the one host; with its topology each pair
    # shares a core
    machine = (f"host a slots=8 topology={SMT8}\n"
               "link core latency_us=0.05 bandwidth_mbs=60000\nlink cache latency_us=0.1 bandwidth_mbs=40000\n"
               "link node latency_us=0.5 bandwidth_mbs=10000\nlink network latency_us=40 bandwidth_mbs=1000\n")
    pairs = [(i, 7 - i, 10 ** 8) for i in range(8)]
    rc, out = run_map(tmp_path, profile(8, pairs), "--format", "json", "--engine", "greedy", machine=machine)
    assert rc == 0
    rep = json.loads(out.read_text())
    slot = {p["rank"]: p["slot"] for p in rep["placement"]}
    assert all(slot[i] // 2 == slot[7 - i] // 2 for i in range(4)), slot
    costs = rep["predicted_cost_us"]
    assert costs["greedy"] < costs["block"] and costs["greedy"] < costs["cyclic"]
    # levels: same core, same cache (L3), other NUMA node (numa missing: node's cost)
    m = lm.load_machine(tmp_path / "m.txt")
    assert (m.level(0, 1), m.level(0, 2), m.level(0, 4)) == ("core", "cache", "node")
    assert m.link("numa") == m.link("node") == (0.5, 10000)


def test_hwloc_bad_topology(tmp_path, capsys):
    bad = tmp_path / "bad.xml"
    bad.write_text("<topology><object type='Machine'/></topology>")
    for spec, says in ((bad, "no processing unit"), (tmp_path / "none.xml", "cannot read the topology"),
                       (SMT8, "has 9 slots but its topology 8 processing units")):
        rc, out = run_map(tmp_path, profile(2), machine=f"host a slots={9 if spec == SMT8 else 2} topology={spec}\n"
                          "link node latency_us=1 bandwidth_mbs=1\nlink network latency_us=1 bandwidth_mbs=1\n")
        assert rc == 2 and says in capsys.readouterr().err and not out.exists()


def test_bad_machine(tmp_path, capsys):
    rc, out = run_map(tmp_path, profile(2), machine="host a slots=2\n")
    assert rc == 2 and "no 'link node" in capsys.readouterr().err and not out.exists()
    rc, out = run_map(tmp_path, profile(2), machine="host a slots=two\n")
    assert rc == 2 and "not a number" in capsys.readouterr().err


@pytest.mark.skipif(not LEANMPI_INFO, reason="LEANMPI_INFO (leanmpi-info) not given")
def test_leanmpi_knowledge_base_is_the_library_s_own():
    kb = lm.KnowledgeBase("leanmpi", LEANMPI_INFO)
    msgs = kb.messages("alltoall", 8, 10)
    assert kb.algorithm("alltoall", 8, 10) == "bruck"
    # the published Bruck vector: 80 bytes at rank distance 4, 40 at 1, 2, 6, 7
    dist = {}
    for s, d, b in msgs:
        if s == 0:
            dist[(d - s) % 8] = dist.get((d - s) % 8, 0) + b
    assert dist.get(4) == 40 and dist.get(1) == 40 and dist.get(2) == 40


@pytest.mark.skipif(not (lm.shutil.which("gmap") or lm.shutil.which("scotch_gmap")),
                    reason="Scotch's gmap is not installed (Debian: scotch)")
def test_scotch_gives_every_rank_a_slot(tmp_path):
    pairs = [(i, (i + 4) % 8, 10 ** 8) for i in range(8)]
    rc, out = run_map(tmp_path, profile(8, pairs), "--engine", "scotch", "--format", "json")
    assert rc == 0
    rep = json.loads(out.read_text())
    assert len({(p["host"], p["slot"]) for p in rep["placement"]}) == 8
    assert rep["predicted_cost_us"]["scotch"] < rep["predicted_cost_us"]["block"]


def test_no_gain_keeps_the_launcher_s_placement(tmp_path):
    # every pair alike: nothing to gain, block it stays
    rc, out = run_map(tmp_path, profile(8, colls=[("alltoall", 4096, 10)]), "--format", "json")
    rep = json.loads(out.read_text())
    assert rc == 0 and rep["engine"] == "block"
    assert [p["host"] for p in rep["placement"]] == ["a", "a", "b", "b", "c", "c", "d", "d"]


@pytest.mark.skipif(not LEANMPI_INFO, reason="LEANMPI_INFO (leanmpi-info) not given")
def test_the_profile_s_algorithm_is_decomposed():
    # LeanMPI's profiles name each collective's algorithm: the graph follows it
    kb = lm.KnowledgeBase("leanmpi", LEANMPI_INFO)
    graphs = {}
    for alg in ("ring", "recursive_doubling"):
        p = profile(8, colls=[("allreduce", 8192, 1)], library="LeanMPI 0.1.0 (MPI 4.1)")
        for r in p["ranks"]:
            r["collectives"][0]["algorithm"] = alg
        graphs[alg] = lm.build_graph(p, kb, lm.Progress(False))
    assert set(graphs["ring"]) == {(i, (i + 1) % 8) for i in range(8)}
    assert (0, 4) in graphs["recursive_doubling"] and (0, 4) not in graphs["ring"]
