/* One-sided communication (RMA) with every result checked against a
 * reference computed locally.
 *
 * Every window is filled with a byte pattern (a sentinel that differs by
 * byte and by process) plus known initial values; the operations run; then
 * the whole window of the process, and of its left neighbour as read back
 * with MPI_Get, is compared byte for byte with a reference image built the
 * same way.  A wrong value, a value in the wrong place and a byte written
 * outside a target layout all show, and the failure names the region.
 *
 * Sections, chosen by name on the command line (no name: all of them, in
 * this order); each prints "PASS <name>" when it is done:
 *   fence    MPI_Win_fence epochs (MPI_MODE_NOPRECEDE first, MPI_MODE_NOSUCCEED
 *            last): each process puts to its right neighbour and gets from
 *            its left, puts to itself, accumulates (MPI_SUM, MPI_MAX,
 *            MPI_BXOR, MPI_REPLACE on int, long long and double) into every
 *            process, zero-count operations, MPI_PROC_NULL targets
 *   lock     the same under MPI_Win_lock/unlock, MPI_LOCK_SHARED and
 *            MPI_LOCK_EXCLUSIVE, with a flush inside the epoch, a counter
 *            updated by get-flush-put that only exclusive locks keep exact,
 *            and the large-count MPI_Put_c, MPI_Get_c and MPI_Accumulate_c
 *   lockall  the same under MPI_Win_lock_all with MPI_Win_flush,
 *            MPI_Win_flush_local, MPI_Win_flush_all, MPI_Win_flush_local_all,
 *            MPI_Win_sync and MPI_Win_unlock_all
 *   pscw     post/start/complete/wait with the neighbours only, then with
 *            everyone (the exposure epoch ended by MPI_Win_test in a bounded
 *            loop), then with different access and exposure groups
 *   atomics  MPI_Fetch_and_op (every fetched value of a shared counter
 *            distinct), MPI_Compare_and_swap (exactly one winner),
 *            MPI_Get_accumulate with MPI_SUM, MPI_NO_OP as an atomic read and
 *            MPI_REPLACE as an atomic swap, accumulate ordering from one
 *            origin, contended MPI_REPLACE that must not tear
 *   derived  derived datatypes on both sides with different shapes and one
 *            type signature: vector to indexed, vector to subarray,
 *            contiguous to resized, vector to indexed_block accumulate,
 *            struct to struct, and an indexed get from a vector target
 *   request  MPI_Rput, MPI_Rget, MPI_Raccumulate and MPI_Rget_accumulate in
 *            shared-lock, exclusive-lock and lock_all epochs (one window
 *            flavour each), completed with MPI_Wait/MPI_Waitall, a get's
 *            data checked right at its request's completion
 *   dynamic  everything above on MPI_Win_create_dynamic windows (memory
 *            attached with MPI_Win_attach, addresses exchanged with
 *            MPI_Get_address and an allgather), plus a window with several
 *            regions, one detached and a new one attached while it lives
 * The first seven sections use MPI_Win_create (malloc'ed memory),
 * MPI_Win_allocate and MPI_Win_allocate_shared (over the processes of one
 * node) with displacement units 4, 2 and 1; one window of each flavour
 * serves every section (creating windows is slow when processes outnumber
 * the cores, and the sections must stay quick there).  Any process count
 * works; with one process every operation targets the process itself.
 * Where the command line cannot be given, RMA_OPS_SECTIONS="lock,pscw"
 * chooses too.
 *
 * Why: one-sided communication has many independent parts (window
 * flavours, synchronization modes, operations, datatypes) whose
 * combinations fail separately; the sections let the implementation be
 * checked part by part as it lands. */
#include "mpitest.h"
#include <stddef.h>
#include <stdint.h>

#define WIN_BYTES 2048
#define NSLOT 16   /* per-origin slots; origins from NSLOT on skip the slot operations */
#define NFOP 3     /* MPI_Fetch_and_op calls per origin and target */
#define MAXBITS 48 /* bit-mask checks need at most this many processes */

/* Byte offsets in every window. */
enum {
    /* the scenario of fence, lock, lockall, pscw and request */
    O_INIT = 0,    /* 16 int: initial data, read by the ring MPI_Get */
    O_RING = 64,   /* 8 int: MPI_Put from the left neighbour */
    O_SELF = 100,  /* 4 int: MPI_Put from the process itself */
    O_ZERO = 120,  /* 4 int: target of zero-count operations, never written */
    O_FLUSH = 140, /* 4 int: MPI_Put from the left, read back after a flush */
    O_CNT = 160,   /* 2 int: counter and check word, get-flush-put under exclusive locks */
    O_CPUT = 172,  /* 4 int: MPI_Put_c from the left */
    O_CACC = 192,  /* 2 long long: MPI_Accumulate_c MPI_SUM from every process */
    O_RGA = 216,   /* long long: MPI_Rget_accumulate MPI_SUM from every process */
    O_ACC = 256,   /* 256 .. 848: the accumulate targets of acc_regions */
    /* atomics */
    A_FOP = 1024,   /* long long: MPI_Fetch_and_op MPI_SUM counter */
    A_CAS = 1032,   /* int: MPI_Compare_and_swap word */
    A_SWAP = 1040,  /* long long: MPI_Get_accumulate MPI_REPLACE (swap) */
    A_FSWAP = 1048, /* long long: MPI_Fetch_and_op MPI_REPLACE (swap) */
    A_GSUM = 1056,  /* 4 double: MPI_Get_accumulate MPI_SUM */
    A_ORD = 1088,   /* NSLOT long long: replace, sum, fetch-and-add from one origin each */
    A_CREP = 1216,  /* long long: MPI_REPLACE from every process at once */
    A_ZERO = 1224,  /* 2 long long: target of a zero-count MPI_Get_accumulate */
    /* derived */
    D_IDX = 1280,  /* 14 int: indexed target {3,1,4} at {1,6,9} */
    D_SUB = 1344,  /* 6x7 int: subarray target 2x4 at (3,1) */
    D_RES = 1520,  /* 3 x resized (2 int, extent 5 int) target of a self put */
    D_ACC = 1576,  /* 6 double: indexed_block {0,3,5} accumulate target */
    D_STR = 1632,  /* struct target: int at 4, double at 16, 2 int at 28 */
    D_INIT = 1672, /* 20 int: initial data, vector source of the derived get */
};

/* Accumulate targets: every operation on every type it is defined for,
 * 4 elements from every process, or one slot per origin for MPI_REPLACE. */
enum { OP_SUM, OP_MAX, OP_BXOR, OP_REPLACE };
enum { K_INT, K_LL, K_DBL };
static const char *op_name[] = {"MPI_SUM", "MPI_MAX", "MPI_BXOR", "MPI_REPLACE"};
static const char *kind_name[] = {"int", "long long", "double"};
static const struct {
    int op, kind, off;
} acc_regions[] = {
    {OP_SUM, K_INT, 256},     {OP_SUM, K_LL, 280},     {OP_SUM, K_DBL, 320},     {OP_MAX, K_INT, 356},
    {OP_MAX, K_LL, 376},      {OP_MAX, K_DBL, 416},    {OP_BXOR, K_INT, 452},    {OP_BXOR, K_LL, 472},
    {OP_REPLACE, K_INT, 512}, {OP_REPLACE, K_LL, 584}, {OP_REPLACE, K_DBL, 720},
};
#define NACC ((int)(sizeof acc_regions / sizeof acc_regions[0]))
static MPI_Op mpi_op(int op)
{
    return op == OP_SUM ? MPI_SUM : op == OP_MAX ? MPI_MAX : op == OP_BXOR ? MPI_BXOR : MPI_REPLACE;
}
static int kind_size(int kind) { return kind == K_INT ? (int)sizeof(int) : 8; }
static int acc_count(int op) { return op == OP_REPLACE ? NSLOT : 4; }
static int acc_len(int a) { return acc_count(acc_regions[a].op) * kind_size(acc_regions[a].kind); }

static const struct {
    int off, len;
    const char *name;
} regions[] = {
    {O_INIT, 64, "O_INIT (ring get source)"},
    {O_RING, 32, "O_RING (put from the left)"},
    {O_SELF, 16, "O_SELF (put to self)"},
    {O_ZERO, 16, "O_ZERO (zero-count target)"},
    {O_FLUSH, 16, "O_FLUSH (put, flush, get back)"},
    {O_CNT, 8, "O_CNT (exclusive-lock counter)"},
    {O_CPUT, 16, "O_CPUT (MPI_Put_c)"},
    {O_CACC, 16, "O_CACC (MPI_Accumulate_c)"},
    {O_RGA, 8, "O_RGA (MPI_Rget_accumulate)"},
    {A_FOP, 8, "A_FOP (fetch-and-add counter)"},
    {A_CAS, 4, "A_CAS (compare-and-swap word)"},
    {A_SWAP, 8, "A_SWAP (get_accumulate swap)"},
    {A_FSWAP, 8, "A_FSWAP (fetch_and_op swap)"},
    {A_GSUM, 32, "A_GSUM (get_accumulate sum)"},
    {A_ORD, 8 * NSLOT, "A_ORD (ordering slots)"},
    {A_CREP, 8, "A_CREP (contended replace)"},
    {A_ZERO, 16, "A_ZERO (zero-count get_accumulate target)"},
    {D_IDX, 56, "D_IDX (indexed target)"},
    {D_SUB, 168, "D_SUB (subarray target)"},
    {D_RES, 48, "D_RES (resized target)"},
    {D_ACC, 48, "D_ACC (indexed_block accumulate target)"},
    {D_STR, 36, "D_STR (struct target)"},
    {D_INIT, 80, "D_INIT (vector get source)"},
};

