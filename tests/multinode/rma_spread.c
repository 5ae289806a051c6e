/* One-sided communication on windows whose processes are on several hosts
 * (run by on_hosts.py), over a communicator that interleaves the hosts
 * (ordered by rank on the node first), so that a node's ranks are not
 * contiguous in the window's group.
 *
 * For MPI_Win_allocate and MPI_Win_create windows:
 * - exclusive locks: every rank, ROUNDS times, locks each rank in turn
 *   exclusively, reads its counter, flushes, writes the counter + 1 back
 *   (no atomic operation: only the lock keeps increments from being lost)
 *   and checks that nobody changed it meanwhile; the counters must then
 *   be exactly size * ROUNDS;
 * - shared locks with gets of what each owner stored, lock_all with
 *   accumulates, fetch-and-op and compare-and-swap onto rank 0, checked
 *   exactly;
 * - post/start/complete/wait in a ring: each rank puts to its right
 *   neighbour, which checks the value after MPI_Win_wait.
 * - bulk data: 1 MiB puts and gets between every pair, contiguous and
 *   through a vector type on the target (blocks with gaps), checked byte
 *   by byte, under fence and under lock_all with flushes.
 * Where the job spans several hosts, every rank must have sent operations
 * to be carried out by their targets (the onesided_requests_sent counter):
 * the accumulates and locks of ranks on other hosts go through their
 * owners. argv[1] says how puts and gets reach them: "net" (the network's
 * RMA: writes and reads of the ofi or tcp backend counted) or "msg"
 * (through the owner: no network write counted). */
#include "mpitest.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 20

static unsigned long long counter(const char *name)
{
    MPI_T_pvar_session session;
    MPI_T_pvar_handle h;
    int idx, n;
    unsigned long long v;
    CHECK_MPI(MPI_T_pvar_session_create(&session));
    CHECK_MPI(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx));
    CHECK_MPI(MPI_T_pvar_handle_alloc(session, idx, NULL, &h, &n));
    CHECK_MPI(MPI_T_pvar_read(session, h, &v));
    CHECK_MPI(MPI_T_pvar_handle_free(session, &h));
    CHECK_MPI(MPI_T_pvar_session_free(&session));
    return v;
}

/* A counter of the network backends (ofi and tcp together). */
static unsigned long long net_counter(const char *field)
{
    char ofi[64], tcp[64];
    snprintf(ofi, sizeof ofi, "transport_ofi_%s", field);
    snprintf(tcp, sizeof tcp, "transport_tcp_%s", field);
    return counter(ofi) + counter(tcp);
}

static unsigned char pattern(int owner, int writer, size_t i)
{
    return (unsigned char)(owner * 37 + writer * 11 + i * 7 + (i >> 10));
}

/* 1 MiB from every rank into its slot of each rank's part (a vector of
 * 4 KiB blocks with 4 KiB gaps under fence, contiguous under lock_all),
 * then read back by the next rank with gets. */
