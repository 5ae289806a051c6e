#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "util/lm_hashmap.h"

#include "unit_check.h"

static void *val(int k) { return (void *)(intptr_t)(k * 2 + 1); }

static void sum_fn(int key, void *value, void *arg)
{
    CHECK(value == val(key));
    *(long *)arg += key;
}

int main(void)
{
    lm_hashmap m;
    lm_hashmap_init(&m, LM_MEM_PEER_TABLE);
    CHECK(lm_hashmap_get(&m, 5) == NULL);
    CHECK(lm_hashmap_remove(&m, 5) == NULL);
    CHECK(m.capacity == 0); /* nothing allocated until used (R1) */

    const int N = 20000;
    for (int k = 0; k < N; k++) CHECK(lm_hashmap_put(&m, k * 7 - 3000, val(k * 7 - 3000)) == 0);
    CHECK(lm_hashmap_count(&m) == (size_t)N);
    CHECK(m.capacity >= (size_t)N * 4 / 3);
    for (int k = 0; k < N; k++) CHECK(lm_hashmap_get(&m, k * 7 - 3000) == val(k * 7 - 3000));
    CHECK(lm_hashmap_get(&m, 1) == NULL);

    /* Replace keeps the count. */
    CHECK(lm_hashmap_put(&m, 3, (void *)0x1234) == 0); /* 3 = 7k - 3000 (k = 429): an existing key */
    CHECK(lm_hashmap_get(&m, 3) == (void *)0x1234);
    CHECK(lm_hashmap_count(&m) == (size_t)N);
    CHECK(lm_hashmap_put(&m, 3, val(3)) == 0);

    /* Remove every other key; the rest must stay reachable (backward shift). */
    for (int k = 0; k < N; k += 2) CHECK(lm_hashmap_remove(&m, k * 7 - 3000) == val(k * 7 - 3000));
    CHECK(lm_hashmap_count(&m) == (size_t)N / 2);
    for (int k = 0; k < N; k++) {
        void *v = lm_hashmap_get(&m, k * 7 - 3000);
        CHECK(k % 2 ? v == val(k * 7 - 3000) : v == NULL);
    }
    long sum = 0, expect = 0;
    for (int k = 1; k < N; k += 2) expect += k * 7 - 3000;
    lm_hashmap_foreach(&m, sum_fn, &sum);
    CHECK(sum == expect);

    /* Churn in a small map: many insert/remove cycles must not degrade. */
    lm_hashmap s;
    lm_hashmap_init(&s, LM_MEM_PEER_TABLE);
    for (int round = 0; round < 100000; round++) {
        int k = (round * 37) % 50;
        if (lm_hashmap_get(&s, k)) CHECK(lm_hashmap_remove(&s, k) == val(k));
        else CHECK(lm_hashmap_put(&s, k, val(k)) == 0);
    }
    CHECK(s.capacity <= 128);
    CHECK(lm_hashmap_put(&s, LM_HASHMAP_EMPTY, val(0)) == -1);
    lm_hashmap_destroy(&s);
    lm_hashmap_destroy(&m);
    CHECK(lm_hashmap_count(&m) == 0 && lm_hashmap_get(&m, 1) == NULL);
    printf("hashmap: ok\n");
    return 0;
}