static const char *region_of(int off)
{
    static char name[64];
    for (size_t i = 0; i < sizeof regions / sizeof regions[0]; i++)
        if (off >= regions[i].off && off < regions[i].off + regions[i].len) return regions[i].name;
    for (int a = 0; a < NACC; a++)
        if (off >= acc_regions[a].off && off < acc_regions[a].off + acc_len(a)) {
            snprintf(name, sizeof name, "the %s %s accumulate target", kind_name[acc_regions[a].kind],
                     op_name[acc_regions[a].op]);
            return name;
        }
    return "sentinel bytes outside every layout";
}

/* ---- values ---------------------------------------------------------- */

static unsigned char sentinel(int t, int off)
{
    return (unsigned char)(0xA5u ^ (unsigned)off * 29u ^ (unsigned)t * 101u);
}
static int init_val(int t, int i) { return 1000 * t + 3 * i + 7; }
static int ring_val(int o, int i) { return -(100 * o + i + 1); }
static int self_val(int o, int i) { return 5000 + 10 * o + i; }
static int flush_val(int o, int i) { return 7000 + 10 * o + i; }
static int cput_val(int o, int i) { return 9000 + 10 * o + i; }
/* Accumulate values are integers, scaled per type (by 2^33 for long long,
 * so they need 64 bits, by 1/4 for double, so sums stay exact in any
 * order); MPI_BXOR values keep their bits, truncated to 32 for int. */
static long long acc_init(int op, int t, int i)
{
    switch (op) {
    case OP_SUM: return 10 * t + i;
    case OP_MAX: return i == 3 ? 100 : -1000 + i; /* element 3 keeps its initial value */
    case OP_BXOR: return (long long)(0x0123456789abcdefULL ^ (unsigned)t);
    default: return -1;
    }
}
static long long acc_val(int op, int o, int t, int i)
{
    switch (op) {
    case OP_SUM: return (o + 1) * (i + 1) + t;
    case OP_MAX: return (o * 5 + i * 3 + t) % 11 - 5;
    case OP_BXOR: return (long long)((1ULL << ((o * 3 + i) % 63)) ^ ((unsigned long long)(o + 1) << 40) ^ (unsigned)t);
    default: return (o + 1) * 1000 + 7 * t + 1; /* the value of origin o's slot */
    }
}
/* Stores the element that v stands for in an operation op on kind. */
static void acc_store(void *dst, int op, int kind, long long v)
{
    if (kind == K_INT) {
        uint32_t u = (uint32_t)(unsigned long long)v;
        memcpy(dst, &u, sizeof u);
    } else if (kind == K_LL) {
        long long x = op == OP_BXOR ? v : v * (1LL << 33);
        memcpy(dst, &x, sizeof x);
    } else {
        double d = (double)v * 0.25;
        memcpy(dst, &d, sizeof d);
    }
}
static long long weight(int o) { return 1LL << (o % MAXBITS); }
static long long crep_val(int o) { return (long long)(0x0101010101010101ULL * (unsigned)(o + 1)); }
static int dinit_val(int t, int j) { return 80000 + 100 * t + j; }
static double dacc_init(int t, int k) { return 100.0 + k + t; }
static double dacc_val(int o, int t, int j) { return (o + 1) * 0.5 + j * 0.25 + t; }

/* ---- reference images ------------------------------------------------- */

static void wr_i(unsigned char *img, int off, int idx, int v) { memcpy(img + off + (int)sizeof v * idx, &v, sizeof v); }
static void wr_ll(unsigned char *img, int off, int idx, long long v)
{
    memcpy(img + off + (int)sizeof v * idx, &v, sizeof v);
}
static void wr_d(unsigned char *img, int off, int idx, double v)
{
    memcpy(img + off + (int)sizeof v * idx, &v, sizeof v);
}
static int rd_i(const unsigned char *img, int off, int idx)
{
    int v;
    memcpy(&v, img + off + (int)sizeof v * idx, sizeof v);
    return v;
}
static long long rd_ll(const unsigned char *img, int off, int idx)
{
    long long v;
    memcpy(&v, img + off + (int)sizeof v * idx, sizeof v);
    return v;
}

/* The window of process t before any operation. */
static void ref_init(unsigned char *img, int t)
{
    for (int off = 0; off < WIN_BYTES; off++) img[off] = sentinel(t, off);
    for (int i = 0; i < 16; i++) wr_i(img, O_INIT, i, init_val(t, i));
    for (int a = 0; a < NACC; a++) {
        int op = acc_regions[a].op, kind = acc_regions[a].kind;
        for (int i = 0; i < acc_count(op); i++)
            acc_store(img + acc_regions[a].off + kind_size(kind) * i, op, kind, acc_init(op, t, i));
    }
    wr_i(img, O_CNT, 0, 0);
    wr_i(img, O_CNT, 1, 1);
    wr_ll(img, O_CACC, 0, t);
    wr_ll(img, O_CACC, 1, -t);
    wr_ll(img, O_RGA, 0, 1000LL * t);
    wr_ll(img, A_FOP, 0, 0);
    wr_i(img, A_CAS, 0, 0);
    wr_ll(img, A_SWAP, 0, -1);
    wr_ll(img, A_FSWAP, 0, -2);
    for (int i = 0; i < 4; i++) wr_d(img, A_GSUM, i, 0.5 * i);
    for (int s = 0; s < NSLOT; s++) wr_ll(img, A_ORD, s, 0);
    wr_ll(img, A_CREP, 0, 0);
    for (int k = 0; k < 6; k++) wr_d(img, D_ACC, k, dacc_init(t, k));
    for (int j = 0; j < 20; j++) wr_i(img, D_INIT, j, dinit_val(t, j));
}

enum { M_FENCE, M_LOCK_SH, M_LOCK_EX, M_LOCKALL, M_PSCW };
static const char *mode_name[] = {"fence", "lock shared", "lock exclusive", "lock_all", "post/start/complete/wait"};
static int passive(int mode) { return mode == M_LOCK_SH || mode == M_LOCK_EX || mode == M_LOCKALL; }
static int locks(int mode) { return mode == M_LOCK_SH || mode == M_LOCK_EX; }

/* The window of process t of n after the scenario. */
static void ref_scenario(unsigned char *img, int t, int n, int mode, int req)
{
    int from_left = (t + n - 1) % n; /* the process whose right neighbour t is */
    for (int i = 0; i < 8; i++) wr_i(img, O_RING, i, ring_val(from_left, i));
    for (int i = 0; i < 4; i++) {
        wr_i(img, O_SELF, i, self_val(t, i));
        wr_i(img, O_FLUSH, i, flush_val(from_left, i));
    }
    for (int a = 0; a < NACC; a++) {
        int op = acc_regions[a].op, kind = acc_regions[a].kind, sz = kind_size(kind);
        unsigned char *p = img + acc_regions[a].off;
        if (op == OP_REPLACE) {
            for (int o = 0; o < n && o < NSLOT; o++) acc_store(p + sz * o, op, kind, acc_val(op, o, t, 0));
            continue;
        }
        for (int i = 0; i < 4; i++) {
            long long v = acc_init(op, t, i);
            for (int o = 0; o < n; o++) {
                long long x = acc_val(op, o, t, i);
                v = op == OP_SUM ? v + x : op == OP_MAX ? (x > v ? x : v) : v ^ x;
            }
            acc_store(p + sz * i, op, kind, v);
        }
    }
    if (mode == M_LOCK_EX) {
        int s = n * (n + 1) / 2;
        wr_i(img, O_CNT, 0, s);
        wr_i(img, O_CNT, 1, 3 * s + 1);
    }
    if (locks(mode)) {
        for (int i = 0; i < 4; i++) wr_i(img, O_CPUT, i, cput_val(from_left, i));
        long long a = t, b = -t;
        for (int o = 0; o < n; o++) a += o + 1, b += 1000LL * (o + 1);
        wr_ll(img, O_CACC, 0, a);
        wr_ll(img, O_CACC, 1, b);
    }
    if (req) {
        long long v = 1000LL * t;
        for (int o = 0; o < n; o++) v += weight(o);
        wr_ll(img, O_RGA, 0, v);
    }
}

static void check_image(const unsigned char *got, const unsigned char *ref, int owner, const char *what)
{
    for (int off = 0; off < WIN_BYTES; off++)
        if (got[off] != ref[off]) {
            int start = off - off % 4;
            CHECK(got[off] == ref[off],
                  "%s: window of process %d, byte %d in %s is 0x%02x, expected 0x%02x (int at %d: %d, expected %d)",
                  what, owner, off, region_of(off), got[off], ref[off], start, rd_i(got, start, 0),
                  rd_i(ref, start, 0));
        }
}

/* ---- windows ---------------------------------------------------------- */

enum { F_CREATE, F_ALLOCATE, F_SHARED, F_DYNAMIC };
static const char *flavor_name[] = {"MPI_Win_create", "MPI_Win_allocate", "MPI_Win_allocate_shared",
                                    "MPI_Win_create_dynamic"};
