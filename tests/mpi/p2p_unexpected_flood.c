/* A flood of unexpected messages: every rank but 0 starts thousands of
 * small sends to rank 0 (1 KiB, every 16th one 8 KiB) before rank 0 posts
 * any receive for them.  Rank 0 first waits only for a "done" message from
 * each sender (sent after the flood, so the whole flood has reached rank 0
 * unmatched), then receives everything with wildcards and by source and
 * checks order and contents.
 *
 * With LeanMPI, LEANMPI_UNEXPECTED_LIMIT (bytes, default 64 MiB) bounds the
 * eager data a receiver holds unmatched; past it senders switch to
 * rendezvous.  Rank 0 reads its anonymous resident memory before the flood
 * and when every "done" has arrived (the unexpected queue is then at its
 * largest) and checks the growth stays below the limit plus 16 MiB.  The
 * test is registered a second time with a small limit, where the flood is
 * far larger than that bound.
 *
 * The sends are nonblocking and completed only after the "done" message,
 * so the program is correct whether or not the implementation buffers.
 * Every message's sequence number is its tag; its contents come from one of
 * a few buffers chosen by the sequence number, so sends share buffers
 * (allowed since MPI-3) and a mixed-up message still shows. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "mpitest.h"
#include <time.h>

/* The memory bound is checked only with LeanMPI, and not under
 * AddressSanitizer, whose quarantine keeps freed blocks resident. */
#if defined(LEANMPI) && !defined(__SANITIZE_ADDRESS__)
#define CHECK_MEMORY_BOUND 1
#endif

#define TOTAL_MSGS 20000 /* over all senders */
#define SMALL 1024
#define LARGE 8192
#define NBUF 16
#define TAG_DONE 32700 /* above every sequence number, below the minimum MPI_TAG_UB */

static int msg_size(int seq) { return seq % NBUF == NBUF - 1 ? LARGE : SMALL; }

static unsigned char pattern(int src, int which, int k)
{
    return (unsigned char)(src * 37 + which * 11 + k * 3 + (k >> 8));
}

/* Resident anonymous memory in bytes (VmRSS where RssAnon is missing). */
static long long resident_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long anon = -1, rss = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        long long v;
        if (sscanf(line, "RssAnon: %lld kB", &v) == 1) anon = v * 1024;
        else if (sscanf(line, "VmRSS: %lld kB", &v) == 1) rss = v * 1024;
    }
    fclose(f);
    return anon >= 0 ? anon : rss;
}

static void make_buffers(unsigned char *bufs[NBUF], int src)
{
    for (int w = 0; w < NBUF; w++) {
        int n = msg_size(w);
        bufs[w] = malloc((size_t)n);
        CHECK(bufs[w], "out of memory");
        for (int k = 0; k < n; k++) bufs[w][k] = pattern(src, w, k);
    }
}

static void check_msg(const unsigned char *b, const MPI_Status *st, int src, int seq, const char *what)
{
    int cnt = -1;
    CHECK(st->MPI_SOURCE == src, "%s: source %d, expected %d", what, st->MPI_SOURCE, src);
    CHECK(st->MPI_TAG == seq, "%s: from %d got message %d, expected %d (out of order)", what, src, st->MPI_TAG, seq);
    CHECK_MPI(MPI_Get_count(st, MPI_BYTE, &cnt));
    CHECK(cnt == msg_size(seq), "%s: from %d message %d has %d bytes, expected %d", what, src, seq, cnt, msg_size(seq));
    for (int k = 0; k < cnt; k++)
        CHECK(b[k] == pattern(src, seq % NBUF, k), "%s: from %d message %d byte %d is %d, expected %d", what, src, seq,
              k, b[k], pattern(src, seq % NBUF, k));
}

/* Start all sends of one sender, then the "done" message; complete all. */
static void flood_sender(int dst, int nmsg, int me, MPI_Comm comm)
{
    unsigned char *bufs[NBUF];
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)(nmsg + 1));
    int done = nmsg;
    CHECK(reqs, "out of memory");
    make_buffers(bufs, me);
    for (int i = 0; i < nmsg; i++) CHECK_MPI(MPI_Isend(bufs[i % NBUF], msg_size(i), MPI_BYTE, dst, i, comm, &reqs[i]));
    CHECK_MPI(MPI_Isend(&done, 1, MPI_INT, dst, TAG_DONE, comm, &reqs[nmsg]));
    CHECK_MPI(MPI_Waitall(nmsg + 1, reqs, MPI_STATUSES_IGNORE));
    for (int w = 0; w < NBUF; w++) free(bufs[w]);
    free(reqs);
}

/* Rank 0 takes the flood: the first half of all messages with
 * MPI_ANY_SOURCE/MPI_ANY_TAG, the rest source by source in turn. */
static void flood_receiver(int size, int nmsg, MPI_Comm comm)
{
    unsigned char *buf = malloc(LARGE);
    int *next = calloc((size_t)size, sizeof(int));
    long total = (long)nmsg * (size - 1), got = 0;
    CHECK(buf && next, "out of memory");
    for (; got < total / 2; got++) {
        MPI_Status st;
        CHECK_MPI(MPI_Recv(buf, LARGE, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st));
        int src = st.MPI_SOURCE;
        CHECK(src > 0 && src < size && next[src]<nmsg, "message from %d (already %d from it)", src, src> 0 && src < size
                  ? next[src]
                  : -1);
        check_msg(buf, &st, src, next[src], "ANY_SOURCE/ANY_TAG");
        next[src]++;
    }
    while (got < total)
        for (int src = 1; src < size; src++) {
            if (next[src] == nmsg) continue;
            MPI_Status st;
            CHECK_MPI(MPI_Recv(buf, LARGE, MPI_BYTE, src, MPI_ANY_TAG, comm, &st));
            check_msg(buf, &st, src, next[src], "by source");
            next[src]++;
            got++;
        }
    for (int src = 1; src < size; src++) CHECK_EQ(next[src], nmsg);
    /* Nothing more is there. */
    int flag = 1;
    CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a message is left after the flood");
    free(next);
    free(buf);
}

