/* The counts exchange of a hierarchical alltoallv or alltoallw: two small
 * schedules within each node (counts in, verdict out), each run to
 * completion by every rank, so that every rank takes the same two
 * collective sequence numbers before the data. */
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

static int run(lm_comm *c, const lm_coll_spec *a, void (*gen)(lm_sched *, const lm_coll_spec *), void *send, void *recv)
{
    lm_coll_exec x;
    lm_coll_exec_init(&x, c);
    x.base[LM_SLOT_SEND] = send;
    x.base[LM_SLOT_RECV] = recv;
    gen(&x.sched, a);
    int rc = x.sched.failed ? MPI_ERR_NO_MEM : lm_coll_exec_run(&x);
    lm_coll_exec_fini(&x);
    return rc;
}

int lm_coll_a2av_plan_make(lm_comm *c, const lm_coll_spec *a, lm_coll_a2av_plan *p)
{
    int n = a->size;
    hier h = hier_of(a, a->rank);
    int lead = a->rank == h.leader;
    size_t row = 2 * (size_t)n;
    /* own row, the members' rows (leader), the verdict */
    size_t words = row + (lead ? (size_t)h.members * row : 0);
    memset(p, 0, sizeof *p);
    p->mem = lm_malloc(LM_MEM_COLL, words * sizeof(size_t) + (size_t)h.nodes);
    if (!p->mem) return MPI_ERR_NO_MEM;
    size_t *mine = p->mem, *rows = lead ? mine + row : NULL;
    unsigned char *via = (unsigned char *)(mine + words);
    for (int j = 0; j < n; j++) {
        mine[j] = a->scounts ? a->scounts[j] : a->bytes;
        mine[n + j] = a->counts ? a->counts[j] : a->bytes;
    }
    int rc = run(c, a, lm_sched_a2av_counts, mine, rows);
    if (rc == MPI_SUCCESS && lead) lm_a2av_decide(a, rows, via);
    if (rc == MPI_SUCCESS) rc = run(c, a, lm_sched_a2av_verdict, via, via);
    if (rc != MPI_SUCCESS) {
        lm_coll_a2av_plan_free(p);
        return rc;
    }
    p->a2av.rows = rows;
    p->a2av.via = via;
    return MPI_SUCCESS;
}

void lm_coll_a2av_plan_free(lm_coll_a2av_plan *p)
{
    lm_free(LM_MEM_COLL, p->mem);
    p->mem = NULL;
}
