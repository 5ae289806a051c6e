/* Non-overtaking order: messages from one sender that match the same
 * receive arrive in the order they were sent, whatever their size (zero
 * bytes, eager, rendezvous), the send mode (standard, synchronous, buffered,
 * blocking or not) and however the receives are posted (blocking, before or
 * after the messages arrive, with MPI_ANY_SOURCE / MPI_ANY_TAG).  Every
 * message carries its sequence number and its size is a function of it, so a
 * zero-byte message that overtook shows up as a wrong count.  Streams run to
 * oneself (COMM_SELF), between rank pairs (on a communicator of the pair, so
 * that wildcards see one sender only) and from every rank to rank 0. */
#include "mpitest.h"

/* MPICH 4.0 charges a buffered message more than its packed size plus
 * MPI_BSEND_OVERHEAD (it rounds for alignment), against the standard's
 * rule; it gets a little room per message. */
#ifdef MPICH_VERSION
#define PEER_BSEND_SLACK 16
#else
#define PEER_BSEND_SLACK 0
#endif

#define NMSG 40      /* messages per stream to oneself and to rank 0 */
#define NMSG_PAIR 24 /* per stream between pairs: two rounds of the sizes */
#define TAG_DATA 100 /* data tags are TAG_DATA + (seq % NTAGS) where tags vary */
#define NTAGS 3
#define TAG_TOKEN 90 /* zero-byte synchronisation between the two sides */

/* Sizes in bytes, cycled by sequence number: zero, small eager, around the
 * default 16 KiB eager limit and well past it. */
static const int sizes[] = {0, 8, 1024, 16000, 16384, 16385, 65536, 4, 0, 3000, 70000, 1};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define MAXSZ 70000

static int msg_size(int seq) { return sizes[seq % NSIZES]; }

static unsigned char pattern(int seq, int src, int k)
{
    return (unsigned char)(seq * 13 + src * 101 + k * 7 + (k >> 8));
}

/* The first four bytes (when there are four) are the sequence number. */
static void fill(unsigned char *b, int seq, int src)
{
    int n = msg_size(seq);
    for (int k = 0; k < n; k++) b[k] = pattern(seq, src, k);
    if (n >= 4) memcpy(b, &seq, sizeof seq);
}

static void check_msg(const unsigned char *b, int count, int seq, int src, const char *what)
{
    int n = msg_size(seq);
    if (count >= 4 && n >= 4) {
        int got;
        memcpy(&got, b, sizeof got);
        CHECK(got == seq, "%s: from %d expected message %d, got message %d (%d bytes)", what, src, seq, got, count);
    }
    CHECK(count == n, "%s: from %d message %d has %d bytes, expected %d (out of order?)", what, src, seq, count, n);
    for (int k = 4; k < n; k++)
        CHECK(b[k] == pattern(seq, src, k), "%s: from %d message %d byte %d is %d, expected %d", what, src, seq, k,
              b[k], pattern(seq, src, k));
}

/* Send kinds and receive kinds of one stream. */
enum { S_SEND, S_ISEND, S_SSEND, S_ISSEND, S_BSEND, S_IBSEND, S_MIXED, S_NKINDS };
enum { R_RECV, R_ANY, R_IRECV_BEFORE, R_IRECV_AFTER, R_IRECV_HALF, R_NKINDS };
static const char *skind_name[] = {"Send", "Isend", "Ssend", "Issend", "Bsend", "Ibsend", "mixed"};
static const char *rkind_name[] = {"Recv", "Recv(ANY_SOURCE,ANY_TAG)", "Irecv before", "Irecv after",
                                   "Irecv half before"};

static int blocking_kind(int sk) { return sk == S_SEND || sk == S_SSEND || sk == S_MIXED; }

/* Offsets of each message in one contiguous buffer of the whole stream. */
static size_t offset_of(int seq)
{
    size_t off = 0;
    for (int i = 0; i < seq; i++) off += (size_t)msg_size(i);
    return off;
}

/* Exactly the standard's rule: the packed size plus MPI_BSEND_OVERHEAD for
 * each message that can be in the buffer at once. */
/* Messages are MPI_BYTE, whose packed size is the byte count. */
static size_t bsend_entry(int bytes) { return (size_t)bytes + MPI_BSEND_OVERHEAD + PEER_BSEND_SLACK; }