#ifdef CHECK_MEMORY_BOUND
static long long unexpected_limit(void)
{
    const char *s = getenv("LEANMPI_UNEXPECTED_LIMIT");
    long long v = 64LL << 20;
    if (s && *s) {
        char *end;
        long long x = strtoll(s, &end, 0);
        if (*end == 'k' || *end == 'K') x <<= 10;
        else if (*end == 'm' || *end == 'M') x <<= 20;
        else if (*end == 'g' || *end == 'G') x <<= 30;
        if (x >= 0) v = x;
    }
    return v;
}
#endif

/* One process: it floods itself (nonblocking sends, then receives).  With
 * LeanMPI the memory held after the first receive (when every queued message
 * has been offered to the matching layer) is checked as with several ranks. */
static void self_flood(int nmsg)
{
    unsigned char *bufs[NBUF], *buf = malloc(LARGE);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)nmsg);
    CHECK(buf && reqs, "out of memory");
    make_buffers(bufs, 0);
    long long before = resident_bytes(), flood_bytes = 0;
    for (int i = 0; i < nmsg; i++) {
        CHECK_MPI(MPI_Isend(bufs[i % NBUF], msg_size(i), MPI_BYTE, 0, i, MPI_COMM_SELF, &reqs[i]));
        flood_bytes += msg_size(i);
    }
    for (int i = 0; i < nmsg; i++) {
        MPI_Status st;
        CHECK_MPI(MPI_Recv(buf, LARGE, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &st));
        check_msg(buf, &st, 0, i, "to oneself");
#ifdef CHECK_MEMORY_BOUND
        if (i == 0) {
            /* Requests and queued headers are the program's own (one per
             * outstanding send); data beyond the limit must not be copied. */
            long long after = resident_bytes();
            long long bound = unexpected_limit() + (16LL << 20);
            CHECK(before > 0 && after > 0, "cannot read /proc/self/status");
            CHECK(after - before < bound,
                  "resident memory grew by %lld bytes during a flood of %lld bytes to oneself, bound %lld",
                  after - before, flood_bytes, bound);
        }
#endif
    }
    CHECK_MPI(MPI_Waitall(nmsg, reqs, MPI_STATUSES_IGNORE));
    for (int w = 0; w < NBUF; w++) free(bufs[w]);
    free(reqs);
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(MPI_COMM_WORLD), size = mt_size(MPI_COMM_WORLD);

    if (size == 1) {
        self_flood(TOTAL_MSGS);
        mt_pass("p2p_unexpected_flood: 20000 unexpected messages to oneself, in order");
        MPI_Finalize();
        return 0;
    }

    int nmsg = TOTAL_MSGS / (size - 1);
    long long flood_bytes = 0;
    for (int i = 0; i < nmsg; i++) flood_bytes += msg_size(i);
    flood_bytes *= size - 1;

    /* A first exchange sets up whatever a connection needs, so that it is
     * not counted as flood memory. */
    int token = 0;
    if (rank == 0) {
        for (int src = 1; src < size; src++)
            CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, src, TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        CHECK_MPI(MPI_Send(&token, 1, MPI_INT, 0, TAG_DONE, MPI_COMM_WORLD));
    }

    if (rank != 0) {
        flood_sender(0, nmsg, rank, MPI_COMM_WORLD);
    } else {
        long long before = resident_bytes();
        /* Let the senders run ahead while rank 0 does not take anything. */
        struct timespec nap = {0, 100 * 1000 * 1000};
        nanosleep(&nap, NULL);
        MPI_Request *done = malloc(sizeof(MPI_Request) * (size_t)size);
        int *dv = malloc(sizeof(int) * (size_t)size);
        CHECK(done && dv, "out of memory");
        for (int src = 1; src < size; src++)
            CHECK_MPI(MPI_Irecv(&dv[src], 1, MPI_INT, src, TAG_DONE, MPI_COMM_WORLD, &done[src]));
        CHECK_MPI(MPI_Waitall(size - 1, done + 1, MPI_STATUSES_IGNORE));
        for (int src = 1; src < size; src++) CHECK_EQ(dv[src], nmsg);
        long long after = resident_bytes();
        char msg[256];
#ifdef CHECK_MEMORY_BOUND
        long long limit = unexpected_limit(), bound = limit + (16LL << 20);
        CHECK(before > 0 && after > 0, "cannot read /proc/self/status");
        CHECK(after - before < bound,
              "resident memory grew by %lld bytes during a flood of %lld bytes, bound %lld (unexpected limit %lld)",
              after - before, flood_bytes, bound, limit);
        snprintf(msg, sizeof msg,
                 "p2p_unexpected_flood: memory growth %.1f MiB for a %.1f MiB flood, below limit + 16 MiB = %.1f MiB",
                 (after - before) / 1048576.0, flood_bytes / 1048576.0, bound / 1048576.0);
#else
        snprintf(msg, sizeof msg, "p2p_unexpected_flood: memory growth %.1f MiB for a %.1f MiB flood (not checked)",
                 (after - before) / 1048576.0, flood_bytes / 1048576.0);
#endif
        mt_pass(msg);
        flood_receiver(size, nmsg, MPI_COMM_WORLD);
        free(dv);
        free(done);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    mt_pass("p2p_unexpected_flood: every rank floods rank 0 with unexpected messages, received in order");
    MPI_Finalize();
    return 0;
}
