"""Default collective algorithm selection of Open MPI 4.1 and MPICH 4.0.

The knowledge base the process-mapping tool uses to tell which algorithm --
and so which point-to-point messages -- a collective call turns into under
the two MPI libraries Debian 12 (bookworm) ships:

* ``"openmpi4"``: Open MPI 4.1.4 (Debian package openmpi 4.1.4-3). Modelled:
  coll/tuned's *fixed* decision functions (no dynamic rules file), which
  decide on every intracommunicator of 2 or more processes: tuned has
  priority 30, above basic/libnbc (10); sm, han, adapt and ucc ship with
  priority 0 or are not built by Debian. Collectives tuned leaves to other
  components (scan, exscan, gatherv, scatterv) come from coll/basic.
  A 1-process communicator is served by coll/self (a local copy).
* ``"mpich4"``: MPICH 4.0.2 (Debian package mpich 4.0.2-3, built
  ``--with-device=ch4:ucx`` on amd64). Modelled: the MPIR-level selection
  for a *flat* intracommunicator (one process per node, hierarchy_kind
  FLAT): the ch4 JSON picks the compositions that hand the call to the
  netmod, the UCX netmod (no hcoll in Debian) calls ``MPIR_<Coll>_impl``,
  whose ``MPIR_CVAR_<COLL>_INTRA_ALGORITHM=auto`` default searches the
  built-in JSON selection tree (csel). Node-aware ("smp") choices for
  communicators with several processes per node are not modelled.

The rules were read from the exact Debian source packages (see
kb_peers.md for the file list) and re-expressed here as data and if-chains;
``select`` returns a name from the fixed vocabulary ``VOCABULARY`` that
decompose.py turns into messages, ``algorithm`` also returns the library's
own name for it.

What ``nbytes`` is (the caller's convention): the whole message for bcast,
reduce, allreduce, scan and exscan; the bytes of ONE block (the per-process
count times the type size) for gather, scatter, allgather, alltoall,
reduce_scatter_block and their v-forms (where every process is assumed to
contribute the same block) and for reduce_scatter (each process's share).
Each rule below says which size the library's own decision looks at and
how it is derived from ``nbytes``.

Some algorithms switch on the element *count* rather than on bytes (for
instance Open MPI's ring allreduce needs count >= nprocs, MPICH's
Rabenseifner-style allreduce/reduce need count >= the largest power of two
<= nprocs). The caller passes bytes only, so the count is taken as
``nbytes // ELEMENT_BYTES`` with ELEMENT_BYTES = 4 (MPI_INT / MPI_FLOAT);
change the module constant to model 8-byte (MPI_DOUBLE) data.

Reductions: ``commutative=True`` is taken to mean a built-in operation
(MPI_SUM, ...), ``commutative=False`` a user-defined non-commutative one;
MPICH's selection also tests "is the op built in".
"""

LIBRARIES = ("openmpi4", "mpich4")

COLLECTIVES = (
    "barrier", "bcast", "reduce", "allreduce", "gather", "scatter", "allgather",
    "alltoall", "reduce_scatter_block", "scan", "exscan", "allgatherv",
    "alltoallv", "gatherv", "scatterv", "reduce_scatter",
)

# The names select() may return, per collective.
VOCABULARY = {
    "barrier": ("dissemination", "recursive_doubling", "double_ring", "linear", "binomial",
                "bruck"),
    "bcast": ("binomial", "binary", "chain", "linear", "scatter_allgather_rd",
              "scatter_allgather_ring"),
    "reduce": ("binomial", "binary", "chain", "linear", "rabenseifner"),
    "allreduce": ("recursive_doubling", "ring", "rabenseifner", "reduce_bcast", "linear"),
    "gather": ("binomial", "linear"),
    "gatherv": ("binomial", "linear"),
    "scatter": ("binomial", "linear"),
    "scatterv": ("binomial", "linear"),
    "allgather": ("recursive_doubling", "ring", "bruck", "neighbor_exchange", "two_proc",
                  "linear"),
    "allgatherv": ("recursive_doubling", "ring", "bruck", "neighbor_exchange", "two_proc",
                   "linear"),
    "alltoall": ("pairwise", "linear", "bruck", "two_proc"),
    "alltoallv": ("pairwise", "linear", "bruck", "two_proc"),
    "reduce_scatter_block": ("recursive_halving", "ring", "pairwise", "reduce_scatterv"),
    "reduce_scatter": ("recursive_halving", "ring", "pairwise", "reduce_scatterv"),
    "scan": ("recursive_doubling", "linear"),
    "exscan": ("recursive_doubling", "linear"),
}

# Bytes per element assumed where a library's choice depends on the element
# count (see the module docstring).
ELEMENT_BYTES = 4


def _count(nbytes):
    return nbytes // ELEMENT_BYTES if ELEMENT_BYTES > 0 else nbytes


def _is_pof2(n):
    return n > 0 and n & (n - 1) == 0


def _pof2_floor(n):
    """largest power of two <= n (n >= 1)"""
    p = 1
    while p * 2 <= n:
        p *= 2
    return p


# =============================================================================
# Open MPI 4.1.4, coll/tuned fixed decisions
# =============================================================================
#
# Source: ompi/mca/coll/tuned/coll_tuned_decision_fixed.c of openmpi-4.1.4
# (Debian openmpi_4.1.4.orig.tar.xz; Debian's patches do not touch coll/);
# the same decision tables came into v4.1.x with open-mpi/ompi PR #7952
# ("coll/tuned: Change the default collective algorithm selection",
# cherry-pick of ce40cfbaa53406be71319041e13e893b0def7ad9) and PR #8224
# (allgatherv decides on the per-rank size, cherry-pick of f670364d).
# Algorithm numbers -> functions: coll_tuned_<coll>_decision.c,
# ompi_coll_tuned_<coll>_intra_do_this(); fall-backs inside the algorithms:
# ompi/mca/coll/base/coll_base_<coll>.c.
#
# Table layout (every table is data transcribed from one
# ompi_coll_tuned_<coll>_intra_dec_fixed function):
#   a table is a tuple of rows (nprocs_bound, cells), tried in order:
#     nprocs_bound N        -> the row applies when nprocs < N
#     nprocs_bound ("==", 2) -> the row applies when nprocs == 2
#     nprocs_bound None     -> every nprocs left
#   cells is a tuple of (size_bound, algorithm), tried in order:
#     size_bound N -> applies when size < N;  None -> every size left.
#   The algorithm is Open MPI's own name (the one its MCA parameter
#   coll_tuned_<coll>_algorithm lists); _OMPI_VOCAB maps it into VOCABULARY.

