/* Active messages through the transport interface between forked ranks:
 * per-sender order with several senders (some with fast boxes, one without),
 * cell exhaustion and recovery, loopback, argument errors. */
#include "transport_harness.h"

typedef struct hdr {
    uint8_t id;
    uint8_t pad[3];
    uint32_t seq;
} hdr;

enum { AM_DATA = 1, AM_SELF = 2 };

static uint32_t next_seq[H_MAX_RANKS];
static long received;

static size_t size_of(uint32_t seq) { return (seq * 7919u) % 6000u; }

static void data_handler(int src, const void *h, size_t hl, const void *p, size_t pl)
{
    const hdr *m = h;
    CHECK(hl == sizeof(hdr));
    CHECK(src >= 0 && src < H.n);
    if (m->seq != next_seq[src]) fprintf(stderr, "from %d: got %u, expected %u\n", src, m->seq, next_seq[src]);
    CHECK(m->seq == next_seq[src]);
    CHECK(pl == size_of(m->seq));
    const unsigned char *b = p;
    for (size_t i = 0; i < pl; i += 97) CHECK(b[i] == (unsigned char)(m->seq + i));
    next_seq[src]++;
    received++;
}

static void fill(unsigned char *buf, uint32_t seq, size_t len)
{
    for (size_t i = 0; i < len; i++) buf[i] = (unsigned char)(seq + i);
}

/* --- several senders, one receiver --------------------------------------- */
#define SENDERS 3
#define PER_SENDER 100000

static int many_to_one(int r)
{
    h_init_rank(r, 8, 2, 0); /* 2 fast-box slots for 3 senders: one stays on cells */
    lm_transport_register_am(AM_DATA, data_handler);
    h_barrier();
    if (r == 0) {
        while (received < (long)SENDERS * PER_SENDER)
            if (lm_transport_progress() == 0) sched_yield();
        for (int s = 1; s <= SENDERS; s++) CHECK(next_seq[s] == PER_SENDER);
        lm_transport_counters c;
        lm_transport_get_counters("shm", &c);
        CHECK(c.am_received == (uint64_t)SENDERS * PER_SENDER);
    } else {
        static unsigned char buf[8192];
        for (uint32_t seq = 0; seq < PER_SENDER; seq++) {
            hdr m = {AM_DATA, {0}, seq};
            fill(buf, seq, size_of(seq));
            h_send(0, &m, sizeof m, buf, size_of(seq));
        }
        lm_transport_counters c;
        lm_transport_get_counters("shm", &c);
        printf("sender %d: %llu via fast box, %llu via cells, %llu EAGAIN\n", r, (unsigned long long)c.fastbox_sent,
               (unsigned long long)c.queue_sent, (unsigned long long)c.send_eagain);
        CHECK(c.am_sent == PER_SENDER);
    }
    h_barrier();
    lm_transport_finalize();
    return 0;
}

/* --- cell exhaustion ------------------------------------------------------ */
static int exhaustion(int r)
{
    h_init_rank(r, 0, 0, 0); /* cells only */
    lm_transport_register_am(AM_DATA, data_handler);
    h_barrier();
    _Atomic uint64_t *gate = &H.ctl->word[0];
    uint32_t cells = ((lm_shm_area *)H.area)->cells_per_rank;
    if (r == 1) {
        unsigned char buf[8192];
        uint32_t seq = 0;
        for (; seq < cells; seq++) {
            hdr m = {AM_DATA, {0}, seq};
            fill(buf, seq, size_of(seq));
            CHECK(lm_transport_am_send(0, &m, sizeof m, buf, size_of(seq)) == LM_OK);
        }
        hdr m = {AM_DATA, {0}, seq};
        fill(buf, seq, size_of(seq));
        CHECK(lm_transport_am_send(0, &m, sizeof m, buf, size_of(seq)) == LM_EAGAIN);
        CHECK(lm_transport_am_send(0, &m, sizeof m, buf, size_of(seq)) == LM_EAGAIN);
        lm_transport_counters c;
        lm_transport_get_counters(NULL, &c);
        CHECK(c.send_eagain == 2 && c.queue_sent == cells);
        atomic_store(&gate[0], 1); /* let the receiver drain */
        h_send(0, &m, sizeof m, buf, size_of(seq));
        for (seq++; seq < 10 * cells; seq++) {
            hdr m2 = {AM_DATA, {0}, seq};
            fill(buf, seq, size_of(seq));
            h_send(0, &m2, sizeof m2, buf, size_of(seq));
        }
    } else {
        while (atomic_load(&gate[0]) == 0) sched_yield(); /* deliberately not progressing */
        while (received < 10 * (long)cells)
            if (lm_transport_progress() == 0) sched_yield();
        CHECK(next_seq[1] == 10 * cells);
    }
    h_barrier();
    lm_transport_finalize();
    return 0;
}

