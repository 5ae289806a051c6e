/* Flattened typemaps: every type keeps one element's data as a list of
 * (displacement, length) byte blocks in typemap order, so packing never
 * walks the constructor tree, and nested types cost nothing extra at
 * communication time. The packed stream of count elements is element 0's
 * blocks in order, then element 1's (one extent further), and so on; a
 * position in it is found by division and a binary search, so any piece of
 * a message can be packed or unpacked on its own (rendezvous chunks). */
#include "datatype/typemap.h"
#include "util/lm_mem.h"
#include <stdlib.h>
#include <string.h>

static void add_block(lm_tm_builder *b, MPI_Aint disp, MPI_Aint len)
{
    if (len <= 0) return;
    if (!b->any_data || disp < b->true_lb) b->true_lb = disp;
    if (!b->any_data || disp + len > b->true_ub) b->true_ub = disp + len;
    b->any_data = true;
    if (b->nblocks) {
        lm_block *last = &b->blocks[b->nblocks - 1];
        if (last->disp + last->len == disp) {
            last->len += len;
            b->size += len;
            return;
        }
    }
    if (b->nblocks == b->cap) {
        MPI_Count cap = b->cap ? 2 * b->cap : 8;
        lm_block *nb = lm_realloc(LM_MEM_DATATYPE, b->blocks, (size_t)cap * sizeof *nb);
        if (!nb) {
            b->failed = true;
            return;
        }
        b->blocks = nb;
        b->cap = cap;
    }
    b->blocks[b->nblocks++] = (lm_block){disp, len, b->size};
    b->size += len;
}

static void add_run(lm_tm_builder *b, const lm_run *r, MPI_Count n)
{
    if (n <= 0 || r->size <= 0) return;
    b->nelems += n;
    if (b->nruns && b->runs[b->nruns - 1].basic == r->basic) {
        b->runs[b->nruns - 1].n += n;
        return;
    }
    if (b->nruns == b->rcap) {
        MPI_Count cap = b->rcap ? 2 * b->rcap : 4;
        lm_run *nr = lm_realloc(LM_MEM_DATATYPE, b->runs, (size_t)cap * sizeof *nr);
        if (!nr) {
            b->failed = true;
            return;
        }
        b->runs = nr;
        b->rcap = cap;
    }
    b->runs[b->nruns++] = (lm_run){n, r->size, r->basic};
}

void lm_tm_add(lm_tm_builder *b, const lm_datatype *old, MPI_Aint shift, MPI_Count reps)
{
    if (reps <= 0) return;
    MPI_Aint ext = old->extent;
    /* bounds: the first and last copies hold the extremes (extent may be negative) */
    MPI_Aint lb0 = shift + old->lb, lbk = lb0 + (MPI_Aint)(reps - 1) * ext;
    MPI_Aint lb = lb0 < lbk ? lb0 : lbk, ub = (lb0 > lbk ? lb0 : lbk) + ext;
    if (!b->any || lb < b->lb) b->lb = lb;
    if (!b->any || ub > b->ub) b->ub = ub;
    b->any = true;
    if (old->explicit_bounds) b->explicit_bounds = true;
    if (old->align > b->align) b->align = old->align;
    if (old->nblocks == 1 && old->blocks[0].len == ext) {
        /* copies of a gapless element are one block */
        add_block(b, shift + old->blocks[0].disp, (MPI_Aint)reps * ext);
    } else {
        for (MPI_Count k = 0; k < reps && !b->failed; k++)
            for (MPI_Count i = 0; i < old->nblocks; i++)
                add_block(b, shift + (MPI_Aint)k * ext + old->blocks[i].disp, old->blocks[i].len);
    }
    if (old->nruns == 1) {
        add_run(b, &old->runs[0], old->runs[0].n * reps);
    } else {
        for (MPI_Count k = 0; k < reps && !b->failed; k++)
            for (MPI_Count i = 0; i < old->nruns; i++) add_run(b, &old->runs[i], old->runs[i].n);
    }
}

