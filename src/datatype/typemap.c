/* Type layouts (see typemap.h): building them from constructor calls,
 * moving a piece of a packed stream to or from memory, and counting basic
 * elements, all in time and memory that follow the layout's segments, not
 * the element count. */
#include "datatype/typemap.h"
#include "datatype/builtin_types_gen.h"
#include "util/lm_mem.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A layout of at most this many segments is copied into its user when used
 * once (a struct member, an indexed block of one): flat stays flat. Larger
 * ones are shared as a child. */
#define INLINE_SEGS 16

/* ---- layouts ------------------------------------------------------------- */

static lm_layout *layout_new(void)
{
    lm_layout *l = lm_calloc(LM_MEM_DATATYPE, 1, sizeof *l);
    if (l) l->refs = 1;
    return l;
}

void lm_layout_retain(lm_layout *l)
{
    if (l && l->refs > 0) l->refs++;
}

void lm_layout_release(lm_layout *l)
{
    if (!l || l->refs < 0 || --l->refs > 0) return;
    for (int i = 0; i < l->nseg; i++) lm_layout_release(l->seg[i].child);
    lm_free(LM_MEM_DATATYPE, l->seg);
    lm_free(LM_MEM_DATATYPE, l->runs);
    lm_free(LM_MEM_DATATYPE, l);
}

static int same_child(const lm_seg *a, const lm_seg *b)
{
    if (a->child || b->child) return a->child == b->child && a->size == b->size;
    return a->basic == b->basic && a->size == b->size;
}

/* Append s (a reference to its child is taken here), merging it into the
 * last segment where the result is regular. 0 when out of memory. */
static int append(lm_layout *l, lm_seg s)
{
    if (s.count <= 0 || s.size <= 0) return 1;
    /* copies of a leaf that touch each other are one longer leaf */
    if (!s.child && s.count > 1 && s.stride == s.size && s.size <= INT64_MAX / s.count) {
        s.size *= s.count;
        s.count = 1;
    }
    if (l->nseg) {
        lm_seg *p = &l->seg[l->nseg - 1];
        /* a leaf that continues the last one */
        if (!p->child && !s.child && p->count == 1 && s.count == 1 && p->basic == s.basic &&
            p->disp + (MPI_Aint)p->size == s.disp) {
            p->size += s.size;
            return 1;
        }
        /* one more copy of the same thing at the same distance */
        if (s.count == 1 && same_child(p, &s)) {
            if (p->count == 1 && s.disp != p->disp) {
                p->stride = s.disp - p->disp;
                p->count = 2;
                if (!p->child && p->stride == p->size) {
                    p->size *= 2;
                    p->count = 1;
                }
                return 1;
            }
            if (p->count > 1 && s.disp == p->disp + (MPI_Aint)p->count * p->stride) {
                p->count++;
                return 1;
            }
        }
    }
    if (l->nseg == l->cap) {
        int cap = l->cap ? 2 * l->cap : 4;
        lm_seg *n = lm_realloc(LM_MEM_DATATYPE, l->seg, (size_t)cap * sizeof *n);
        if (!n) return 0;
        l->seg = n;
        l->cap = cap;
    }
    lm_layout_retain(s.child);
    l->seg[l->nseg++] = s;
    return 1;
}

/* The runs of a flat layout of several segments (none where the layout is
 * dense, nested, or built in: they move otherwise). */
static void flat_runs(lm_layout *l)
{
    if (l->refs < 0 || l->dense || l->nseg < 2 || l->runs) return;
    for (int i = 0; i < l->nseg; i++)
        if (l->seg[i].child || l->seg[i].count != 1) return;
    l->runs = lm_malloc(LM_MEM_DATATYPE, (size_t)l->nseg * sizeof *l->runs);
    if (!l->runs) return; /* the segments still move the data, more slowly */
    int n = 0;
    for (int i = 0; i < l->nseg; i++) {
        const lm_seg *s = &l->seg[i];
        if (n && l->runs[n - 1].disp + (MPI_Aint)l->runs[n - 1].len == s->disp) l->runs[n - 1].len += s->size;
        else l->runs[n++] = (struct lm_run_span){s->disp, s->size};
    }
    l->nruns = n;
}