/* --- loopback and argument errors ---------------------------------------- */
static int self_depth, self_count;

static void self_handler(int src, const void *h, size_t hl, const void *p, size_t pl)
{
    const hdr *m = h;
    CHECK(src == 0);
    CHECK(++self_depth == 1); /* never re-entered */
    CHECK(m->seq == (uint32_t)self_count);
    CHECK(pl == 5 && memcmp(p, "hello", 5) == 0);
    self_count++;
    if (m->seq < 9) {
        hdr n = {AM_SELF, {0}, m->seq + 1};
        /* Queued, delivered by a later progress call. */
        CHECK(lm_transport_am_send(0, &n, sizeof n, "hello", 5) == LM_OK);
        CHECK(self_count == (int)m->seq + 1);
    }
    self_depth--;
}

static int loopback(int r)
{
    h_init_rank(r, 8, 8, 0);
    lm_transport_register_am(AM_SELF, self_handler);
    hdr m = {AM_SELF, {0}, 0};
    CHECK(lm_transport_am_send(0, &m, sizeof m, "hello", 5) == LM_OK);
    CHECK(self_count == 0);
    for (int i = 1; i <= 10; i++) {
        CHECK(lm_transport_progress() == 1);
        CHECK(self_count == i);
    }
    CHECK(lm_transport_progress() == 0);

    /* Errors. */
    CHECK(lm_transport_am_send(5, &m, sizeof m, NULL, 0) == LM_EPEER);
    CHECK(lm_transport_am_send(0, &m, 0, NULL, 0) == LM_EINVAL);
    CHECK(lm_transport_am_send(0, &m, LM_AM_HDR_MAX + 1, NULL, 0) == LM_EINVAL);
    size_t max = lm_transport_max_payload(0);
    CHECK(max >= 16000);
    static unsigned char big[LM_SHM_CELL_SIZE * 2];
    hdr d = {AM_DATA, {0}, 0};
    CHECK(lm_transport_am_send(0, &d, sizeof d, big, max + 1) == LM_EINVAL);
    CHECK(strcmp(lm_transport_rget_mechanism(5), "none") == 0);
    lm_transport_counters c;
    lm_transport_get_counters("self", &c);
    CHECK(c.am_sent == 10 && c.am_received == 10 && c.am_bytes_received == 50);
    lm_transport_finalize();
    return 0;
}

/* --- a sender's fast-box budget ------------------------------------------- */
#define PER_RECEIVER 1000

static void small_handler(int src, const void *h, size_t hl, const void *p, size_t pl)
{
    const hdr *m = h;
    uint32_t v;
    CHECK(hl == sizeof(hdr) && pl == sizeof v && src == 0);
    memcpy(&v, p, sizeof v);
    CHECK(m->seq == next_seq[src] && v == m->seq * 3u);
    next_seq[src]++;
    received++;
}

/* Rank 0 may hold a fast box at one receiver only: after its first
 * receiver's box, everything to the second goes through cells (and still
 * arrives in order). */