static MPI_Comm node_comm; /* the processes that can share memory with this one */

typedef struct {
    MPI_Win win;
    MPI_Comm comm;
    int flavor, rank, size, disp_unit;
    unsigned char *base; /* this process's WIN_BYTES of window memory */
    MPI_Aint *addr;      /* dynamic windows: every process's attached address */
} rwin;

static void rwin_open(rwin *w, int flavor)
{
    w->flavor = flavor;
    w->comm = flavor == F_SHARED ? node_comm : MPI_COMM_WORLD;
    w->rank = mt_rank(w->comm);
    w->size = mt_size(w->comm);
    w->addr = NULL;
    switch (flavor) {
    case F_CREATE:
        w->disp_unit = 4;
        w->base = malloc(WIN_BYTES);
        CHECK(w->base != NULL, "malloc");
        CHECK_MPI(MPI_Win_create(w->base, WIN_BYTES, w->disp_unit, MPI_INFO_NULL, w->comm, &w->win));
        break;
    case F_ALLOCATE:
        w->disp_unit = 2;
        CHECK_MPI(MPI_Win_allocate(WIN_BYTES, w->disp_unit, MPI_INFO_NULL, w->comm, &w->base, &w->win));
        break;
    case F_SHARED:
        w->disp_unit = 1;
        CHECK_MPI(MPI_Win_allocate_shared(WIN_BYTES, w->disp_unit, MPI_INFO_NULL, w->comm, &w->base, &w->win));
        break;
    default: {
        w->disp_unit = 1;
        w->base = malloc(WIN_BYTES);
        w->addr = malloc(sizeof(MPI_Aint) * (size_t)w->size);
        CHECK(w->base != NULL && w->addr != NULL, "malloc");
        CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, w->comm, &w->win));
        CHECK_MPI(MPI_Win_attach(w->win, w->base, WIN_BYTES));
        MPI_Aint mine;
        CHECK_MPI(MPI_Get_address(w->base, &mine));
        CHECK_MPI(MPI_Allgather(&mine, 1, MPI_AINT, w->addr, 1, MPI_AINT, w->comm));
        break;
    }
    }
}

static void rwin_close(rwin *w)
{
    /* nobody may still be reading this process's memory when it is
     * detached (passive-target epochs end without the target) */
    if (w->flavor == F_DYNAMIC) {
        CHECK_MPI(MPI_Barrier(w->comm));
        CHECK_MPI(MPI_Win_detach(w->win, w->base));
    }
    CHECK_MPI(MPI_Win_free(&w->win));
    if (w->flavor == F_CREATE || w->flavor == F_DYNAMIC) free(w->base);
    free(w->addr);
}

/* One window of each flavour, opened when first used and shared by the
 * sections; every use starts with a barrier so that no process resets its
 * memory while another still reads it. */
static rwin windows[4];
static int window_open[4];

static rwin *get_win(int flavor)
{
    if (!window_open[flavor]) rwin_open(&windows[flavor], flavor);
    window_open[flavor] = 1;
    CHECK_MPI(MPI_Barrier(windows[flavor].comm));
    return &windows[flavor];
}

static void close_windows(void)
{
    for (int f = 0; f < 4; f++)
        if (window_open[f]) rwin_close(&windows[f]);
}

/* The target displacement of byte off in process t's window memory. */
static MPI_Aint tdisp(const rwin *w, int t, int off)
{
    if (t == MPI_PROC_NULL) return 0;
    if (w->addr) return MPI_Aint_add(w->addr[t], off);
    CHECK(off % w->disp_unit == 0, "offset %d is a multiple of the displacement unit %d", off, w->disp_unit);
    return off / w->disp_unit;
}

/* Local loads and stores of the process's own window memory while others
 * may use passive target: a lock on itself plus MPI_Win_sync makes the
 * public and private copies agree in either memory model. */
static void own_begin(MPI_Win win, int me)
{
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
    CHECK_MPI(MPI_Win_sync(win));
}
static void own_end(MPI_Win win, int me)
{
    CHECK_MPI(MPI_Win_sync(win));
    CHECK_MPI(MPI_Win_unlock(me, win));
}

/* ---- issuing operations ----------------------------------------------- */

typedef struct {
    rwin *w;
    int mode, req;
    MPI_Request *reqs; /* the request-based operations of the epoch */
    int nreq, maxreq;
} ctx_t;

static MPI_Request *new_req(ctx_t *c)
{
    CHECK(c->nreq < c->maxreq, "room for %d requests", c->maxreq);
    return &c->reqs[c->nreq++];
}

static void c_put(ctx_t *c, const void *buf, int count, MPI_Datatype dt, int t, int off)
{
    MPI_Aint d = tdisp(c->w, t, off);
    if (c->req) CHECK_MPI(MPI_Rput(buf, count, dt, t, d, count, dt, c->w->win, new_req(c)));
    else CHECK_MPI(MPI_Put(buf, count, dt, t, d, count, dt, c->w->win));
}

static void c_get(ctx_t *c, void *buf, int count, MPI_Datatype dt, int t, int off)
{
    MPI_Aint d = tdisp(c->w, t, off);
    if (c->req) CHECK_MPI(MPI_Rget(buf, count, dt, t, d, count, dt, c->w->win, new_req(c)));
    else CHECK_MPI(MPI_Get(buf, count, dt, t, d, count, dt, c->w->win));
}

static void c_acc(ctx_t *c, const void *buf, int count, MPI_Datatype dt, int t, int off, MPI_Op op)
{
    MPI_Aint d = tdisp(c->w, t, off);
    if (c->req) CHECK_MPI(MPI_Raccumulate(buf, count, dt, t, d, count, dt, op, c->w->win, new_req(c)));
    else CHECK_MPI(MPI_Accumulate(buf, count, dt, t, d, count, dt, op, c->w->win));
}

/* Completes the epoch's requests: MPI_Wait on the first, MPI_Waitall on the rest. */
static void c_complete(ctx_t *c)
{
    if (c->nreq > 0) CHECK_MPI(MPI_Wait(&c->reqs[0], MPI_STATUS_IGNORE));
    if (c->nreq > 1) {
        MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)c->nreq);
        CHECK(st != NULL, "malloc");
        CHECK_MPI(MPI_Waitall(c->nreq - 1, c->reqs + 1, st));
        free(st);
    }
    for (int i = 0; i < c->nreq; i++) CHECK(c->reqs[i] == MPI_REQUEST_NULL, "a completed request is freed");
    c->nreq = 0;
}

/* The large-count forms; MPI-3 libraries have only the int forms. */
static void put_c(const void *buf, int count, MPI_Datatype dt, int t, MPI_Aint d, MPI_Win win)
{
#if MPI_VERSION >= 4
    CHECK_MPI(MPI_Put_c(buf, (MPI_Count)count, dt, t, d, (MPI_Count)count, dt, win));
#else
    CHECK_MPI(MPI_Put(buf, count, dt, t, d, count, dt, win));
#endif
}
static void get_c(void *buf, int count, MPI_Datatype dt, int t, MPI_Aint d, MPI_Win win)
{
#if MPI_VERSION >= 4
    CHECK_MPI(MPI_Get_c(buf, (MPI_Count)count, dt, t, d, (MPI_Count)count, dt, win));
#else
    CHECK_MPI(MPI_Get(buf, count, dt, t, d, count, dt, win));
#endif
}
static void acc_c(const void *buf, int count, MPI_Datatype dt, int t, MPI_Aint d, MPI_Op op, MPI_Win win)
{
#if MPI_VERSION >= 4
    CHECK_MPI(MPI_Accumulate_c(buf, (MPI_Count)count, dt, t, d, (MPI_Count)count, dt, op, win));
#else
    CHECK_MPI(MPI_Accumulate(buf, count, dt, t, d, count, dt, op, win));
#endif
}

/* Origin buffers for one target: they must stay untouched until the
 * operations complete, so every target has its own. */
typedef struct {
    int ring[8], self[4], flush[4], flushback[4], cput[4];
    long long acc[NACC][4]; /* room for 4 elements of any kind */
    long long cacc[2], rga, rga_got;
    int get_left[16], cget_left[4], zero_get[4];
    int cnt[2], cnt_new[2];
} obuf_t;

static void obuf_fill(obuf_t *b, int me, int t)
{
    for (int i = 0; i < 8; i++) b->ring[i] = ring_val(me, i);
    for (int i = 0; i < 4; i++) {
        b->self[i] = self_val(me, i);
        b->flush[i] = flush_val(me, i);
        b->flushback[i] = -1;
        b->cput[i] = cput_val(me, i);
        b->cget_left[i] = -1;
        b->zero_get[i] = -77;
    }
    for (int i = 0; i < 16; i++) b->get_left[i] = -1;
    for (int a = 0; a < NACC; a++)
        for (int i = 0; i < 4; i++) {
            int op = acc_regions[a].op, kind = acc_regions[a].kind;
            acc_store((char *)b->acc[a] + kind_size(kind) * i, op, kind, acc_val(op, me, t, i));
        }
    b->cacc[0] = me + 1;
    b->cacc[1] = 1000LL * (me + 1);
    b->rga = weight(me);
    b->rga_got = -1;
}

/* Put, complete locally, overwrite the origin buffer, complete at the
 * target, get the data back: the target must hold what was put. */