#define BULK ((size_t)1 << 20)
#define BLOCK 4096
static void bulk(MPI_Comm comm, int allocate)
{
    int me = mt_rank(comm), n = mt_size(comm);
    const char *what = allocate ? "MPI_Win_allocate" : "MPI_Win_create";
    size_t slot = 2 * BULK, bytes = slot * (size_t)n;
    unsigned char *part, *mine = malloc(BULK), *back = malloc(BULK);
    CHECK(mine && back, "out of memory");
    MPI_Win win;
    if (allocate) {
        CHECK_MPI(MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, comm, &part, &win));
    } else {
        part = malloc(bytes);
        CHECK(part != NULL, "out of memory");
        CHECK_MPI(MPI_Win_create(part, (MPI_Aint)bytes, 1, MPI_INFO_NULL, comm, &win));
    }
    MPI_Datatype gaps;
    CHECK_MPI(MPI_Type_vector((int)(BULK / BLOCK), BLOCK, 2 * BLOCK, MPI_BYTE, &gaps));
    CHECK_MPI(MPI_Type_commit(&gaps));
    for (int mode = 0; mode < 2; mode++) { /* 0: fence, vector target; 1: lock_all, contiguous */
        memset(part, 0, bytes);
        CHECK_MPI(MPI_Barrier(comm));
        if (mode == 0) CHECK_MPI(MPI_Win_fence(0, win));
        else CHECK_MPI(MPI_Win_lock_all(0, win));
        for (int t = 0; t < n; t++) {
            for (size_t i = 0; i < BULK; i++) mine[i] = pattern(t, me, i);
            MPI_Aint disp = (MPI_Aint)(slot * (size_t)me);
            if (mode == 0) CHECK_MPI(MPI_Put(mine, (int)BULK, MPI_BYTE, t, disp, 1, gaps, win));
            else CHECK_MPI(MPI_Put(mine, (int)BULK, MPI_BYTE, t, disp, (int)BULK, MPI_BYTE, win));
            if (mode == 1) CHECK_MPI(MPI_Win_flush(t, win));
        }
        if (mode == 0) CHECK_MPI(MPI_Win_fence(0, win));
        else CHECK_MPI(MPI_Win_flush_all(win));
        CHECK_MPI(MPI_Barrier(comm));
        /* read what the left neighbour wrote into every rank */
        int w = (me + n - 1) % n;
        for (int t = 0; t < n; t++) {
            memset(back, 0xff, BULK);
            MPI_Aint disp = (MPI_Aint)(slot * (size_t)w);
            if (mode == 0) CHECK_MPI(MPI_Get(back, (int)BULK, MPI_BYTE, t, disp, 1, gaps, win));
            else CHECK_MPI(MPI_Get(back, (int)BULK, MPI_BYTE, t, disp, (int)BULK, MPI_BYTE, win));
            if (mode == 0) CHECK_MPI(MPI_Win_fence(0, win));
            else CHECK_MPI(MPI_Win_flush(t, win));
            for (size_t i = 0; i < BULK; i++)
                CHECK(back[i] == pattern(t, w, i), "%s %s: byte %zu of rank %d's slot %d on rank %d: %u, expected %u",
                      what, mode ? "lock_all" : "fence", i, w, w, t, back[i], pattern(t, w, i));
        }
        if (mode == 1) CHECK_MPI(MPI_Win_unlock_all(win));
        else CHECK_MPI(MPI_Win_fence(0, win));
        /* and the owner sees every writer's bytes where the type put them */
        for (int r = 0; r < n; r++) {
            const unsigned char *s = part + slot * (size_t)r;
            for (size_t i = 0, k = 0; i < BULK; i++, k++) {
                if (mode == 0 && i % BLOCK == 0 && i) k += BLOCK;
                CHECK(s[k] == pattern(me, r, i), "%s %s: byte %zu from rank %d in rank %d's part: %u, expected %u",
                      what, mode ? "lock_all" : "fence", i, r, me, s[k], pattern(me, r, i));
            }
        }
    }
    MPI_Type_free(&gaps);
    CHECK_MPI(MPI_Win_free(&win));
    if (!allocate) free(part);
    free(mine);
    free(back);
    mt_pass("bulk");
}

/* words of each rank's part: [0] counter, [1] stored value, [2] sum,
 * [3] fetch-and-op target, [4] compare-and-swap word, [5] ring value */
#define WORDS 6