# allreduce -- ompi_coll_tuned_allreduce_intra_dec_fixed.
# size = dsize * count: the whole message (= nbytes). Non-commutative ops
# have their own table (ring, segmented ring and Rabenseifner need a
# commutative op).
_OMPI_ALLREDUCE_NONCOMMUTATIVE = (
    (4, ((131072, "recursive_doubling"), (None, "basic_linear"))),
    (8, ((None, "recursive_doubling"),)),
    (16, ((1048576, "recursive_doubling"), (None, "nonoverlapping"))),
    (128, ((None, "recursive_doubling"),)),
    (256, ((131072, "nonoverlapping"), (524288, "recursive_doubling"), (None, "nonoverlapping"))),
    (512, ((4096, "nonoverlapping"), (524288, "recursive_doubling"), (None, "nonoverlapping"))),
    (None, ((2048, "nonoverlapping"), (None, "recursive_doubling"))),
)
_OMPI_ALLREDUCE_COMMUTATIVE = (
    (4, (
        (8, "ring"), (4096, "recursive_doubling"), (8192, "ring"), (16384, "recursive_doubling"),
        (65536, "ring"), (262144, "segmented_ring"), (None, "rabenseifner"),
    )),
    (8, ((16, "ring"), (8192, "recursive_doubling"), (None, "rabenseifner"))),
    (16, ((8192, "recursive_doubling"), (None, "rabenseifner"))),
    (32, ((64, "segmented_ring"), (4096, "recursive_doubling"), (None, "rabenseifner"))),
    (64, ((128, "segmented_ring"), (None, "rabenseifner"))),
    (128, ((262144, "recursive_doubling"), (None, "rabenseifner"))),
    (256, ((131072, "nonoverlapping"), (262144, "recursive_doubling"), (None, "rabenseifner"))),
    (512, ((4096, "nonoverlapping"), (None, "rabenseifner"))),
    (2048, ((2048, "nonoverlapping"), (16384, "recursive_doubling"), (None, "rabenseifner"))),
    (4096, (
        (2048, "nonoverlapping"), (4096, "segmented_ring"), (16384, "recursive_doubling"),
        (None, "rabenseifner"),
    )),
    (None, (
        (2048, "nonoverlapping"), (16384, "segmented_ring"), (32768, "recursive_doubling"),
        (None, "rabenseifner"),
    )),
)

# alltoall -- ompi_coll_tuned_alltoall_intra_dec_fixed.
# size = dsize * scount: the bytes of ONE block (= nbytes).
_OMPI_ALLTOALL = (
    (("==", 2), (
        (2, "pairwise"), (4, "two_proc"), (16, "pairwise"), (64, "two_proc"), (256, "pairwise"),
        (4096, "two_proc"), (32768, "pairwise"), (262144, "linear_sync"), (1048576, "two_proc"),
        (None, "pairwise"),
    )),
    (8, (
        (8192, "linear_sync"), (16384, "linear"), (65536, "linear_sync"), (524288, "linear"),
        (1048576, "pairwise"), (None, "linear"),
    )),
    (16, ((262144, "linear_sync"), (None, "linear"))),
    (32, (
        (4, "linear_sync"), (512, "modified_bruck"), (8192, "linear_sync"), (32768, "linear"),
        (262144, "linear_sync"), (524288, "linear"), (None, "linear_sync"),
    )),
    (64, ((512, "modified_bruck"), (524288, "linear"), (None, "linear_sync"))),
    (128, (
        (1024, "modified_bruck"), (2048, "linear"), (4096, "linear_sync"), (262144, "linear"),
        (None, "pairwise"),
    )),
    (256, (
        (1024, "modified_bruck"), (2048, "linear_sync"), (262144, "linear"), (None, "pairwise"),
    )),
    (512, (
        (1024, "modified_bruck"), (8192, "linear_sync"), (32768, "linear"), (None, "pairwise"),
    )),
    (1024, (
        (512, "modified_bruck"), (8192, "linear_sync"), (16384, "linear"),
        (131072, "linear_sync"), (262144, "linear"), (None, "pairwise"),
    )),
    (2048, (
        (512, "modified_bruck"), (1024, "linear_sync"), (2048, "linear"), (16384, "linear_sync"),
        (262144, "linear"), (None, "linear_sync"),
    )),
    (4096, (
        (1024, "modified_bruck"), (4096, "linear_sync"), (8192, "linear"),
        (131072, "linear_sync"), (None, "linear"),
    )),
    (None, (
        (2048, "modified_bruck"), (8192, "linear_sync"), (16384, "linear"),
        (32768, "linear_sync"), (65536, "linear"), (None, "linear_sync"),
    )),
)

# alltoallv -- ompi_coll_tuned_alltoallv_intra_dec_fixed: nprocs only.
_OMPI_ALLTOALLV = (
    (4, ((None, "pairwise"),)),
    (64, ((None, "basic_linear"),)),
    (128, ((None, "pairwise"),)),
    (256, ((None, "basic_linear"),)),
    (1024, ((None, "pairwise"),)),
    (None, ((None, "basic_linear"),)),
)