/* Totals, positions and the dense run of a finished layout. */
static void seal(lm_layout *l)
{
    MPI_Count pos = 0, epos = 0;
    int basic = -2; /* none yet */
    bool dense = true;
    MPI_Aint next = 0;
    l->tlb = l->tub = 0;
    for (int i = 0; i < l->nseg; i++) {
        lm_seg *s = &l->seg[i];
        s->pos = pos;
        s->epos = epos;
        const lm_layout *c = s->child;
        MPI_Count elems = c ? c->nelems : s->size / s->basic_size;
        pos += s->count * s->size;
        epos += s->count * elems;
        int b = c ? c->basic : s->basic;
        basic = basic == -2 ? b : basic == b ? basic : -1;
        /* where this segment's data lies */
        MPI_Aint lo = s->disp + (c ? c->tlb : 0), hi = s->disp + (c ? c->tub : (MPI_Aint)s->size);
        MPI_Aint span = (MPI_Aint)(s->count - 1) * s->stride;
        if (span < 0) lo += span;
        else hi += span;
        if (i == 0 || lo < l->tlb) l->tlb = lo;
        if (i == 0 || hi > l->tub) l->tub = hi;
        /* one gapless run in stream order, continuing the previous one */
        bool seg_dense = (!c || c->dense) && (s->count == 1 || s->stride == (MPI_Aint)s->size);
        MPI_Aint start = s->disp + (c ? c->dense_lb : 0);
        if (!seg_dense || (i > 0 && start != next)) dense = false;
        if (i == 0) l->dense_lb = start;
        next = start + (MPI_Aint)(s->count * s->size);
    }
    l->size = pos;
    l->nelems = epos;
    l->basic = basic == -2 ? -1 : basic;
    l->dense = dense;
    if (!l->nseg) l->dense_lb = 0;
    flat_runs(l);
}

void lm_layout_builtin(lm_layout *l, lm_seg *segs, int basic, MPI_Count size, int first, int second,
                       MPI_Aint second_offset)
{
    memset(l, 0, sizeof *l);
    l->refs = -1;
    l->seg = segs;
    l->cap = 2;
    if (first >= 0 && second >= 0) {
        /* a pair type: its two members */
        MPI_Count s1 = lm_builtin_types[first].size, s2 = lm_builtin_types[second].size;
        segs[0] = (lm_seg){.count = 1, .size = s1, .basic = first, .basic_size = (int)s1};
        segs[1] = (lm_seg){.disp = second_offset, .count = 1, .size = s2, .basic = second, .basic_size = (int)s2};
        l->nseg = 2;
        if (first == second && second_offset == (MPI_Aint)s1) {
            segs[0].size += s2;
            l->nseg = 1;
        }
    } else if (size > 0) {
        segs[0] = (lm_seg){.count = 1, .size = size, .basic = basic, .basic_size = (int)size};
        l->nseg = 1;
    }
    seal(l);
}

/* ---- building ------------------------------------------------------------ */

static void bounds(lm_tm_builder *b, const lm_tm_piece *p, MPI_Aint shift, MPI_Count count, MPI_Aint stride)
{
    MPI_Aint span = (MPI_Aint)(count - 1) * stride;
    MPI_Aint lb = shift + p->lb + (span < 0 ? span : 0), ub = shift + p->ub + (span > 0 ? span : 0);
    if (!b->any || lb < b->lb) b->lb = lb;
    if (!b->any || ub > b->ub) b->ub = ub;
    b->any = true;
    if (p->explicit_bounds) b->explicit_bounds = true;
    if (p->align > b->align) b->align = p->align;
}

void lm_tm_add_piece(lm_tm_builder *b, const lm_tm_piece *p, MPI_Aint shift, MPI_Count count, MPI_Aint stride)
{
    if (count <= 0 || b->failed) return;
    bounds(b, p, shift, count, stride);
    const lm_layout *L = p->l;
    if (!L || L->size == 0) return;
    if (!b->l && !(b->l = layout_new())) {
        b->failed = true;
        return;
    }
    int ok = 1;
    if (count == 1 && L->nseg <= INLINE_SEGS) {
        /* used once: its segments, shifted */
        for (int i = 0; i < L->nseg && ok; i++) {
            lm_seg s = L->seg[i];
            s.disp += shift;
            ok = append(b->l, s);
        }
    } else if (L->nseg == 1 && L->seg[0].count == 1) {
        /* copies of one leaf or child */
        lm_seg s = L->seg[0];
        s.disp += shift;
        s.count = count;
        s.stride = stride;
        ok = append(b->l, s);
    } else if (L->nseg == 1 && L->seg[0].stride * (MPI_Aint)L->seg[0].count == stride &&
               L->seg[0].count <= INT64_MAX / count) {
        /* copies that continue the piece's own repetition */
        lm_seg s = L->seg[0];
        s.disp += shift;
        s.count *= count;
        ok = append(b->l, s);
    } else {
        /* the piece as a child */
        lm_seg s = {.disp = shift, .stride = stride, .count = count, .size = L->size, .child = (lm_layout *)L};
        ok = append(b->l, s);
    }
    if (!ok) b->failed = true;
}

