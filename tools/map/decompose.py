"""Collectives as the point-to-point messages their algorithms send.

Each function takes the communicator size n, the bytes the caller gives
(see BYTES_MEAN), the root (rooted collectives) and returns a list of
(src, dst, bytes) in communicator ranks, one entry per message. They model
the textbook forms of the algorithms that Open MPI 4.1 and MPICH 4.0 choose
(kb_peers.py names them): which pairs talk and how many bytes each message
carries; pipelining into segments changes neither, so segmented variants
decompose like their whole-message forms. Where an algorithm needs a power
of two and n is not one, the extra ranks fold in first (they send their
data to a partner of the power-of-two part and get the result back), as
both libraries do.

LeanMPI's own algorithms are not modelled here: leanmpi-info --decompose
reports them exactly from the library's schedules (leanmpi_map.py asks it).
"""

# What `nbytes` means per collective (the profile's "bytes"): the whole
# message for bcast and the reductions, one rank's block otherwise.
BLOCK_COLLECTIVES = ("gather", "scatter", "allgather", "alltoall", "reduce_scatter_block")


def _pof2_below(n):
    p = 1
    while p * 2 <= n:
        p *= 2
    return p


def _rel(v, root, n):
    """communicator rank of relative rank v (relative to root)"""
    return (v + root) % n


def _lowbit(v):
    return v & -v


def _binomial_parent(v):
    return v - _lowbit(v)


def _subtree(v, n):
    """ranks in the binomial subtree of relative rank v (v > 0), v included"""
    return min(_lowbit(v), n - v)


def _fold(n, nbytes, msgs, back=True):
    """Non-power-of-two: ranks p..n-1 (p = largest power of two <= n) hand
    their data to rank r - p first and get the result back at the end.
    Returns p."""
    p = _pof2_below(n)
    for r in range(p, n):
        msgs.append((r, r - p, nbytes))
        if back:
            msgs.append((r - p, r, nbytes))
    return p


# ---- barrier ---------------------------------------------------------------
def barrier(alg, n, nbytes=0, root=0):
    m = []
    if n < 2:
        return m
    if alg in ("dissemination", "bruck"):
        k = 1
        while k < n:
            m += [(v, (v + k) % n, 0) for v in range(n)]
            k *= 2
    elif alg == "recursive_doubling":
        p = _fold(n, 0, m)
        k = 1
        while k < p:
            m += [(v, v ^ k, 0) for v in range(p)]
            k *= 2
    elif alg == "double_ring":
        m += [(v, (v + 1) % n, 0) for v in range(n)] * 2
    elif alg == "linear":
        m += [(v, 0, 0) for v in range(1, n)] + [(0, v, 0) for v in range(1, n)]
    elif alg == "binomial":
        edges = [(_binomial_parent(v), v) for v in range(1, n)]
        m += [(c, p, 0) for p, c in edges] + [(p, c, 0) for p, c in edges]
    else:
        raise KeyError(f"barrier: no decomposition for algorithm {alg!r}")
    return m