static size_t bsend_space(int nmsg)
{
    size_t total = 0;
    for (int i = 0; i < nmsg; i++) total += bsend_entry(msg_size(i));
    return total;
}

/* vary: 0 one tag, 1 tags cycling by sequence number, 2 a tag of its own
 * (kept apart from the other parts so wildcard receives cannot mix them). */
static int tag_of(int seq, int vary)
{
    return vary == 1 ? TAG_DATA + seq % NTAGS : vary == 2 ? TAG_DATA + NTAGS : TAG_DATA;
}

/* Start (or do) the send of message seq with kind sk. */
static void send_one(int sk, int seq, const unsigned char *buf, int dst, int tag, MPI_Comm comm, MPI_Request *req)
{
    int n = msg_size(seq);
    *req = MPI_REQUEST_NULL;
    if (sk == S_MIXED) sk = (int[]){S_SEND, S_ISEND, S_SSEND, S_BSEND, S_ISSEND, S_IBSEND}[seq % 6];
    switch (sk) {
    case S_SEND: CHECK_MPI(MPI_Send(buf, n, MPI_BYTE, dst, tag, comm)); break;
    case S_ISEND: CHECK_MPI(MPI_Isend(buf, n, MPI_BYTE, dst, tag, comm, req)); break;
    case S_SSEND: CHECK_MPI(MPI_Ssend(buf, n, MPI_BYTE, dst, tag, comm)); break;
    case S_ISSEND: CHECK_MPI(MPI_Issend(buf, n, MPI_BYTE, dst, tag, comm, req)); break;
    case S_BSEND: CHECK_MPI(MPI_Bsend(buf, n, MPI_BYTE, dst, tag, comm)); break;
    case S_IBSEND: CHECK_MPI(MPI_Ibsend(buf, n, MPI_BYTE, dst, tag, comm, req)); break;
    }
}

/* Sender side of a stream of nmsg messages to dst.  `go` first waits for the
 * receiver's token (receives posted); `sent` sends a token once every send is
 * started (the receiver then posts its receives after arrival). */
static void sender(int sk, int nmsg, int dst, int vary, int go, int sent, MPI_Comm comm, int me_world)
{
    unsigned char *buf = malloc(offset_of(nmsg) + 1);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)nmsg);
    char *bbuf = NULL;
    int bsize = 0;
    CHECK(buf && reqs, "out of memory");
    int buffered = sk == S_BSEND || sk == S_IBSEND || sk == S_MIXED;
    if (buffered) {
        bsize = (int)bsend_space(nmsg);
        bbuf = malloc((size_t)bsize);
        CHECK(bbuf, "out of memory");
        CHECK_MPI(MPI_Buffer_attach(bbuf, bsize));
    }
    for (int i = 0; i < nmsg; i++) fill(buf + offset_of(i), i, me_world);
    if (go) CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, dst, TAG_TOKEN, comm, MPI_STATUS_IGNORE));
    for (int i = 0; i < nmsg; i++) send_one(sk, i, buf + offset_of(i), dst, tag_of(i, vary), comm, &reqs[i]);
    if (sent) CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, dst, TAG_TOKEN, comm));
    CHECK_MPI(MPI_Waitall(nmsg, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < nmsg; i++) CHECK(reqs[i] == MPI_REQUEST_NULL, "Waitall left request %d allocated", i);
    if (buffered) {
        void *d;
        int ds;
        CHECK_MPI(MPI_Buffer_detach(&d, &ds));
        CHECK(d == bbuf && ds == bsize, "Buffer_detach gave %p/%d", d, ds);
        free(bbuf);
    }
    free(reqs);
    free(buf);
}

/* Receiver side.  src_world seeds the expected contents. */
static void receiver(int rk, int nmsg, int src, int vary, int go, int sent, MPI_Comm comm, int src_world,
                     const char *what)
{
    unsigned char *buf = malloc(offset_of(nmsg) + (size_t)nmsg * MAXSZ + 1);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)nmsg);
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)nmsg);
    CHECK(buf && reqs && st, "out of memory");
    /* Each receive gets a buffer of the largest size, so a wrong match is
     * not hidden by truncation. */
