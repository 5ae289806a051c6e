/* Random nested derived datatypes against a reference typemap that this
 * program computes itself from the constructor arguments: size, packed
 * bytes (MPI_Pack), what MPI_Unpack writes and leaves alone, MPI_Get_elements
 * on every prefix, and the same data through point-to-point both ways (run
 * with rendezvous through small cells too, so that messages are packed and
 * unpacked in pieces starting anywhere in the stream). Contiguous, vector,
 * hvector, indexed, hindexed, indexed_block, struct, resized and subarray,
 * nested up to three deep, with zero-length blocks, reversed blocks and
 * regular blocks that the library may merge into loops. */
#include "mpitest.h"
#include <stdint.h>

#define MAXE 3000 /* reference entries of one type at most */
#define COUNT 3   /* elements of each type packed */
#define P2P 40    /* elements of each type sent: large enough for pieces */

typedef struct {
    long disp; /* bytes from the element's origin */
    int size;  /* one basic element */
} entry;

typedef struct {
    MPI_Datatype t;
    int n;
    entry e[MAXE];
} rtype;

static uint64_t rng = 88172645463325252ull;
static int rnd(int n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int)(rng % (uint64_t)n);
}

static int rank, size;

static long extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return (long)ext;
}

static void true_span(const rtype *r, long *lo, long *hi)
{
    *lo = *hi = 0;
    for (int i = 0; i < r->n; i++) {
        if (i == 0 || r->e[i].disp < *lo) *lo = r->e[i].disp;
        if (i == 0 || r->e[i].disp + r->e[i].size > *hi) *hi = r->e[i].disp + r->e[i].size;
    }
}

/* Append copies of c's entries shifted by at; 0 when too many. */
static int put(rtype *r, const rtype *c, long at)
{
    if (r->n + c->n > MAXE) return 0;
    for (int i = 0; i < c->n; i++) r->e[r->n++] = (entry){c->e[i].disp + at, c->e[i].size};
    return 1;
}

static int make(rtype *r, int depth);

/* A child type and its reference; 0 when it came out too large. */
static int child(rtype **c, int depth)
{
    *c = malloc(sizeof **c);
    if (make(*c, depth - 1)) return 1;
    free(*c);
    return 0;
}

static void drop(rtype *c)
{
    if (c->t != MPI_INT && c->t != MPI_DOUBLE && c->t != MPI_SHORT && c->t != MPI_CHAR) MPI_Type_free(&c->t);
    free(c);
}

