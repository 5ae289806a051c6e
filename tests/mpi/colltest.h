/* Helpers shared by the collective tests.
 *
 * Every collective runs in one of four forms: blocking, nonblocking
 * (MPI_I* + MPI_Wait), persistent (MPI_*_init, started and completed
 * twice unless the data must be refreshed between runs, then freed) and
 * large-count (_c). Tests rotate the form over their cases so that each
 * form meets several datatypes and counts.
 *
 * When LEANMPI_<COLL>_ALGORITHM is set for some collectives (the suite
 * forces each algorithm that way), only those collectives are tested. */
#ifndef LEANMPI_TESTS_COLLTEST_H
#define LEANMPI_TESTS_COLLTEST_H
#include "mpitest.h"
#include <ctype.h>

enum { FORM_BLOCKING, FORM_NONBLOCKING, FORM_PERSISTENT, FORM_LARGE, FORM_COUNT };
static const char *const form_names[FORM_COUNT] = {"blocking", "nonblocking", "persistent", "large-count"};

#define RUN_FORM(form, twice, blocking, large, nonblocking, persistent)                  \
    do {                                                                                 \
        MPI_Request req_ = MPI_REQUEST_NULL;                                             \
        switch (form) {                                                                  \
        case FORM_BLOCKING: CHECK_MPI(blocking); break;                                  \
        case FORM_NONBLOCKING:                                                           \
            CHECK_MPI(nonblocking);                                                      \
            CHECK_MPI(MPI_Wait(&req_, MPI_STATUS_IGNORE));                               \
            CHECK(req_ == MPI_REQUEST_NULL, "request not freed by MPI_Wait");            \
            break;                                                                       \
        case FORM_PERSISTENT:                                                            \
            CHECK_MPI(persistent);                                                       \
            for (int s_ = 0; s_ < ((twice) ? 2 : 1); s_++) {                             \
                CHECK_MPI(MPI_Start(&req_));                                             \
                CHECK_MPI(MPI_Wait(&req_, MPI_STATUS_IGNORE));                           \
                CHECK(req_ != MPI_REQUEST_NULL, "persistent request freed by MPI_Wait"); \
            }                                                                            \
            CHECK_MPI(MPI_Request_free(&req_));                                          \
            break;                                                                       \
        default: CHECK_MPI(large); break;                                                \
        }                                                                                \
    } while (0)

/* MPICH 4.0 fails the second start of a persistent MPI_Scatter ("Invalid
 * communicator" from its schedule), and crashes in persistent and
 * large-count collectives on derived datatypes (yaksa handle-pool
 * assertions). Built against it, the tests start that scatter once and
 * give derived types the blocking and nonblocking forms only. */
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
#define CT_SCATTER_RESTART 0
#define CT_DERIVED_ALL_FORMS 0
#else
#define CT_SCATTER_RESTART 1
#define CT_DERIVED_ALL_FORMS 1
#endif

static int ct_focus_read, ct_focus_any;

static inline int ct_forced(const char *coll)
{
    char var[96];
    int n = snprintf(var, sizeof var, "LEANMPI_");
    for (const char *p = coll; *p && n < 80; p++) var[n++] = (char)toupper((unsigned char)*p);
    snprintf(var + n, sizeof var - (size_t)n, "_ALGORITHM");
    const char *v = getenv(var);
    return v && *v;
}

/* Should this collective be tested in this run? */
static inline int ct_want(const char *coll)
{
    if (!ct_focus_read) {
        static const char *const all[] = {
            "barrier",  "bcast",     "reduce",    "allreduce",      "gather",
            "gatherv",  "scatter",   "scatterv",  "allgather",      "allgatherv",
            "alltoall", "alltoallv", "alltoallw", "reduce_scatter", "reduce_scatter_block",
            "scan",     "exscan"};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) ct_focus_any |= ct_forced(all[i]);
        ct_focus_read = 1;
    }
    return !ct_focus_any || ct_forced(coll);
}

#endif