#define RBUF(i) (buf + (size_t)(i)*MAXSZ)
    int posted = 0;
    if (rk == R_IRECV_BEFORE || rk == R_IRECV_HALF) {
        int upto = rk == R_IRECV_BEFORE ? nmsg : nmsg / 2;
        for (; posted < upto; posted++)
            CHECK_MPI(MPI_Irecv(RBUF(posted), MAXSZ, MPI_BYTE, src, tag_of(posted, vary), comm, &reqs[posted]));
    }
    if (go) CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, src, TAG_TOKEN, comm));
    if (sent) CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, src, TAG_TOKEN, comm, MPI_STATUS_IGNORE));
    if (rk == R_RECV || rk == R_ANY) {
        for (int i = 0; i < nmsg; i++) {
            MPI_Status s;
            int cnt = -1;
            memset(RBUF(0), 0xA5, MAXSZ);
            if (rk == R_ANY) CHECK_MPI(MPI_Recv(RBUF(0), MAXSZ, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &s));
            else CHECK_MPI(MPI_Recv(RBUF(0), MAXSZ, MPI_BYTE, src, tag_of(i, vary), comm, &s));
            CHECK_MPI(MPI_Get_count(&s, MPI_BYTE, &cnt));
            CHECK(s.MPI_SOURCE == src, "%s: message %d source %d, expected %d", what, i, s.MPI_SOURCE, src);
            CHECK(s.MPI_TAG == tag_of(i, vary), "%s: message %d tag %d, expected %d", what, i, s.MPI_TAG,
                  tag_of(i, vary));
            check_msg(RBUF(0), cnt, i, src_world, what);
        }
    } else {
        for (; posted < nmsg; posted++)
            CHECK_MPI(MPI_Irecv(RBUF(posted), MAXSZ, MPI_BYTE, src, tag_of(posted, vary), comm, &reqs[posted]));
        CHECK_MPI(MPI_Waitall(nmsg, reqs, st));
        for (int i = 0; i < nmsg; i++) {
            int cnt = -1;
            CHECK_MPI(MPI_Get_count(&st[i], MPI_BYTE, &cnt));
            CHECK(st[i].MPI_SOURCE == src && st[i].MPI_TAG == tag_of(i, vary), "%s: receive %d got source %d tag %d",
                  what, i, st[i].MPI_SOURCE, st[i].MPI_TAG);
            check_msg(RBUF(i), cnt, i, src_world, what);
        }
    }
#undef RBUF
    free(st);
    free(reqs);
    free(buf);
}

/* One stream between comm ranks src and dst of a two-rank communicator. */
static void stream(int sk, int rk, int src, int dst, MPI_Comm comm, int src_world, int nmsg)
{
    int me = mt_rank(comm);
    char what[128];
    snprintf(what, sizeof what, "%s -> %s", skind_name[sk], rkind_name[rk]);
    /* Tags vary when the receiver can tell them apart (ANY_TAG or one
     * receive per tag); the interleaved-tag case has its own part. */
    int vary = rk == R_ANY || sk % 2 == 1;
    int go = rk == R_IRECV_BEFORE || rk == R_IRECV_HALF;
    int sent = rk == R_IRECV_AFTER;
    if (me == src) sender(sk, nmsg, dst, vary, go, sent, comm, src_world);
    else if (me == dst) receiver(rk, nmsg, src, vary, go, sent, comm, src_world, what);
}

