/* Accumulates of one element and of a few, every value checked.
 *
 * Every rank applies MPI_Accumulate and MPI_Fetch_and_op to one slot per
 * (type, op) pair in every rank's window (MPI_SUM, MPI_BAND, MPI_BOR,
 * MPI_BXOR on int, unsigned, long long and unsigned long long; MPI_SUM on
 * float and double; MPI_REPLACE; MPI_NO_OP), under MPI_Win_lock_all.
 * Operands are chosen so that every result is exact and independent of the
 * order the ranks come in: the sums of small integers and of powers of
 * two, and one bit per rank and round for the bit operations. The fetched
 * old values of MPI_Fetch_and_op must each be one the slot can have held.
 * Then runs of two unsigned elements (8 bytes, the size of one long long)
 * are summed where the low element wraps: no carry may cross into the high
 * one. Every rank reads every window back and compares it with the
 * reference. */
#include "mpitest.h"
#include <stdint.h>
#include <string.h>

enum { N_BIT_OPS = 4, ROUNDS = 6 }; /* even: see operand() */
static const MPI_Op bit_ops[N_BIT_OPS] = {MPI_SUM, MPI_BAND, MPI_BOR, MPI_BXOR};

/* One slot: 8 bytes, whatever the type. */
typedef union {
    int i;
    unsigned u;
    long long ll;
    unsigned long long ull;
    float f;
    double d;
    unsigned char bytes[8];
} slot;

typedef struct {
    MPI_Datatype t;
    int size, is_float;
} type_case;

static const type_case ints[] = {
    {MPI_INT, sizeof(int), 0},
    {MPI_UNSIGNED, sizeof(unsigned), 0},
    {MPI_LONG_LONG, sizeof(long long), 0},
    {MPI_UNSIGNED_LONG_LONG, sizeof(unsigned long long), 0},
};
#define N_INTS ((int)(sizeof ints / sizeof ints[0]))

/* Slots of the window, in order: per integer type and bit op two slots
 * (Accumulate, Fetch_and_op); float and double sums (two each); a
 * REPLACE slot; a NO_OP slot; then the 2-int run. */
#define SLOT_INT(ti, op, fetch) (((ti)*N_BIT_OPS + (op)) * 2 + (fetch))
#define SLOT_FLOAT(fetch) (N_INTS * N_BIT_OPS * 2 + (fetch))
#define SLOT_DOUBLE(fetch) (SLOT_FLOAT(2) + (fetch))
#define SLOT_REPLACE (SLOT_DOUBLE(2))
#define SLOT_NOOP (SLOT_REPLACE + 1)
#define SLOT_PAIR (SLOT_NOOP + 1)
#define NSLOTS (SLOT_PAIR + 1)

/* The starting value of each slot: all bits set for BAND, else 0, so that
 * every op has something to change. */
static unsigned long long start_of(int op) { return bit_ops[op] == MPI_BAND ? ~0ull : 0; }

static void set_int(slot *s, int size, unsigned long long v)
{
    memset(s, 0, sizeof *s);
    if (size == 4) s->u = (unsigned)v;
    else s->ull = v;
}

static unsigned long long get_int(const slot *s, int size) { return size == 4 ? s->u : s->ull; }

/* What rank r contributes in round k to a slot with this op: for SUM a
 * small number; for the bit ops one bit of its own (BAND clears it), and
 * for BOR and BXOR also bit 31, which every operand has: an even number
 * of them leaves it set by BOR and clear by BXOR, so the two cannot pass
 * for each other. */
static unsigned long long operand(int op, int r, int k)
{
    unsigned long long bit = 1ull << ((r * ROUNDS + k) % 31);
    if (bit_ops[op] == MPI_SUM) return (unsigned long long)(r + 1) * 3 + (unsigned long long)k;
    if (bit_ops[op] == MPI_BAND) return ~bit;
    return bit | 1ull << 31;
}

/* The final value of an integer slot after every rank's rounds, computed
 * the way the ranks apply them (past 6 ranks two operands share a bit,
 * which BXOR then cancels, here as there). */
