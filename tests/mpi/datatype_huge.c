/* Huge datatypes cost what their constructor calls cost, not what their
 * element counts would: types of billions of elements (classic and _c
 * constructors, nested) are built, queried and freed with the process's
 * memory barely moving, and (when LM_HUGE_MESSAGE is set, as the suite
 * does outside the sanitizer trees) a non-contiguous message of more than
 * 2^31 bytes is packed, unpacked and sent both ways and checked element by
 * element. The suite runs this under an address-space limit, so that a
 * layout with one entry per element fails here instead of swapping. */
#include "mpitest.h"
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

static long rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void expect_size(MPI_Datatype t, MPI_Count size, MPI_Count extent, const char *what)
{
    MPI_Count s, lb, ext;
    CHECK_MPI(MPI_Type_size_c(t, &s));
    CHECK(s == size, "%s: size %lld, expected %lld", what, (long long)s, (long long)size);
    CHECK_MPI(MPI_Type_get_extent_c(t, &lb, &ext));
    CHECK(ext == extent, "%s: extent %lld, expected %lld", what, (long long)ext, (long long)extent);
}

/* Types of billions of elements: built, committed, queried, freed. */
static void build_huge(void)
{
    long before = rss_kb();
    const MPI_Count half = INT32_MAX / 2;
    /* the darray below: rank 1 of 4 owns blocks of 3 rows from row 3 on,
     * every 12 rows, of 2^31 rows (counted once, the slow way) */
    MPI_Count rows = 0;
    for (MPI_Count b = 3; b < ((MPI_Count)1 << 31); b += 12)
        rows += b + 3 <= ((MPI_Count)1 << 31) ? 3 : ((MPI_Count)1 << 31) - b;
    for (int round = 0; round < 3; round++) {
        MPI_Datatype v, c, n, s, sub, d, st, ix;
        /* the reported case */
        CHECK_MPI(MPI_Type_vector((int)half, 1, 2, MPI_INT, &v));
        CHECK_MPI(MPI_Type_commit(&v));
        expect_size(v, half * 4, ((half - 1) * 2 + 1) * 4, "vector(INT_MAX/2, 1, 2, int)");
        int isize;
        CHECK_MPI(MPI_Type_size(v, &isize));
        CHECK(isize == MPI_UNDEFINED, "MPI_Type_size of a type over 2 GiB gave %d", isize);
        /* large counts */
        CHECK_MPI(MPI_Type_contiguous_c((MPI_Count)3 << 30, MPI_DOUBLE, &c));
        CHECK_MPI(MPI_Type_commit(&c));
        expect_size(c, (MPI_Count)24 << 30, (MPI_Count)24 << 30, "contiguous_c(3 Gi, double)");
        CHECK_MPI(MPI_Type_vector_c((MPI_Count)1 << 32, 3, 4, MPI_INT, &n));
        CHECK_MPI(MPI_Type_create_hvector_c(1 << 10, 1, (MPI_Count)1 << 36, n, &s));
        CHECK_MPI(MPI_Type_commit(&s));
        expect_size(s, ((MPI_Count)12 << 32) << 10,
                    (((MPI_Count)1 << 10) - 1) * ((MPI_Count)1 << 36) + (((MPI_Count)1 << 32) - 1) * 16 + 12,
                    "hvector_c of vector_c");
        MPI_Count elements;
        MPI_Status status;
        CHECK_MPI(MPI_Status_set_elements_x(&status, MPI_BYTE, (MPI_Count)40 << 30));
        CHECK_MPI(MPI_Get_elements_c(&status, s, &elements));
        CHECK(elements == (MPI_Count)10 << 30, "40 GiB of ints hold %lld elements", (long long)elements);
        /* a 3-d subarray and a cyclic darray of a huge array */
        MPI_Count sizes[3] = {(MPI_Count)1 << 20, (MPI_Count)1 << 20, 1 << 10}, subs[3] = {(MPI_Count)1 << 19, 3, 1000},
                  starts[3] = {5, 7, 9};
        CHECK_MPI(MPI_Type_create_subarray_c(3, sizes, subs, starts, MPI_ORDER_C, MPI_CHAR, &sub));
        CHECK_MPI(MPI_Type_commit(&sub));
        expect_size(sub, ((MPI_Count)1 << 19) * 3 * 1000, (MPI_Count)1 << 50, "subarray_c");
        MPI_Count gs[2] = {(MPI_Count)1 << 31, 1 << 10};
        int dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE}, dargs[2] = {3, MPI_DISTRIBUTE_DFLT_DARG},
            ps[2] = {4, 1};
        CHECK_MPI(MPI_Type_create_darray_c(4, 1, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &d));
        CHECK_MPI(MPI_Type_commit(&d));
        expect_size(d, rows * (1 << 10) * 4, gs[0] * (1 << 10) * 4, "darray_c cyclic(3)");
        /* a struct of them, and an indexed type of equal blocks at equal
         * distances (a loop in disguise) */
        CHECK_MPI(MPI_Type_create_struct_c(2, (MPI_Count[]){1, 2}, (MPI_Count[]){0, (MPI_Count)1 << 40},
                                           (MPI_Datatype[]){v, c}, &st));
        CHECK_MPI(MPI_Type_commit(&st));
        expect_size(st, half * 4 + ((MPI_Count)48 << 30), ((MPI_Count)1 << 40) + ((MPI_Count)48 << 30),
                    "struct_c of vector and contiguous_c");
        enum { NB = 1 << 16 };
        MPI_Count *disp = malloc(NB * sizeof *disp);
        for (int i = 0; i < NB; i++) disp[i] = (MPI_Count)i * ((MPI_Count)1 << 20);
        CHECK_MPI(MPI_Type_create_indexed_block_c(NB, 1 << 19, disp, MPI_INT, &ix));
        free(disp);
        CHECK_MPI(MPI_Type_commit(&ix));
        expect_size(ix, (MPI_Count)NB << 21, (((MPI_Count)NB - 1) << 22) + ((MPI_Count)1 << 21), "indexed_block_c");
        MPI_Datatype all[] = {v, c, n, s, sub, d, st, ix};
        for (int i = 0; i < 8; i++) CHECK_MPI(MPI_Type_free(&all[i]));
    }
    long grew = rss_kb() - before;
    /* one entry per element would be gigabytes; the argument arrays above
     * take half a megabyte */
    CHECK(grew < 32 * 1024, "building the huge types grew the process by %ld KiB", grew);
}