void lm_tm_discard(lm_tm_builder *b)
{
    lm_free(LM_MEM_DATATYPE, b->blocks);
    lm_free(LM_MEM_DATATYPE, b->runs);
    memset(b, 0, sizeof *b);
}

int lm_tm_finish(lm_tm_builder *b, lm_datatype *t)
{
    if (b->failed) {
        lm_tm_discard(b);
        return MPI_ERR_NO_MEM;
    }
    t->blocks = b->blocks;
    t->nblocks = b->nblocks;
    t->runs = b->runs;
    t->nruns = b->nruns;
    t->nelems = b->nelems;
    t->size = b->size;
    t->lb = b->any ? b->lb : 0;
    t->extent = b->any ? b->ub - b->lb : 0;
    t->true_lb = b->any_data ? b->true_lb : 0;
    t->true_extent = b->any_data ? b->true_ub - b->true_lb : 0;
    t->explicit_bounds = b->explicit_bounds;
    t->align = b->align ? b->align : 1;
    memset(b, 0, sizeof *b);
    return MPI_SUCCESS;
}

/* ---- moving data -------------------------------------------------------- */

static void move(const lm_datatype *t, char *buf, MPI_Count count, MPI_Count off, char *flat, size_t len, int unpack)
{
    if (len == 0 || t->size == 0) return;
    if (t->nblocks == 1 && t->blocks[0].len == t->extent) {
        /* gapless elements: the stream is the memory from the first block on */
        char *p = buf + t->blocks[0].disp + off;
        if (unpack) memcpy(p, flat, len);
        else memcpy(flat, p, len);
        return;
    }
    MPI_Count e = off / t->size, in = off % t->size;
    /* the block holding stream position `in`: last one with pos <= in */
    MPI_Count lo = 0, hi = t->nblocks - 1;
    while (lo < hi) {
        MPI_Count mid = (lo + hi + 1) / 2;
        if (t->blocks[mid].pos <= in) lo = mid;
        else hi = mid - 1;
    }
    MPI_Count i = lo;
    MPI_Aint boff = (MPI_Aint)(in - t->blocks[i].pos);
    while (len && e < count) {
        const lm_block *k = &t->blocks[i];
        size_t c = (size_t)(k->len - boff);
        if (c > len) c = len;
        char *p = buf + (MPI_Aint)e * t->extent + k->disp + boff;
        if (unpack) memcpy(p, flat, c);
        else memcpy(flat, p, c);
        flat += c;
        len -= c;
        boff += (MPI_Aint)c;
        if (boff == k->len) {
            boff = 0;
            if (++i == t->nblocks) {
                i = 0;
                e++;
            }
        }
    }
}

void lm_typemap_pack(const lm_datatype *t, const void *buf, MPI_Count count, MPI_Count off, void *flat, size_t len)
{
    move(t, (char *)buf, count, off, flat, len, 0);
}

void lm_typemap_unpack(const lm_datatype *t, void *buf, MPI_Count count, MPI_Count off, const void *flat, size_t len)
{
    move(t, buf, count, off, (char *)flat, len, 1);
}

MPI_Count lm_typemap_element_bytes(const lm_datatype *t, MPI_Count n)
{
    if (t->nelems == 0) return 0;
    MPI_Count bytes = n / t->nelems * t->size, rest = n % t->nelems;
    for (MPI_Count i = 0; i < t->nruns && rest; i++) {
        MPI_Count k = rest < t->runs[i].n ? rest : t->runs[i].n;
        bytes += k * t->runs[i].size;
        rest -= k;
    }
    return bytes;
}

MPI_Count lm_typemap_elements(const lm_datatype *t, MPI_Count bytes)
{
    if (t->size == 0) return 0;
    MPI_Count n = bytes / t->size * t->nelems, rest = bytes % t->size;
    for (MPI_Count i = 0; i < t->nruns && rest; i++) {
        const lm_run *r = &t->runs[i];
        if (rest >= r->n * r->size) {
            n += r->n;
            rest -= r->n * r->size;
        } else {
            if (rest % r->size) return -1;
            n += rest / r->size;
            rest = 0;
        }
    }
    return rest ? -1 : n;
}
