/* rget between two forked ranks: rank 1 tells rank 0 where its buffer is;
 * rank 0 copies it with lm_transport_rget. Skipped (exit 77) where the
 * kernel does not allow process_vm_readv. */
#include "transport_harness.h"
#include "transport/cma.h"

enum { AM_ADDR = 5, AM_DONE = 6 };
#define LEN (24u << 20) /* larger than one process_vm_readv usually moves */

static uint64_t remote_addr;
static int done;

static void addr_handler(int src, const void *h, size_t hl, const void *p, size_t pl)
{
    CHECK(pl == 8);
    memcpy(&remote_addr, p, 8);
}
static void done_handler(int src, const void *h, size_t hl, const void *p, size_t pl) { done = 1; }

static int rank_main(int r)
{
    h_init_rank(r, 8, 8, 1);
    lm_transport_register_am(AM_ADDR, addr_handler);
    lm_transport_register_am(AM_DONE, done_handler);
    h_barrier();
    if (!lm_cma_available()) {
        if (r == 0)
            printf("SKIP: process_vm_readv is not permitted here; rget reports %s\n", lm_transport_rget_mechanism(1));
        CHECK(strcmp(lm_transport_rget_mechanism(1 - r), "none") == 0);
        return H_SKIP;
    }
    CHECK(strcmp(lm_transport_rget_mechanism(1 - r), "cma") == 0);
    uint8_t id;
    if (r == 1) {
        unsigned char *buf = malloc(LEN);
        CHECK(buf);
        for (size_t i = 0; i < LEN; i++) buf[i] = (unsigned char)(i * 31 + (i >> 12));
        uint64_t a = (uint64_t)(uintptr_t)buf;
        id = AM_ADDR;
        h_send(0, &id, 1, &a, 8);
        while (!done)
            if (lm_transport_progress() == 0) sched_yield();
        free(buf);
    } else {
        while (!remote_addr)
            if (lm_transport_progress() == 0) sched_yield();
        unsigned char *dst = malloc(LEN);
        CHECK(dst);
        int rc = lm_transport_rget(1, dst, remote_addr, LEN);
        if (rc == LM_ENOTSUP) {
            printf("SKIP: process_vm_readv denied between siblings\n");
            CHECK(strcmp(lm_transport_rget_mechanism(1), "none") == 0);
            id = AM_DONE;
            h_send(1, &id, 1, NULL, 0);
            return H_SKIP;
        }
        CHECK(rc == LM_OK);
        for (size_t i = 0; i < LEN; i++)
            if (dst[i] != (unsigned char)(i * 31 + (i >> 12))) {
                fprintf(stderr, "byte %zu differs\n", i);
                exit(1);
            }
        /* Unaligned piece in the middle, and a bad address. */
        CHECK(lm_transport_rget(1, dst, remote_addr + 12345, 777) == LM_OK);
        CHECK(dst[0] == (unsigned char)(12345 * 31 + (12345 >> 12)));
        CHECK(lm_transport_rget(1, dst, 16, 64) == LM_EINVAL);
        lm_transport_counters c;
        lm_transport_get_counters("cma", &c);
        CHECK(c.rget_ops == 2 && c.rget_bytes == LEN + 777);
        printf("rget: %u MiB copied with cma\n", LEN >> 20);
        id = AM_DONE;
        h_send(1, &id, 1, NULL, 0);
        free(dst);
    }
    lm_transport_finalize();
    return 0;
}

/* CMA_ENABLE=0 turns it off without probing. */
static int disabled(int r)
{
    h_init_rank(r, 8, 8, 0);
    CHECK(strcmp(lm_transport_rget_mechanism(1 - r), "none") == 0);
    char x[8];
    CHECK(lm_transport_rget(1 - r, x, (uint64_t)(uintptr_t)x, 8) == LM_ENOTSUP);
    lm_transport_finalize();
    return 0;
}

int main(void)
{
    CHECK(h_run(2, disabled, 30) == 0);
    int rc = h_run(2, rank_main, 60);
    CHECK(rc == 0 || rc == H_SKIP);
    if (rc == 0) printf("cma: ok\n");
    return rc;
}
