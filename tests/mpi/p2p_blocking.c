/* Blocking point-to-point with every predefined C datatype, message sizes
 * from 0 to 4 MiB (both sides of any eager/rendezvous switch), a ring over
 * all ranks and sends to oneself. */
#include "mpitest.h"
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <wchar.h>

typedef struct {
    float v;
    int i;
} float_int_t;
typedef struct {
    double v;
    int i;
} double_int_t;
typedef struct {
    long v;
    int i;
} long_int_t;
typedef struct {
    int v;
    int i;
} two_int_t;
typedef struct {
    short v;
    int i;
} short_int_t;
typedef struct {
    long double v;
    int i;
} long_double_int_t;

/* X(mpi type, C type, make value from long k into variable x, equality of a and b) */
#define SCALAR(T) (x = (T)(k % 100 + 1))
#define EQ_SCALAR (a == b)
#define PAIR(T) (x.v = (k % 100 + 1), x.i = (int)(k % 1000 - 500))
#define EQ_PAIR (a.v == b.v && a.i == b.i)

/* One fill and one check function per type: seed makes each message unique. */
#define GEN(MT, CT, MAKE, EQ)                                         \
    static void fill_##CT##_##MT(void *buf, long n, long seed)        \
    {                                                                 \
        CT *p = buf;                                                  \
        for (long i = 0; i < n; i++) {                                \
            CT x;                                                     \
            memset(&x, 0, sizeof x);                                  \
            long k = i + seed;                                        \
            (void)MAKE;                                               \
            p[i] = x;                                                 \
        }                                                             \
    }                                                                 \
    static long check_##CT##_##MT(const void *buf, long n, long seed) \
    {                                                                 \
        const CT *p = buf;                                            \
        for (long i = 0; i < n; i++) {                                \
            CT x;                                                     \
            memset(&x, 0, sizeof x);                                  \
            long k = i + seed;                                        \
            (void)MAKE;                                               \
            CT a = p[i], b = x;                                       \
            if (!(EQ)) return i;                                      \
        }                                                             \
        return -1;                                                    \
    }
/* Token pasting needs identifiers: map multi-word C types to typedefs. */
typedef long long longlong;
typedef signed char schar;
typedef unsigned char uchar;
typedef unsigned short ushort_t;
typedef unsigned long ulong_t;
typedef unsigned long long ulonglong;
typedef long double ldouble;
typedef float _Complex fcomplex;
typedef double _Complex dcomplex;
typedef long double _Complex ldcomplex;