# barrier -- ompi_coll_tuned_barrier_intra_dec_fixed: nprocs only.
_OMPI_BARRIER = (
    (4, ((None, "recursive_doubling"),)),
    (8, ((None, "linear"),)),
    (64, ((None, "recursive_doubling"),)),
    (256, ((None, "bruck"),)),
    (512, ((None, "tree"),)),
    (1024, ((None, "bruck"),)),
    (4096, ((None, "tree"),)),
    (None, ((None, "bruck"),)),
)

# bcast -- ompi_coll_tuned_bcast_intra_dec_fixed.
# size = dsize * count: the whole message (= nbytes). Segment size and
# fan-out are passed as 0, so chain/pipeline run with one segment and a
# chain of fan-out 1; knomial uses coll_tuned_bcast_knomial_radix = 4.
_OMPI_BCAST = (
    (4, (
        (32, "pipeline"), (256, "binary_tree"), (512, "pipeline"), (1024, "knomial"),
        (32768, "basic_linear"), (131072, "binary_tree"), (262144, "chain"),
        (524288, "basic_linear"), (1048576, "binomial"), (None, "binary_tree"),
    )),
    (8, (
        (64, "binary_tree"), (128, "binomial"), (2048, "binary_tree"), (8192, "binomial"),
        (1048576, "basic_linear"), (None, "chain"),
    )),
    (16, (
        (8, "knomial"), (64, "binary_tree"), (4096, "knomial"), (16384, "binary_tree"),
        (32768, "binomial"), (None, "basic_linear"),
    )),
    (32, ((4096, "knomial"), (1048576, "binomial"), (None, "scatter_allgather"))),
    (64, ((2048, "binomial"), (None, "knomial"))),
    (128, ((None, "knomial"),)),
    (256, (
        (2, "binomial"), (16384, "binary_tree"), (32768, "basic_linear"), (65536, "binary_tree"),
        (None, "knomial"),
    )),
    (1024, ((16384, "knomial"), (32768, "split_binary_tree"), (None, "knomial"))),
    (2048, ((524288, "knomial"), (None, "scatter_allgather"))),
    (4096, ((262144, "knomial"), (None, "scatter_allgather"))),
    (None, (
        (8192, "knomial"), (16384, "binary_tree"), (262144, "knomial"),
        (None, "scatter_allgather"),
    )),
)

# reduce -- ompi_coll_tuned_reduce_intra_dec_fixed.
# size = dsize * count: the whole message (= nbytes). For a non-commutative
# op only linear and in-order binary are allowed.
_OMPI_REDUCE_NONCOMMUTATIVE = (
    (4, ((8, "in-order_binary"), (None, "linear"))),
    (8, ((None, "linear"),)),
    (16, (
        (1024, "in-order_binary"), (8192, "linear"), (16384, "in-order_binary"),
        (262144, "linear"), (None, "in-order_binary"),
    )),
    (128, ((None, "in-order_binary"),)),
    (256, ((512, "in-order_binary"), (1024, "linear"), (None, "in-order_binary"))),
    (None, ((None, "in-order_binary"),)),
)
_OMPI_REDUCE_COMMUTATIVE = (
    (4, (
        (8, "rabenseifner"), (16, "binary"), (32, "pipeline"), (262144, "linear"),
        (524288, "pipeline"), (1048576, "chain"), (None, "pipeline"),
    )),
    (8, (
        (4096, "binary"), (65536, "chain"), (262144, "binomial"), (524288, "linear"),
        (1048576, "binomial"), (None, "linear"),
    )),
    (16, ((8192, "binary"), (None, "binomial"))),
    (32, ((4096, "binary"), (None, "binomial"))),
    (256, ((None, "binomial"),)),
    (512, ((8192, "binomial"), (16384, "in-order_binary"), (None, "binomial"))),
    (2048, ((None, "binomial"),)),
    (4096, (
        (512, "binomial"), (1024, "in-order_binary"), (8192, "binomial"),
        (16384, "in-order_binary"), (None, "binomial"),
    )),
    (None, (
        (16, "binomial"), (32, "in-order_binary"), (1024, "binomial"), (2048, "in-order_binary"),
        (8192, "binomial"), (16384, "in-order_binary"), (None, "binomial"),
    )),
)

# reduce_scatter -- ompi_coll_tuned_reduce_scatter_intra_dec_fixed.
# size = dsize * sum(rcounts): the whole input vector (= nbytes * nprocs
# for equal shares). Non-commutative: always non-overlapping.
_OMPI_REDUCE_SCATTER_NONCOMMUTATIVE = (
    (None, ((None, "non-overlapping"),)),
)
_OMPI_REDUCE_SCATTER_COMMUTATIVE = (
    (4, ((65536, "ring"), (131072, "butterfly"), (None, "ring"))),
    (8, ((8, "non-overlapping"), (262144, "recursive_halving"), (None, "ring"))),
    (32, ((262144, "recursive_halving"), (None, "ring"))),
    (64, (
        (64, "non-overlapping"), (2048, "recursive_halving"), (524288, "butterfly"),
        (None, "ring"),
    )),
    (128, (
        (256, "non-overlapping"), (512, "recursive_halving"), (2048, "butterfly"),
        (4096, "recursive_halving"), (None, "butterfly"),
    )),
    (256, ((256, "non-overlapping"), (512, "recursive_halving"), (None, "butterfly"))),
    (512, ((256, "non-overlapping"), (1024, "recursive_halving"), (None, "butterfly"))),
    (1024, (
        (512, "non-overlapping"), (2048, "recursive_halving"), (8192, "butterfly"),
        (16384, "recursive_halving"), (None, "butterfly"),
    )),
    (2048, (
        (512, "non-overlapping"), (4096, "recursive_halving"), (16384, "butterfly"),
        (32768, "recursive_halving"), (None, "butterfly"),
    )),
    (4096, ((512, "non-overlapping"), (4096, "recursive_halving"), (None, "butterfly"))),
    (None, ((1024, "non-overlapping"), (8192, "recursive_halving"), (None, "butterfly"))),
)