static void flush_roundtrip(ctx_t *c, obuf_t *b, int t)
{
    MPI_Win win = c->w->win;
    MPI_Aint d = tdisp(c->w, t, O_FLUSH);
    int keep[4];
    memcpy(keep, b->flush, sizeof keep);
    if (c->req) {
        MPI_Request r;
        CHECK_MPI(MPI_Rput(b->flush, 4, MPI_INT, t, d, 4, MPI_INT, win, &r));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        CHECK_MPI(MPI_Put(b->flush, 4, MPI_INT, t, d, 4, MPI_INT, win));
        CHECK_MPI(MPI_Win_flush_local(t, win));
    }
    for (int i = 0; i < 4; i++) b->flush[i] = -999; /* the buffer is free again */
    CHECK_MPI(MPI_Win_flush(t, win));
    if (c->req) {
        MPI_Request r;
        CHECK_MPI(MPI_Rget(b->flushback, 4, MPI_INT, t, d, 4, MPI_INT, win, &r));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        CHECK_MPI(MPI_Get(b->flushback, 4, MPI_INT, t, d, 4, MPI_INT, win));
        CHECK_MPI(MPI_Win_flush_local(t, win)); /* a get completes locally when its data is there */
    }
    for (int i = 0; i < 4; i++)
        CHECK(b->flushback[i] == keep[i], "%s: flushed put read back from %d: [%d] = %d, expected %d",
              mode_name[c->mode], t, i, b->flushback[i], keep[i]);
}

/* Increment the counter of t by me+1 with a get, a flush and a put; only
 * exclusive locks keep every increment. */
static void counter_update(ctx_t *c, obuf_t *b, int t)
{
    MPI_Win win = c->w->win;
    int me = c->w->rank, n = c->w->size;
    MPI_Aint d = tdisp(c->w, t, O_CNT);
    if (c->req) {
        MPI_Request r;
        CHECK_MPI(MPI_Rget(b->cnt, 2, MPI_INT, t, d, 2, MPI_INT, win, &r));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        CHECK_MPI(MPI_Get(b->cnt, 2, MPI_INT, t, d, 2, MPI_INT, win));
        CHECK_MPI(MPI_Win_flush(t, win));
    }
    CHECK(b->cnt[1] == 3 * b->cnt[0] + 1 && b->cnt[0] >= 0 && b->cnt[0] < n * (n + 1) / 2,
          "counter of %d read under an exclusive lock is consistent: %d, %d", t, b->cnt[0], b->cnt[1]);
    b->cnt_new[0] = b->cnt[0] + me + 1;
    b->cnt_new[1] = 3 * b->cnt_new[0] + 1;
    CHECK_MPI(MPI_Put(b->cnt_new, 2, MPI_INT, t, d, 2, MPI_INT, win));
}

/* Puts and gets from this process to t: the ring, self, zero-count
 * operations, the flushed put and, in lock epochs, the large-count forms
 * and the exclusive counter. */
static void issue_ring(ctx_t *c, obuf_t *ob, int t)
{
    int me = c->w->rank, n = c->w->size, right = (me + 1) % n, left = (me + n - 1) % n;
    obuf_t *b = &ob[t];
    if (t == me) c_put(c, b->self, 4, MPI_INT, t, O_SELF);
    if (t == right) {
        c_put(c, b->ring, 8, MPI_INT, t, O_RING);
        /* zero-count operations change nothing, not even the origin buffer */
        c_put(c, b->ring, 0, MPI_INT, t, O_ZERO);
        c_get(c, b->zero_get, 0, MPI_INT, t, O_ZERO);
        c_acc(c, b->acc[0], 0, MPI_INT, t, O_ZERO, MPI_SUM);
        if (passive(c->mode)) flush_roundtrip(c, b, t);
        else c_put(c, b->flush, 4, MPI_INT, t, O_FLUSH);
    }
    if (t == left) c_get(c, b->get_left, 16, MPI_INT, t, O_INIT);
    if (locks(c->mode)) {
        MPI_Win win = c->w->win;
        if (t == right) put_c(b->cput, 4, MPI_INT, t, tdisp(c->w, t, O_CPUT), win);
        if (t == left) get_c(b->cget_left, 4, MPI_INT, t, tdisp(c->w, t, O_INIT + 16), win);
        acc_c(b->cacc, 2, MPI_LONG_LONG, t, tdisp(c->w, t, O_CACC), MPI_SUM, win);
    }
    if (c->mode == M_LOCK_EX) counter_update(c, b, t);
}

/* Accumulates from this process into t. */
static void issue_acc(ctx_t *c, obuf_t *ob, int t)
{
    obuf_t *b = &ob[t];
    for (int a = 0; a < NACC; a++) {
        int op = acc_regions[a].op, kind = acc_regions[a].kind, me = c->w->rank;
        MPI_Datatype dt = kind == K_INT ? MPI_INT : kind == K_LL ? MPI_LONG_LONG : MPI_DOUBLE;
        if (op != OP_REPLACE) c_acc(c, b->acc[a], 4, dt, t, acc_regions[a].off, mpi_op(op));
        else if (me < NSLOT) c_acc(c, b->acc[a], 1, dt, t, acc_regions[a].off + kind_size(kind) * me, MPI_REPLACE);
    }
    if (c->req) {
        MPI_Aint d = tdisp(c->w, t, O_RGA);
        CHECK_MPI(MPI_Rget_accumulate(&b->rga, 1, MPI_LONG_LONG, &b->rga_got, 1, MPI_LONG_LONG, t, d, 1, MPI_LONG_LONG,
                                      MPI_SUM, c->w->win, new_req(c)));
    }
}

/* MPI_PROC_NULL targets: no-ops that leave the origin buffer alone. */
static void issue_proc_null(ctx_t *c, obuf_t *b, int *pnull)
{
    c_put(c, b->ring, 8, MPI_INT, MPI_PROC_NULL, O_RING);
    c_get(c, pnull, 4, MPI_INT, MPI_PROC_NULL, O_INIT);
    c_acc(c, b->acc[0], 4, MPI_INT, MPI_PROC_NULL, acc_regions[0].off, MPI_SUM);
}

static void check_get_left(const obuf_t *b, int left, const char *what)
{
    for (int i = 0; i < 16; i++)
        CHECK(b->get_left[i] == init_val(left, i), "%s: MPI_Get from the left (%d): [%d] = %d, expected %d", what, left,
              i, b->get_left[i], init_val(left, i));
}

/* What the origin buffers hold once the operations have completed. */
static void check_origin(const ctx_t *c, const obuf_t *ob, const int *pnull, const char *what)
{
    int me = c->w->rank, n = c->w->size, right = (me + 1) % n, left = (me + n - 1) % n;
    check_get_left(&ob[left], left, what);
    for (int i = 0; i < 4; i++) {
        CHECK(ob[right].zero_get[i] == -77, "%s: a zero-count MPI_Get wrote %d", what, ob[right].zero_get[i]);
        if (pnull) CHECK(pnull[i] == -55, "%s: an MPI_Get from MPI_PROC_NULL wrote %d", what, pnull[i]);
        if (locks(c->mode))
            CHECK(ob[left].cget_left[i] == init_val(left, 4 + i), "%s: MPI_Get_c from %d: [%d] = %d, expected %d", what,
                  left, i, ob[left].cget_left[i], init_val(left, 4 + i));
    }
    if (c->req && n <= MAXBITS)
        for (int t = 0; t < n; t++) {
            /* the fetched value is the initial one plus some other processes' weights */
            long long m = ob[t].rga_got - 1000LL * t;
            CHECK(m >= 0 && m < (1LL << n) && !(m & weight(me)),
                  "%s: MPI_Rget_accumulate at %d fetched %lld, not the initial value plus others' contributions", what,
                  t, ob[t].rga_got);
        }
}

/* ---- the scenario of fence, lock, lockall, pscw and request ----------- */