static int make(rtype *r, int depth)
{
    r->n = 0;
    int kind = depth == 0 ? 0 : rnd(10);
    if (kind == 0) {
        static const MPI_Datatype basic[4] = {MPI_CHAR, MPI_SHORT, MPI_INT, MPI_DOUBLE};
        static const int bsize[4] = {1, 2, 4, 8};
        int k = rnd(4);
        r->t = basic[k];
        r->e[r->n++] = (entry){0, bsize[k]};
        return 1;
    }
    rtype *c;
    if (!child(&c, depth)) return 0;
    long ext = extent_of(c->t), lo, hi;
    true_span(c, &lo, &hi);
    int ok = 1, n = rnd(5), bl = rnd(4);
    switch (kind) {
    case 1: /* contiguous */
        n += 1;
        CHECK_MPI(MPI_Type_contiguous(n, c->t, &r->t));
        for (int i = 0; i < n && ok; i++) ok = put(r, c, i * ext);
        break;
    case 2: { /* vector: blocks apart by at least their length, sometimes backwards */
        int stride = (bl + rnd(3)) * (rnd(4) ? 1 : -1);
        if (stride == 0) stride = 1;
        if (stride < 0 && -stride < bl) stride = -bl;
        CHECK_MPI(MPI_Type_vector(n, bl, stride, c->t, &r->t));
        for (int i = 0; i < n && ok; i++)
            for (int j = 0; j < bl && ok; j++) ok = put(r, c, ((long)i * stride + j) * ext);
        break;
    }
    case 3: { /* hvector */
        long stride = bl * ext + rnd(9);
        CHECK_MPI(MPI_Type_create_hvector(n, bl, stride, c->t, &r->t));
        for (int i = 0; i < n && ok; i++)
            for (int j = 0; j < bl && ok; j++) ok = put(r, c, i * stride + j * ext);
        break;
    }
    case 4:
    case 5: { /* indexed (in extents) or hindexed (bytes), blocks in either order */
        int bls[5], d[5];
        MPI_Aint hd[5];
        long at = 0;
        for (int i = 0; i < n; i++) {
            bls[i] = rnd(4);
            d[i] = (int)at + rnd(3);
            at = d[i] + bls[i];
        }
        if (rnd(3) == 0)
            for (int i = 0; i < n / 2; i++) {
                int t = bls[i], u = d[i];
                bls[i] = bls[n - 1 - i], d[i] = d[n - 1 - i];
                bls[n - 1 - i] = t, d[n - 1 - i] = u;
            }
        for (int i = 0; i < n; i++) hd[i] = (MPI_Aint)d[i] * ext;
        if (kind == 4) CHECK_MPI(MPI_Type_indexed(n, bls, d, c->t, &r->t));
        else CHECK_MPI(MPI_Type_create_hindexed(n, bls, hd, c->t, &r->t));
        for (int i = 0; i < n && ok; i++)
            for (int j = 0; j < bls[i] && ok; j++) ok = put(r, c, (long)d[i] * ext + j * ext);
        break;
    }
    case 6: { /* indexed_block with equal distances (a loop in disguise) or not */
        int d[5], step = bl + rnd(3);
        for (int i = 0; i < n; i++) d[i] = i * step + (rnd(4) == 0 ? 1 : 0) * (i ? 1 : 0);
        for (int i = 1; i < n; i++)
            if (d[i] < d[i - 1] + bl) d[i] = d[i - 1] + bl;
        CHECK_MPI(MPI_Type_create_indexed_block(n, bl, d, c->t, &r->t));
        for (int i = 0; i < n && ok; i++)
            for (int j = 0; j < bl && ok; j++) ok = put(r, c, ((long)d[i] + j) * ext);
        break;
    }
    case 7: { /* struct of up to three children */
        int m = 1 + rnd(3), bls[3];
        MPI_Aint d[3];
        MPI_Datatype ts[3];
        rtype *cs[3] = {c, NULL, NULL};
        for (int i = 1; i < m; i++)
            if (!child(&cs[i], depth)) {
                m = i;
                break;
            }
        long at = 0;
        for (int i = 0; i < m; i++) {
            long clo, chi;
            true_span(cs[i], &clo, &chi);
            long cext = extent_of(cs[i]->t);
            bls[i] = rnd(3);
            d[i] = at - clo + rnd(5);
            ts[i] = cs[i]->t;
            long end = d[i] + (bls[i] ? (bls[i] - 1) * cext + chi : clo);
            at = end > at ? end : at;
        }
        CHECK_MPI(MPI_Type_create_struct(m, bls, d, ts, &r->t));
        for (int i = 0; i < m && ok; i++) {
            long cext = extent_of(cs[i]->t);
            for (int j = 0; j < bls[i] && ok; j++) ok = put(r, cs[i], d[i] + j * cext);
        }
        for (int i = 1; i < m; i++) drop(cs[i]);
        break;
    }
    case 8: /* resized: room around the data, never less than it */
        CHECK_MPI(MPI_Type_create_resized(c->t, lo - rnd(4), (hi - lo) + rnd(6), &r->t));
        ok = put(r, c, 0);
        break;
    default: { /* 2-d subarray of the child */
        int sizes[2] = {1 + rnd(4), 1 + rnd(4)}, sub[2], start[2];
        for (int i = 0; i < 2; i++) {
            sub[i] = 1 + rnd(sizes[i]);
            start[i] = rnd(sizes[i] - sub[i] + 1);
        }
        int order = rnd(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        CHECK_MPI(MPI_Type_create_subarray(2, sizes, sub, start, order, c->t, &r->t));
        int fast = order == MPI_ORDER_C ? 1 : 0, slow = 1 - fast;
        for (int i = 0; i < sub[slow] && ok; i++)
            for (int j = 0; j < sub[fast] && ok; j++)
                ok = put(r, c, ((long)(start[slow] + i) * sizes[fast] + start[fast] + j) * ext);
        break;
    }
    }
    drop(c);
    if (!ok) {
        MPI_Type_free(&r->t);
        return 0;
    }
    CHECK_MPI(MPI_Type_commit(&r->t));
    return 1;
}

/* The reference packed stream of COUNT elements of r from buf. */
static long ref_pack(const rtype *r, const unsigned char *buf, long ext, unsigned char *out)
{
    long k = 0;
    for (int c = 0; c < COUNT; c++)
        for (int i = 0; i < r->n; i++)
            for (int b = 0; b < r->e[i].size; b++) out[k++] = buf[c * ext + r->e[i].disp + b];
    return k;
}

static void check_type(rtype *r, int which)
{
    long ext = extent_of(r->t), lo, hi;
    true_span(r, &lo, &hi);
    int tsize;
    MPI_Type_size(r->t, &tsize);
    long bytes = 0;
    for (int i = 0; i < r->n; i++) bytes += r->e[i].size;
    CHECK(tsize == bytes, "type %d: size %d, reference %ld", which, tsize, bytes);
    /* a buffer covering every copy's data, with a margin */
    long span_lo = lo + (ext < 0 ? (COUNT - 1) * ext : 0), span_hi = hi + (ext > 0 ? (COUNT - 1) * ext : 0);
    long len = span_hi - span_lo + 64;
    unsigned char *mem = malloc((size_t)len), *got = malloc((size_t)len), *ref = malloc(COUNT * (size_t)bytes + 1),
                  *pk = malloc(COUNT * (size_t)bytes + 1);
    unsigned char *buf = mem + 32 - span_lo, *gbuf = got + 32 - span_lo;
    for (long i = 0; i < len; i++) mem[i] = (unsigned char)(i * 7 + 3);
    long n = ref_pack(r, buf, ext, ref);
    int pos = 0;
    CHECK_MPI(MPI_Pack(buf, COUNT, r->t, pk, (int)n + 1, &pos, MPI_COMM_SELF));
    CHECK(pos == n, "type %d: packed %d bytes, reference %ld", which, pos, n);
    for (long i = 0; i < n; i++)
        if (pk[i] != ref[i]) CHECK(0, "type %d: packed byte %ld is %d, reference %d", which, i, pk[i], ref[i]);
    /* unpack writes exactly the typemap's bytes */
    memset(got, 0, (size_t)len);
    pos = 0;
    CHECK_MPI(MPI_Unpack(pk, (int)n, &pos, gbuf, COUNT, r->t, MPI_COMM_SELF));
    unsigned char *mark = calloc((size_t)len, 1);
    for (int c = 0; c < COUNT; c++)
        for (int i = 0; i < r->n; i++) memset(mark + 32 - span_lo + c * ext + r->e[i].disp, 1, (size_t)r->e[i].size);
    for (long i = 0; i < len; i++)
        if (got[i] != (mark[i] ? mem[i] : 0))
            CHECK(0, "type %d: after unpack byte %ld is %d, expected %d", which, i - 32 + span_lo, got[i],
                  mark[i] ? mem[i] : 0);
    /* elements in every prefix of one element's stream */
    MPI_Status st;
    long at = 0;
    int elems = 0;
    for (long b = 0; b <= bytes; b++) {
        MPI_Status_set_elements(&st, MPI_BYTE, (int)b);
        int e;
        MPI_Get_elements(&st, r->t, &e);
        while (elems < r->n && at + r->e[elems].size <= b) at += r->e[elems++].size;
        int expect = at == b ? elems : MPI_UNDEFINED;
        CHECK(e == expect, "type %d: %ld bytes hold %d elements, reference %d", which, b, e, expect);
    }
    /* point-to-point both ways: packed stream out, the type's layout back in */
    if (size > 1 && rank < 2) {
        long plo = lo + (ext < 0 ? (P2P - 1) * ext : 0), phi = hi + (ext > 0 ? (P2P - 1) * ext : 0);
        long plen = phi - plo + 64, pn = (long)P2P * bytes;
        unsigned char *pmem = malloc((size_t)plen), *pgot = calloc((size_t)plen, 1), *pref = malloc((size_t)pn + 1);
        unsigned char *pbuf = pmem + 32 - plo, *pgbuf = pgot + 32 - plo;
        for (long i = 0; i < plen; i++) pmem[i] = (unsigned char)(i * 13 + 5);
        long k = 0;
        for (int c = 0; c < P2P; c++)
            for (int i = 0; i < r->n; i++)
                for (int b = 0; b < r->e[i].size; b++) pref[k++] = pbuf[c * ext + r->e[i].disp + b];
        if (rank == 0) {
            CHECK_MPI(MPI_Send(pbuf, P2P, r->t, 1, which, MPI_COMM_WORLD));
            CHECK_MPI(MPI_Recv(pgbuf, P2P, r->t, 1, which, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int c = 0; c < P2P; c++)
                for (int i = 0; i < r->n; i++) {
                    long at = 32 - plo + c * ext + r->e[i].disp;
                    if (memcmp(pgot + at, pmem + at, (size_t)r->e[i].size))
                        CHECK(0, "type %d: element %d entry %d received wrong", which, c, i);
                    memset(pgot + at, 0, (size_t)r->e[i].size);
                }
            for (long i = 0; i < plen; i++) CHECK(pgot[i] == 0, "type %d: a byte outside the type was written", which);
        } else {
            unsigned char *in = malloc((size_t)pn + 1);
            CHECK_MPI(MPI_Recv(in, (int)pn, MPI_BYTE, 0, which, MPI_COMM_WORLD, &st));
            int cnt;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            CHECK(cnt == pn, "type %d: %d bytes arrived, %ld sent", which, cnt, pn);
            if (memcmp(in, pref, (size_t)pn)) CHECK(0, "type %d: the sent stream differs from the reference", which);
            CHECK_MPI(MPI_Send(in, (int)pn, MPI_BYTE, 0, which, MPI_COMM_WORLD));
            free(in);
        }
        free(pmem);
        free(pgot);
        free(pref);
    }
    free(mark);
    free(mem);
    free(got);
    free(ref);
    free(pk);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int made = 0;
    rtype *r = malloc(sizeof *r);
    for (int which = 0; made < 300; which++) {
        /* every rank draws the same types */
        if (!make(r, 1 + which % 3)) continue;
        check_type(r, which);
        drop(r);
        r = malloc(sizeof *r);
        made++;
    }
    free(r);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("PASS datatype_random (%d types)\n", made);
    MPI_Finalize();
    return 0;
}