# reduce_scatter_block -- ompi_coll_tuned_reduce_scatter_block_intra_dec_fixed.
# size = dsize * rcount: ONE block (= nbytes). Non-commutative: always
# basic_linear.
_OMPI_REDUCE_SCATTER_BLOCK_NONCOMMUTATIVE = (
    (None, ((None, "basic_linear"),)),
)
_OMPI_REDUCE_SCATTER_BLOCK_COMMUTATIVE = (
    (4, (
        (4, "recursive_doubling"), (8, "butterfly"), (16, "recursive_halving"),
        (128, "butterfly"), (256, "recursive_halving"), (4096, "butterfly"),
        (8192, "recursive_halving"), (131072, "butterfly"), (None, "basic_linear"),
    )),
    (8, (
        (8, "recursive_halving"), (32, "recursive_doubling"), (256, "butterfly"),
        (8192, "recursive_halving"), (16384, "butterfly"), (1048576, "recursive_halving"),
        (None, "basic_linear"),
    )),
    (16, (
        (4, "basic_linear"), (32, "recursive_halving"), (128, "butterfly"),
        (524288, "recursive_halving"), (4194304, "basic_linear"), (None, "butterfly"),
    )),
    (32, (
        (32, "basic_linear"), (524288, "recursive_halving"), (2097152, "basic_linear"),
        (4194304, "recursive_halving"), (None, "butterfly"),
    )),
    (None, (
        (4, "recursive_halving"), (16, "basic_linear"), (65536, "butterfly"),
        (262144, "basic_linear"), (None, "butterfly"),
    )),
)

# allgather -- ompi_coll_tuned_allgather_intra_dec_fixed.
# size = dsize * scount: ONE block (= nbytes).
_OMPI_ALLGATHER = (
    (("==", 2), ((None, "two_proc"),)),
    (32, ((None, "recursive_doubling"),)),
    (64, ((1024, "recursive_doubling"), (65536, "neighbor"), (None, "ring"))),
    (128, ((512, "recursive_doubling"), (65536, "neighbor"), (None, "ring"))),
    (256, (
        (512, "recursive_doubling"), (131072, "neighbor"), (524288, "ring"),
        (1048576, "neighbor"), (None, "ring"),
    )),
    (512, (
        (32, "recursive_doubling"), (128, "bruck"), (1024, "recursive_doubling"),
        (131072, "neighbor"), (524288, "ring"), (1048576, "neighbor"), (None, "ring"),
    )),
    (1024, (
        (64, "recursive_doubling"), (256, "bruck"), (2048, "recursive_doubling"),
        (None, "neighbor"),
    )),
    (2048, (
        (4, "recursive_doubling"), (8, "bruck"), (16, "recursive_doubling"), (32, "bruck"),
        (256, "recursive_doubling"), (512, "bruck"), (4096, "recursive_doubling"),
        (None, "neighbor"),
    )),
    (4096, (
        (32, "bruck"), (128, "recursive_doubling"), (512, "bruck"), (4096, "recursive_doubling"),
        (None, "neighbor"),
    )),
    (None, (
        (2, "recursive_doubling"), (8, "bruck"), (16, "recursive_doubling"), (512, "bruck"),
        (4096, "recursive_doubling"), (None, "neighbor"),
    )),
)

# allgatherv -- ompi_coll_tuned_allgatherv_intra_dec_fixed.
# size = dsize * sum(rcounts) / nprocs: the average block (= nbytes for
# equal blocks).
_OMPI_ALLGATHERV = (
    (("==", 2), ((2048, "ring"), (4096, "two_proc"), (8192, "ring"), (None, "two_proc"))),
    (8, (
        (256, "default"), (4096, "neighbor"), (8192, "ring"), (16384, "neighbor"),
        (262144, "bruck"), (None, "neighbor"),
    )),
    (16, ((1024, "default"), (None, "bruck"))),
    (32, ((128, "default"), (262144, "bruck"), (None, "ring"))),
    (64, ((256, "default"), (8192, "bruck"), (None, "ring"))),
    (128, ((256, "default"), (4096, "bruck"), (None, "ring"))),
    (256, ((1024, "bruck"), (65536, "neighbor"), (None, "ring"))),
    (512, ((1024, "bruck"), (None, "ring"))),
    (1024, (
        (512, "bruck"), (1024, "default"), (4096, "bruck"), (1048576, "neighbor"), (None, "ring"),
    )),
    (None, ((4096, "bruck"), (None, "neighbor"))),
)

# gather -- ompi_coll_tuned_gather_intra_dec_fixed.
# size = ONE block (rcount * rdsize at the root, scount * sdsize elsewhere)
# (= nbytes).
_OMPI_GATHER = (
    (4, (
        (2, "linear_sync"), (4, "basic_linear"), (32768, "binomial"), (65536, "basic_linear"),
        (131072, "binomial"), (None, "linear_sync"),
    )),
    (8, (
        (1024, "binomial"), (8192, "basic_linear"), (32768, "binomial"), (262144, "basic_linear"),
        (None, "linear_sync"),
    )),
    (256, ((None, "binomial"),)),
    (512, ((2048, "binomial"), (8192, "basic_linear"), (None, "binomial"))),
    (None, ((None, "binomial"),)),
)

# scatter -- ompi_coll_tuned_scatter_intra_dec_fixed.
# size = ONE block (scount * sdsize at the root, rcount * rdsize elsewhere)
# (= nbytes).
_OMPI_SCATTER = (
    (4, (
        (2, "linear_nb"), (131072, "basic_linear"), (262144, "linear_nb"), (None, "basic_linear"),
    )),
    (8, (
        (2048, "binomial"), (4096, "basic_linear"), (8192, "binomial"), (32768, "basic_linear"),
        (1048576, "linear_nb"), (None, "basic_linear"),
    )),
    (16, ((16384, "binomial"), (1048576, "linear_nb"), (None, "basic_linear"))),
    (32, ((16384, "binomial"), (32768, "basic_linear"), (None, "linear_nb"))),
    (64, ((512, "binomial"), (8192, "linear_nb"), (16384, "binomial"), (None, "linear_nb"))),
    (None, ((512, "binomial"), (None, "linear_nb"))),
)