static unsigned long long expected_int(int op, int size, int n)
{
    unsigned long long v = start_of(op), mask = size == 4 ? 0xffffffffull : ~0ull;
    for (int r = 0; r < n; r++)
        for (int k = 0; k < ROUNDS; k++) {
            unsigned long long x = operand(op, r, k);
            if (bit_ops[op] == MPI_SUM) v += x;
            else if (bit_ops[op] == MPI_BAND) v &= x;
            else if (bit_ops[op] == MPI_BOR) v |= x;
            else v ^= x;
        }
    return v & mask;
}

/* Sums of powers of two up to 2^20 are exact in float and double. */
static double float_operand(int r, int k) { return (double)(1u << ((r + k) % 20)); }

static void fill_start(slot *w)
{
    memset(w, 0, NSLOTS * sizeof *w);
    for (int ti = 0; ti < N_INTS; ti++)
        for (int op = 0; op < N_BIT_OPS; op++)
            for (int f = 0; f < 2; f++) set_int(&w[SLOT_INT(ti, op, f)], ints[ti].size, start_of(op));
    w[SLOT_REPLACE].ll = -1;
    w[SLOT_NOOP].ll = 0x1234567890abcdefll;
    /* the 2-element run starts at {2^32 - 2, 0}: its low element wraps,
     * and would carry into the high one if summed as one 8-byte value */
    w[SLOT_PAIR].u = 0xfffffffeu;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me = mt_rank(MPI_COMM_WORLD), n = mt_size(MPI_COMM_WORLD);
    slot *w;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate(NSLOTS * sizeof(slot), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win));
    fill_start(w);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int t = 0; t < n; t++) {
        for (int k = 0; k < ROUNDS; k++) {
            for (int ti = 0; ti < N_INTS; ti++)
                for (int op = 0; op < N_BIT_OPS; op++) {
                    slot in, old;
                    set_int(&in, ints[ti].size, operand(op, me, k));
                    CHECK_MPI(MPI_Accumulate(&in, 1, ints[ti].t, t, SLOT_INT(ti, op, 0) * sizeof(slot), 1, ints[ti].t,
                                             bit_ops[op], win));
                    memset(&old, 0xa5, sizeof old);
                    CHECK_MPI(MPI_Fetch_and_op(&in, &old, ints[ti].t, t, SLOT_INT(ti, op, 1) * sizeof(slot),
                                               bit_ops[op], win));
                    CHECK_MPI(MPI_Win_flush(t, win));
                    /* an old value of a SUM slot is its start plus some
                     * operands: never more than the final value */
                    if (bit_ops[op] == MPI_SUM)
                        CHECK(get_int(&old, ints[ti].size) < expected_int(op, ints[ti].size, n),
                              "rank %d: fetched sum %llu from rank %d is out of range", me,
                              get_int(&old, ints[ti].size), t);
                }
            float fin = (float)float_operand(me, k);
            double din = float_operand(me, k), dold = -1;
            float fold = -1;
            CHECK_MPI(MPI_Accumulate(&fin, 1, MPI_FLOAT, t, SLOT_FLOAT(0) * sizeof(slot), 1, MPI_FLOAT, MPI_SUM, win));
            CHECK_MPI(MPI_Fetch_and_op(&fin, &fold, MPI_FLOAT, t, SLOT_FLOAT(1) * sizeof(slot), MPI_SUM, win));
            CHECK_MPI(
                MPI_Accumulate(&din, 1, MPI_DOUBLE, t, SLOT_DOUBLE(0) * sizeof(slot), 1, MPI_DOUBLE, MPI_SUM, win));
            CHECK_MPI(MPI_Fetch_and_op(&din, &dold, MPI_DOUBLE, t, SLOT_DOUBLE(1) * sizeof(slot), MPI_SUM, win));
            /* REPLACE: the old value is -1 or some rank's id */
            long long mine = me, prev = -2;
            CHECK_MPI(MPI_Fetch_and_op(&mine, &prev, MPI_LONG_LONG, t, SLOT_REPLACE * sizeof(slot), MPI_REPLACE, win));
            long long seen = 0;
            CHECK_MPI(MPI_Fetch_and_op(NULL, &seen, MPI_LONG_LONG, t, SLOT_NOOP * sizeof(slot), MPI_NO_OP, win));
            /* two unsigned summed as a run of two elements */
            unsigned two[2] = {1, 0};
            CHECK_MPI(MPI_Accumulate(two, 2, MPI_UNSIGNED, t, SLOT_PAIR * sizeof(slot), 2, MPI_UNSIGNED, MPI_SUM, win));
            CHECK_MPI(MPI_Win_flush(t, win));
            CHECK(fold >= 0 && dold >= 0, "rank %d: fetched float sums %g/%g from rank %d", me, fold, dold, t);
            CHECK(prev >= -1 && prev < n, "rank %d: MPI_REPLACE fetched %lld from rank %d", me, prev, t);
            CHECK(seen == 0x1234567890abcdefll, "rank %d: MPI_NO_OP fetched 0x%llx from rank %d", me,
                  (unsigned long long)seen, t);
        }
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* every window against the reference */
    slot *all = malloc((size_t)n * NSLOTS * sizeof *all);
    CHECK(all != NULL, "out of memory");
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int t = 0; t < n; t++)
        CHECK_MPI(MPI_Get(all + (size_t)t * NSLOTS, NSLOTS * sizeof(slot), MPI_BYTE, t, 0, NSLOTS * sizeof(slot),
                          MPI_BYTE, win));
    CHECK_MPI(MPI_Win_unlock_all(win));
    double fsum = 0;
    for (int r = 0; r < n; r++)
        for (int k = 0; k < ROUNDS; k++) fsum += float_operand(r, k);
    for (int t = 0; t < n; t++) {
        const slot *v = all + (size_t)t * NSLOTS;
        for (int ti = 0; ti < N_INTS; ti++)
            for (int op = 0; op < N_BIT_OPS; op++)
                for (int f = 0; f < 2; f++) {
                    unsigned long long got = get_int(&v[SLOT_INT(ti, op, f)], ints[ti].size);
                    unsigned long long want = expected_int(op, ints[ti].size, n);
                    CHECK(got == want, "rank %d's slot (type %d, op %d, %s): 0x%llx, expected 0x%llx", t, ti, op,
                          f ? "Fetch_and_op" : "Accumulate", got, want);
                }
        for (int f = 0; f < 2; f++) {
            CHECK(v[SLOT_FLOAT(f)].f == (float)fsum, "rank %d's float sum %d: %g, expected %g", t, f,
                  v[SLOT_FLOAT(f)].f, fsum);
            CHECK(v[SLOT_DOUBLE(f)].d == fsum, "rank %d's double sum %d: %g, expected %g", t, f, v[SLOT_DOUBLE(f)].d,
                  fsum);
        }
        CHECK(v[SLOT_REPLACE].ll >= 0 && v[SLOT_REPLACE].ll < n, "rank %d's MPI_REPLACE slot: %lld", t,
              v[SLOT_REPLACE].ll);
        CHECK(v[SLOT_NOOP].ll == 0x1234567890abcdefll, "rank %d's MPI_NO_OP slot changed: 0x%llx", t,
              (unsigned long long)v[SLOT_NOOP].ll);
        unsigned want_low = 0xfffffffeu + (unsigned)(n * ROUNDS), high;
        memcpy(&high, v[SLOT_PAIR].bytes + sizeof(unsigned), sizeof high);
        CHECK(v[SLOT_PAIR].u == want_low && high == 0,
              "rank %d's 2-element run: {0x%x, %u}, expected {0x%x, 0} (no carry between elements)", t, v[SLOT_PAIR].u,
              high, want_low);
    }
    free(all);
    mt_pass("one-element accumulates (sum and bit ops on 4- and 8-byte integers, float and double sums, "
            "MPI_REPLACE, MPI_NO_OP) and a 2-element run");
    CHECK_MPI(MPI_Win_free(&win));
    MPI_Finalize();
    return 0;
}
