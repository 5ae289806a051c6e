/* leanmpi-profile's records, shared by its files: the point-to-point
 * wrappers and the output (leanmpi_profile.c), neighbourhood collectives
 * (profile_neighbor.c), one-sided communication (profile_rma.c) and the
 * MPI-4 large-count and persistent-collective forms (profile_mpi4.c). The
 * library exports only MPI_* names; these stay inside it. */
#ifndef LEANMPI_PROFILE_RECORDS_H
#define LEANMPI_PROFILE_RECORDS_H
#include <mpi.h>
#include <stdint.h>

#define LMP_HIDDEN __attribute__((visibility("hidden")))

/* A communicator's members as world ranks (-1: not in MPI_COMM_WORLD), and
 * for neighbourhood collectives its topology's destinations (ndests -1
 * until first asked). */
typedef struct comm_info {
    int id;
    int size;
    int ndests;
    int *dests;                   /* ranks in the communicator, MPI_PROC_NULL included */
    int alg_state;                /* the algorithm variable's handle: 0 not tried, 1 made, -1 none */
    MPI_T_pvar_handle alg_handle; /* (profile.c: where the library tells the algorithm) */
    int world[];
} comm_info;

/* The collectives, as the profile names them (lmp_coll_name). */
enum lmp_coll {
    C_BARRIER,
    C_BCAST,
    C_REDUCE,
    C_ALLREDUCE,
    C_GATHER,
    C_GATHERV,
    C_SCATTER,
    C_SCATTERV,
    C_ALLGATHER,
    C_ALLGATHERV,
    C_ALLTOALL,
    C_ALLTOALLV,
    C_ALLTOALLW,
    C_REDUCE_SCATTER,
    C_REDUCE_SCATTER_BLOCK,
    C_SCAN,
    C_EXSCAN,
    C_COUNT
};

/* Between MPI_Init and MPI_Finalize. */
LMP_HIDDEN int lmp_profiling(void);
/* Records are changed under this lock when threads may call MPI at once. */
LMP_HIDDEN void lmp_lock(void);
LMP_HIDDEN void lmp_unlock(void);
LMP_HIDDEN comm_info *lmp_comm_info(MPI_Comm comm);
LMP_HIDDEN uint64_t lmp_type_bytes(MPI_Count count, MPI_Datatype type);
/* bytes sent to rank dest of comm, as one message */
LMP_HIDDEN void lmp_note_send(MPI_Comm comm, int dest, uint64_t bytes);
/* a one-sided operation moving bytes between this process and world rank target */
LMP_HIDDEN void lmp_note_rma(int world, uint64_t bytes);
/* A collective call: the index of its record (-1: none), for lmp_ran. */
LMP_HIDDEN int lmp_note_coll(int kind, MPI_Comm comm, int root, uint64_t bytes);
/* counts[i] elements of type (or of types[i]) for member i; MPI_Count counts when wide */
LMP_HIDDEN int lmp_note_coll_v(int kind, MPI_Comm comm, int root, const int *counts, const MPI_Count *wide,
                               MPI_Datatype type, const MPI_Datatype *types);
/* After the library ran collective record rec on comm: the algorithm it
 * says it ran, where it says (MPI_T's coll_algorithm). Returns rc. */
LMP_HIDDEN int lmp_ran(int rc, MPI_Comm comm, int rec);
/* A persistent collective: noted again at each start of req. */
LMP_HIDDEN void lmp_remember_coll(MPI_Request req, int kind, MPI_Comm comm, int root, uint64_t bytes);

#endif