/* To oneself: nonblocking or buffered sends started, then received. */
static void self_streams(int world_rank)
{
    static const int kinds[] = {S_ISEND, S_ISSEND, S_BSEND, S_IBSEND};
    for (int k = 0; k < 4; k++) {
        int sk = kinds[k];
        for (int rk = 0; rk < R_NKINDS; rk++) {
            int vary = rk == R_ANY || sk % 2 == 1;
            unsigned char *sbuf = malloc(offset_of(NMSG) + 1), *rbuf = malloc((size_t)NMSG * MAXSZ);
            MPI_Request sreq[NMSG], rreq[NMSG];
            MPI_Status st[NMSG];
            char *bbuf = NULL;
            int bsize = (int)bsend_space(NMSG);
            CHECK(sbuf && rbuf, "out of memory");
            if (sk == S_BSEND || sk == S_IBSEND) {
                bbuf = malloc((size_t)bsize);
                CHECK(bbuf, "out of memory");
                CHECK_MPI(MPI_Buffer_attach(bbuf, bsize));
            }
            int posted = 0;
            if (rk == R_IRECV_BEFORE || rk == R_IRECV_HALF)
                for (int upto = rk == R_IRECV_BEFORE ? NMSG : NMSG / 2; posted < upto; posted++)
                    CHECK_MPI(MPI_Irecv(rbuf + (size_t)posted * MAXSZ, MAXSZ, MPI_BYTE, 0, tag_of(posted, vary),
                                        MPI_COMM_SELF, &rreq[posted]));
            for (int i = 0; i < NMSG; i++) {
                fill(sbuf + offset_of(i), i, world_rank);
                send_one(sk, i, sbuf + offset_of(i), 0, tag_of(i, vary), MPI_COMM_SELF, &sreq[i]);
            }
            if (rk == R_RECV || rk == R_ANY) {
                for (int i = 0; i < NMSG; i++) {
                    int cnt;
                    if (rk == R_ANY)
                        CHECK_MPI(MPI_Recv(rbuf, MAXSZ, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &st[0]));
                    else CHECK_MPI(MPI_Recv(rbuf, MAXSZ, MPI_BYTE, 0, tag_of(i, vary), MPI_COMM_SELF, &st[0]));
                    CHECK_MPI(MPI_Get_count(&st[0], MPI_BYTE, &cnt));
                    CHECK(st[0].MPI_SOURCE == 0 && st[0].MPI_TAG == tag_of(i, vary), "self: source %d tag %d",
                          st[0].MPI_SOURCE, st[0].MPI_TAG);
                    check_msg(rbuf, cnt, i, world_rank, "self");
                }
            } else {
                for (; posted < NMSG; posted++)
                    CHECK_MPI(MPI_Irecv(rbuf + (size_t)posted * MAXSZ, MAXSZ, MPI_BYTE, 0, tag_of(posted, vary),
                                        MPI_COMM_SELF, &rreq[posted]));
                CHECK_MPI(MPI_Waitall(NMSG, rreq, st));
                for (int i = 0; i < NMSG; i++) {
                    int cnt;
                    CHECK_MPI(MPI_Get_count(&st[i], MPI_BYTE, &cnt));
                    check_msg(rbuf + (size_t)i * MAXSZ, cnt, i, world_rank, "self");
                }
            }
            CHECK_MPI(MPI_Waitall(NMSG, sreq, MPI_STATUSES_IGNORE));
            if (bbuf) {
                void *d;
                int ds;
                CHECK_MPI(MPI_Buffer_detach(&d, &ds));
                free(bbuf);
            }
            free(sbuf);
            free(rbuf);
        }
    }
    mt_pass("p2p_order: to oneself, Isend/Issend/Bsend/Ibsend with Recv, wildcards, Irecv before/after");
}

/* Buffered sends of rendezvous size, none received before the last one is
 * started: they are all in the buffer at once, which is sized by the
 * standard's rule exactly (packed size + MPI_BSEND_OVERHEAD each).  Sizes are odd so that any rounding of the space
 * charged per message beyond MPI_BSEND_OVERHEAD shows as MPI_ERR_BUFFER. */
static void bsend_full_buffer(int world_rank)
{
    enum { K = 12, BN = 20001 };
    int bsize = K * (int)bsend_entry(BN);
    unsigned char *bbuf = malloc((size_t)bsize), *s = malloc(BN), *r = malloc(BN + 1);
    CHECK(bbuf && s && r, "out of memory");
    CHECK_MPI(MPI_Buffer_attach(bbuf, bsize));
    for (int i = 0; i < K; i++) {
        for (int k = 0; k < BN; k++) s[k] = pattern(i, world_rank, k);
        memcpy(s, &i, sizeof i);
        CHECK_MPI(MPI_Bsend(s, BN, MPI_BYTE, 0, TAG_DATA, MPI_COMM_SELF));
    }
    for (int i = 0; i < K; i++) {
        MPI_Status st;
        int cnt, seq;
        CHECK_MPI(MPI_Recv(r, BN + 1, MPI_BYTE, 0, TAG_DATA, MPI_COMM_SELF, &st));
        CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &cnt));
        memcpy(&seq, r, sizeof seq);
        CHECK(cnt == BN && seq == i, "full Bsend buffer: receive %d got message %d of %d bytes", i, seq, cnt);
        for (int k = 4; k < BN; k++)
            CHECK(r[k] == pattern(i, world_rank, k), "full Bsend buffer: message %d byte %d", i, k);
    }
    void *d;
    int ds;
    CHECK_MPI(MPI_Buffer_detach(&d, &ds));
    free(r);
    free(s);
    free(bbuf);
    mt_pass("p2p_order: Bsend to oneself with a buffer of exactly (size + MPI_BSEND_OVERHEAD) per message");
}