# Size each Open MPI decision looks at, from the caller's nbytes (see above).
_OMPI_SIZE = {
    "allreduce": lambda n, b: b,
    "alltoall": lambda n, b: b,
    "alltoallv": lambda n, b: 0,
    "barrier": lambda n, b: 0,
    "bcast": lambda n, b: b,
    "reduce": lambda n, b: b,
    "reduce_scatter": lambda n, b: b * n,
    "reduce_scatter_block": lambda n, b: b,
    "allgather": lambda n, b: b,
    "allgatherv": lambda n, b: b,
    "gather": lambda n, b: b,
    "scatter": lambda n, b: b,
}

# collective -> (table for a commutative op / no op, table for a non-commutative op)
_OMPI_TABLES = {
    "allreduce": (_OMPI_ALLREDUCE_COMMUTATIVE, _OMPI_ALLREDUCE_NONCOMMUTATIVE),
    "alltoall": (_OMPI_ALLTOALL, _OMPI_ALLTOALL),
    "alltoallv": (_OMPI_ALLTOALLV, _OMPI_ALLTOALLV),
    "barrier": (_OMPI_BARRIER, _OMPI_BARRIER),
    "bcast": (_OMPI_BCAST, _OMPI_BCAST),
    "reduce": (_OMPI_REDUCE_COMMUTATIVE, _OMPI_REDUCE_NONCOMMUTATIVE),
    "reduce_scatter": (_OMPI_REDUCE_SCATTER_COMMUTATIVE, _OMPI_REDUCE_SCATTER_NONCOMMUTATIVE),
    "reduce_scatter_block": (_OMPI_REDUCE_SCATTER_BLOCK_COMMUTATIVE,
                             _OMPI_REDUCE_SCATTER_BLOCK_NONCOMMUTATIVE),
    "allgather": (_OMPI_ALLGATHER, _OMPI_ALLGATHER),
    "allgatherv": (_OMPI_ALLGATHERV, _OMPI_ALLGATHERV),
    "gather": (_OMPI_GATHER, _OMPI_GATHER),
    "scatter": (_OMPI_SCATTER, _OMPI_SCATTER),
}

# coll/tuned leaves these to coll/basic in 4.1.4 (coll_tuned_module.c sets
# coll_scan/coll_exscan/coll_gatherv/coll_scatterv to NULL without dynamic
# rules); coll/basic (ompi/mca/coll/basic/coll_basic_module.c) runs:
#   scan   -> mca_coll_basic_scan_intra -> ompi_coll_base_scan_intra_linear
#             (rank r receives the prefix from r-1, sends it on to r+1)
#   exscan -> mca_coll_basic_exscan_intra -> ompi_coll_base_exscan_intra_linear
#   gatherv / scatterv -> mca_coll_basic_gatherv_intra / _scatterv_intra
#             (the root receives from / sends to every rank directly)
_OMPI_BASIC = {"scan": "linear", "exscan": "linear", "gatherv": "linear", "scatterv": "linear"}

# Open MPI's name -> VOCABULARY name, per collective.
_OMPI_VOCAB = {
    # two_proc: one zero-byte exchange, the 2-process case of recursive
    # doubling; tree: ompi_coll_base_barrier_intra_tree, a binomial fan-in to
    # rank 0 and fan-out back.
    "barrier": {"linear": "linear", "double_ring": "double_ring",
                "recursive_doubling": "recursive_doubling", "bruck": "bruck",
                "two_proc": "recursive_doubling", "tree": "binomial"},
    # pipeline = chain of fan-out 1; knomial has radix 4 (closest: binomial);
    # scatter_allgather = binomial scatter + recursive-doubling allgather.
    "bcast": {"basic_linear": "linear", "chain": "chain", "pipeline": "chain",
              "split_binary_tree": "binary", "binary_tree": "binary", "binomial": "binomial",
              "knomial": "binomial", "scatter_allgather": "scatter_allgather_rd",
              "scatter_allgather_ring": "scatter_allgather_ring"},
    # rabenseifner = ompi_coll_base_reduce_intra_redscat_gather.
    "reduce": {"linear": "linear", "chain": "chain", "pipeline": "chain", "binary": "binary",
               "binomial": "binomial", "in-order_binary": "binary",
               "rabenseifner": "rabenseifner"},
    # nonoverlapping = coll reduce to rank 0, then coll bcast;
    # basic_linear = linear reduce to 0 + linear bcast;
    # rabenseifner = ompi_coll_base_allreduce_intra_redscat_allgather.
    "allreduce": {"basic_linear": "linear", "nonoverlapping": "reduce_bcast",
                  "recursive_doubling": "recursive_doubling", "ring": "ring",
                  "segmented_ring": "ring", "rabenseifner": "rabenseifner"},
    "alltoall": {"linear": "linear", "pairwise": "pairwise", "modified_bruck": "bruck",
                 "linear_sync": "linear", "two_proc": "two_proc"},
    "alltoallv": {"basic_linear": "linear", "pairwise": "pairwise"},
    "allgather": {"linear": "linear", "bruck": "bruck", "recursive_doubling": "recursive_doubling",
                  "ring": "ring", "neighbor": "neighbor_exchange", "two_proc": "two_proc"},
    # default = ompi_coll_base_allgatherv_intra_basic_default: gatherv to rank
    # 0 then a bcast (closest: linear).
    "allgatherv": {"default": "linear", "bruck": "bruck", "ring": "ring",
                   "neighbor": "neighbor_exchange", "two_proc": "two_proc"},
    "gather": {"basic_linear": "linear", "binomial": "binomial", "linear_sync": "linear"},
    "scatter": {"basic_linear": "linear", "binomial": "binomial", "linear_nb": "linear"},
    # non-overlapping / basic_linear = reduce to rank 0, then scatter(v);
    # butterfly and recursive doubling pair ranks r and r^2^k like recursive
    # halving does (closest: recursive_halving).
    "reduce_scatter": {"non-overlapping": "reduce_scatterv",
                       "recursive_halving": "recursive_halving", "ring": "ring",
                       "butterfly": "recursive_halving"},
    "reduce_scatter_block": {"basic_linear": "reduce_scatterv",
                             "recursive_doubling": "recursive_halving",
                             "recursive_halving": "recursive_halving",
                             "butterfly": "recursive_halving"},
    "scan": {"linear": "linear"},
    "exscan": {"linear": "linear"},
    "gatherv": {"linear": "linear"},
    "scatterv": {"linear": "linear"},
}

