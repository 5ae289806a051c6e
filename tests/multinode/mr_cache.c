/* The network transport's registration cache, across hosts (run by
 * on_hosts.py with the ranks of the first half of MPI_COMM_WORLD on other
 * hosts than those of the second half).
 *
 * Each rank r of the first half sends rendezvous messages (above the eager
 * limit, so the receiver reads them from the sender's registered buffer)
 * to rank r + size/2: many from one buffer whose contents change between
 * sends, from pieces of it, alternately from a second buffer, and from
 * buffers freed and allocated again. The receiver checks every byte, so a
 * registration kept past its buffer would show as wrong data. The sender
 * checks its MPI_T counters: every exposure is a registration or a reuse,
 * and with the cache on (LEANMPI_OFI_MR_CACHE unset or not 0) repeated
 * sends from one buffer register it once; with it off, every send
 * registers. */
#include "mpitest.h"
#include <stdint.h>

#define LEN (256 * 1024)
#define REPEATS 12

static MPI_T_pvar_session session;
static MPI_T_pvar_handle h_reg, h_hits;

static MPI_T_pvar_handle counter(const char *name)
{
    int idx, n;
    MPI_T_pvar_handle h;
    CHECK_MPI(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx));
    CHECK_MPI(MPI_T_pvar_handle_alloc(session, idx, NULL, &h, &n));
    CHECK_EQ(n, 1);
    return h;
}

static unsigned long long read_counter(MPI_T_pvar_handle h)
{
    unsigned long long v;
    CHECK_MPI(MPI_T_pvar_read(session, h, &v));
    return v;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 9));
}

static void check(const unsigned char *p, size_t n, unsigned seed, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char want = (unsigned char)(seed * 131u + i * 7u + (i >> 9));
        CHECK(p[i] == want, "%s: byte %zu is %u, expected %u (seed %u)", what, i, p[i], want, seed);
    }
}

int main(int argc, char **argv)
{
    int provided;
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    int me = mt_rank(MPI_COMM_WORLD), n = mt_size(MPI_COMM_WORLD);
    CHECK(n % 2 == 0, "needs an even number of ranks, got %d", n);
    int half = n / 2, sender = me < half, peer = sender ? me + half : me - half;
    const char *env = getenv("LEANMPI_OFI_MR_CACHE");
    int cache_on = !(env && atoi(env) == 0);

    CHECK_MPI(MPI_T_pvar_session_create(&session));
    h_reg = counter("transport_ofi_mr_registrations");
    h_hits = counter("transport_ofi_mr_cache_hits");

    unsigned char *a = malloc(LEN), *b = malloc(LEN);
    CHECK(a && b, "out of memory");
    unsigned seed = 1;
    int exposures = 0;

    /* warm-up: the first message opens the network and registers a */
    if (sender) {
        fill(a, LEN, seed);
        CHECK_MPI(MPI_Send(a, LEN, MPI_BYTE, peer, 0, MPI_COMM_WORLD));
    } else {
        CHECK_MPI(MPI_Recv(a, LEN, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        check(a, LEN, seed, "warm-up");
    }
    seed++;
    unsigned long long reg0 = read_counter(h_reg), hits0 = read_counter(h_hits);

    /* one buffer, new contents each time, whole and in pieces */
    for (int i = 0; i < REPEATS; i++, seed++) {
        size_t off = (size_t)(i % 3) * 4096, len = LEN - (size_t)(i % 3) * 8192;
        if (sender) {
            fill(a + off, len, seed);
            CHECK_MPI(MPI_Send(a + off, (int)len, MPI_BYTE, peer, 1, MPI_COMM_WORLD));
            exposures++;
        } else {
            CHECK_MPI(MPI_Recv(b, LEN, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            check(b, len, seed, "one buffer");
        }
    }
    /* two buffers in turn */
    if (sender) {
        fill(a, LEN, 555);
        fill(b, LEN, 999);
    }
    for (int i = 0; i < REPEATS; i++) {
        if (sender) {
            CHECK_MPI(MPI_Send(i % 2 ? b : a, LEN, MPI_BYTE, peer, 2, MPI_COMM_WORLD));
            exposures++;
        } else {
            unsigned char *r = malloc(LEN);
            CHECK(r, "out of memory");
            CHECK_MPI(MPI_Recv(r, LEN, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            check(r, LEN, i % 2 ? 999 : 555, "two buffers");
            free(r);
        }
    }
    unsigned long long reg1 = read_counter(h_reg), hits1 = read_counter(h_hits);

    /* buffers freed and allocated again (often at the same address) */
    for (int i = 0; i < 6; i++, seed++) {
        unsigned char *t = malloc(LEN);
        CHECK(t, "out of memory");
        if (sender) {
            fill(t, LEN, seed);
            CHECK_MPI(MPI_Send(t, LEN, MPI_BYTE, peer, 3, MPI_COMM_WORLD));
        } else {
            CHECK_MPI(MPI_Recv(t, LEN, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            check(t, LEN, seed, "reallocated buffers");
        }
        free(t);
    }

    if (sender) {
        unsigned long long reg = reg1 - reg0, hits = hits1 - hits0;
        CHECK(reg + hits == (unsigned long long)exposures, "%d rendezvous sends: %llu registrations + %llu reuses",
              exposures, reg, hits);
        if (cache_on)
            CHECK(reg == 1, "with the cache on, %d sends from buffers a and b registered %llu times (expected 1: b)",
                  exposures, reg);
        else
            CHECK(hits == 0 && reg == (unsigned long long)exposures,
                  "with the cache off: %llu registrations, %llu reuses for %d sends", reg, hits, exposures);
    }
    free(a);
    free(b);
    CHECK_MPI(MPI_T_pvar_handle_free(session, &h_reg));
    CHECK_MPI(MPI_T_pvar_handle_free(session, &h_hits));
    CHECK_MPI(MPI_T_pvar_session_free(&session));
    CHECK_MPI(MPI_T_finalize());
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) printf("PASS mr_cache (cache %s)\n", cache_on ? "on" : "off");
    MPI_Finalize();
    return 0;
}