# ---- bcast and reduce (trees) -------------------------------------------------
def _tree_edges(alg, n):
    """(parent, child) in relative ranks for a tree rooted at 0"""
    if alg == "binomial":
        return [(_binomial_parent(v), v) for v in range(1, n)]
    if alg == "binary":
        return [((v - 1) // 2, v) for v in range(1, n)]
    if alg == "chain":
        return [(v - 1, v) for v in range(1, n)]
    if alg == "linear":
        return [(0, v) for v in range(1, n)]
    return None


def _scatter_binomial(n, nbytes, root, m):
    """MPICH's scatter for bcast: relative rank v gets its subtree's chunks"""
    chunk = -(-nbytes // n) if n else 0
    for v in range(1, n):
        got = min(_subtree(v, n) * chunk, max(0, nbytes - v * chunk))
        if got > 0:
            m.append((_rel(_binomial_parent(v), root, n), _rel(v, root, n), got))
    return chunk


def bcast(alg, n, nbytes, root=0):
    m = []
    if n < 2:
        return m
    edges = _tree_edges(alg, n)
    if edges is not None:
        return [(_rel(p, root, n), _rel(c, root, n), nbytes) for p, c in edges]
    if alg in ("scatter_allgather_rd", "scatter_allgather_ring"):
        chunk = _scatter_binomial(n, nbytes, root, m)
        if alg == "scatter_allgather_rd" and _pof2_below(n) == n:
            k = 1
            while k < n:
                m += [(_rel(v, root, n), _rel(v ^ k, root, n), chunk * k) for v in range(n)]
                k *= 2
        else:
            m += [(_rel(v, root, n), _rel((v + 1) % n, root, n), chunk) for v in range(n)] * (n - 1)
        return m
    raise KeyError(f"bcast: no decomposition for algorithm {alg!r}")


def reduce(alg, n, nbytes, root=0):
    if n < 2:
        return []
    edges = _tree_edges(alg, n)
    if edges is not None:
        return [(_rel(c, root, n), _rel(p, root, n), nbytes) for p, c in edges]
    if alg == "rabenseifner":
        m = []
        p = _fold(n, nbytes, m, back=False)
        _vector_halving(p, nbytes, m)
        # the pieces go to rank 0 of the power-of-two part by a binomial
        # gather, then to the root
        piece = -(-nbytes // p)
        for v in range(1, p):
            m.append((v, _binomial_parent(v), piece * _subtree(v, p)))
        if root != 0:
            m.append((0, root, nbytes))
        return m
    raise KeyError(f"reduce: no decomposition for algorithm {alg!r}")


def _halving(p, total, m):
    """recursive halving among ranks 0..p-1 (p a power of two): in step k
    partners exchange half of what they still hold"""
    k, part = p // 2, total
    while k >= 1:
        part = -(-part // 2)
        m += [(v, v ^ k, part) for v in range(p)]
        k //= 2


def _doubling(p, piece, m):
    """recursive doubling among 0..p-1: the pieces double each step"""
    k = 1
    while k < p:
        m += [(v, v ^ k, piece * k) for v in range(p)]
        k *= 2


def _vector_halving(p, total, m):
    """Rabenseifner's reduce-scatter as both libraries run it: vector
    halving with distance doubling (the first exchange, half the vector,
    is with the nearest partner)"""
    k, part = 1, total
    while k < p:
        part = -(-part // 2)
        m += [(v, v ^ k, part) for v in range(p)]
        k *= 2


def _vector_doubling(p, piece, m):
    """its allgather: distance halving, pieces doubling (the last exchange,
    half the vector, again with the nearest partner)"""
    k, size = p // 2, piece
    while k >= 1:
        m += [(v, v ^ k, size) for v in range(p)]
        size *= 2
        k //= 2


def allreduce(alg, n, nbytes, root=0):
    m = []
    if n < 2:
        return m
    if alg == "recursive_doubling":
        p = _fold(n, nbytes, m)
        k = 1
        while k < p:
            m += [(v, v ^ k, nbytes) for v in range(p)]
            k *= 2
    elif alg == "ring":
        m += [(v, (v + 1) % n, -(-nbytes // n)) for v in range(n)] * (2 * (n - 1))
    elif alg == "rabenseifner":
        p = _fold(n, nbytes, m)
        _vector_halving(p, nbytes, m)
        _vector_doubling(p, -(-nbytes // p), m)
    elif alg in ("reduce_bcast", "linear"):
        tree = "binomial" if alg == "reduce_bcast" else "linear"
        m += reduce(tree, n, nbytes, 0) + bcast(tree, n, nbytes, 0)
    else:
        raise KeyError(f"allreduce: no decomposition for algorithm {alg!r}")
    return m


# ---- gathers, scatters, allgather, alltoall ------------------------------------
def gather(alg, n, block, root=0):
    if n < 2:
        return []
    if alg == "linear":
        return [(v, root, block) for v in range(n) if v != root]
    if alg == "binomial":
        return [(_rel(v, root, n), _rel(_binomial_parent(v), root, n), block * _subtree(v, n)) for v in range(1, n)]
    raise KeyError(f"gather: no decomposition for algorithm {alg!r}")


def scatter(alg, n, block, root=0):
    return [(d, s, b) for s, d, b in gather(alg, n, block, root)]


def allgather(alg, n, block, root=0):
    m = []
    if n < 2:
        return m
    if alg == "recursive_doubling" and _pof2_below(n) == n:
        _doubling(n, block, m)
    elif alg in ("ring", "recursive_doubling", "neighbor_exchange"):
        # (recursive doubling on other counts and neighbour exchange move
        # the same bytes between ring neighbours as the ring does)
        m += [(v, (v + 1) % n, block) for v in range(n)] * (n - 1)
    elif alg == "bruck":
        k = 1
        while k < n:
            m += [(v, (v - k) % n, block * min(k, n - k)) for v in range(n)]
            k *= 2
    elif alg == "two_proc":
        m += [(0, 1, block), (1, 0, block)]
    elif alg == "linear":
        m += gather("linear", n, block, 0) + bcast("linear", n, block * n, 0)
    else:
        raise KeyError(f"allgather: no decomposition for algorithm {alg!r}")
    return m


def alltoall(alg, n, block, root=0):
    m = []
    if n < 2:
        return m
    if alg in ("pairwise", "linear", "two_proc"):
        m += [(v, w, block) for v in range(n) for w in range(n) if v != w]
    elif alg == "bruck":
        k = 1
        while k < n:
            blocks = sum(1 for i in range(n) if i & k)
            m += [(v, (v + k) % n, block * blocks) for v in range(n)]
            k *= 2
    else:
        raise KeyError(f"alltoall: no decomposition for algorithm {alg!r}")
    return m


def reduce_scatter_block(alg, n, block, root=0):
    m = []
    if n < 2:
        return m
    total = block * n
    if alg == "recursive_halving":
        p = _fold(n, total, m, back=False)
        _halving(p, total, m)
        for r in range(p, n):
            m.append((r - p, r, block))
    elif alg == "ring":
        m += [(v, (v + 1) % n, block) for v in range(n)] * (n - 1)
    elif alg == "pairwise":
        m += [(v, w, block) for v in range(n) for w in range(n) if v != w]
    elif alg == "reduce_scatterv":
        m += reduce("binomial", n, total, 0) + scatter("linear", n, block, 0)
    else:
        raise KeyError(f"reduce_scatter_block: no decomposition for algorithm {alg!r}")
    return m


def scan(alg, n, nbytes, root=0):
    m = []
    if alg == "recursive_doubling":
        k = 1
        while k < n:
            m += [(v, v + k, nbytes) for v in range(n - k)]
            m += [(v + k, v, nbytes) for v in range(n - k)]
            k *= 2
    elif alg == "linear":
        m += [(v, v + 1, nbytes) for v in range(n - 1)]
    else:
        raise KeyError(f"scan: no decomposition for algorithm {alg!r}")
    return m


GENERATORS = {
    "barrier": barrier, "bcast": bcast, "reduce": reduce, "allreduce": allreduce,
    "gather": gather, "scatter": scatter, "allgather": allgather, "alltoall": alltoall,
    "reduce_scatter_block": reduce_scatter_block, "scan": scan, "exscan": scan,
}


def messages(collective, alg, n, nbytes, root=0):
    """The messages of one call: [(src, dst, bytes)] in communicator ranks."""
    gen = GENERATORS.get(collective)
    if gen is None:
        raise KeyError(f"no decomposition for collective {collective!r}")
    return gen(alg, n, nbytes, root)
