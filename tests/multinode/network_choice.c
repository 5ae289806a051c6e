/* Which network backend carries the traffic between hosts (run by
 * on_hosts.py; argv[1] names the one expected: tcp or ofi). Every rank
 * exchanges messages of 8 bytes, 60 KiB (eager on tcp) and 1 MiB
 * (rendezvous: read in place) with a rank on another host, also 40 of them
 * at once, unexpected, checks every byte, and then checks the MPI_T
 * counters: the expected backend sent and received, the other one did
 * not. */
#include "mpitest.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static MPI_T_pvar_session session;

static unsigned long long counter(const char *name)
{
    int idx, n;
    unsigned long long v;
    MPI_T_pvar_handle h;
    CHECK_MPI(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx));
    CHECK_MPI(MPI_T_pvar_handle_alloc(session, idx, NULL, &h, &n));
    CHECK_MPI(MPI_T_pvar_read(session, h, &v));
    CHECK_MPI(MPI_T_pvar_handle_free(session, &h));
    return v;
}

static void fill(unsigned char *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i * 31 + (size_t)seed * 7 + (i >> 12));
}

static void check(const unsigned char *b, size_t n, int seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (unsigned char)(i * 31 + (size_t)seed * 7 + (i >> 12)))
            CHECK(0, "%s: byte %zu of %zu is %d", what, i, n, b[i]);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init(&argc, &argv);
    CHECK_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK_MPI(MPI_T_pvar_session_create(&session));
    CHECK(argc > 1 && (!strcmp(argv[1], "tcp") || !strcmp(argv[1], "ofi")), "usage: %s tcp|ofi", argv[0]);
    const char *other = !strcmp(argv[1], "tcp") ? "ofi" : "tcp";
    int rank = mt_world_rank(), size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* the partner is half the job away: on another host (on_hosts.py
     * gives each host a block of ranks) */
    int partner = (rank + size / 2) % size;
    const size_t sizes[] = {8, 60 * 1024, 1 << 20};
    unsigned char *sb = malloc(1 << 20), *rb = malloc(1 << 20);
    CHECK(sb && rb, "out of memory");
    for (int k = 0; k < 3; k++) {
        fill(sb, sizes[k], rank + k);
        memset(rb, 0, sizes[k]);
        CHECK_MPI(MPI_Sendrecv(sb, (int)sizes[k], MPI_BYTE, partner, k, rb, (int)sizes[k], MPI_BYTE, partner, k,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        check(rb, sizes[k], partner + k, "sendrecv");
    }
    /* 40 messages at once, sent before the receives are posted */
    enum { MANY = 40, LEN = 96 * 1024 };
    unsigned char *many = malloc((size_t)MANY * LEN), *got = malloc((size_t)MANY * LEN);
    CHECK(many && got, "out of memory");
    MPI_Request req[MANY];
    for (int i = 0; i < MANY; i++) {
        fill(many + (size_t)i * LEN, LEN, rank * 100 + i);
        CHECK_MPI(MPI_Isend(many + (size_t)i * LEN, LEN, MPI_BYTE, partner, 100 + i, MPI_COMM_WORLD, &req[i]));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = MANY - 1; i >= 0; i--)
        CHECK_MPI(MPI_Recv(got + (size_t)i * LEN, LEN, MPI_BYTE, partner, 100 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Waitall(MANY, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < MANY; i++) check(got + (size_t)i * LEN, LEN, partner * 100 + i, "unexpected messages");
    char name[64];
    snprintf(name, sizeof name, "transport_%s_am_sent", argv[1]);
    unsigned long long sent = counter(name);
    snprintf(name, sizeof name, "transport_%s_am_received", argv[1]);
    unsigned long long received = counter(name);
    snprintf(name, sizeof name, "transport_%s_am_sent", other);
    unsigned long long other_sent = counter(name);
    CHECK(sent > 0 && received > 0, "the %s backend sent %llu and received %llu messages", argv[1], sent, received);
    CHECK(other_sent == 0, "the %s backend sent %llu messages", other, other_sent);
    free(sb);
    free(rb);
    free(many);
    free(got);
    CHECK_MPI(MPI_T_pvar_session_free(&session));
    MPI_T_finalize();
    mt_pass(argv[1]);
    MPI_Finalize();
    return 0;
}