lm_tm_piece lm_tm_piece_of(const lm_datatype *old)
{
    return (lm_tm_piece){.l = old->layout,
                         .lb = old->lb,
                         .ub = old->lb + old->extent,
                         .explicit_bounds = old->explicit_bounds,
                         .align = old->align};
}

void lm_tm_add(lm_tm_builder *b, const lm_datatype *old, MPI_Aint shift, MPI_Count reps)
{
    lm_tm_piece p = lm_tm_piece_of(old);
    lm_tm_add_piece(b, &p, shift, reps, old->extent);
}

void lm_tm_discard(lm_tm_builder *b)
{
    lm_layout_release(b->l);
    memset(b, 0, sizeof *b);
}

int lm_tm_seal(lm_tm_builder *b, lm_tm_piece *p)
{
    if (b->failed || (!b->l && !(b->l = layout_new()))) {
        lm_tm_discard(b);
        return MPI_ERR_NO_MEM;
    }
    seal(b->l);
    *p = (lm_tm_piece){.l = b->l,
                       .lb = b->any ? b->lb : 0,
                       .ub = b->any ? b->ub : 0,
                       .explicit_bounds = b->explicit_bounds,
                       .align = b->align};
    memset(b, 0, sizeof *b);
    return MPI_SUCCESS;
}

void lm_tm_piece_release(lm_tm_piece *p)
{
    lm_layout_release(p->l);
    p->l = NULL;
}

int lm_tm_finish(lm_tm_builder *b, lm_datatype *t)
{
    bool any = b->any;
    lm_tm_piece p;
    int rc = lm_tm_seal(b, &p);
    if (rc) return rc;
    const lm_layout *l = p.l;
    t->layout = p.l;
    t->nelems = l->nelems;
    t->size = l->size;
    t->lb = any ? p.lb : 0;
    t->extent = any ? p.ub - p.lb : 0;
    t->true_lb = l->size ? l->tlb : 0;
    t->true_extent = l->size ? l->tub - l->tlb : 0;
    t->explicit_bounds = p.explicit_bounds;
    t->align = p.align ? p.align : 1;
    return MPI_SUCCESS;
}

/* ---- moving data ---------------------------------------------------------
 * Each function moves a prefix of len bytes of a stream that starts `off`
 * bytes into what it describes, and returns the bytes it moved (less than
 * len when what it describes ends first). */

static size_t move_rep(const lm_layout *L, char *base, MPI_Count count, MPI_Aint stride, MPI_Count off, char *flat,
                       size_t len, int unpack);

static inline void copy_bytes(char *mem, char *flat, size_t n, int unpack)
{
    if (unpack) memcpy(mem, flat, n);
    else memcpy(flat, mem, n);
}

/* n bytes, 16 <= n <= 128, without a call: the first and the last 16, 32
 * or 64 bytes (overlapping where n is not a multiple), as the library's
 * memcpy does for small sizes, but inline. */
static inline void copy_mid(char *dst, const char *src, size_t n)
{
    if (n <= 32) {
        memcpy(dst, src, 16);
        memcpy(dst + n - 16, src + n - 16, 16);
    } else if (n <= 64) {
        memcpy(dst, src, 32);
        memcpy(dst + n - 32, src + n - 32, 32);
    } else {
        memcpy(dst, src, 64);
        memcpy(dst + n - 64, src + n - 64, 64);
    }
}

/* One run of a flat type's element: the sizes of predefined types as
 * plain loads and stores (a call to memcpy costs more than the copy). */
static inline void copy_run(char *mem, char *flat, size_t n, int unpack)
{
    char *dst = unpack ? mem : flat, *src = unpack ? flat : mem;
    switch (n) {
    case 1: *dst = *src; return;
    case 2: memcpy(dst, src, 2); return;
    case 4: memcpy(dst, src, 4); return;
    case 8: memcpy(dst, src, 8); return;
    case 12: memcpy(dst, src, 12); return;
    case 16: memcpy(dst, src, 16); return;
    default: memcpy(dst, src, n);
    }
}

typedef struct {
    uint64_t a, b;
} pair16;

