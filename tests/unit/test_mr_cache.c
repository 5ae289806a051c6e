/* The registration cache (src/transport/mr_cache.c): ranges it covers,
 * access, entries in use never dropped, the bound on unused ones, least
 * recently used first, and max_idle 0 keeping nothing. */
#include "transport/mr_cache.h"
#include <stdio.h>
#include <stdlib.h>

#include "unit_check.h"

#define NREG 16
static int live[NREG]; /* registrations not yet dropped, by id */
static int regs_made;

static void *new_reg(void)
{
    CHECK(regs_made < NREG);
    live[regs_made] = 1;
    return &live[regs_made++];
}

static void drop(void *reg)
{
    int *r = reg;
    CHECK(*r == 1); /* dropped once */
    *r = 0;
}

static int nlive(void)
{
    int n = 0;
    for (int i = 0; i < regs_made; i++) n += live[i];
    return n;
}

/* What a transport does per exposure: the cache, else a new registration. */
static lm_mr_entry *expose(lm_mr_cache *c, const void *buf, size_t len, uint64_t access)
{
    lm_mr_entry *e = lm_mr_cache_get(c, buf, len, access);
    if (!e) e = lm_mr_cache_add(c, buf, len, access, new_reg());
    CHECK(e);
    return e;
}

enum { READ = 1, WRITE = 2 };

int main(void)
{
    static char mem[4][4096];
    lm_mr_cache c;
    lm_mr_cache_init(&c, 2, drop);

    /* a range inside a kept registration reuses it; one crossing its end does not */
    lm_mr_entry *a = expose(&c, mem[0], 4096, READ);
    lm_mr_cache_put(&c, a);
    CHECK(c.registrations == 1 && c.hits == 0 && c.idle == 1 && nlive() == 1);
    lm_mr_entry *b = expose(&c, mem[0] + 100, 1000, READ);
    CHECK(b == a && c.hits == 1 && c.idle == 0 && a->refs == 1);
    lm_mr_entry *x = expose(&c, mem[0] + 4000, 200, READ); /* mem[0] + 4200 is past a */
    CHECK(x != a && c.registrations == 2);
    lm_mr_entry *end = expose(&c, mem[0] + 4095, 1, READ);
    CHECK(end == x); /* both cover the last byte: the most recently used wins */
    lm_mr_cache_put(&c, end);

    /* more access than registered misses */
    lm_mr_entry *w = expose(&c, mem[0], 10, READ | WRITE);
    CHECK(w != a && w != x && c.registrations == 3);

    /* entries in use are never dropped, however many */
    lm_mr_entry *y = expose(&c, mem[1], 4096, READ);
    lm_mr_entry *z = expose(&c, mem[2], 4096, READ);
    CHECK(c.entries == 5 && c.idle == 0 && nlive() == 5);
    /* two users of one entry: it stays busy until both put it back */
    CHECK(expose(&c, mem[1] + 8, 8, READ) == y && y->refs == 2);
    lm_mr_cache_put(&c, y);
    CHECK(y->refs == 1 && c.idle == 0);

    /* unused beyond max_idle (2): the least recently used goes first */
    lm_mr_cache_put(&c, a); /* idle: a */
    lm_mr_cache_put(&c, x); /* idle: x, a */
    CHECK(c.idle == 2 && nlive() == 5);
    lm_mr_cache_put(&c, y); /* idle: y, x, a -> a dropped */
    CHECK(c.idle == 2 && c.entries == 4 && nlive() == 4 && live[0] == 0);
    CHECK(lm_mr_cache_get(&c, mem[0], 64, READ) == NULL); /* a is gone; w covers 10 bytes only */
    lm_mr_cache_put(&c, w);                               /* idle: w, y, x by last use -> x dropped */
    CHECK(c.idle == 2 && c.entries == 3 && live[1] == 0 && live[2] == 1 && live[3] == 1);
    CHECK(lm_mr_cache_get(&c, mem[1], 4096, READ) == y && c.idle == 1);
    lm_mr_cache_put(&c, y);

    /* clear drops everything, used or not */
    lm_mr_cache_clear(&c);
    CHECK(c.entries == 0 && c.idle == 0 && nlive() == 0 && c.head == NULL && c.tail == NULL);
    (void)z;

    /* max_idle 0: nothing kept once put back */
    lm_mr_cache_init(&c, 0, drop);
    int before = regs_made;
    lm_mr_entry *p = expose(&c, mem[3], 512, READ);
    lm_mr_cache_put(&c, p);
    CHECK(nlive() == 0 && c.entries == 0);
    p = expose(&c, mem[3], 512, READ);
    CHECK(regs_made == before + 2 && c.hits == 0);
    lm_mr_cache_put(&c, p);
    CHECK(nlive() == 0);

    printf("PASS mr_cache\n");
    return 0;
}