# What a 1-process communicator does (Open MPI: coll/self, a local copy; no
# message either way): the cheapest name of each vocabulary.
_TRIVIAL = {c: ("reduce_scatterv" if c.startswith("reduce_scatter") else "linear")
            for c in COLLECTIVES}


def _table_lookup(table, n, size):
    for bound, cells in table:
        if isinstance(bound, tuple):
            hit = n == bound[1]
        else:
            hit = bound is None or n < bound
        if hit:
            for limit, alg in cells:
                if limit is None or size < limit:
                    return alg
    raise AssertionError("decision table without a final row")


def _ompi_fallback(collective, alg, n, nbytes, commutative):
    """The algorithm that really runs: some of coll/base's algorithms hand
    the call to another one (ompi/mca/coll/base/coll_base_<coll>.c)."""
    count = _count(nbytes)
    if collective == "allreduce":
        if alg == "segmented_ring":
            # ompi_coll_base_allreduce_intra_ring_segmented: segsize 0 gives
            # segcount = count, and count < size * segcount -> plain ring.
            alg = "ring"
        if alg == "ring" and count < n:
            # ompi_coll_base_allreduce_intra_ring: count < size -> recursive doubling
            alg = "recursive_doubling"
        if alg == "rabenseifner" and (count < _pof2_floor(n) or not commutative):
            # ompi_coll_base_allreduce_intra_redscat_allgather -> basic linear
            alg = "basic_linear"
    elif collective == "reduce":
        if alg == "rabenseifner":
            p = _pof2_floor(n)
            if p < 2 or count < p or not commutative:
                # ompi_coll_base_reduce_intra_redscat_gather -> basic linear
                alg = "linear"
    elif collective == "bcast":
        if alg == "split_binary_tree" and count < 2:
            # ompi_coll_base_bcast_intra_split_bintree: a half is empty -> chain
            alg = "chain"
        if alg in ("scatter_allgather", "scatter_allgather_ring") and count < n:
            # ompi_coll_base_bcast_intra_scatter_allgather(_ring): count < size
            # -> basic linear
            alg = "basic_linear"
    elif collective == "allgather":
        if alg == "recursive_doubling" and not _is_pof2(n):
            # ompi_coll_base_allgather_intra_recursivedoubling -> bruck
            alg = "bruck"
        if alg == "neighbor" and n % 2:
            # ompi_coll_base_allgather_intra_neighborexchange: odd size -> ring
            alg = "ring"
    elif collective == "allgatherv":
        if alg == "neighbor" and n % 2:
            # ompi_coll_base_allgatherv_intra_neighborexchange: odd size -> ring
            alg = "ring"
    return alg


def _openmpi4(collective, n, nbytes, commutative):
    if n == 1:
        return "coll/self", _TRIVIAL[collective]
    if collective in _OMPI_BASIC:
        alg = _OMPI_BASIC[collective]
    else:
        table = _OMPI_TABLES[collective][0 if commutative else 1]
        alg = _table_lookup(table, n, _OMPI_SIZE[collective](n, nbytes))
        alg = _ompi_fallback(collective, alg, n, nbytes, commutative)
    return alg, _OMPI_VOCAB[collective][alg]


# =============================================================================
# MPICH 4.0.2, MPIR-level selection on a flat intracommunicator
# =============================================================================
#
# Sources (mpich-4.0.2 tarball, Debian mpich_4.0.2.orig.tar.xz; Debian's
# patches do not touch collectives):
#   maint/tuning/coll/mpir/generic.json -- the selection tree; it is what
#       src/mpi/coll/src/csel_json_autogen.c embeds as MPII_coll_generic_json
#       (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE is empty by default).
#   maint/tuning/coll/ch4/generic.json -- ch4 level: on a flat communicator
#       ("comm_hierarchy=any") bcast -> composition gamma, allreduce -> beta,
#       reduce -> gamma, barrier -> beta, the rest -> alpha; for these
#       collectives each of those compositions (src/mpid/ch4/src/
#       ch4_coll_impl.h) just calls the netmod, and the UCX netmod
#       (src/mpid/ch4/netmod/ucx/ucx_coll.h, no hcoll) calls MPIR_<Coll>_impl.
#   src/mpi/coll/mpir_coll.c -- MPIR_<Coll>_impl: the default
#       MPIR_CVAR_<COLL>_INTRA_ALGORITHM=auto calls MPIR_<Coll>_allcomm_auto,
#       which runs MPIR_Csel_search.
#   src/mpi/coll/src/csel.c -- how the tree is read: keys are tried in
#       order, the first that holds is descended into. avg_msg_size is
#       count * type size of the send side (bcast, reduce, allreduce,
#       alltoall); total_msg_size is that times the communicator size
#       (allgather, reduce_scatter_block) or the sum of the counts times the
#       type size (allgatherv, reduce_scatter); "count<pow2" compares the
#       element count with comm->coll.pof2 (largest power of two <= size).
#       Quirk: the comm-only nodes at the top of a collective's subtree are
#       decided when the communicator is created (prune_tree, "comm_size<N"
#       as size < N), but a "comm_size<N" met below a message-dependent node
#       is decided at call time by MPIR_Csel_search, which tests size <= N.
#       That happens for alltoall only: its "comm_size<8" sits under
#       "is_sendbuf_inplace", so it holds for 8 processes too.
# The size thresholds are the defaults of the older CVARs baked into the
# JSON (src/mpi/coll/cvars.txt: MPIR_CVAR_BCAST_SHORT_MSG_SIZE=12288,
# _BCAST_LONG_MSG_SIZE=524288, _BCAST_MIN_PROCS=8, _ALLTOALL_SHORT_MSG_SIZE
# =256, _ALLTOALL_MEDIUM_MSG_SIZE=32768, _ALLGATHER_SHORT_MSG_SIZE=81920,
# _ALLGATHER_LONG_MSG_SIZE=524288, _REDUCE_SHORT_MSG_SIZE=2048); in 4.0.2
# those CVARs no longer steer the "auto" choice, only the JSON does. Note
# that the JSON's allreduce switch is at 8 bytes, not at
# MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE=2048, and that the reduce-scatter
# switch (524288 total bytes) has no CVAR.
# Assumed: the send buffer is not MPI_IN_PLACE (alltoall(v) would use
# pairwise_sendrecv_replace), equal counts (v-forms, reduce_scatter), and a
# built-in op exactly when commutative=True.