static void exercise(MPI_Comm comm, int allocate)
{
    int me = mt_rank(comm), n = mt_size(comm);
    const char *what = allocate ? "MPI_Win_allocate" : "MPI_Win_create";
    long long *part;
    MPI_Win win;
    if (allocate) {
        CHECK_MPI(MPI_Win_allocate(WORDS * sizeof(long long), sizeof(long long), MPI_INFO_NULL, comm, &part, &win));
    } else {
        part = malloc(WORDS * sizeof(long long));
        CHECK(part != NULL, "out of memory");
        CHECK_MPI(MPI_Win_create(part, WORDS * sizeof(long long), sizeof(long long), MPI_INFO_NULL, comm, &win));
    }
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
    for (int k = 0; k < WORDS; k++) part[k] = 0;
    part[1] = 1000 + me;
    CHECK_MPI(MPI_Win_unlock(me, win));
    CHECK_MPI(MPI_Barrier(comm));

    /* exclusive locks: read, flush, write back, read again */
    for (int round = 0; round < ROUNDS; round++)
        for (int i = 0; i < n; i++) {
            int t = (me + i) % n;
            long long v, again, one;
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
            CHECK_MPI(MPI_Get(&v, 1, MPI_LONG_LONG, t, 0, 1, MPI_LONG_LONG, win));
            CHECK_MPI(MPI_Win_flush(t, win));
            one = v + 1;
            CHECK_MPI(MPI_Put(&one, 1, MPI_LONG_LONG, t, 0, 1, MPI_LONG_LONG, win));
            CHECK_MPI(MPI_Win_flush(t, win));
            CHECK_MPI(MPI_Get(&again, 1, MPI_LONG_LONG, t, 0, 1, MPI_LONG_LONG, win));
            CHECK_MPI(MPI_Win_unlock(t, win));
            CHECK(again == v + 1, "%s: rank %d's counter changed under an exclusive lock: %lld, expected %lld", what, t,
                  again, v + 1);
        }
    CHECK_MPI(MPI_Barrier(comm));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
    CHECK(part[0] == (long long)n * ROUNDS, "%s: counter %lld after %d rounds of %d ranks", what, part[0], ROUNDS, n);
    CHECK_MPI(MPI_Win_unlock(me, win));

    /* shared locks: everyone reads what each owner stored */
    for (int t = 0; t < n; t++) {
        long long v = -1;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        CHECK_MPI(MPI_Get(&v, 1, MPI_LONG_LONG, t, 1, 1, MPI_LONG_LONG, win));
        CHECK_MPI(MPI_Win_unlock(t, win));
        CHECK(v == 1000 + t, "%s: rank %d's stored value read as %lld", what, t, v);
    }

    /* lock_all: accumulates, fetch-and-op and compare-and-swap on rank 0 */
    CHECK_MPI(MPI_Win_lock_all(0, win));
    long long mine = me + 1, old = -1, cas_old = -1;
    for (int t = 0; t < n; t++)
        CHECK_MPI(MPI_Accumulate(&mine, 1, MPI_LONG_LONG, t, 2, 1, MPI_LONG_LONG, MPI_SUM, win));
    CHECK_MPI(MPI_Fetch_and_op(&mine, &old, MPI_LONG_LONG, 0, 3, MPI_SUM, win));
    long long zero = 0, marker = me + 1;
    CHECK_MPI(MPI_Compare_and_swap(&marker, &zero, &cas_old, MPI_LONG_LONG, 0, 4, win));
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK(old >= 0 && old <= (long long)n * (n + 1) / 2 - mine, "%s: fetch-and-op returned %lld", what, old);
    long long winners = cas_old == 0;
    long long total_winners = 0;
    CHECK_MPI(MPI_Allreduce(&winners, &total_winners, 1, MPI_LONG_LONG, MPI_SUM, comm));
    CHECK(total_winners == 1, "%s: %lld ranks found the compare-and-swap word 0", what, total_winners);
    CHECK_MPI(MPI_Barrier(comm));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
    long long sum = (long long)n * (n + 1) / 2;
    CHECK(part[2] == sum, "%s: accumulated %lld, expected %lld", what, part[2], sum);
    if (me == 0) {
        CHECK(part[3] == sum, "%s: fetch-and-op total %lld, expected %lld", what, part[3], sum);
        CHECK(part[4] >= 1 && part[4] <= n, "%s: compare-and-swap word %lld", what, part[4]);
    }
    CHECK_MPI(MPI_Win_unlock(me, win));

    /* post/start/complete/wait in a ring */
    MPI_Group all, left, right;
    int l = (me + n - 1) % n, r = (me + 1) % n;
    CHECK_MPI(MPI_Comm_group(comm, &all));
    CHECK_MPI(MPI_Group_incl(all, 1, &l, &left));
    CHECK_MPI(MPI_Group_incl(all, 1, &r, &right));
    for (int round = 0; round < 3; round++) {
        long long v = 100 * round + me;
        CHECK_MPI(MPI_Win_post(left, 0, win));
        CHECK_MPI(MPI_Win_start(right, 0, win));
        CHECK_MPI(MPI_Put(&v, 1, MPI_LONG_LONG, r, 5, 1, MPI_LONG_LONG, win));
        CHECK_MPI(MPI_Win_complete(win));
        CHECK_MPI(MPI_Win_wait(win));
        CHECK(part[5] == 100 * round + l, "%s: ring round %d: %lld from rank %d", what, round, part[5], l);
    }
    MPI_Group_free(&left);
    MPI_Group_free(&right);
    MPI_Group_free(&all);
    CHECK_MPI(MPI_Win_free(&win));
    if (!allocate) free(part);
    mt_pass(what);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init(&argc, &argv);
    CHECK_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    int rank = mt_world_rank(), size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node, comm;
    int local_rank, local_size;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_size(node, &local_size);
    /* hosts interleaved: first every node's rank 0, then every rank 1 ... */
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, local_rank * size + rank, &comm));
    const char *reach = argc > 1 ? argv[1] : "msg";
    unsigned long long before = counter("onesided_requests_sent");
    /* the network's writes and reads (on one host a Win_create get is a
     * single copy, counted by cma, not here) */
    unsigned long long writes = net_counter("rput_ops"), reads = net_counter("rget_ops");
    exercise(comm, 1);
    exercise(comm, 0);
    bulk(comm, 1);
    bulk(comm, 0);
    unsigned long long sent = counter("onesided_requests_sent") - before;
    writes = net_counter("rput_ops") - writes;
    reads = net_counter("rget_ops") - reads;
    if (local_size < size) {
        CHECK(sent > 0, "no operation went to a rank on another host through its owner");
        if (!strcmp(reach, "net"))
            CHECK(writes > 0 && reads > 0, "puts and gets to other hosts: %llu network writes, %llu reads", writes,
                  reads);
        else CHECK(writes == 0, "%llu network writes where the owners carry puts out", writes);
    }
    mt_pass(local_size < size ? "ranks on other hosts reached through their owners" : "one host only");
    if (local_size < size)
        mt_pass(!strcmp(reach, "net") ? "puts and gets by the network's RMA" : "puts and gets by the owners");
    MPI_Comm_free(&comm);
    MPI_Comm_free(&node);
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