static int fastbox_budget(int r)
{
    h_init_rank_peers(r, 8, 2, 1, 0);
    lm_transport_register_am(AM_DATA, small_handler);
    h_barrier();
    if (r == 0) {
        for (int dst = 1; dst <= 2; dst++)
            for (uint32_t seq = 0; seq < PER_RECEIVER; seq++) {
                hdr m = {AM_DATA, {0}, seq};
                uint32_t v = seq * 3u; /* small: fits a fast-box entry */
                h_send(dst, &m, sizeof m, &v, sizeof v);
            }
        lm_transport_counters c;
        lm_transport_get_counters("shm", &c);
        printf("budget 1: %llu via fast box, %llu via cells\n", (unsigned long long)c.fastbox_sent,
               (unsigned long long)c.queue_sent);
        CHECK(c.fastbox_sent > 0 && c.fastbox_sent < PER_RECEIVER);
        CHECK(c.queue_sent > PER_RECEIVER);
    } else {
        while (received < PER_RECEIVER)
            if (lm_transport_progress() == 0) sched_yield();
    }
    h_barrier();
    lm_transport_finalize();
    return 0;
}

/* --- pipes ----------------------------------------------------------------- */

/* Every rank owns the same pipes; a peer's pipe is where its owner sees it
 * (rank 0 writes a pattern into every pipe of rank 1, rank 1 reads it in
 * its own), pipes do not overlap, and the counters add what they are told. */
static int pipes(int r)
{
    h_init_rank(r, 8, 8, 0);
    size_t bytes = 0;
    int n = lm_transport_pipes(&bytes);
    CHECK(n == LM_SHM_PIPES && bytes == LM_SHM_PIPE_BYTES);
    CHECK(lm_transport_pipe(r, -1) == NULL && lm_transport_pipe(r, n) == NULL && lm_transport_pipe(7, 0) == NULL);
    for (int i = 0; i + 1 < n; i++) {
        char *a = lm_transport_pipe(1, i), *b = lm_transport_pipe(1, i + 1);
        CHECK(a && b && b >= a + bytes);
    }
    CHECK((char *)lm_transport_pipe(1, 0) >= (char *)lm_transport_pipe(0, n - 1) + bytes);
    if (r == 0)
        for (int i = 0; i < n; i++) memset(lm_transport_pipe(1, i), 'a' + i, bytes);
    h_barrier();
    if (r == 1)
        for (int i = 0; i < n; i++) {
            const char *p = lm_transport_pipe(1, i);
            for (size_t k = 0; k < bytes; k += 4093) CHECK(p[k] == 'a' + i);
            CHECK(p[bytes - 1] == 'a' + i);
        }
    lm_transport_count_pipe(1000, 24);
    lm_transport_counters c;
    lm_transport_get_counters("shm", &c);
    CHECK(c.pipe_bytes_sent == 1000 && c.pipe_bytes_received == 24);
    lm_transport_get_counters("self", &c);
    CHECK(c.pipe_bytes_sent == 0);
    h_barrier();
    lm_transport_finalize();
    return 0;
}

int main(void)
{
    CHECK(h_run(1, loopback, 30) == 0);
    printf("loopback: ok\n");
    CHECK(h_run(2, exhaustion, 60) == 0);
    printf("exhaustion: LM_EAGAIN then recovery: ok\n");
    CHECK(h_run(SENDERS + 1, many_to_one, 240) == 0);
    printf("many_to_one: %d senders x %d messages in order: ok\n", SENDERS, PER_SENDER);
    CHECK(h_run(3, fastbox_budget, 60) == 0);
    printf("fastbox_budget: one receiver with a fast box, the other on cells: ok\n");
    CHECK(h_run(2, pipes, 30) == 0);
    printf("pipes: each rank's own, reachable by its peers: ok\n");
    return 0;
}