#define TYPES(X)                                                                            \
    X(MPI_CHAR, char, SCALAR(char), EQ_SCALAR)                                              \
    X(MPI_SHORT, short, SCALAR(short), EQ_SCALAR)                                           \
    X(MPI_INT, int, (x = (int)(k * 7919 - 1000000)), EQ_SCALAR)                             \
    X(MPI_LONG, long, (x = k * 1000003L - 77), EQ_SCALAR)                                   \
    X(MPI_LONG_LONG_INT, longlong, (x = k * 100000000007LL), EQ_SCALAR)                     \
    X(MPI_LONG_LONG, longlong, (x = -k * 3), EQ_SCALAR)                                     \
    X(MPI_SIGNED_CHAR, schar, (x = (signed char)(k % 200 - 100)), EQ_SCALAR)                \
    X(MPI_UNSIGNED_CHAR, uchar, (x = (unsigned char)(k * 13)), EQ_SCALAR)                   \
    X(MPI_UNSIGNED_SHORT, ushort_t, (x = (unsigned short)(k * 31)), EQ_SCALAR)              \
    X(MPI_UNSIGNED, unsigned, (x = (unsigned)k * 2654435761u), EQ_SCALAR)                   \
    X(MPI_UNSIGNED_LONG, ulong_t, (x = (unsigned long)k * 0x9E3779B97F4A7C15UL), EQ_SCALAR) \
    X(MPI_UNSIGNED_LONG_LONG, ulonglong, (x = ~(unsigned long long)k), EQ_SCALAR)           \
    X(MPI_FLOAT, float, (x = (float)k * 0.5f - 3.0f), EQ_SCALAR)                            \
    X(MPI_DOUBLE, double, (x = (double)k * 0.25 - 1e9), EQ_SCALAR)                          \
    X(MPI_LONG_DOUBLE, ldouble, (x = (long double)k / 8 + 1e30L), EQ_SCALAR)                \
    X(MPI_WCHAR, wchar_t, (x = (wchar_t)(k % 50000 + 32)), EQ_SCALAR)                       \
    X(MPI_C_BOOL, _Bool, (x = (k % 3) == 0), EQ_SCALAR)                                     \
    X(MPI_INT8_T, int8_t, (x = (int8_t)(k % 255 - 127)), EQ_SCALAR)                         \
    X(MPI_INT16_T, int16_t, (x = (int16_t)(k * 3 - 30000)), EQ_SCALAR)                      \
    X(MPI_INT32_T, int32_t, (x = (int32_t)(k * 65537)), EQ_SCALAR)                          \
    X(MPI_INT64_T, int64_t, (x = (int64_t)k << 33), EQ_SCALAR)                              \
    X(MPI_UINT8_T, uint8_t, (x = (uint8_t)(k * 7)), EQ_SCALAR)                              \
    X(MPI_UINT16_T, uint16_t, (x = (uint16_t)(k * 11)), EQ_SCALAR)                          \
    X(MPI_UINT32_T, uint32_t, (x = (uint32_t)k * 40503u), EQ_SCALAR)                        \
    X(MPI_UINT64_T, uint64_t, (x = (uint64_t)k * 0xFFFFFFFFFFull), EQ_SCALAR)               \
    X(MPI_C_COMPLEX, fcomplex, (x = (float)k + (float)(k % 17) * I), EQ_SCALAR)             \
    X(MPI_C_FLOAT_COMPLEX, fcomplex, (x = (float)(k % 9) - (float)k * I), EQ_SCALAR)        \
    X(MPI_C_DOUBLE_COMPLEX, dcomplex, (x = (double)k * 3 + (double)-k * I), EQ_SCALAR)      \
    X(MPI_C_LONG_DOUBLE_COMPLEX, ldcomplex, (x = (long double)k + 2.0L * k * I), EQ_SCALAR) \
    X(MPI_BYTE, uchar, (x = (unsigned char)(k * 5 + 1)), EQ_SCALAR)                         \
    X(MPI_PACKED, uchar, (x = (unsigned char)(k * 3 + 2)), EQ_SCALAR)                       \
    X(MPI_AINT, MPI_Aint, (x = (MPI_Aint)k * -4096), EQ_SCALAR)                             \
    X(MPI_OFFSET, MPI_Offset, (x = (MPI_Offset)k << 20), EQ_SCALAR)                         \
    X(MPI_COUNT, MPI_Count, (x = (MPI_Count)k * 3 + 1), EQ_SCALAR)                          \
    X(MPI_FLOAT_INT, float_int_t, PAIR(float), EQ_PAIR)                                     \
    X(MPI_DOUBLE_INT, double_int_t, PAIR(double), EQ_PAIR)                                  \
    X(MPI_LONG_INT, long_int_t, PAIR(long), EQ_PAIR)                                        \
    X(MPI_2INT, two_int_t, PAIR(int), EQ_PAIR)                                              \
    X(MPI_SHORT_INT, short_int_t, PAIR(short), EQ_PAIR)                                     \
    X(MPI_LONG_DOUBLE_INT, long_double_int_t, PAIR(long double), EQ_PAIR)

TYPES(GEN)

struct tdesc {
    MPI_Datatype type;
    const char *name;
    size_t csize;
    void (*fill)(void *, long, long);
    long (*check)(const void *, long, long);
};
#define DESC(MT, CT, MAKE, EQ) {MT, #MT, sizeof(CT), fill_##CT##_##MT, check_##CT##_##MT},

static int rank, size;
static unsigned char *sbuf, *rbuf;
#define BUF_BYTES (((size_t)4 << 20) + 64)

/* Receive 'n' elements and check contents, status and count.  The receive
 * buffer is pre-set so that stale data cannot pass the check. */