# MPICH's name -> VOCABULARY name.
_MPICH_VOCAB = {
    "MPIR_Barrier_intra_dissemination": "dissemination",
    "MPIR_Bcast_intra_binomial": "binomial",
    "MPIR_Bcast_intra_scatter_recursive_doubling_allgather": "scatter_allgather_rd",
    "MPIR_Bcast_intra_scatter_ring_allgather": "scatter_allgather_ring",
    # only for 0 bytes, where nothing is sent; node reduce + roots allreduce
    # + node bcast (closest: reduce_bcast)
    "MPIR_Allreduce_intra_smp": "reduce_bcast",
    "MPIR_Allreduce_intra_recursive_doubling": "recursive_doubling",
    "MPIR_Allreduce_intra_reduce_scatter_allgather": "rabenseifner",
    "MPIR_Reduce_intra_binomial": "binomial",
    "MPIR_Reduce_intra_reduce_scatter_gather": "rabenseifner",
    "MPIR_Gather_intra_binomial": "binomial",
    "MPIR_Scatter_intra_binomial": "binomial",
    "MPIR_Gatherv_allcomm_linear": "linear",
    "MPIR_Scatterv_allcomm_linear": "linear",
    "MPIR_Allgather_intra_recursive_doubling": "recursive_doubling",
    "MPIR_Allgather_intra_brucks": "bruck",
    "MPIR_Allgather_intra_ring": "ring",
    "MPIR_Allgatherv_intra_recursive_doubling": "recursive_doubling",
    "MPIR_Allgatherv_intra_brucks": "bruck",
    "MPIR_Allgatherv_intra_ring": "ring",
    "MPIR_Alltoall_intra_brucks": "bruck",
    # scattered: every rank posts isend/irecv to all others in batches
    "MPIR_Alltoall_intra_scattered": "linear",
    "MPIR_Alltoall_intra_pairwise": "pairwise",
    "MPIR_Alltoallv_intra_scattered": "linear",
    "MPIR_Reduce_scatter_intra_recursive_halving": "recursive_halving",
    "MPIR_Reduce_scatter_intra_pairwise": "pairwise",
    # Traff's butterfly for non-commutative ops, power-of-two sizes; and the
    # lg(p)-step recursive doubling: both pair r with r^2^k (closest:
    # recursive_halving)
    "MPIR_Reduce_scatter_intra_noncommutative": "recursive_halving",
    "MPIR_Reduce_scatter_intra_recursive_doubling": "recursive_halving",
    "MPIR_Reduce_scatter_block_intra_recursive_halving": "recursive_halving",
    "MPIR_Reduce_scatter_block_intra_pairwise": "pairwise",
    "MPIR_Reduce_scatter_block_intra_noncommutative": "recursive_halving",
    "MPIR_Reduce_scatter_block_intra_recursive_doubling": "recursive_halving",
    "MPIR_Scan_intra_recursive_doubling": "recursive_doubling",
    "MPIR_Exscan_intra_recursive_doubling": "recursive_doubling",
}