/* Two tags interleaved by one sender; the receiver takes all of one tag
 * first, then the other: order holds per (source, tag). */
static void interleaved_tags(int peer, int is_sender, MPI_Comm comm, int world_rank, int peer_world)
{
    enum { M = 2 * NMSG };
    if (is_sender) {
        unsigned char *buf = malloc(offset_of(M) + 1);
        MPI_Request reqs[M];
        for (int i = 0; i < M; i++) {
            fill(buf + offset_of(i), i, world_rank);
            CHECK_MPI(MPI_Isend(buf + offset_of(i), msg_size(i), MPI_BYTE, peer, TAG_DATA + i % 2, comm, &reqs[i]));
        }
        CHECK_MPI(MPI_Waitall(M, reqs, MPI_STATUSES_IGNORE));
        free(buf);
    } else {
        unsigned char *buf = malloc(MAXSZ);
        for (int odd = 1; odd >= 0; odd--)
            for (int i = odd; i < M; i += 2) {
                MPI_Status s;
                int cnt;
                CHECK_MPI(MPI_Recv(buf, MAXSZ, MPI_BYTE, peer, TAG_DATA + odd, comm, &s));
                CHECK_MPI(MPI_Get_count(&s, MPI_BYTE, &cnt));
                check_msg(buf, cnt, i, peer_world, "interleaved tags");
            }
        free(buf);
    }
}

/* Every rank (rank 0 included, to itself) sends to rank 0; rank 0 takes the
 * messages with wildcards and checks the order per sender. */
