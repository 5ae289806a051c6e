#!/usr/bin/env python3
"""leanmpi-map: place the ranks of an MPI job by their communication.

  leanmpi-map PROFILE.json --machine MACHINE [--kb leanmpi|openmpi4|mpich4]
              [--engine best|greedy|scotch|block|cyclic]
              [--format openmpi|hydra|slurm|split|json] [-o OUT] [--plot PNG]

PROFILE is what leanmpi-profile wrote (docs/PROFILE.md). Its collectives
are decomposed into the point-to-point messages the chosen MPI library's
algorithms send (--kb; by default the library the profile names): LeanMPI's
exactly, from its own schedules (leanmpi-info --decompose), Open MPI 4.1's
and MPICH 4.0's from their default selection rules (kb_peers.py) and the
textbook form of each algorithm (decompose.py). Together with the
point-to-point traffic they make the communication graph (bytes and
messages per pair of ranks). MACHINE describes the hosts and the cost of
their links (docs/MAPPING.md):

    host a slots=2            # one line per host, in order
    host b slots=2
    link node    latency_us=0.3 bandwidth_mbs=20000   # within a host
    link network latency_us=40  bandwidth_mbs=1000    # between hosts

A placement puts each rank on a slot; its predicted cost is the sum over
pairs of messages x latency + bytes / bandwidth of the link between their
hosts. Engines: block (ranks fill the hosts in order), cyclic (round robin
over hosts), greedy (heaviest pairs together, host by host, then swaps
while they lower the cost), scotch (Scotch's gmap, where installed), best
(the cheapest of those; but block unless another is at least 1% cheaper,
and cyclic over greedy and Scotch unless they are 1% cheaper than it). The report lists every engine's cost.

Outputs: leanmpi (a LeanMPI rankfile: mpirun --rankfile F; Open MPI's
syntax with a comment line), openmpi (an Open MPI rankfile: mpirun
--rankfile F), hydra (a
machinefile, one rank a line, with the -bind-to user: list to give per
host), slurm (a SLURM_HOSTFILE for --distribution=arbitrary, with the
--cpu-bind=map_cpu list), split (the key of each world rank for
MPI_Comm_split(MPI_COMM_WORLD, 0, key, &mapped), for a job started in block
order), json (everything). Written whole under a temporary name and
renamed: bad input leaves no output file.

Exit status: 0, or 2 with a message naming the problem for bad input.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import decompose  # noqa: E402
import hwloc_topology  # noqa: E402
import kb_peers  # noqa: E402

COLLECTIVES = ("barrier", "bcast", "reduce", "allreduce", "gather", "gatherv", "scatter", "scatterv",
               "allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw", "reduce_scatter",
               "reduce_scatter_block", "scan", "exscan")
ROOTED = ("bcast", "reduce", "gather", "gatherv", "scatter", "scatterv")
KBS = ("leanmpi",) + tuple(kb_peers.LIBRARIES)
FORMATS = ("openmpi", "leanmpi", "hydra", "slurm", "split", "json")
ENGINES = ("block", "cyclic", "greedy", "scotch")
SIMPLE_MARGIN = 0.01


class MapError(Exception):
    """Bad input: the message names the problem."""


# ---- progress ---------------------------------------------------------------
class Progress:
    """One line on stderr, rewritten at most 10 times a second, when
    stderr is a terminal or --progress asks for it."""

    def __init__(self, on):
        self.on, self.last = on, 0.0

    def say(self, text, force=False):
        now = time.monotonic()
        if self.on and (force or now - self.last > 0.1):
            sys.stderr.write("\r\033[K" + text)
            sys.stderr.flush()
            self.last = now

    def done(self):
        if self.on:
            sys.stderr.write("\r\033[K")


# ---- the profile ---------------------------------------------------------------
def load_profile(path):
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise MapError(f"cannot read the profile {path}: {e.strerror}")
    try:
        p = json.loads(text)
    except ValueError as e:
        raise MapError(f"the profile {path} is not complete JSON (truncated?): {e}")
    if not isinstance(p, dict) or p.get("format") != "leanmpi-profile":
        raise MapError(f"{path} is not a leanmpi-profile file")
    if p.get("version") != 1:
        raise MapError(f"{path}: profile version {p.get('version')!r}; this leanmpi-map reads version 1")
    n = p.get("world_size")
    ranks = p.get("ranks")
    if not isinstance(n, int) or n < 1 or not isinstance(ranks, list):
        raise MapError(f"{path}: no world_size or ranks")
    if len(ranks) != n or [r.get("rank") for r in ranks] != list(range(n)):
        raise MapError(f"{path}: world_size is {n} but the profile holds {len(ranks)} ranks' records "
                       "(truncated or from a job that did not finish)")
    for r in ranks:
        comms = {c["id"]: c["members"] for c in r.get("comms", [])}
        for dst, nbytes, msgs in r.get("p2p", []) + r.get("rma", []):
            if not 0 <= dst < n:
                raise MapError(f"{path}: rank {r['rank']} sent to rank {dst}, outside a job of {n}")
        for c in r.get("collectives", []):
            if c.get("op") not in COLLECTIVES:
                raise MapError(f"{path}: rank {r['rank']}: unknown collective {c.get('op')!r}")
            if c.get("comm") not in comms:
                raise MapError(f"{path}: rank {r['rank']}: collective on communicator {c.get('comm')!r}, "
                               "which the rank's comms do not list")
            if any(not isinstance(m, int) or m >= n for m in comms[c["comm"]]):
                raise MapError(f"{path}: rank {r['rank']}: a communicator member outside a job of {n}")
    return p


def library_of(profile):
    lib = profile.get("library", "")
    if lib.startswith("LeanMPI"):
        return "leanmpi"
    if lib.startswith("Open MPI v4"):
        return "openmpi4"
    if lib.startswith("MPICH Version: 4"):
        return "mpich4"
    raise MapError(f"the profile's MPI library ({lib!r}) has no knowledge base here; choose one with --kb "
                   f"({', '.join(KBS)})")


# ---- the machine ----------------------------------------------------------------
class Machine:
    def __init__(self, hosts, links, topologies=None):
        self.hosts = hosts            # [(name, slots)]
        self.links = links            # level -> (latency_us, bandwidth_mbs)
        self.node, self.network = links["node"], links["network"]
        self.topologies = topologies or {}  # host index -> [hwloc_topology.PU] for its slots
        self.slots = [(h, s) for h, (_, n) in enumerate(hosts) for s in range(n)]

    def host_of_slot(self, slot):
        return self.slots[slot][0]

    def level(self, a, b):
        """the link between slots a and b: network, or a level of one host"""
        (ha, sa), (hb, sb) = self.slots[a], self.slots[b]
        if ha != hb:
            return "network"
        pus = self.topologies.get(ha)
        return hwloc_topology.level(pus[sa], pus[sb]) if pus else "node"

    def link(self, level):
        """a level's cost: its own line, else the next farther level's"""
        order = hwloc_topology.LEVELS + ("network",)
        for lv in order[order.index(level):]:
            if lv in self.links:
                return self.links[lv]
        return self.network


LINK_LEVELS = ("core", "cache", "numa", "node", "network")


def load_machine(path):
    hosts, links, topologies = [], {}, {}
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as e:
        raise MapError(f"cannot read the machine description {path}: {e.strerror}")
    for no, raw in enumerate(lines, 1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        where = f"{path}:{no}"
        kv, text = {}, {}
        for w in words[2:]:
            if "=" not in w:
                raise MapError(f"{where}: '{w}' is not key=value")
            k, v = w.split("=", 1)
            if k == "topology":
                text[k] = v
                continue
            try:
                kv[k] = float(v)
            except ValueError:
                raise MapError(f"{where}: {k}={v} is not a number")
        if words[0] == "host" and len(words) >= 2:
            slots = kv.get("slots", 1)
            if slots < 1 or slots != int(slots):
                raise MapError(f"{where}: slots must be a positive whole number")
            if any(h == words[1] for h, _ in hosts):
                raise MapError(f"{where}: host {words[1]} is listed twice")
            if "topology" in text:
                spec = text["topology"]
                if spec != "local" and not os.path.isabs(spec):
                    spec = str(Path(path).resolve().parent / spec)
                try:
                    pus = hwloc_topology.load(spec, where)
                except hwloc_topology.TopologyError as e:
                    raise MapError(str(e))
                if len(pus) < slots:
                    raise MapError(f"{where}: host {words[1]} has {int(slots)} slots but its topology "
                                   f"{len(pus)} processing units")
                topologies[len(hosts)] = pus
            hosts.append((words[1], int(slots)))
        elif words[0] == "link" and len(words) >= 2 and words[1] in LINK_LEVELS:
            if "latency_us" not in kv or "bandwidth_mbs" not in kv or kv["bandwidth_mbs"] <= 0 or kv["latency_us"] < 0:
                raise MapError(f"{where}: a link needs latency_us >= 0 and bandwidth_mbs > 0")
            links[words[1]] = (kv["latency_us"], kv["bandwidth_mbs"])
        else:
            raise MapError(f"{where}: expected 'host NAME slots=N [topology=FILE|local]' or 'link "
                           f"{'|'.join(LINK_LEVELS)} latency_us=X bandwidth_mbs=Y', not '{raw.strip()}'")
    if not hosts:
        raise MapError(f"{path}: no hosts")
    for k in ("node", "network"):
        if k not in links:
            raise MapError(f"{path}: no 'link {k} ...' line")
    return Machine(hosts, links, topologies)


# ---- the knowledge base -------------------------------------------------------------
class KnowledgeBase:
    """Messages of one collective call, by library."""

    def __init__(self, library, leanmpi_info=None):
        self.library, self.info, self.cache = library, leanmpi_info, {}
        if library == "leanmpi" and not self.info:
            raise MapError("the LeanMPI knowledge base needs leanmpi-info (not found: give --leanmpi-info PATH)")

    def algorithm(self, collective, n, nbytes, commutative=True):
        if self.library == "leanmpi":
            return self._leanmpi(collective, n, nbytes, 0, commutative)[1]
        return kb_peers.select(self.library, collective, n, nbytes, commutative)

    def messages(self, collective, n, nbytes, root=0, commutative=True, algorithm=None):
        """algorithm: what the profile says the library ran (LeanMPI tells it), used by the LeanMPI base"""
        algorithm = algorithm if self.library == "leanmpi" else None
        key = (collective, n, nbytes, root, commutative, algorithm)
        if key not in self.cache:
            if self.library == "leanmpi":
                self.cache[key] = self._leanmpi(collective, n, nbytes, root, commutative, algorithm)[0]
            else:
                alg = kb_peers.select(self.library, collective, n, nbytes, commutative)
                self.cache[key] = decompose.messages(collective, alg, n, nbytes, root)
        return self.cache[key]

    def _leanmpi(self, collective, n, nbytes, root, commutative, algorithm=None):
        cmd = [self.info, "--decompose", collective, "--np", str(n), "--bytes", str(nbytes), "--root", str(root)]
        if not commutative:
            cmd.append("--non-commutative")
        if algorithm:
            cmd += ["--algorithm", algorithm]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise MapError(f"leanmpi-info cannot decompose {collective} on {n} ranks of {nbytes} bytes: "
                           f"{(p.stderr or p.stdout).strip()}")
        msgs, alg = [], None
        for line in p.stdout.splitlines():
            if line.startswith("# algorithm:"):
                alg = line.split(":", 1)[1].strip()
            elif line.startswith("# bytes exchanged"):
                break
            elif line and not line.startswith("#"):
                step, src, dst, b = (int(x) for x in line.split())
                msgs.append((src, dst, b))
        return msgs, alg


# ---- the communication graph ------------------------------------------------------------
def add(g, i, j, nbytes, msgs):
    if i == j or i < 0 or j < 0:
        return
    e = g.setdefault((i, j), [0, 0])
    e[0] += nbytes
    e[1] += msgs


def build_graph(profile, kb, progress):
    """{(src, dst): [bytes, messages]} in world ranks"""
    g = {}
    ranks = profile["ranks"]
    for r in ranks:
        # one-sided operations move their bytes between the same pair
        for dst, nbytes, msgs in r.get("p2p", []) + r.get("rma", []):
            add(g, r["rank"], dst, nbytes, msgs)
    work = sum(len(r.get("collectives", [])) for r in ranks)
    done = 0
    for r in ranks:
        me = r["rank"]
        members = {c["id"]: c["members"] for c in r.get("comms", [])}
        for c in r.get("collectives", []):
            done += 1
            progress.say(f"decomposing collectives: {done}/{work}")
            add_collective(g, kb, me, members[c["comm"]], c)
    progress.done()
    return g


def add_collective(g, kb, me, members, c):
    op, calls, root, n = c["op"], c["calls"], c["root"], len(members)
    pos = members.index(me) if me in members else -1
    counts = c.get("counts")
    if op in ("alltoallv", "alltoallw"):
        # each member's record holds what it sends
        for i, b in enumerate(counts or []):
            add(g, me, members[i], b, calls if b else 0)
        return
    if op == "gatherv":
        if pos != root and counts and 0 <= root < n:
            add(g, me, members[root], counts[pos], calls)
        return
    if op == "scatterv":
        if pos == root and counts:
            for i, b in enumerate(counts):
                add(g, me, members[i], b, calls if b else 0)
        return
    # the others: every member recorded the same call; count it once, from
    # the record of the communicator's first member
    if pos != 0:
        return
    if op == "allgatherv":
        # the ring: member j passes every block but its right neighbour's on
        total = sum(counts or [])
        for j in range(n):
            nxt = (j + 1) % n
            add(g, members[j], members[nxt], total - counts[nxt], calls * (n - 1))
        return
    if op == "reduce_scatter":
        per_call = -(-sum(counts or []) // max(1, n * calls))
        op, nbytes = "reduce_scatter_block", per_call
    else:
        nbytes = c["bytes"]
    alg = c.get("algorithm") if op == c["op"] else None
    for src, dst, b in kb.messages(op, n, nbytes, root if op in ROOTED else 0, algorithm=alg):
        add(g, members[src], members[dst], b * calls, calls)


# ---- placements and their cost ---------------------------------------------------------------
def pair_cost(machine, same_host, nbytes, msgs, level=None):
    """a pair's cost on its link: level names it; else the host's (node) or the network"""
    lat, bw = machine.link(level) if level else machine.node if same_host else machine.network
    return msgs * lat + nbytes / bw  # bytes / (MB/s) = microseconds


def symmetric(g):
    """{(i, j): (bytes, msgs)} with i < j, both directions together"""
    s = {}
    for (i, j), (b, m) in g.items():
        k = (i, j) if i < j else (j, i)
        e = s.setdefault(k, [0, 0])
        e[0] += b
        e[1] += m
    return s


def cost(machine, sym, place):
    return sum(pair_cost(machine, None, b, m, machine.level(place[i], place[j])) for (i, j), (b, m) in sym.items())


def place_block(n, machine):
    return list(range(n))


def place_cyclic(n, machine):
    order, level = [], 0
    while len(order) < len(machine.slots):
        for h, (_, slots) in enumerate(machine.hosts):
            if level < slots:
                order.append(sum(s for _, s in machine.hosts[:h]) + level)
        level += 1
    return order[:n]


def place_greedy(n, machine, sym, progress, passes=20):
    """Fill hosts one at a time with the ranks that gain most from sharing
    it (the network cost of their traffic less the node cost), then swap
    ranks of different hosts while a swap lowers the cost."""
    gain = {}
    for (i, j), (b, m) in sym.items():
        w = pair_cost(machine, False, b, m) - pair_cost(machine, True, b, m)
        gain.setdefault(i, {})[j] = w
        gain.setdefault(j, {})[i] = w
    total = {i: sum(gain.get(i, {}).values()) for i in range(n)}
    unplaced, place, next_slot = set(range(n)), [None] * n, 0
    for h, (_, slots) in enumerate(machine.hosts):
        on = []
        while len(on) < slots and unplaced:
            if on:
                pick = max(unplaced, key=lambda p: (sum(gain.get(p, {}).get(q, 0) for q in on), -p))
            else:
                pick = max(unplaced, key=lambda p: (total[p], -p))
            unplaced.discard(pick)
            on.append(pick)
            place[pick] = next_slot + len(on) - 1
        next_slot += slots
    place = refine(machine, place, gain, progress, passes)
    return refine_in_hosts(machine, place, sym, passes)


def refine(machine, place, gain, progress, passes):
    host = machine.host_of_slot
    n = len(place)

    def delta(a, b):
        """cost change of swapping ranks a and b (on different hosts)"""
        ha, hb, d = host(place[a]), host(place[b]), 0.0
        for q, w in gain.get(a, {}).items():
            if q == b:
                continue
            hq = host(place[q])
            d += (w if hq == ha else 0) - (w if hq == hb else 0)
        for q, w in gain.get(b, {}).items():
            if q == a:
                continue
            hq = host(place[q])
            d += (w if hq == hb else 0) - (w if hq == ha else 0)
        return d  # > 0: the swap loses that much of the gain

    for p in range(passes):
        improved = False
        for a in range(n):
            progress.say(f"refining: pass {p + 1}, rank {a}/{n}")
            best, best_b = -1e-9, None
            for b in range(a + 1, n):
                if host(place[a]) == host(place[b]):
                    continue
                d = delta(a, b)
                if d < best:
                    best, best_b = d, b
            if best_b is not None:
                place[a], place[best_b] = place[best_b], place[a]
                improved = True
        if not improved:
            break
    progress.done()
    return place


def refine_in_hosts(machine, place, sym, passes):
    """Inside each host with a topology, swap the slots of two of its ranks
    (or move a rank to a free slot) while that lowers the cost: heavy pairs
    onto a shared core or cache."""
    if not machine.topologies:
        return place
    n = len(place)
    nbrs = {}
    for (i, j), (b, m) in sym.items():
        nbrs.setdefault(i, []).append((j, b, m))
        nbrs.setdefault(j, []).append((i, b, m))

    def rank_cost(r, slot, skip):
        return sum(pair_cost(machine, None, b, m, machine.level(slot, place[q]))
                   for q, b, m in nbrs.get(r, ()) if q != skip)

    on_host = {}
    for r in range(n):
        on_host.setdefault(machine.host_of_slot(place[r]), []).append(r)
    for h, ranks in on_host.items():
        if h not in machine.topologies:
            continue
        for _ in range(passes):
            improved = False
            for x in range(len(ranks)):
                for y in range(x + 1, len(ranks)):
                    a, b = ranks[x], ranks[y]
                    before = rank_cost(a, place[a], b) + rank_cost(b, place[b], a)
                    after = rank_cost(a, place[b], b) + rank_cost(b, place[a], a)
                    if after < before - 1e-9:
                        place[a], place[b] = place[b], place[a]
                        improved = True
            if not improved:
                break
    return place


def place_scotch(n, machine, sym, gmap):
    """Scotch's gmap onto a two-level tree (hosts, slots): equal slots per
    host only. None where it cannot run."""
    slots = {s for _, s in machine.hosts}
    if not gmap or len(slots) != 1:
        return None
    per = slots.pop()
    adj = {i: {} for i in range(n)}
    for (i, j), (b, m) in sym.items():
        w = max(1, int(round(pair_cost(machine, False, b, m))))
        adj[i][j] = adj[j][i] = w
    with tempfile.TemporaryDirectory() as d:
        grf, tgt, out = Path(d, "g.grf"), Path(d, "t.tgt"), Path(d, "m.map")
        arcs = sum(len(a) for a in adj.values())
        lines = ["0", f"{n} {arcs}", "0 010"]
        for i in range(n):
            lines.append(" ".join([str(len(adj[i]))] + [f"{w} {j}" for j, w in sorted(adj[i].items())]))
        grf.write_text("\n".join(lines) + "\n")
        ratio = max(1, int(round(machine.network[0] / max(machine.node[0], 1e-3))))
        tgt.write_text(f"tleaf 2 {len(machine.hosts)} {ratio} {per} 1\n")
        p = subprocess.run([gmap, str(grf), str(tgt), str(out)], capture_output=True, text=True)
        if p.returncode != 0 or not out.exists():
            return None
        pairs = [line.split() for line in out.read_text().splitlines()[1:] if line.strip()]
    place = [None] * n
    for v, t in pairs:
        place[int(v)] = int(t)
    # Scotch balances load but need not give every rank a slot of its own
    used, free = set(), [s for s in range(len(machine.slots))]
    for v in range(n):
        if place[v] is None or place[v] in used or place[v] >= len(machine.slots):
            place[v] = None
        else:
            used.add(place[v])
    free = [s for s in free if s not in used]
    for v in range(n):
        if place[v] is None:
            place[v] = free.pop(0)
    return place


# ---- outputs ------------------------------------------------------------------------------------
def render(fmt, machine, place, report):
    n = len(place)
    hosts = machine.hosts
    by_rank = [(hosts[machine.slots[place[r]][0]][0], machine.slots[place[r]][1]) for r in range(n)]
    if fmt in ("openmpi", "leanmpi"):
        lines = "".join(f"rank {r}={h} slot={s}\n" for r, (h, s) in enumerate(by_rank))
        if fmt == "openmpi":
            return lines
        return f"# LeanMPI rankfile: mpirun --rankfile FILE -n {n} (slot: the host's usable CPUs from 0)\n" + lines
    if fmt in ("hydra", "slurm"):
        per_host = {}
        for h, s in by_rank:
            per_host.setdefault(h, []).append(s)
        if fmt == "hydra":
            head = ["# Hydra machinefile, one rank a line in rank order: mpirun.mpich -f FILE -n %d" % n]
            head += [f"# bind on {h}: -bind-to user:{','.join(map(str, s))}" for h, s in per_host.items()]
            return "\n".join(head + [f"{h}:1" for h, _ in by_rank]) + "\n"
        head = ["# SLURM_HOSTFILE, one rank a line in rank order: SLURM_HOSTFILE=FILE srun "
                "--distribution=arbitrary -n %d" % n]
        head += [f"# bind on {h}: --cpu-bind=map_cpu:{','.join(map(str, s))}" for h, s in per_host.items()]
        return "\n".join(head + [h for h, _ in by_rank]) + "\n"
    if fmt == "split":
        # started in block order, world rank w sits on slot w; the rank
        # placed there takes key w's place
        key = [None] * len(machine.slots)
        for r in range(n):
            key[place[r]] = r
        if any(k is None for k in key[:n]):
            raise MapError("the split format needs the placement to use the first n slots; use another format")
        return ("# MPI_Comm_split(MPI_COMM_WORLD, 0, key[world_rank], &mapped), the job started in block order\n"
                + " ".join(str(k) for k in key[:n]) + "\n")
    if fmt == "json":
        return json.dumps(dict(report, placement=[dict(rank=r, host=h, slot=s) for r, (h, s) in enumerate(by_rank)]),
                          indent=1) + "\n"
    raise MapError(f"unknown format {fmt!r} ({', '.join(FORMATS)})")


def write_whole(path, text):
    d = Path(path).resolve().parent
    fd, tmp = tempfile.mkstemp(prefix=".leanmpi-map.", dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def plot(path, n, g, machine, place):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    order = sorted(range(n), key=lambda r: place[r])
    pos = {r: i for i, r in enumerate(order)}
    m = [[0.0] * n for _ in range(n)]
    for (i, j), (b, _) in g.items():
        m[pos[i]][pos[j]] += b
    fig, ax = plt.subplots(figsize=(6, 5))
    im = ax.imshow([[math.log10(1 + x) for x in row] for row in m], cmap="viridis")
    fig.colorbar(im, label="log10(1 + bytes)")
    edges = [sum(1 for r in range(n) if machine.host_of_slot(place[r]) < h) for h in range(1, len(machine.hosts))]
    for e in edges:
        ax.axhline(e - 0.5, color="w", lw=0.8)
        ax.axvline(e - 0.5, color="w", lw=0.8)
    ax.set_title("bytes by pair, ranks in placement order (lines: hosts)", fontsize=9)
    ax.set_xticks(range(n), [str(r) for r in order], fontsize=6)
    ax.set_yticks(range(n), [str(r) for r in order], fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ---- the command ---------------------------------------------------------------------------------
def find_leanmpi_info(given):
    if given:
        return given
    # the source tree's build, or an installation (PREFIX/libexec/leanmpi/map)
    for c in (HERE.parent.parent / "build" / "bin" / "leanmpi-info", HERE.parents[2] / "bin" / "leanmpi-info"):
        if c.exists():
            return str(c)
    return shutil.which("leanmpi-info")


def run(a):
    progress = Progress(a.progress or sys.stderr.isatty())
    profile = load_profile(a.profile)
    machine = load_machine(a.machine)
    n = profile["world_size"]
    if len(machine.slots) < n:
        raise MapError(f"the profile is of a job of {n} ranks but {a.machine} has {len(machine.slots)} slots")
    if a.format == "split" and len(machine.slots) != n:
        raise MapError(f"the split format needs as many slots as ranks ({n}); {a.machine} has {len(machine.slots)}")
    library = a.kb or library_of(profile)
    if library not in KBS:
        raise MapError(f"no knowledge base for {library!r} ({', '.join(KBS)})")
    kb = KnowledgeBase(library, find_leanmpi_info(a.leanmpi_info) if library == "leanmpi" else None)
    g = build_graph(profile, kb, progress)
    sym = symmetric(g)
    gmap = a.gmap or shutil.which("gmap") or shutil.which("scotch_gmap") or shutil.which("scotch_gmap")
    engines = {"block": lambda: place_block(n, machine), "cyclic": lambda: place_cyclic(n, machine),
               "greedy": lambda: place_greedy(n, machine, sym, progress),
               "scotch": lambda: place_scotch(n, machine, sym, gmap)}
    wanted = ENGINES if a.engine == "best" else (a.engine,)
    placements, costs = {}, {}
    for e in wanted:
        p = engines[e]()
        if p is None:
            if a.engine == e:
                raise MapError("scotch needs Scotch's gmap (Debian: scotch) and hosts with equal slots")
            continue
        placements[e], costs[e] = p, cost(machine, sym, p)
    for e in ("block", "cyclic"):  # always reported, for comparison
        if e not in costs:
            costs[e] = cost(machine, sym, engines[e]())
    chosen = min(placements, key=lambda e: (costs[e], ENGINES.index(e)))
    # a placement must gain more than the model's error over the simpler
    # ones: block (the launchers' default) unless cyclic is SIMPLE_MARGIN
    # cheaper, and either of them unless another is SIMPLE_MARGIN cheaper
    # still (the same predicted cost, fewer surprises)
    for simple in ("cyclic", "block"):
        if simple in placements and chosen != simple and costs[chosen] > (1 - SIMPLE_MARGIN) * costs[simple]:
            chosen = simple
    place = placements[chosen]
    report = dict(profile=str(a.profile), machine=str(a.machine), ranks=n, knowledge_base=library, engine=chosen,
                  predicted_cost_us={e: round(c, 3) for e, c in costs.items()},
                  pairs=len(sym), bytes=sum(b for b, _ in sym.values()))
    text = render(a.format, machine, place, report)
    if a.output:
        write_whole(a.output, text)
    else:
        sys.stdout.write(text)
    if a.plot:
        try:
            plot(a.plot, n, g, machine, place)
        except ImportError:
            sys.stderr.write("leanmpi-map: matplotlib is not installed: no plot\n")
    summary = ", ".join(f"{e} {c:,.1f}" for e, c in sorted(costs.items(), key=lambda x: x[1]))
    sys.stderr.write(f"leanmpi-map: {n} ranks, knowledge base {library}, predicted cost (us): {summary}; "
                     f"chosen: {chosen}\n")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="leanmpi-map", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile")
    ap.add_argument("--machine", required=True)
    ap.add_argument("--kb", choices=KBS, help="whose collective algorithms (default: the profile's library)")
    ap.add_argument("--engine", choices=("best",) + ENGINES, default="best")
    ap.add_argument("--format", choices=FORMATS, default="openmpi")
    ap.add_argument("-o", "--output", help="file to write (default: standard output)")
    ap.add_argument("--plot", help="PNG of the communication by rank, ordered by the placement")
    ap.add_argument("--leanmpi-info", help="leanmpi-info for the LeanMPI knowledge base")
    ap.add_argument("--gmap", help="Scotch's gmap (default: from PATH)")
    ap.add_argument("--progress", action="store_true", help="show progress even when stderr is not a terminal")
    a = ap.parse_args(argv)
    try:
        return run(a)
    except MapError as e:
        sys.stderr.write(f"leanmpi-map: {e}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