def _mpich4(collective, n, nbytes, commutative):
    pow2 = _is_pof2(n)
    builtin = commutative  # see the assumptions above
    count = _count(nbytes)
    c = collective
    if c == "barrier":
        # generic.json: comm_hierarchy=any -> dissemination
        alg = "MPIR_Barrier_intra_dissemination"
    elif c == "bcast":
        # generic.json "collective=bcast"; avg_msg_size = nbytes. The
        # comm_size tests are decided at communicator creation (strict <).
        if n < 8:
            alg = "MPIR_Bcast_intra_binomial"
        elif nbytes <= 12288:
            alg = "MPIR_Bcast_intra_binomial"
        elif pow2 and nbytes <= 524288:
            alg = "MPIR_Bcast_intra_scatter_recursive_doubling_allgather"
        else:
            alg = "MPIR_Bcast_intra_scatter_ring_allgather"
    elif c == "allreduce":
        # generic.json "collective=allreduce"; avg_msg_size = nbytes,
        # count<pow2 on the element count.
        if nbytes <= 0:
            alg = ("MPIR_Allreduce_intra_smp" if commutative
                   else "MPIR_Allreduce_intra_recursive_doubling")
        elif nbytes <= 8 or not builtin or count < _pof2_floor(n):
            alg = "MPIR_Allreduce_intra_recursive_doubling"
        else:
            alg = "MPIR_Allreduce_intra_reduce_scatter_allgather"
    elif c == "reduce":
        # generic.json "collective=reduce", comm_hierarchy=any branch;
        # avg_msg_size = nbytes.
        if nbytes <= 2048 or not builtin or count < _pof2_floor(n):
            alg = "MPIR_Reduce_intra_binomial"
        else:
            alg = "MPIR_Reduce_intra_reduce_scatter_gather"
    elif c == "gather":
        alg = "MPIR_Gather_intra_binomial"
    elif c == "scatter":
        alg = "MPIR_Scatter_intra_binomial"
    elif c == "gatherv":
        alg = "MPIR_Gatherv_allcomm_linear"
    elif c == "scatterv":
        alg = "MPIR_Scatterv_allcomm_linear"
    elif c in ("allgather", "allgatherv"):
        # generic.json "collective=allgather(v)"; total_msg_size = nbytes * n
        total = nbytes * n
        kind = "Allgather" if c == "allgather" else "Allgatherv"
        if pow2:
            alg = "recursive_doubling" if total < 524288 else "ring"
        else:
            alg = "brucks" if total < 81920 else "ring"
        alg = "MPIR_%s_intra_%s" % (kind, alg)
    elif c == "alltoall":
        # generic.json "collective=alltoall", is_sendbuf_inplace=no;
        # avg_msg_size = nbytes (one block). "comm_size<8" is tested at call
        # time as size <= 8 (see the csel.c quirk above).
        if n <= 8:
            alg = "scattered" if nbytes <= 32768 else "pairwise"
        elif nbytes <= 256:
            alg = "brucks"
        elif nbytes <= 32768:
            alg = "scattered"
        else:
            alg = "pairwise"
        alg = "MPIR_Alltoall_intra_" + alg
    elif c == "alltoallv":
        alg = "MPIR_Alltoallv_intra_scattered"
    elif c in ("reduce_scatter", "reduce_scatter_block"):
        # generic.json "collective=reduce_scatter(_block)"; total_msg_size =
        # nbytes * n; equal counts, so is_block_regular=yes.
        kind = "Reduce_scatter" if c == "reduce_scatter" else "Reduce_scatter_block"
        if commutative:
            alg = "recursive_halving" if nbytes * n < 524288 else "pairwise"
        else:
            alg = "noncommutative" if pow2 else "recursive_doubling"
        alg = "MPIR_%s_intra_%s" % (kind, alg)
    elif c == "scan":
        # generic.json: is_node_consecutive=no (always so for a flat
        # communicator, MPII_Comm_is_node_consecutive) -> recursive doubling;
        # ch4 picks composition beta (netmod -> MPIR_Scan_impl) likewise.
        alg = "MPIR_Scan_intra_recursive_doubling"
    elif c == "exscan":
        alg = "MPIR_Exscan_intra_recursive_doubling"
    else:
        raise KeyError(c)
    return alg, _MPICH_VOCAB[alg]


# =============================================================================

_IMPLS = {"openmpi4": _openmpi4, "mpich4": _mpich4}


def algorithm(library, collective, nprocs, nbytes, commutative=True):
    """(VOCABULARY name, the library's own name) of the algorithm `library`
    runs by default; same arguments as select()."""
    if library not in _IMPLS:
        raise KeyError("unknown MPI library %r (known: %s)" % (library, ", ".join(LIBRARIES)))
    if collective not in VOCABULARY:
        raise KeyError("unknown collective %r (known: %s)"
                       % (collective, ", ".join(COLLECTIVES)))
    nprocs, nbytes = int(nprocs), int(nbytes)
    if nprocs < 1:
        raise ValueError("nprocs must be >= 1, got %d" % nprocs)
    if nbytes < 0:
        raise ValueError("nbytes must be >= 0, got %d" % nbytes)
    own, name = _IMPLS[library](collective, nprocs, nbytes, bool(commutative))
    return name, own


def select(library: str, collective: str, nprocs: int, nbytes: int,
           commutative: bool = True) -> str:
    """Name of the algorithm `library` runs by default for `collective` on an
    intracommunicator of `nprocs` processes.

    nbytes: the whole message for bcast, reduce, allreduce, scan and exscan;
    the bytes of ONE block (one process's share) for gather, scatter,
    allgather, alltoall, reduce_scatter_block, reduce_scatter and the
    v-forms. Each library's rules convert it to the size their own decision
    uses (see the comments at each rule). commutative: whether the reduction
    op is commutative (taken as built-in when True). The result is one of
    VOCABULARY[collective]. Raises KeyError for an unknown library or
    collective, ValueError for nprocs < 1 or nbytes < 0."""
    return algorithm(library, collective, nprocs, nbytes, commutative)[0]


if __name__ == "__main__":
    examples = [
        ("openmpi4", "allreduce", 16, 1 << 20, True),
        ("openmpi4", "allreduce", 16, 1 << 20, False),
        ("openmpi4", "bcast", 64, 1 << 20, True),
        ("openmpi4", "alltoall", 24, 128, True),
        ("openmpi4", "allgather", 48, 4096, True),
        ("openmpi4", "barrier", 6, 0, True),
        ("mpich4", "bcast", 16, 100000, True),
        ("mpich4", "bcast", 12, 100000, True),
        ("mpich4", "allreduce", 12, 65536, True),
        ("mpich4", "alltoall", 8, 64, True),
        ("mpich4", "alltoall", 9, 64, True),
        ("mpich4", "reduce_scatter_block", 6, 1024, False),
    ]
    for lib, coll, n, b, comm in examples:
        name, own = algorithm(lib, coll, n, b, comm)
        print("%-9s %-21s n=%-3d bytes=%-8d comm=%-5s -> %-22s (%s)"
              % (lib, coll, n, b, comm, name, own))

    checked = 0
    for lib in LIBRARIES:
        for coll in COLLECTIVES:
            for n in range(1, 65):
                for k in range(25):
                    for comm in (True, False):
                        got = select(lib, coll, n, 1 << k, comm)
                        assert got in VOCABULARY[coll], (lib, coll, n, 1 << k, comm, got)
                        checked += 1
    for bad in (("nompi", "bcast"), ("openmpi4", "bcastv")):
        try:
            select(bad[0], bad[1], 4, 8)
        except KeyError:
            pass
        else:
            raise AssertionError("no KeyError for %r" % (bad,))
    print("self-check passed: %d selections, all in the vocabulary" % checked)