/* A strided message of more than 2^31 bytes: 15 of every 16 ints. */
static void huge_message(int rank, int size)
{
    const MPI_Count blocks = ((MPI_Count)1 << 31) / 60 + 1000, per = 15, data = blocks * per;
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_vector_c(blocks, per, 16, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    size_t span = (size_t)(blocks * 16) * sizeof(int), bytes = (size_t)data * sizeof(int);
    CHECK(bytes > ((size_t)1 << 31), "the message is %zu bytes", bytes);
    if (rank == 0) {
        int *a = malloc(span), *p = malloc(bytes);
        CHECK(a && p, "no memory for %zu + %zu bytes", span, bytes);
        memset(p, 0xff, bytes); /* the pages exist before the timing */
        for (MPI_Count i = 0; i < blocks * 16; i++) a[i] = (int)(i * 3 + 1);
        double t0 = now();
        MPI_Count pos = 0;
        CHECK_MPI(MPI_Pack_c(a, 1, t, p, (MPI_Count)bytes, &pos, MPI_COMM_SELF));
        double t_pack = now() - t0;
        CHECK(pos == (MPI_Count)bytes, "packed %lld bytes", (long long)pos);
        for (MPI_Count i = 0; i < data; i++)
            if (p[i] != (int)((i / per * 16 + i % per) * 3 + 1)) CHECK(0, "packed int %lld wrong", (long long)i);
        /* unpack into the gaps' complement: clear the data, keep the gaps */
        for (MPI_Count i = 0; i < blocks * 16; i++)
            if (i % 16 != 15) a[i] = -1;
        pos = 0;
        t0 = now();
        CHECK_MPI(MPI_Unpack_c(p, (MPI_Count)bytes, &pos, a, 1, t, MPI_COMM_SELF));
        double t_unpack = now() - t0;
        for (MPI_Count i = 0; i < blocks * 16; i++)
            if (a[i] != (int)(i * 3 + 1)) CHECK(0, "unpacked int %lld wrong", (long long)i);
        printf("datatype_huge: %.2f GB packed in %.2f s, unpacked in %.2f s\n", bytes * 1e-9, t_pack, t_unpack);
        free(p);
        if (size > 1) {
            /* out strided, back into the strided layout */
            CHECK_MPI(MPI_Send_c(a, 1, t, 1, 0, MPI_COMM_WORLD));
            for (MPI_Count i = 0; i < blocks * 16; i++)
                if (i % 16 != 15) a[i] = -1;
            CHECK_MPI(MPI_Recv_c(a, 1, t, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (MPI_Count i = 0; i < blocks * 16; i++)
                if (a[i] != (int)(i * 3 + 1)) CHECK(0, "int %lld wrong after the round trip", (long long)i);
        }
        free(a);
    } else if (rank == 1) {
        int *p = malloc(bytes);
        CHECK(p, "no memory for %zu bytes", bytes);
        MPI_Status st;
        CHECK_MPI(MPI_Recv_c(p, data, MPI_INT, 0, 0, MPI_COMM_WORLD, &st));
        MPI_Count got;
        CHECK_MPI(MPI_Get_count_c(&st, MPI_INT, &got));
        CHECK(got == data, "received %lld ints", (long long)got);
        for (MPI_Count i = 0; i < data; i++)
            if (p[i] != (int)((i / per * 16 + i % per) * 3 + 1)) CHECK(0, "received int %lld wrong", (long long)i);
        CHECK_MPI(MPI_Send_c(p, data, MPI_INT, 0, 1, MPI_COMM_WORLD));
        free(p);
    }
    CHECK_MPI(MPI_Type_free(&t));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    build_huge();
    const char *msg = getenv("LM_HUGE_MESSAGE");
    if (msg && atoi(msg)) huge_message(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("PASS datatype_huge%s\n", msg && atoi(msg) ? "" : " (types only)");
    MPI_Finalize();
    return 0;
}