/* count runs of size bytes, stride apart from base. */
static size_t move_leaf(char *base, MPI_Count count, MPI_Aint stride, MPI_Count size, MPI_Count off, char *flat,
                        size_t len, int unpack)
{
    MPI_Count k = off ? off / size : 0, in = off ? off % size : 0;
    size_t moved = 0;
    if (in) {
        size_t c = (size_t)(size - in) < len ? (size_t)(size - in) : len;
        copy_bytes(base + (MPI_Aint)k * stride + in, flat, c, unpack);
        moved += c;
        if (c < (size_t)(size - in)) return moved;
        k++;
    }
    /* whole runs: the common small sizes as plain loads and stores */
    MPI_Count whole = (MPI_Count)((len - moved) / (size_t)size);
    if (whole > count - k) whole = count - k;
    char *m = base + (MPI_Aint)k * stride, *f = flat + moved;
#define RUNS(T)                                                                                         \
    do {                                                                                                \
        if (unpack)                                                                                     \
            for (MPI_Count i = 0; i < whole; i++, m += stride, f += sizeof(T)) memcpy(m, f, sizeof(T)); \
        else                                                                                            \
            for (MPI_Count i = 0; i < whole; i++, m += stride, f += sizeof(T)) memcpy(f, m, sizeof(T)); \
    } while (0)
    switch (size) {
    case 1: RUNS(uint8_t); break;
    case 2: RUNS(uint16_t); break;
    case 4: RUNS(uint32_t); break;
    case 8: RUNS(uint64_t); break;
    case 16: RUNS(pair16); break;
    default:
        if (size >= 16 && size <= 128) {
            /* halo rows and small blocks: inline copies, no call per run */
            if (unpack)
                for (MPI_Count i = 0; i < whole; i++, m += stride, f += size) copy_mid(m, f, (size_t)size);
            else
                for (MPI_Count i = 0; i < whole; i++, m += stride, f += size) copy_mid(f, m, (size_t)size);
            break;
        }
        for (MPI_Count i = 0; i < whole; i++, m += stride, f += size) copy_bytes(m, f, (size_t)size, unpack);
    }
#undef RUNS
    moved += (size_t)(whole * size);
    k += whole;
    if (moved < len && k < count) {
        /* the start of the last run */
        size_t c = len - moved;
        copy_bytes(base + (MPI_Aint)k * stride, flat + moved, c, unpack);
        moved += c;
    }
    return moved;
}