static void scenario(int flavor, int mode, int req)
{
    rwin w = *get_win(flavor);
    int me = w.rank, n = w.size, right = (me + 1) % n, left = (me + n - 1) % n;
    char what[160];
    snprintf(what, sizeof what, "%s, %s%s", flavor_name[flavor], mode_name[mode], req ? ", request-based" : "");
    unsigned char *ref = malloc(WIN_BYTES), *img = malloc(WIN_BYTES);
    obuf_t *ob = calloc((size_t)n, sizeof *ob);
    ctx_t c = {&w, mode, req, malloc(sizeof(MPI_Request) * (size_t)(24 * n + 16)), 0, 24 * n + 16};
    CHECK(ref && img && ob && c.reqs, "malloc");
    for (int t = 0; t < n; t++) obuf_fill(&ob[t], me, t);
    int pnull[4] = {-55, -55, -55, -55};

    ref_init(ref, me);
    if (passive(mode)) {
        own_begin(w.win, me);
        memcpy(w.base, ref, WIN_BYTES);
        own_end(w.win, me);
        CHECK_MPI(MPI_Barrier(w.comm));
    } else {
        memcpy(w.base, ref, WIN_BYTES); /* the first fence or post publishes it */
    }

    if (mode == M_FENCE) {
        CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, w.win));
        for (int k = 0; k < n; k++) {
            issue_ring(&c, ob, (me + k) % n);
            issue_acc(&c, ob, (me + k) % n);
        }
        issue_proc_null(&c, &ob[0], pnull);
        CHECK_MPI(MPI_Win_fence(0, w.win));
        check_origin(&c, ob, pnull, what);
        CHECK_MPI(MPI_Get(img, WIN_BYTES, MPI_BYTE, left, tdisp(&w, left, 0), WIN_BYTES, MPI_BYTE, w.win));
        CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
        ref_init(ref, left);
        ref_scenario(ref, left, n, mode, req);
        check_image(img, ref, left, what);
        memcpy(img, w.base, WIN_BYTES);
    } else if (locks(mode)) {
        int type = mode == M_LOCK_EX ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
        for (int k = 0; k < n; k++) {
            int t = (me + k) % n;
            CHECK_MPI(MPI_Win_lock(type, t, 0, w.win));
            issue_ring(&c, ob, t);
            issue_acc(&c, ob, t);
            if (req) {
                c_complete(&c);
                /* a get's data is there when its request completes, before the unlock */
                if (t == left) check_get_left(&ob[left], left, what);
            }
            CHECK_MPI(MPI_Win_unlock(t, w.win));
        }
        check_origin(&c, ob, NULL, what);
        CHECK_MPI(MPI_Barrier(w.comm));
        CHECK_MPI(MPI_Win_lock(type, left, 0, w.win));
        CHECK_MPI(MPI_Get(img, WIN_BYTES, MPI_BYTE, left, tdisp(&w, left, 0), WIN_BYTES, MPI_BYTE, w.win));
        CHECK_MPI(MPI_Win_unlock(left, w.win));
        ref_init(ref, left);
        ref_scenario(ref, left, n, mode, req);
        check_image(img, ref, left, what);
        own_begin(w.win, me);
        memcpy(img, w.base, WIN_BYTES);
        own_end(w.win, me);
    } else if (mode == M_LOCKALL) {
        CHECK_MPI(MPI_Win_lock_all(0, w.win));
        for (int k = 0; k < n; k++) {
            int t = (me + k) % n;
            issue_ring(&c, ob, t);
            issue_acc(&c, ob, t);
            if (k % 2) CHECK_MPI(MPI_Win_flush(t, w.win));
            else CHECK_MPI(MPI_Win_flush_local(t, w.win));
        }
        issue_proc_null(&c, &ob[0], pnull);
        CHECK_MPI(MPI_Win_flush_local_all(w.win));
        if (req) c_complete(&c);
        check_origin(&c, ob, pnull, what);
        CHECK_MPI(MPI_Win_flush_all(w.win));
        /* everyone's operations are complete at their targets */
        CHECK_MPI(MPI_Barrier(w.comm));
        CHECK_MPI(MPI_Win_sync(w.win));
        memcpy(img, w.base, WIN_BYTES);
        unsigned char *limg = malloc(WIN_BYTES);
        CHECK(limg != NULL, "malloc");
        long long rga_read = -1;
        CHECK_MPI(MPI_Get(limg, WIN_BYTES, MPI_BYTE, left, tdisp(&w, left, 0), WIN_BYTES, MPI_BYTE, w.win));
        if (req) {
            MPI_Request r;
            CHECK_MPI(MPI_Rget_accumulate(NULL, 0, MPI_LONG_LONG, &rga_read, 1, MPI_LONG_LONG, left,
                                          tdisp(&w, left, O_RGA), 1, MPI_LONG_LONG, MPI_NO_OP, w.win, &r));
            CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        }
        CHECK_MPI(MPI_Win_flush(left, w.win));
        ref_init(ref, left);
        ref_scenario(ref, left, n, mode, req);
        check_image(limg, ref, left, what);
        if (req) CHECK_EQ(rga_read, rd_ll(ref, O_RGA, 0));
        free(limg);
        CHECK_MPI(MPI_Win_unlock_all(w.win));
    } else { /* M_PSCW */
        MPI_Group wg, gnb, gl, gr;
        CHECK_MPI(MPI_Win_get_group(w.win, &wg));
        int nb[3], nnb = 0;
        int cand[3] = {me, right, left};
        for (int i = 0; i < 3; i++) {
            int dup = 0;
            for (int j = 0; j < nnb; j++) dup |= nb[j] == cand[i];
            if (!dup) nb[nnb++] = cand[i];
        }
        CHECK_MPI(MPI_Group_incl(wg, nnb, nb, &gnb));
        CHECK_MPI(MPI_Group_incl(wg, 1, &left, &gl));
        CHECK_MPI(MPI_Group_incl(wg, 1, &right, &gr));
        /* neighbours: I access me, right and left; me, left and right access me */
        CHECK_MPI(MPI_Win_post(gnb, 0, w.win));
        CHECK_MPI(MPI_Win_start(gnb, 0, w.win));
        for (int i = 0; i < nnb; i++) issue_ring(&c, ob, nb[i]);
        issue_proc_null(&c, &ob[0], pnull);
        CHECK_MPI(MPI_Win_complete(w.win));
        CHECK_MPI(MPI_Win_wait(w.win));
        check_origin(&c, ob, pnull, what);
        /* everyone accumulates everywhere; the exposure ends by MPI_Win_test */
        CHECK_MPI(MPI_Win_post(wg, MPI_MODE_NOSTORE, w.win));
        CHECK_MPI(MPI_Win_start(wg, 0, w.win));
        for (int k = 0; k < n; k++) issue_acc(&c, ob, (me + k) % n);
        CHECK_MPI(MPI_Win_complete(w.win));
        int flag = 0;
        double t0 = MPI_Wtime();
        while (!flag) {
            CHECK_MPI(MPI_Win_test(w.win, &flag));
            CHECK(flag || MPI_Wtime() - t0 < MT_POLL_LIMIT_S, "%s: MPI_Win_test still false after %.0f s", what,
                  MT_POLL_LIMIT_S);
        }
        /* I read my left neighbour; my right neighbour reads me */
        CHECK_MPI(MPI_Win_post(gr, MPI_MODE_NOPUT, w.win));
        CHECK_MPI(MPI_Win_start(gl, 0, w.win));
        CHECK_MPI(MPI_Get(img, WIN_BYTES, MPI_BYTE, left, tdisp(&w, left, 0), WIN_BYTES, MPI_BYTE, w.win));
        CHECK_MPI(MPI_Win_complete(w.win));
        CHECK_MPI(MPI_Win_wait(w.win));
        ref_init(ref, left);
        ref_scenario(ref, left, n, mode, req);
        check_image(img, ref, left, what);
        memcpy(img, w.base, WIN_BYTES);
        CHECK_MPI(MPI_Group_free(&gnb));
        CHECK_MPI(MPI_Group_free(&gl));
        CHECK_MPI(MPI_Group_free(&gr));
        CHECK_MPI(MPI_Group_free(&wg));
    }
    /* img holds this process's own window now */
    ref_init(ref, me);
    ref_scenario(ref, me, n, mode, req);
    check_image(img, ref, me, what);

    free(c.reqs);
    free(ob);
    free(img);
    free(ref);
}

/* ---- atomics ------------------------------------------------------------ */