static void recv_and_check(const struct tdesc *t, long n, int src, int tag, MPI_Comm comm, long seed)
{
    MPI_Status st;
    memset(rbuf, 0xA5, t->csize * (size_t)n + 16);
    CHECK_MPI(MPI_Recv(rbuf, (int)n, t->type, src, tag, comm, &st));
    CHECK_EQ(st.MPI_SOURCE, src);
    CHECK_EQ(st.MPI_TAG, tag);
    int cnt = -1;
    CHECK_MPI(MPI_Get_count(&st, t->type, &cnt));
    CHECK(cnt == n, "%s: Get_count %d, sent %ld", t->name, cnt, n);
    long bad = t->check(rbuf, n, seed);
    CHECK(bad < 0, "%s: %ld elements from rank %d: element %ld is wrong", t->name, n, src, bad);
    for (int i = 0; i < 16; i++)
        CHECK(rbuf[t->csize * (size_t)n + i] == 0xA5, "%s: %ld elements: byte %d past the message overwritten", t->name,
              n, i);
}

/* Blocking ring: rank 0 sends first and receives last, everyone else receives
 * then forwards, so it cannot deadlock whatever the protocol. */
static void ring(const struct tdesc *t, long n, int tag)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    if (rank == 0) {
        t->fill(sbuf, n, tag);
        CHECK_MPI(MPI_Send(sbuf, (int)n, t->type, right, tag, MPI_COMM_WORLD));
        recv_and_check(t, n, left, tag, MPI_COMM_WORLD, tag);
    } else {
        recv_and_check(t, n, left, tag, MPI_COMM_WORLD, tag);
        memcpy(sbuf, rbuf, t->csize * (size_t)n);
        CHECK_MPI(MPI_Send(sbuf, (int)n, t->type, right, tag, MPI_COMM_WORLD));
    }
}