/* The segment of L holding stream position `in`: the last with pos <= in. */
static int seg_at(const lm_layout *L, MPI_Count in)
{
    int lo = 0, hi = L->nseg - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (L->seg[mid].pos <= in) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* One copy of L at base, from stream offset `in` on. */
static size_t move_one(const lm_layout *L, char *base, MPI_Count in, char *flat, size_t len, int unpack)
{
    if (L->dense) {
        size_t c = (size_t)(L->size - in) < len ? (size_t)(L->size - in) : len;
        copy_bytes(base + L->dense_lb + in, flat, c, unpack);
        return c;
    }
    size_t moved = 0;
    for (int i = in ? seg_at(L, in) : 0; i < L->nseg && moved < len; i++) {
        const lm_seg *s = &L->seg[i];
        MPI_Count rel = in > s->pos ? in - s->pos : 0;
        if (!rel && !s->child && s->count == 1 && (size_t)s->size <= len - moved) {
            /* a whole single run, the usual segment of struct and indexed types */
            copy_run(base + s->disp, flat + moved, (size_t)s->size, unpack);
            moved += (size_t)s->size;
            continue;
        }
        moved += s->child
                     ? move_rep(s->child, base + s->disp, s->count, s->stride, rel, flat + moved, len - moved, unpack)
                     : move_leaf(base + s->disp, s->count, s->stride, s->size, rel, flat + moved, len - moved, unpack);
    }
    return moved;
}

/* count copies of L, stride apart from base. */
static size_t move_rep(const lm_layout *L, char *base, MPI_Count count, MPI_Aint stride, MPI_Count off, char *flat,
                       size_t len, int unpack)
{
    if (L->dense && stride == (MPI_Aint)L->size) {
        /* the copies follow each other: one run */
        MPI_Count total = count * L->size - off;
        size_t c = (size_t)total < len ? (size_t)total : len;
        copy_bytes(base + L->dense_lb + off, flat, c, unpack);
        return c;
    }
    MPI_Count e = off ? off / L->size : 0, in = off ? off % L->size : 0;
    size_t moved = 0;
    if (in) {
        moved = move_one(L, base + (MPI_Aint)e * stride, in, flat, len, unpack);
        e++;
    }
    if (L->runs) {
        /* whole elements of a flat layout: its runs, element after element */
        size_t esize = (size_t)L->size;
        for (; e < count && len - moved >= esize; e++) {
            char *b = base + (MPI_Aint)e * stride;
            for (int i = 0; i < L->nruns; i++) {
                copy_run(b + L->runs[i].disp, flat + moved, (size_t)L->runs[i].len, unpack);
                moved += (size_t)L->runs[i].len;
            }
        }
    }
    for (; e < count && moved < len; e++)
        moved += move_one(L, base + (MPI_Aint)e * stride, 0, flat + moved, len - moved, unpack);
    return moved;
}

void lm_typemap_pack(const lm_datatype *t, const void *buf, MPI_Count count, MPI_Count off, void *flat, size_t len)
{
    if (len == 0 || t->size == 0) return;
    move_rep(t->layout, (char *)buf, count, t->extent, off, flat, len, 0);
}

void lm_typemap_unpack(const lm_datatype *t, void *buf, MPI_Count count, MPI_Count off, const void *flat, size_t len)
{
    if (len == 0 || t->size == 0) return;
    move_rep(t->layout, buf, count, t->extent, off, (char *)flat, len, 1);
}

/* ---- counting basic elements --------------------------------------------- */

/* Basic elements in the first `bytes` bytes of one copy of L; -1 when that
 * ends inside an element. */
static MPI_Count elements_in(const lm_layout *L, MPI_Count bytes)
{
    if (bytes == 0) return 0;
    const lm_seg *s = &L->seg[seg_at(L, bytes)];
    MPI_Count rel = bytes - s->pos, n = s->epos;
    if (!s->child) return rel % s->basic_size ? -1 : n + rel / s->basic_size;
    MPI_Count k = rel / s->size, rest = elements_in(s->child, rel % s->size);
    return rest < 0 ? -1 : n + k * s->child->nelems + rest;
}

/* Stream bytes of the first n basic elements of one copy of L. */
static MPI_Count bytes_of(const lm_layout *L, MPI_Count n)
{
    if (n == 0) return 0;
    int lo = 0, hi = L->nseg - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (L->seg[mid].epos <= n) lo = mid;
        else hi = mid - 1;
    }
    const lm_seg *s = &L->seg[lo];
    MPI_Count rel = n - s->epos;
    if (!s->child) return s->pos + rel * s->basic_size;
    MPI_Count k = rel / s->child->nelems;
    return s->pos + k * s->size + bytes_of(s->child, rel % s->child->nelems);
}

MPI_Count lm_typemap_elements(const lm_datatype *t, MPI_Count bytes)
{
    if (t->size == 0) return 0;
    MPI_Count rest = elements_in(t->layout, bytes % t->size);
    return rest < 0 ? -1 : bytes / t->size * t->nelems + rest;
}

MPI_Count lm_typemap_element_bytes(const lm_datatype *t, MPI_Count n)
{
    if (t->nelems == 0) return 0;
    return n / t->nelems * t->size + bytes_of(t->layout, n % t->nelems);
}

/* ---- walking the leaves -------------------------------------------------- */

static void walk(const lm_layout *L, MPI_Aint base, lm_tm_visit visit, void *arg)
{
    for (int i = 0; i < L->nseg; i++) {
        const lm_seg *s = &L->seg[i];
        if (!s->child) {
            visit(arg, base + s->disp, s->size, s->basic, s->count, s->stride);
            continue;
        }
        for (MPI_Count k = 0; k < s->count; k++) walk(s->child, base + s->disp + (MPI_Aint)k * s->stride, visit, arg);
    }
}

void lm_typemap_walk(const lm_datatype *t, MPI_Count count, lm_tm_visit visit, void *arg)
{
    if (t->size == 0) return;
    for (MPI_Count e = 0; e < count; e++) walk(t->layout, (MPI_Aint)e * t->extent, visit, arg);
}

static MPI_Count fold(const lm_layout *L, MPI_Count (*per_leaf)(int, MPI_Count, void *), void *arg)
{
    MPI_Count sum = 0;
    for (int i = 0; i < L->nseg; i++) {
        const lm_seg *s = &L->seg[i];
        MPI_Count v = s->child ? fold(s->child, per_leaf, arg) : per_leaf(s->basic, s->size / s->basic_size, arg);
        if (v < 0) return -1;
        sum += v * s->count;
    }
    return sum;
}

MPI_Count lm_typemap_fold(const lm_datatype *t, MPI_Count (*per_leaf)(int basic, MPI_Count elems, void *arg), void *arg)
{
    return t->layout ? fold(t->layout, per_leaf, arg) : 0;
}