static void atomics(int flavor)
{
    rwin w = *get_win(flavor);
    MPI_Win win = w.win;
    int me = w.rank, n = w.size, right = (me + 1) % n;
    char what[160];
    snprintf(what, sizeof what, "%s, atomics", flavor_name[flavor]);
    unsigned char *ref = malloc(WIN_BYTES), *img = malloc(WIN_BYTES);
    long long *ordgot = malloc(sizeof(long long) * (size_t)n), *fops = malloc(sizeof(long long) * (size_t)(n * NFOP));
    long long *swapgot = malloc(sizeof(long long) * (size_t)n), *fswapgot = malloc(sizeof(long long) * (size_t)n);
    long long *rd = malloc(sizeof(long long) * (size_t)n);
    double *gsumgot = malloc(sizeof(double) * (size_t)(4 * n)), *gread = malloc(sizeof(double) * (size_t)(4 * n));
    int *casres = malloc(sizeof(int) * (size_t)n), *cas2 = malloc(sizeof(int) * (size_t)n);
    CHECK(ref && img && ordgot && fops && swapgot && fswapgot && rd && gsumgot && gread && casres && cas2, "malloc");
    ref_init(ref, me);
    memcpy(w.base, ref, WIN_BYTES);

    /* 1. under fence: per-origin ordering (replace, then add 3, then
     * fetch-and-add 1 must fetch the replaced value plus 3 without a flush
     * between them), contended replace, zero-count, MPI_PROC_NULL */
    const long long rep10 = (me + 1) * 10LL, three = 3, one = 1, crep = crep_val(me);
    long long zres[2] = {-9, -9}, pn[2] = {-9, -9};
    int pncas = -9;
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    for (int k = 0; k < n; k++) {
        int t = (me + k) % n;
        ordgot[t] = -1;
        if (me < NSLOT) {
            MPI_Aint d = tdisp(&w, t, A_ORD + 8 * me);
            CHECK_MPI(MPI_Accumulate(&rep10, 1, MPI_LONG_LONG, t, d, 1, MPI_LONG_LONG, MPI_REPLACE, win));
            CHECK_MPI(MPI_Accumulate(&three, 1, MPI_LONG_LONG, t, d, 1, MPI_LONG_LONG, MPI_SUM, win));
            CHECK_MPI(MPI_Get_accumulate(&one, 1, MPI_LONG_LONG, &ordgot[t], 1, MPI_LONG_LONG, t, d, 1, MPI_LONG_LONG,
                                         MPI_SUM, win));
        }
        CHECK_MPI(MPI_Accumulate(&crep, 1, MPI_LONG_LONG, t, tdisp(&w, t, A_CREP), 1, MPI_LONG_LONG, MPI_REPLACE, win));
    }
    CHECK_MPI(MPI_Get_accumulate(&one, 0, MPI_LONG_LONG, zres, 0, MPI_LONG_LONG, right, tdisp(&w, right, A_ZERO), 0,
                                 MPI_LONG_LONG, MPI_SUM, win));
    CHECK_MPI(MPI_Get_accumulate(&one, 1, MPI_LONG_LONG, &pn[0], 1, MPI_LONG_LONG, MPI_PROC_NULL, 0, 1, MPI_LONG_LONG,
                                 MPI_SUM, win));
    CHECK_MPI(MPI_Fetch_and_op(&one, &pn[1], MPI_LONG_LONG, MPI_PROC_NULL, 0, MPI_SUM, win));
    int cas_one = 1, cas_zero = 0;
    CHECK_MPI(MPI_Compare_and_swap(&cas_one, &cas_zero, &pncas, MPI_INT, MPI_PROC_NULL, 0, win));
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int t = 0; t < n && me < NSLOT; t++)
        CHECK(ordgot[t] == rep10 + 3, "%s: replace, sum, fetch-and-add at %d fetched %lld, expected %lld", what, t,
              ordgot[t], rep10 + 3);
    CHECK(zres[0] == -9 && zres[1] == -9, "%s: a zero-count MPI_Get_accumulate wrote its result buffer", what);
    CHECK(pn[0] == -9 && pn[1] == -9 && pncas == -9, "%s: an atomic on MPI_PROC_NULL wrote its result buffer", what);

    /* 2. under lock_all: fetch-and-add, swaps, get_accumulate sums, then
     * atomic reads with MPI_NO_OP once everyone is done */
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int r = 0; r < NFOP; r++) {
        for (int k = 0; k < n; k++) {
            int t = (me + k) % n;
            CHECK_MPI(MPI_Fetch_and_op(&one, &fops[t * NFOP + r], MPI_LONG_LONG, t, tdisp(&w, t, A_FOP), MPI_SUM, win));
        }
        if (r % 2) CHECK_MPI(MPI_Win_flush_all(win));
        else CHECK_MPI(MPI_Win_flush_local_all(win)); /* a fetch completes locally when its result is there */
        for (int t = 0; t < n && r > 0; t++)
            CHECK(fops[t * NFOP + r] > fops[t * NFOP + r - 1],
                  "%s: fetch-and-add at %d fetched %lld after %lld from the same origin", what, t, fops[t * NFOP + r],
                  fops[t * NFOP + r - 1]);
    }
    const long long swapv = me + 1, fswapv = (me + 1) * 10LL;
    double gv[4];
    for (int i = 0; i < 4; i++) gv[i] = (double)((i + 1) * weight(me));
    for (int k = 0; k < n; k++) {
        int t = (me + k) % n;
        CHECK_MPI(MPI_Get_accumulate(&swapv, 1, MPI_LONG_LONG, &swapgot[t], 1, MPI_LONG_LONG, t, tdisp(&w, t, A_SWAP),
                                     1, MPI_LONG_LONG, MPI_REPLACE, win));
        CHECK_MPI(MPI_Fetch_and_op(&fswapv, &fswapgot[t], MPI_LONG_LONG, t, tdisp(&w, t, A_FSWAP), MPI_REPLACE, win));
        CHECK_MPI(MPI_Get_accumulate(gv, 4, MPI_DOUBLE, &gsumgot[4 * t], 4, MPI_DOUBLE, t, tdisp(&w, t, A_GSUM), 4,
                                     MPI_DOUBLE, MPI_SUM, win));
    }
    CHECK_MPI(MPI_Win_flush_all(win));
    CHECK_MPI(MPI_Barrier(w.comm));
    for (int k = 0; k < n; k++) {
        int t = (me + k) % n;
        rd[t] = -1;
        CHECK_MPI(MPI_Fetch_and_op(NULL, &rd[t], MPI_LONG_LONG, t, tdisp(&w, t, A_FOP), MPI_NO_OP, win));
        CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_DOUBLE, &gread[4 * t], 4, MPI_DOUBLE, t, tdisp(&w, t, A_GSUM), 4,
                                     MPI_DOUBLE, MPI_NO_OP, win));
    }
    CHECK_MPI(MPI_Win_flush_all(win));
    CHECK_MPI(MPI_Win_unlock_all(win));
    double wsum = 0;
    for (int o = 0; o < n; o++) wsum += (double)weight(o);
    for (int t = 0; t < n; t++) {
        CHECK(rd[t] == (long long)n * NFOP, "%s: MPI_NO_OP read of the counter at %d: %lld, expected %d", what, t,
              rd[t], n * NFOP);
        for (int i = 0; i < 4; i++)
            CHECK(gread[4 * t + i] == 0.5 * i + (i + 1) * wsum, "%s: MPI_NO_OP read at %d: [%d] = %g, expected %g",
                  what, t, i, gread[4 * t + i], 0.5 * i + (i + 1) * wsum);
    }

    /* 3. compare-and-swap under shared locks: exactly one process wins */
    for (int k = 0; k < n; k++) {
        int t = (me + k) % n, sw = me + 1, cmp = 0;
        casres[t] = -1;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        CHECK_MPI(MPI_Compare_and_swap(&sw, &cmp, &casres[t], MPI_INT, t, tdisp(&w, t, A_CAS), win));
        CHECK_MPI(MPI_Win_unlock(t, win));
    }
    CHECK_MPI(MPI_Barrier(w.comm));
    /* a compare that does not match leaves the word alone */
    const int sw2 = 999, cmp2 = -12345;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int k = 0; k < n; k++) {
        int t = (me + k) % n;
        cas2[t] = -1;
        CHECK_MPI(MPI_Compare_and_swap(&sw2, &cmp2, &cas2[t], MPI_INT, t, tdisp(&w, t, A_CAS), win));
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(w.comm));

    /* what every origin fetched from every target, checked by the target */
    long long *all_fops = malloc(sizeof(long long) * (size_t)(n * n * NFOP));
    long long *all_swap = malloc(sizeof(long long) * (size_t)(n * n)),
              *all_fswap = malloc(sizeof(long long) * (size_t)(n * n));
    double *all_gsum = malloc(sizeof(double) * (size_t)(4 * n * n));
    int *all_cas = malloc(sizeof(int) * (size_t)(n * n)), *all_cas2 = malloc(sizeof(int) * (size_t)(n * n));
    int *seen = calloc((size_t)(n * NFOP + 1), sizeof(int));
    CHECK(all_fops && all_swap && all_fswap && all_gsum && all_cas && all_cas2 && seen, "malloc");
    CHECK_MPI(MPI_Allgather(fops, n * NFOP, MPI_LONG_LONG, all_fops, n * NFOP, MPI_LONG_LONG, w.comm));
    CHECK_MPI(MPI_Allgather(swapgot, n, MPI_LONG_LONG, all_swap, n, MPI_LONG_LONG, w.comm));
    CHECK_MPI(MPI_Allgather(fswapgot, n, MPI_LONG_LONG, all_fswap, n, MPI_LONG_LONG, w.comm));
    CHECK_MPI(MPI_Allgather(gsumgot, 4 * n, MPI_DOUBLE, all_gsum, 4 * n, MPI_DOUBLE, w.comm));
    CHECK_MPI(MPI_Allgather(casres, n, MPI_INT, all_cas, n, MPI_INT, w.comm));
    CHECK_MPI(MPI_Allgather(cas2, n, MPI_INT, all_cas2, n, MPI_INT, w.comm));
    own_begin(win, me);
    memcpy(img, w.base, WIN_BYTES);
    own_end(win, me);

    /* fetch-and-add: the n*NFOP fetched values are 0 .. n*NFOP-1, each once */
    for (int o = 0; o < n; o++)
        for (int r = 0; r < NFOP; r++) {
            long long v = all_fops[(o * n + me) * NFOP + r];
            CHECK(v >= 0 && v < n * NFOP && !seen[v]++, "%s: fetch-and-add by %d fetched %lld twice or out of range",
                  what, o, v);
        }
    wr_ll(ref, A_FOP, 0, (long long)n * NFOP);
    /* compare-and-swap: one 0 fetched, the others fetched the winner's value */
    int winner = -1;
    for (int o = 0; o < n; o++)
        if (all_cas[o * n + me] == 0) {
            CHECK(winner < 0, "%s: compare-and-swap won by both %d and %d", what, winner, o);
            winner = o;
        }
    CHECK(winner >= 0, "%s: no compare-and-swap on %d succeeded", what, me);
    for (int o = 0; o < n; o++) {
        if (o != winner) CHECK_EQ(all_cas[o * n + me], winner + 1);
        CHECK_EQ(all_cas2[o * n + me], winner + 1);
    }
    wr_i(ref, A_CAS, 0, winner + 1);
    /* swaps: the fetched values and the final one are the initial value and
     * every origin's value, each once */
    long long fin = rd_ll(img, A_SWAP, 0), ffin = rd_ll(img, A_FSWAP, 0);
    memset(seen, 0, sizeof(int) * (size_t)(n * NFOP + 1));
    for (int o = 0; o <= n; o++) {
        long long v = o < n ? all_swap[o * n + me] : fin;
        CHECK(v == -1 || (v >= 1 && v <= n), "%s: swap value %lld", what, v);
        CHECK(!seen[v + 1]++, "%s: swap value %lld seen twice", what, v);
    }
    memset(seen, 0, sizeof(int) * (size_t)(n * NFOP + 1));
    for (int o = 0; o <= n; o++) {
        long long v = o < n ? all_fswap[o * n + me] : ffin;
        CHECK(v == -2 || (v >= 10 && v <= 10LL * n && v % 10 == 0), "%s: fetch_and_op swap value %lld", what, v);
        CHECK(!seen[v < 0 ? 0 : v / 10]++, "%s: fetch_and_op swap value %lld seen twice", what, v);
    }
    wr_ll(ref, A_SWAP, 0, fin);
    wr_ll(ref, A_FSWAP, 0, ffin);
    /* get_accumulate sums: each fetched element is the initial value plus a
     * subset of the other origins' contributions */
    for (int o = 0; o < n && n <= MAXBITS; o++)
        for (int i = 0; i < 4; i++) {
            double f = all_gsum[(o * n + me) * 4 + i], m = (f - 0.5 * i) / (i + 1);
            long long mi = (long long)m;
            CHECK((double)mi == m && mi >= 0 && mi < (1LL << n) && !(mi & weight(o)),
                  "%s: get_accumulate sum by %d fetched %g at [%d]", what, o, f, i);
        }
    for (int i = 0; i < 4; i++) wr_d(ref, A_GSUM, i, 0.5 * i + (i + 1) * wsum);
    for (int o = 0; o < n && o < NSLOT; o++) wr_ll(ref, A_ORD, o, (o + 1) * 10LL + 4);
    /* contended replace: one of the values, not a mix of their bytes */
    long long cr = rd_ll(img, A_CREP, 0);
    int found = 0;
    for (int o = 0; o < n; o++) found |= cr == crep_val(o);
    CHECK(found, "%s: contended MPI_REPLACE left 0x%llx, none of the values written", what, (unsigned long long)cr);
    wr_ll(ref, A_CREP, 0, cr);
    check_image(img, ref, me, what);

    free(all_fops), free(all_swap), free(all_fswap), free(all_gsum), free(all_cas), free(all_cas2), free(seen);
    free(ref), free(img), free(ordgot), free(fops), free(swapgot), free(fswapgot), free(rd), free(gsumgot);
    free(gread), free(casres), free(cas2);
}

