/* Node KVS: write-once semantics, limits, and concurrent use by several
 * processes sharing one mapping (as the ranks of a node do). */
#include "boot/kvs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit_check.h"

static lm_kvs *fresh(unsigned nslots, size_t *len)
{
    *len = lm_kvs_size(nslots);
    void *m = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    lm_kvs *k = lm_kvs_format(m, nslots);
    CHECK(k && lm_kvs_from(m) == k);
    return k;
}

static void test_basic(void)
{
    size_t len;
    lm_kvs *k = fresh(64, &len);
    char v[LM_KVS_VALUE_MAX + 8];
    CHECK(lm_kvs_get(k, "missing", v, sizeof v) == -ENOENT);
    CHECK(lm_kvs_put(k, "a", "hello", 6) == 0);
    CHECK(lm_kvs_get(k, "a", v, sizeof v) == 6 && strcmp(v, "hello") == 0);
    CHECK(lm_kvs_put(k, "a", "other", 6) == -EEXIST);
    CHECK(lm_kvs_get(k, "a", v, sizeof v) == 6 && strcmp(v, "hello") == 0);
    /* Short buffer: copies what fits, reports the full length. */
    memset(v, 0, sizeof v);
    CHECK(lm_kvs_get(k, "a", v, 2) == 6 && v[0] == 'h' && v[1] == 'e' && v[2] == 0);
    CHECK(lm_kvs_get(k, "a", NULL, 0) == 6);
    /* Empty values and binary values. */
    CHECK(lm_kvs_put(k, "empty", NULL, 0) == 0);
    CHECK(lm_kvs_get(k, "empty", v, sizeof v) == 0);
    unsigned char bin[LM_KVS_VALUE_MAX];
    for (size_t i = 0; i < sizeof bin; i++) bin[i] = (unsigned char)i;
    CHECK(lm_kvs_put(k, "bin", bin, sizeof bin) == 0);
    CHECK(lm_kvs_get(k, "bin", v, sizeof v) == LM_KVS_VALUE_MAX && memcmp(v, bin, sizeof bin) == 0);
    /* Limits. */
    char longkey[LM_KVS_KEY_MAX + 1];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[LM_KVS_KEY_MAX] = 0;
    CHECK(lm_kvs_put(k, longkey, "x", 1) == -EINVAL);
    longkey[LM_KVS_KEY_MAX - 1] = 0; /* the longest key allowed */
    CHECK(lm_kvs_put(k, longkey, "x", 1) == 0);
    CHECK(lm_kvs_get(k, longkey, v, sizeof v) == 1);
    CHECK(lm_kvs_put(k, "big", bin, LM_KVS_VALUE_MAX + 1) == -EINVAL);
    CHECK(lm_kvs_put(k, NULL, "x", 1) == -EINVAL);
    CHECK(lm_kvs_from(bin) == NULL);
    munmap(k, len);
}

static void test_full(void)
{
    size_t len;
    lm_kvs *k = fresh(16, &len);
    char key[32], v[32];
    for (int i = 0; i < 16; i++) {
        snprintf(key, sizeof key, "key%d", i);
        CHECK(lm_kvs_put(k, key, key, strlen(key) + 1) == 0);
    }
    CHECK(lm_kvs_put(k, "one-more", "x", 1) == -ENOSPC);
    CHECK(lm_kvs_put(k, "key3", "x", 1) == -EEXIST);
    for (int i = 0; i < 16; i++) {
        snprintf(key, sizeof key, "key%d", i);
        CHECK(lm_kvs_get(k, key, v, sizeof v) == (long)strlen(key) + 1 && strcmp(v, key) == 0);
    }
    CHECK(lm_kvs_get(k, "absent", v, sizeof v) == -ENOENT); /* full table, no empty slot */
    munmap(k, len);
}

/* 4 processes put 200 keys each, all racing on 50 shared keys too (exactly
 * one winner each), and read every other process's keys back. */
#define NPROC 4
#define PER_PROC 200
#define SHARED 50

static void worker(lm_kvs *k, int id)
{
    char key[32], val[32], got[64];
    for (int i = 0; i < PER_PROC; i++) {
        snprintf(key, sizeof key, "p%d-k%d", id, i);
        snprintf(val, sizeof val, "v%d-%d", id, i);
        CHECK(lm_kvs_put(k, key, val, strlen(val) + 1) == 0);
        if (i < SHARED) {
            snprintf(key, sizeof key, "shared%d", i);
            snprintf(val, sizeof val, "%d", id);
            int rc = lm_kvs_put(k, key, val, strlen(val) + 1);
            CHECK(rc == 0 || rc == -EEXIST);
            /* Whoever won, a value is there now and it is a valid id. */
            CHECK(lm_kvs_get(k, key, got, sizeof got) > 0);
            CHECK(atoi(got) >= 0 && atoi(got) < NPROC);
        }
    }
    for (int other = 0; other < NPROC; other++)
        for (int i = 0; i < PER_PROC; i++) {
            snprintf(key, sizeof key, "p%d-k%d", other, i);
            snprintf(val, sizeof val, "v%d-%d", other, i);
            long n;
            while ((n = lm_kvs_get(k, key, got, sizeof got)) == -ENOENT)
                usleep(100); /* that process has not got there yet */
            CHECK(n == (long)strlen(val) + 1 && strcmp(got, val) == 0);
        }
}

static void test_concurrent(void)
{
    size_t len;
    lm_kvs *k = fresh(2048, &len);
    pid_t pids[NPROC];
    for (int i = 0; i < NPROC; i++) {
        pids[i] = fork();
        CHECK(pids[i] >= 0);
        if (pids[i] == 0) {
            worker(k, i);
            _exit(0);
        }
    }
    for (int i = 0; i < NPROC; i++) {
        int st;
        CHECK(waitpid(pids[i], &st, 0) == pids[i]);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    /* Every shared key has exactly one value, and it stays. */
    char key[32], got[64];
    for (int i = 0; i < SHARED; i++) {
        snprintf(key, sizeof key, "shared%d", i);
        CHECK(lm_kvs_get(k, key, got, sizeof got) > 0);
        CHECK(lm_kvs_put(k, key, "x", 2) == -EEXIST);
    }
    munmap(k, len);
}

int main(void)
{
    test_basic();
    test_full();
    test_concurrent();
    printf("test_kvs: ok\n");
    return 0;
}
