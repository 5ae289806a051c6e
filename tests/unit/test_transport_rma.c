/* One-sided operations on node-shared arenas: exact totals under contention
 * from several processes, a CAS spin lock guarding a plain counter, swap,
 * 32-bit variants, put/get, bounds checks, and the arena allocator. */
#include "transport_harness.h"

#define NPROC 4
#define ADDS 100000
#define LOCKED 20000

enum { AM_KEY = 7 };
static lm_rkey key;
static int have_key;

static void key_handler(int src, const void *h, size_t hl, const void *p, size_t pl)
{
    memcpy(&key, p, sizeof key);
    have_key = 1;
}

typedef struct shared {
    uint64_t counter64;
    uint32_t counter32, pad;
    uint64_t lock;
    uint64_t plain; /* protected by lock, updated non-atomically */
    uint64_t swapped[NPROC];
    char bytes[256];
} shared;

#define OFF(f) offsetof(shared, f)

static int rank_main(int r)
{
    h_init_rank(r, 8, 8, 0);
    lm_transport_register_am(AM_KEY, key_handler);
    const int home = NPROC - 1; /* not rank 0: nothing special about the owner */
    if (r == home) {
        shared *s = lm_transport_shared_alloc(sizeof(shared), &key);
        CHECK(s && ((uintptr_t)s % 64) == 0);
        memset(s, 0, sizeof *s);
        uint8_t id = AM_KEY;
        for (int d = 0; d < NPROC; d++)
            if (d != home) h_send(d, &id, 1, &key, sizeof key);
    } else {
        while (!have_key)
            if (lm_transport_progress() == 0) sched_yield();
    }
    h_barrier();

    for (int i = 0; i < ADDS; i++) {
        CHECK(lm_transport_atomic_fadd64(home, key, OFF(counter64), 1, NULL) == LM_OK);
        CHECK(lm_transport_atomic_fadd32(home, key, OFF(counter32), 3, NULL) == LM_OK);
    }
    for (int i = 0; i < LOCKED; i++) {
        uint64_t old;
        int spins = 0;
        for (;;) {
            CHECK(lm_transport_atomic_cas64(home, key, OFF(lock), 0, (uint64_t)r + 1, &old) == LM_OK);
            if (old == 0) break;
            if (++spins % 64 == 0) sched_yield();
        }
        uint64_t v;
        CHECK(lm_transport_get(home, key, OFF(plain), &v, 8) == LM_OK);
        v++;
        CHECK(lm_transport_put(home, key, OFF(plain), &v, 8) == LM_OK);
        CHECK(lm_transport_atomic_swap64(home, key, OFF(lock), 0, &old) == LM_OK);
        CHECK(old == (uint64_t)r + 1);
    }
    uint64_t old;
    CHECK(lm_transport_atomic_swap64(home, key, OFF(swapped) + 8 * r, 100 + r, &old) == LM_OK && old == 0);
    uint32_t o32;
    CHECK(lm_transport_atomic_cas32(home, key, OFF(pad), 0, 1, &o32) == LM_OK);
    CHECK(lm_transport_atomic_swap32(home, key, OFF(bytes), 5, &o32) == LM_OK);
    CHECK(lm_transport_flush(home) == LM_OK);
    h_barrier();

    uint64_t c64, plain;
    uint32_t c32, pad;
    CHECK(lm_transport_get(home, key, OFF(counter64), &c64, 8) == LM_OK);
    CHECK(lm_transport_get(home, key, OFF(counter32), &c32, 4) == LM_OK);
    CHECK(lm_transport_get(home, key, OFF(plain), &plain, 8) == LM_OK);
    CHECK(lm_transport_get(home, key, OFF(pad), &pad, 4) == LM_OK);
    CHECK(c64 == (uint64_t)NPROC * ADDS);
    CHECK(c32 == (uint32_t)NPROC * ADDS * 3);
    CHECK(plain == (uint64_t)NPROC * LOCKED);
    CHECK(pad == 1);
    for (int d = 0; d < NPROC; d++) {
        uint64_t v;
        CHECK(lm_transport_atomic_fadd64(home, key, OFF(swapped) + 8 * d, 0, &v) == LM_OK && v == 100u + d);
    }

    /* Bounds, alignment, unknown peers. */
    CHECK(lm_transport_put(home, key, sizeof(shared) - 4, "12345678", 8) == LM_EINVAL);
    CHECK(lm_transport_get(home, key + 64 * 1024, 0, &c64, 8) == LM_EINVAL);
    CHECK(lm_transport_atomic_fadd64(home, key, 4, 1, NULL) == LM_EINVAL);
    CHECK(lm_transport_atomic_fadd64(NPROC + 3, key, 0, 1, NULL) == LM_EPEER);
    h_barrier();
    lm_transport_finalize();
    return 0;
}

/* The allocator: alignment, reuse after free, bounded arena, split. */
static int arena(int r)
{
    h_init_rank(r, 8, 8, 0);
    lm_rkey k1, k2, k3, k4;
    char *a = lm_transport_shared_alloc(100, &k1);
    char *b = lm_transport_shared_alloc(1000, &k2);
    CHECK(a && b && k1 != k2 && (uintptr_t)a % 64 == 0 && (uintptr_t)b % 64 == 0);
    lm_transport_shared_free(a);
    char *c = lm_transport_shared_alloc(64, &k3);
    CHECK(c == a && k3 == k1); /* first fit reuses the hole */
    CHECK(lm_transport_put(0, k1, 0, "x", 1) == LM_OK);
    lm_transport_shared_free(b); /* top block: the bump pointer goes back */
    char *d = lm_transport_shared_alloc(2000, &k4);
    CHECK(d == b && k4 == k2);
    lm_transport_shared_free(d);
    CHECK(lm_transport_put(0, k4, 0, "x", 1) == LM_EINVAL); /* freed region */
    size_t size = ((lm_shm_area *)H.area)->arena_size;
    CHECK(lm_transport_shared_alloc(size, &k4) == NULL);
    int n = 0;
    while (lm_transport_shared_alloc(4096 - 64, &k4)) n++;
    CHECK(n > 0 && (size_t)n * 4096 <= size);
    lm_transport_shared_free(c);
    lm_transport_finalize();
    return 0;
}

int main(void)
{
    CHECK(h_run(1, arena, 30) == 0);
    printf("arena: ok\n");
    CHECK(h_run(NPROC, rank_main, 120) == 0);
    printf("rma: %d processes x %d fetch-adds exact, CAS lock x %d exact: ok\n", NPROC, ADDS, LOCKED);
    return 0;
}