/* ---- derived datatypes ------------------------------------------------ */

struct sdata {
    int a;
    double d;
    int b[2];
};
static const int vec_pos[8] = {0, 1, 5, 6, 10, 11, 15, 16};     /* vector(4, 2, 5) */
static const int idx_pos[8] = {1, 2, 3, 6, 9, 10, 11, 12};      /* indexed {3,1,4} at {1,6,9} */
static const int sub_pos[8] = {22, 23, 24, 25, 29, 30, 31, 32}; /* 2x4 at (3,1) of 6x7 */
static const int vec2_pos[8] = {0, 1, 2, 3, 6, 7, 8, 9};        /* vector(2, 4, 6) */
static const int res_pos[6] = {0, 1, 5, 6, 10, 11};             /* 3 x (2 int, extent 5 int) */
static const int blk_pos[3] = {0, 3, 5};                        /* indexed_block(1) at {0,3,5} */
static int src1_val(int o, int j) { return 20000 + 100 * o + j; }
static int src2_val(int o, int j) { return 30000 + 100 * o + j; }
static int src3_val(int o, int j) { return 40000 + 100 * o + j; }

static void ref_derived(unsigned char *img, int t, int n)
{
    int o = (t + n - 1) % n; /* the left neighbour puts into t */
    for (int k = 0; k < 8; k++) {
        wr_i(img, D_IDX, idx_pos[k], src1_val(o, vec_pos[k]));
        wr_i(img, D_SUB, sub_pos[k], src2_val(o, vec2_pos[k]));
    }
    for (int k = 0; k < 6; k++) wr_i(img, D_RES, res_pos[k], src3_val(t, k));
    for (int m = 0; m < 3; m++) {
        double v = dacc_init(t, blk_pos[m]);
        for (int q = 0; q < n; q++) v += dacc_val(q, t, 2 * m);
        wr_d(img, D_ACC, blk_pos[m], v);
    }
    wr_i(img, D_STR + 4, 0, 50000 + o);
    wr_d(img, D_STR + 16, 0, o + 0.125);
    wr_i(img, D_STR + 28, 0, 60000 + o);
    wr_i(img, D_STR + 28, 1, 70000 + o);
}

static void derived(int flavor, int mode)
{
    rwin w = *get_win(flavor);
    MPI_Win win = w.win;
    int me = w.rank, n = w.size, right = (me + 1) % n, left = (me + n - 1) % n;
    char what[160];
    snprintf(what, sizeof what, "%s, derived datatypes, %s", flavor_name[flavor], mode_name[mode]);

    MPI_Datatype t_vec, t_idx, t_vec2, t_sub, t_pair, t_res, t_dvec, t_dblk, t_sorig, t_starg;
    CHECK_MPI(MPI_Type_vector(4, 2, 5, MPI_INT, &t_vec));
    int bl[3] = {3, 1, 4}, dp[3] = {1, 6, 9};
    CHECK_MPI(MPI_Type_indexed(3, bl, dp, MPI_INT, &t_idx));
    CHECK_MPI(MPI_Type_vector(2, 4, 6, MPI_INT, &t_vec2));
    int sizes[2] = {6, 7}, subs[2] = {2, 4}, starts[2] = {3, 1};
    CHECK_MPI(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t_sub));
    CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &t_pair));
    CHECK_MPI(MPI_Type_create_resized(t_pair, 0, 5 * sizeof(int), &t_res));
    CHECK_MPI(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &t_dvec));
    CHECK_MPI(MPI_Type_create_indexed_block(3, 1, blk_pos, MPI_DOUBLE, &t_dblk));
    int sbl[3] = {1, 1, 2};
    MPI_Aint sod[3] = {offsetof(struct sdata, a), offsetof(struct sdata, d), offsetof(struct sdata, b)};
    MPI_Aint std_[3] = {4, 16, 28};
    MPI_Datatype stypes[3] = {MPI_INT, MPI_DOUBLE, MPI_INT};
    CHECK_MPI(MPI_Type_create_struct(3, sbl, sod, stypes, &t_sorig));
    CHECK_MPI(MPI_Type_create_struct(3, sbl, std_, stypes, &t_starg));
    MPI_Datatype *all[] = {&t_vec, &t_idx, &t_vec2, &t_sub, &t_res, &t_dvec, &t_dblk, &t_sorig, &t_starg};
    const int nall = (int)(sizeof all / sizeof all[0]);
    for (int i = 0; i < nall; i++) CHECK_MPI(MPI_Type_commit(all[i]));
    /* origin and target types of one operation have one type signature */
    MPI_Datatype pairs[4][2] = {{t_vec, t_idx}, {t_vec2, t_sub}, {t_dvec, t_dblk}, {t_sorig, t_starg}};
    for (int i = 0; i < 4; i++) {
        int s1, s2;
        CHECK_MPI(MPI_Type_size(pairs[i][0], &s1));
        CHECK_MPI(MPI_Type_size(pairs[i][1], &s2));
        CHECK(s1 == s2, "origin and target type sizes %d and %d", s1, s2);
    }

    int src1[20], src2[12], src3[6], dst[14];
    for (int j = 0; j < 20; j++) src1[j] = src1_val(me, j);
    for (int j = 0; j < 12; j++) src2[j] = src2_val(me, j);
    for (int j = 0; j < 6; j++) src3[j] = src3_val(me, j);
    for (int j = 0; j < 14; j++) dst[j] = -1;
    double *srcd = malloc(sizeof(double) * (size_t)(5 * n));
    unsigned char *ref = malloc(WIN_BYTES), *img = malloc(WIN_BYTES);
    CHECK(srcd && ref && img, "malloc");
    for (int t = 0; t < n; t++)
        for (int j = 0; j < 5; j++) srcd[5 * t + j] = dacc_val(me, t, j);
    struct sdata s = {50000 + me, me + 0.125, {60000 + me, 70000 + me}};

    ref_init(ref, me);
    if (mode == M_FENCE) {
        memcpy(w.base, ref, WIN_BYTES);
        CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    } else {
        own_begin(win, me);
        memcpy(w.base, ref, WIN_BYTES);
        own_end(win, me);
        CHECK_MPI(MPI_Barrier(w.comm));
        CHECK_MPI(MPI_Win_lock_all(0, win));
    }
    CHECK_MPI(MPI_Put(src1, 1, t_vec, right, tdisp(&w, right, D_IDX), 1, t_idx, win));
    CHECK_MPI(MPI_Put(src2, 1, t_vec2, right, tdisp(&w, right, D_SUB), 1, t_sub, win));
    CHECK_MPI(MPI_Put(src3, 6, MPI_INT, me, tdisp(&w, me, D_RES), 3, t_res, win));
    CHECK_MPI(MPI_Put(&s, 1, t_sorig, right, tdisp(&w, right, D_STR), 1, t_starg, win));
    CHECK_MPI(MPI_Put(src1, 0, t_vec, right, tdisp(&w, right, O_ZERO), 0, t_idx, win));
    for (int k = 0; k < n; k++) {
        int t = (me + k) % n;
        CHECK_MPI(MPI_Accumulate(&srcd[5 * t], 1, t_dvec, t, tdisp(&w, t, D_ACC), 1, t_dblk, MPI_SUM, win));
    }
    CHECK_MPI(MPI_Get(dst, 1, t_idx, left, tdisp(&w, left, D_INIT), 1, t_vec, win));
    if (mode == M_FENCE) {
        CHECK_MPI(MPI_Win_fence(0, win));
    } else {
        CHECK_MPI(MPI_Win_flush_all(win));
        CHECK_MPI(MPI_Barrier(w.comm));
        CHECK_MPI(MPI_Win_sync(win));
    }
    for (int j = 0, k = 0; j < 14; j++) {
        int expect = k < 8 && idx_pos[k] == j ? dinit_val(left, vec_pos[k++]) : -1;
        CHECK(dst[j] == expect, "%s: indexed MPI_Get from a vector at %d: [%d] = %d, expected %d", what, left, j,
              dst[j], expect);
    }
    memcpy(img, w.base, WIN_BYTES);
    ref_derived(ref, me, n);
    check_image(img, ref, me, what);
    CHECK_MPI(MPI_Get(img, WIN_BYTES, MPI_BYTE, left, tdisp(&w, left, 0), WIN_BYTES, MPI_BYTE, win));
    if (mode == M_FENCE) {
        CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    } else {
        CHECK_MPI(MPI_Win_flush(left, win));
        CHECK_MPI(MPI_Win_unlock_all(win));
    }
    ref_init(ref, left);
    ref_derived(ref, left, n);
    check_image(img, ref, left, what);

    for (int i = 0; i < nall; i++) CHECK_MPI(MPI_Type_free(all[i]));
    CHECK_MPI(MPI_Type_free(&t_pair));
    free(srcd), free(ref), free(img);
}