/* Send to oneself: Isend, then the matching Recv, then Wait. */
static void self_send(const struct tdesc *t, long n, int tag, MPI_Comm comm, int me)
{
    MPI_Request req;
    t->fill(sbuf, n, tag + 3);
    CHECK_MPI(MPI_Isend(sbuf, (int)n, t->type, me, tag, comm, &req));
    recv_and_check(t, n, me, tag, comm, tag + 3);
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(req == MPI_REQUEST_NULL, "Wait must set the request to MPI_REQUEST_NULL");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    rank = mt_rank(MPI_COMM_WORLD);
    size = mt_size(MPI_COMM_WORLD);
    sbuf = malloc(BUF_BYTES);
    rbuf = malloc(BUF_BYTES);
    CHECK(sbuf && rbuf, "out of memory");

    const struct tdesc types[] = {TYPES(DESC)};
    const int ntypes = (int)(sizeof types / sizeof types[0]);
    static const long small_counts[] = {0, 1, 7, 1000};

    /* Every type, small counts. */
    for (int ti = 0; ti < ntypes; ti++) {
        for (int ci = 0; ci < 4; ci++) {
            int tag = ti * 10 + ci;
            if (size > 1) ring(&types[ti], small_counts[ci], tag);
            self_send(&types[ti], small_counts[ci], tag, MPI_COMM_WORLD, rank);
        }
    }
    mt_pass("p2p_blocking: every predefined type, counts 0, 1, 7, 1000 (ring and self)");

    /* Large messages: 100000 elements and 4 MiB, contiguous types and the
     * pair types that have holes (double_int, short_int). */
    for (int ti = 0; ti < ntypes; ti++) {
        MPI_Datatype ty = types[ti].type;
        if (ty != MPI_BYTE && ty != MPI_INT && ty != MPI_DOUBLE && ty != MPI_DOUBLE_INT && ty != MPI_SHORT_INT &&
            ty != MPI_C_DOUBLE_COMPLEX)
            continue;
        long counts[2] = {100000, (long)(((size_t)4 << 20) / types[ti].csize)};
        for (int ci = 0; ci < 2; ci++) {
            if ((size_t)counts[ci] * types[ti].csize + 16 > BUF_BYTES)
                counts[ci] = (long)((BUF_BYTES - 16) / types[ti].csize);
            int tag = 1000 + ti * 10 + ci;
            if (size > 1) ring(&types[ti], counts[ci], tag);
            self_send(&types[ti], counts[ci], tag, MPI_COMM_WORLD, rank);
            self_send(&types[ti], counts[ci], tag, MPI_COMM_SELF, 0);
        }
    }
    mt_pass("p2p_blocking: 100000 elements and 4 MiB (ring, self on COMM_WORLD and COMM_SELF)");

    /* Self sends on COMM_SELF for every type. */
    for (int ti = 0; ti < ntypes; ti++) self_send(&types[ti], 1000, 5, MPI_COMM_SELF, 0);
    mt_pass("p2p_blocking: self send on COMM_SELF, every type");

    /* A receive buffer larger than the message: count is what was sent. */
    {
        int tag = 7777;
        long n = 10;
        const struct tdesc *t = &types[2]; /* MPI_INT */
        MPI_Request req;
        MPI_Status st;
        t->fill(sbuf, n, 1);
        CHECK_MPI(MPI_Isend(sbuf, (int)n, MPI_INT, rank, tag, MPI_COMM_WORLD, &req));
        CHECK_MPI(MPI_Recv(rbuf, 1000, MPI_INT, rank, tag, MPI_COMM_WORLD, &st));
        CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        int cnt = -1;
        CHECK_MPI(MPI_Get_count(&st, MPI_INT, &cnt));
        CHECK_EQ(cnt, n);
        CHECK(t->check(rbuf, n, 1) < 0, "data of short message into large buffer");
    }
    mt_pass("p2p_blocking: short message into larger buffer");

    /* Sendrecv and Sendrecv_replace around the ring, eager and rendezvous
     * sizes: every rank sends to the right and receives from the left in
     * one call, which deadlocks if the send half blocks the receive half. */
    {
        const int right = (rank + 1) % size, left = (rank + size - 1) % size;
        const int ns[] = {1, 5000, 300000};
        int *out = malloc(sizeof(int) * 300000), *in = malloc(sizeof(int) * 300000);
        CHECK(out && in, "out of memory");
        for (int k = 0; k < 3; k++) {
            int n = ns[k];
            MPI_Status st;
            for (int i = 0; i < n; i++) out[i] = rank * 7 + i;
            memset(in, 0xff, sizeof(int) * (size_t)n);
            CHECK_MPI(MPI_Sendrecv(out, n, MPI_INT, right, 40 + k, in, n, MPI_INT, MPI_ANY_SOURCE, 40 + k,
                                   MPI_COMM_WORLD, &st));
            CHECK_EQ(st.MPI_SOURCE, left);
            CHECK_EQ(st.MPI_TAG, 40 + k);
            int cnt = -1;
            CHECK_MPI(MPI_Get_count(&st, MPI_INT, &cnt));
            CHECK_EQ(cnt, n);
            for (int i = 0; i < n; i++)
                if (in[i] != left * 7 + i)
                    CHECK(0, "Sendrecv n=%d: element %d is %d, expected %d", n, i, in[i], left * 7 + i);

            for (int i = 0; i < n; i++) in[i] = rank * 11 + i;
            CHECK_MPI(MPI_Sendrecv_replace(in, n, MPI_INT, right, 50 + k, left, 50 + k, MPI_COMM_WORLD, &st));
            CHECK_EQ(st.MPI_SOURCE, left);
            CHECK_MPI(MPI_Get_count(&st, MPI_INT, &cnt));
            CHECK_EQ(cnt, n);
            for (int i = 0; i < n; i++)
                if (in[i] != left * 11 + i)
                    CHECK(0, "Sendrecv_replace n=%d: element %d is %d, expected %d", n, i, in[i], left * 11 + i);
        }
        /* With MPI_PROC_NULL on both sides nothing moves and the status is empty. */
        int x = 5, y = 9;
        MPI_Status st;
        CHECK_MPI(
            MPI_Sendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, &y, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
        CHECK_EQ(y, 9);
        CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
        CHECK_MPI(MPI_Sendrecv_replace(&y, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
        CHECK_EQ(y, 9);
        free(out);
        free(in);
    }
    mt_pass("p2p_blocking: Sendrecv and Sendrecv_replace around the ring, 1 to 300000 ints, PROC_NULL");

    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
