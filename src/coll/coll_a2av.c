/* The counts exchange of a hierarchical alltoallv or alltoallw: a small
 * schedule within each node (members' rows to the leader), run to
 * completion by every rank, so that every rank takes the same collective
 * sequence number for it before the data's. A member's part is one eager
 * send: only leaders wait. */
#include "coll/coll_a2av.h"
#include "coll/sched_exec.h"
#include "coll/sched_util.h"
#include "util/lm_mem.h"
#include <string.h>

int lm_coll_a2av_wanted(const lm_coll_spec *a)
{
    if ((a->kind != LM_COLL_ALLTOALLV && a->kind != LM_COLL_ALLTOALLW) || a->ppn <= 0) return 0;
    static const lm_coll_a2av placeholder;
    lm_coll_spec probe = *a;
    probe.a2av = &placeholder;
    return lm_coll_select(&probe)->gen == lm_sched_alltoallv_hier;
}

int lm_coll_a2av_plan_make(lm_comm *c, const lm_coll_spec *a, lm_coll_a2av_plan *p)
{
    int n = a->size;
    hier h = hier_of(a, a->rank);
    int lead = a->rank == h.leader;
    size_t row = 2 * (size_t)n;
    memset(p, 0, sizeof *p);
    /* own row, then at the leader the members' rows */
    p->mem = lm_malloc(LM_MEM_COLL, (row + (lead ? (size_t)h.members * row : 0)) * sizeof(size_t));
    if (!p->mem) return MPI_ERR_NO_MEM;
    size_t *mine = p->mem, *rows = lead ? mine + row : NULL;
    for (int j = 0; j < n; j++) {
        mine[j] = a->scounts ? a->scounts[j] : a->bytes;
        mine[n + j] = a->counts ? a->counts[j] : a->bytes;
    }
    lm_coll_exec x;
    lm_coll_exec_init(&x, c);
    x.base[LM_SLOT_SEND] = (char *)mine;
    x.base[LM_SLOT_RECV] = (char *)rows;
    lm_sched_a2av_counts(&x.sched, a);
    int rc = x.sched.failed ? MPI_ERR_NO_MEM : lm_coll_exec_run(&x);
    lm_coll_exec_fini(&x);
    if (rc != MPI_SUCCESS) {
        lm_coll_a2av_plan_free(p);
        return rc;
    }
    p->a2av.rows = rows;
    return MPI_SUCCESS;
}

void lm_coll_a2av_plan_free(lm_coll_a2av_plan *p)
{
    lm_free(LM_MEM_COLL, p->mem);
    p->mem = NULL;
}