/* ---- a dynamic window with several regions ------------------------------ */

static void dynamic_regions(void)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    int me = mt_rank(comm), n = mt_size(comm), right = (me + 1) % n, left = (me + n - 1) % n;
    const char *what = "MPI_Win_create_dynamic, several regions";
    MPI_Win win;
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win));
    int *A = malloc(24 * sizeof(int)), *B = malloc(10 * sizeof(int));
    long long *C = malloc(8 * sizeof(long long));
    MPI_Aint mine[2], *addr = malloc(sizeof(MPI_Aint) * (size_t)(2 * n));
    CHECK(A && B && C && addr, "malloc");
    for (int i = 0; i < 24; i++) A[i] = i < 2 ? 300 * me + i : -1 - i;
    for (int i = 0; i < 10; i++) B[i] = -100 - i;
    CHECK_MPI(MPI_Win_attach(win, B, 10 * sizeof(int)));
    CHECK_MPI(MPI_Win_attach(win, A, 24 * sizeof(int)));
    CHECK_MPI(MPI_Get_address(A, &mine[0]));
    CHECK_MPI(MPI_Get_address(B, &mine[1]));
    CHECK_MPI(MPI_Allgather(mine, 2, MPI_AINT, addr, 2, MPI_AINT, comm));

    /* put into two regions of the right neighbour, get from the left's first */
    int pa[4], pb[10], ga[2] = {-1, -1};
    for (int i = 0; i < 4; i++) pa[i] = 400 * me + i;
    for (int i = 0; i < 10; i++) pb[i] = 500 * me + i;
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    CHECK_MPI(MPI_Put(pa, 4, MPI_INT, right, MPI_Aint_add(addr[2 * right], 2 * sizeof(int)), 4, MPI_INT, win));
    CHECK_MPI(MPI_Put(pb, 10, MPI_INT, right, addr[2 * right + 1], 10, MPI_INT, win));
    CHECK_MPI(MPI_Get(ga, 2, MPI_INT, left, addr[2 * left], 2, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int i = 0; i < 24; i++) {
        int expect = i < 2 ? 300 * me + i : i < 6 ? 400 * left + i - 2 : -1 - i;
        CHECK(A[i] == expect, "%s: first region [%d] = %d, expected %d", what, i, A[i], expect);
    }
    for (int i = 0; i < 10; i++) CHECK(B[i] == 500 * left + i, "%s: second region [%d] = %d", what, i, B[i]);
    for (int i = 0; i < 2; i++) CHECK(ga[i] == 300 * left + i, "%s: get [%d] = %d", what, i, ga[i]);

    /* the second region goes, a third comes; only its address is exchanged */
    CHECK_MPI(MPI_Win_detach(win, B));
    free(B);
    for (int i = 0; i < 8; i++) C[i] = 1000LL * me;
    CHECK_MPI(MPI_Win_attach(win, C, 8 * sizeof(long long)));
    own_begin(win, me);
    own_end(win, me);
    CHECK_MPI(MPI_Get_address(C, &mine[1]));
    CHECK_MPI(MPI_Allgather(&mine[1], 1, MPI_AINT, addr, 1, MPI_AINT, comm));
    long long pc[4], ac[4];
    for (int i = 0; i < 4; i++) pc[i] = 600LL * me + i, ac[i] = me + 1 + i;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Put(pc, 4, MPI_LONG_LONG, right, addr[right], 4, MPI_LONG_LONG, win));
    for (int k = 0; k < n; k++) {
        int t = (me + k) % n;
        CHECK_MPI(MPI_Accumulate(ac, 4, MPI_LONG_LONG, t, MPI_Aint_add(addr[t], 4 * sizeof(long long)), 4,
                                 MPI_LONG_LONG, MPI_SUM, win));
    }
    CHECK_MPI(MPI_Win_flush_all(win));
    CHECK_MPI(MPI_Barrier(comm));
    CHECK_MPI(MPI_Win_sync(win));
    for (int i = 0; i < 4; i++) {
        CHECK(C[i] == 600LL * left + i, "%s: third region [%d] = %lld", what, i, C[i]);
        long long expect = 1000LL * me + (long long)n * (n + 1) / 2 + (long long)n * i;
        CHECK(C[4 + i] == expect, "%s: third region [%d] = %lld, expected %lld", what, 4 + i, C[4 + i], expect);
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(comm));
    CHECK_MPI(MPI_Win_detach(win, A));
    CHECK_MPI(MPI_Win_detach(win, C));
    CHECK_MPI(MPI_Win_free(&win));
    free(A), free(C), free(addr);
}

/* ---- sections ----------------------------------------------------------- */

static void sec_fence(void)
{
    for (int f = F_CREATE; f <= F_SHARED; f++) scenario(f, M_FENCE, 0);
}
static void sec_lock(void)
{
    for (int f = F_CREATE; f <= F_SHARED; f++) {
        scenario(f, M_LOCK_SH, 0);
        scenario(f, M_LOCK_EX, 0);
    }
}
static void sec_lockall(void)
{
    for (int f = F_CREATE; f <= F_SHARED; f++) scenario(f, M_LOCKALL, 0);
}
static void sec_pscw(void)
{
    for (int f = F_CREATE; f <= F_SHARED; f++) scenario(f, M_PSCW, 0);
}
static void sec_atomics(void)
{
    for (int f = F_CREATE; f <= F_SHARED; f++) atomics(f);
}
static void sec_derived(void)
{
    for (int f = F_CREATE; f <= F_SHARED; f++) {
        derived(f, M_FENCE);
        derived(f, M_LOCKALL);
    }
}
static void sec_request(void)
{
    scenario(F_CREATE, M_LOCK_SH, 1);
    scenario(F_ALLOCATE, M_LOCK_EX, 1);
    scenario(F_SHARED, M_LOCKALL, 1);
}
static void sec_dynamic(void)
{
    for (int m = M_FENCE; m <= M_PSCW; m++) scenario(F_DYNAMIC, m, 0);
    scenario(F_DYNAMIC, M_LOCKALL, 1);
    atomics(F_DYNAMIC);
    derived(F_DYNAMIC, M_FENCE);
    derived(F_DYNAMIC, M_LOCKALL);
    dynamic_regions();
}

static const struct {
    const char *name;
    void (*run)(void);
} sections[] = {
    {"fence", sec_fence},     {"lock", sec_lock},       {"lockall", sec_lockall}, {"pscw", sec_pscw},
    {"atomics", sec_atomics}, {"derived", sec_derived}, {"request", sec_request}, {"dynamic", sec_dynamic},
};
#define NSECTIONS ((int)(sizeof sections / sizeof sections[0]))

static void run_section(const char *name)
{
    for (int i = 0; i < NSECTIONS; i++)
        if (!strcmp(name, sections[i].name)) {
            sections[i].run();
            CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
            mt_pass(name);
            return;
        }
    CHECK(0, "unknown section '%s' (fence lock lockall pscw atomics derived request dynamic)", name);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm));
    const char *env = getenv("RMA_OPS_SECTIONS");
    if (argc > 1) {
        for (int i = 1; i < argc; i++) run_section(argv[i]);
    } else if (env && *env) {
        char list[256];
        snprintf(list, sizeof list, "%s", env);
        for (char *tok = strtok(list, ", "); tok; tok = strtok(NULL, ", ")) run_section(tok);
    } else {
        for (int i = 0; i < NSECTIONS; i++) run_section(sections[i].name);
    }
    close_windows();
    CHECK_MPI(MPI_Comm_free(&node_comm));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