static void all_to_one(int rank, int size)
{
    int m = NMSG;
    /* Part 1: blocking wildcard receives; senders use a kind by rank. */
    if (rank != 0) {
        static const int kinds[] = {S_SEND, S_ISEND, S_SSEND, S_BSEND, S_MIXED, S_ISSEND, S_IBSEND};
        sender(kinds[rank % 7], m, 0, 1, 0, 0, MPI_COMM_WORLD, rank);
    } else {
        unsigned char *own = malloc(offset_of(m) + 1), *buf = malloc(MAXSZ);
        MPI_Request oreq[NMSG];
        int *next = calloc((size_t)size, sizeof(int));
        CHECK(own && buf && next, "out of memory");
        for (int i = 0; i < m; i++) {
            fill(own + offset_of(i), i, 0);
            CHECK_MPI(MPI_Isend(own + offset_of(i), msg_size(i), MPI_BYTE, 0, tag_of(i, 1), MPI_COMM_WORLD, &oreq[i]));
        }
        for (int k = 0; k < m * size; k++) {
            MPI_Status s;
            int cnt;
            CHECK_MPI(MPI_Recv(buf, MAXSZ, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &s));
            int src = s.MPI_SOURCE;
            CHECK(src >= 0 && src < size, "source %d", src);
            CHECK(next[src] < m, "more than %d messages from %d", m, src);
            CHECK(s.MPI_TAG == tag_of(next[src], 1), "from %d message %d has tag %d, expected %d", src, next[src],
                  s.MPI_TAG, tag_of(next[src], 1));
            CHECK_MPI(MPI_Get_count(&s, MPI_BYTE, &cnt));
            check_msg(buf, cnt, next[src], src, "all to one, ANY_SOURCE/ANY_TAG");
            next[src]++;
        }
        for (int r = 0; r < size; r++) CHECK_EQ(next[r], m);
        CHECK_MPI(MPI_Waitall(m, oreq, MPI_STATUSES_IGNORE));
        free(next);
        free(buf);
        free(own);
    }
    mt_pass("p2p_order: all to one, Send/Isend/Ssend/Bsend/mixed senders, Recv(ANY_SOURCE, ANY_TAG)");

    /* Part 2: rank 0 preposts ANY_SOURCE receives (one tag) before anything is
     * sent; they are matched in posting order, so per sender the sequence
     * numbers must rise along the posted receives. */
    int m2 = NMSG / 2;
    if (rank == 0) {
        int n = m2 * (size - 1);
        unsigned char *buf = malloc((size_t)(n ? n : 1) * MAXSZ);
        MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)(n ? n : 1));
        MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)(n ? n : 1));
        int *next = calloc((size_t)size, sizeof(int));
        CHECK(buf && reqs && st && next, "out of memory");
        for (int k = 0; k < n; k++)
            CHECK_MPI(MPI_Irecv(buf + (size_t)k * MAXSZ, MAXSZ, MPI_BYTE, MPI_ANY_SOURCE, tag_of(0, 2), MPI_COMM_WORLD,
                                &reqs[k]));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_MPI(MPI_Waitall(n, reqs, st));
        for (int k = 0; k < n; k++) {
            int src = st[k].MPI_SOURCE, cnt;
            CHECK(src > 0 && src < size, "source %d", src);
            CHECK(next[src] < m2, "too many from %d", src);
            CHECK_MPI(MPI_Get_count(&st[k], MPI_BYTE, &cnt));
            check_msg(buf + (size_t)k * MAXSZ, cnt, next[src], src, "all to one, preposted ANY_SOURCE");
            next[src]++;
        }
        free(next);
        free(st);
        free(reqs);
        free(buf);
    } else {
        static const int kinds[] = {S_ISEND, S_SEND, S_ISSEND, S_SSEND, S_BSEND, S_MIXED};
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        sender(kinds[rank % 6], m2, 0, 2, 0, 0, MPI_COMM_WORLD, rank);
    }
    mt_pass("p2p_order: all to one, ANY_SOURCE receives posted before the messages");

    /* Part 3: rank 0 takes one message from each sender in turn, naming the
     * source, while the others are still sending (Isend). */
    if (rank == 0) {
        unsigned char *buf = malloc(MAXSZ);
        for (int i = 0; i < m; i++)
            for (int src = 1; src < size; src++) {
                MPI_Status s;
                int cnt;
                CHECK_MPI(MPI_Recv(buf, MAXSZ, MPI_BYTE, src, MPI_ANY_TAG, MPI_COMM_WORLD, &s));
                CHECK_MPI(MPI_Get_count(&s, MPI_BYTE, &cnt));
                CHECK(s.MPI_TAG == tag_of(i, 1), "from %d message %d tag %d", src, i, s.MPI_TAG);
                check_msg(buf, cnt, i, src, "all to one, round robin");
            }
        free(buf);
    } else {
        sender(S_ISEND, m, 0, 1, 0, 0, MPI_COMM_WORLD, rank);
    }
    mt_pass("p2p_order: all to one, round-robin receives by source and ANY_TAG");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(MPI_COMM_WORLD), size = mt_size(MPI_COMM_WORLD);

    self_streams(rank);
    bsend_full_buffer(rank);

    /* Pairs (2k, 2k+1) on a communicator of their own; an odd rank out
     * still takes part in the split and the all-to-one parts. */
    MPI_Comm pair;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair));
    int prank = mt_rank(pair), psize = mt_size(pair);
    if (psize == 2) {
        int peer_world = rank ^ 1;
        for (int dir = 0; dir < 2; dir++) {
            int src = dir, dst = 1 - dir;
            int src_world = (rank & ~1) + src;
            for (int sk = 0; sk < S_NKINDS; sk++)
                for (int rk = 0; rk < R_NKINDS; rk++) {
                    /* A blocking sender cannot wait for receives that are
                     * posted only after all its sends. */
                    if (rk == R_IRECV_AFTER && blocking_kind(sk)) continue;
                    stream(sk, rk, src, dst, pair, src_world, NMSG_PAIR);
                }
            interleaved_tags(1 - prank, prank == src, pair, rank, peer_world);
        }
    }
    CHECK_MPI(MPI_Comm_free(&pair));
    if (size >= 2)
        mt_pass("p2p_order: pairs, every send mode x Recv/wildcards/Irecv before/after/half, interleaved tags");

    all_to_one(rank, size);
    MPI_Finalize();
    return 0;
}
