/* Running the schedule generators for every rank of a would-be
 * communicator and reporting their messages. */
#include "coll/decompose.h"
#include "coll/coll_alg.h"
#include "coll/coll_shm.h"
#include "util/lm_mem.h"
#include <stdio.h>
#include <string.h>

/* Rank r's schedule into s (freed by the caller); -1 when out of memory. */
static int generate(const lm_coll_alg *g, lm_coll_spec *a, int r, lm_sched *s, char *err, size_t errlen)
{
    lm_sched_init(s);
    a->rank = r;
    /* the hierarchical alltoallv/w with its counts exchange in front */
    if (g->counts_first) lm_sched_v_whole(s, a, g->gen);
    else g->gen(s, a);
    if (!s->failed) return 0;
    snprintf(err, errlen, "out of memory");
    return -1;
}

int lm_coll_decompose(const lm_coll_query *q, lm_coll_message_fn fn, void *arg, const char **algorithm, char *err,
                      size_t errlen)
{
    int kind = lm_coll_kind_from_name(q->collective);
    if (kind < 0) {
        snprintf(err, errlen, "unknown collective '%s'", q->collective);
        return -1;
    }
    if (q->np < 1 || q->root < 0 || q->root >= q->np) {
        snprintf(err, errlen, "need np >= 1 and 0 <= root < np");
        return -1;
    }
    size_t *blocks = lm_calloc(LM_MEM_COLL, 2 * (size_t)q->np, sizeof(size_t));
    if (!blocks) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    lm_coll_spec a = {.kind = kind,
                      .size = q->np,
                      .root = q->root,
                      .bytes = q->bytes,
                      .elem = q->type_size ? q->type_size : 1,
                      .commutative = q->commutative};
    /* an explicit "shm" asks about ranks of one node */
    /* "direct" asks about ranks of one address space */
    a.space = q->algorithm && !strcmp(q->algorithm, "direct");
    a.shm = q->node_local || a.space || (q->algorithm && !strcmp(q->algorithm, "shm"));
    if (!a.shm && q->ranks_per_node >= 2 && q->ranks_per_node < q->np) a.ppn = q->ranks_per_node;
    /* v forms: every block `bytes`, laid out in rank order; reduce_scatter's
     * per-rank blocks likewise */
    if (kind == LM_COLL_GATHERV || kind == LM_COLL_SCATTERV || kind == LM_COLL_ALLGATHERV ||
        kind == LM_COLL_ALLTOALLV || kind == LM_COLL_ALLTOALLW || kind == LM_COLL_REDUCE_SCATTER) {
        for (int i = 0; i < q->np; i++) {
            blocks[i] = q->bytes;
            blocks[q->np + i] = (size_t)i * q->bytes;
        }
        a.counts = a.scounts = blocks;
        a.displs = a.sdispls = blocks + q->np;
    }
    const lm_coll_alg *g = q->algorithm ? lm_coll_alg_find(kind, q->algorithm) : lm_coll_select(&a);
    if (!g) {
        snprintf(err, errlen, "'%s' is not an algorithm of %s (leanmpi-info --algorithms lists them)", q->algorithm,
                 q->collective);
        lm_free(LM_MEM_COLL, blocks);
        return -1;
    }
    if (g->commutative_only && !q->commutative) {
        snprintf(err, errlen, "%s %s needs a commutative op", q->collective, g->name);
        lm_free(LM_MEM_COLL, blocks);
        return -1;
    }
    if (g->hier && !a.ppn) {
        snprintf(err, errlen, "%s hier needs ranks on several hosts: --ranks-per-node K with 2 <= K < np",
                 q->collective);
        lm_free(LM_MEM_COLL, blocks);
        return -1;
    }
    if (g->shm && !lm_sched_shm_fits(&a)) {
        snprintf(err, errlen, "%s shm needs np <= %d and its largest post within %d bytes", q->collective,
                 LM_COLL_SHM_MAX_PROCS, LM_COLL_SHM_DATA);
        lm_free(LM_MEM_COLL, blocks);
        return -1;
    }
    if (algorithm) *algorithm = g->name;
    /* mailbox reads: what rank r reads of rank w's post, at [w * np + r]
     * (a barrier's flags are reads of 0 bytes) */
    struct read {
        size_t bytes;
        int n;
    } *reads = g->shm || g->direct ? lm_calloc(LM_MEM_COLL, (size_t)q->np * (size_t)q->np, sizeof *reads) : NULL;
    int rc = (g->shm || g->direct) && !reads ? -1 : 0;
    if (rc) snprintf(err, errlen, "out of memory");
    for (int r = 0; r < q->np && reads && !rc; r++) {
        lm_sched s;
        rc = generate(g, &a, r, &s, err, errlen);
        for (size_t i = 0; i < s.nsteps; i++) {
            const lm_step *st = &s.steps[i];
            if ((st->kind != LM_STEP_FETCH && st->kind != LM_STEP_FETCH_REDUCE) || st->peer == r) continue;
            struct read *rd = &reads[(size_t)st->peer * (size_t)q->np + (size_t)r];
            rd->bytes += st->bytes;
            rd->n++;
        }
        lm_sched_free(&s);
    }
    for (int r = 0; r < q->np && !rc; r++) {
        lm_sched s;
        rc = generate(g, &a, r, &s, err, errlen);
        uint32_t begin = 0;
        int step = 0;
        for (uint32_t k = 0; k < s.nrounds && !rc; k++) {
            int moved = 0;
            for (uint32_t i = begin; i < s.round_end[k]; i++) {
                const lm_step *st = &s.steps[i];
                if (st->kind == LM_STEP_POST) {
                    for (int p = 0; p < q->np; p++) {
                        const struct read *rd = &reads[(size_t)r * (size_t)q->np + (size_t)p];
                        if (p == r || !rd->n) continue;
                        fn(r, 1, step, p, rd->bytes, arg);
                        moved = 1;
                    }
                    continue;
                }
                if ((st->kind == LM_STEP_FETCH || st->kind == LM_STEP_FETCH_REDUCE) && st->peer != r) {
                    fn(r, 0, step, st->peer, st->bytes, arg);
                    moved = 1;
                    continue;
                }
                if (st->kind != LM_STEP_SEND && st->kind != LM_STEP_RECV) continue;
                fn(r, st->kind == LM_STEP_SEND, step, st->peer, st->bytes, arg);
                moved = 1;
            }
            step += moved;
            begin = s.round_end[k];
        }
        lm_sched_free(&s);
    }
    lm_free(LM_MEM_COLL, reads);
    lm_free(LM_MEM_COLL, blocks);
    return rc;
}

int lm_coll_algorithm_info(int i, const char **collective, const char **name, const char **summary,
                           int *commutative_only)
{
    if (i < 0 || i >= lm_coll_nalgs) return 0;
    if (commutative_only) *commutative_only = lm_coll_algs[i].commutative_only;
    *collective = lm_coll_kind_name(lm_coll_algs[i].kind);
    *name = lm_coll_algs[i].name;
    *summary = lm_coll_algs[i].summary;
    return 1;
}
