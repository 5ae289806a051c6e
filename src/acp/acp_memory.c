/* ACP global memory management: registrations, global addresses and their
 * translation, and the cache of other processes' registration tables.
 *
 * A process's table lives in its slot of the node's ACP area
 * (acp_internal.h); only the owner writes it, under the slot's seq (odd
 * while it changes). Another process that reaches registered memory copies
 * the live part of the owner's table once and keeps the copy, up to
 * LEANMPI_ACP_CACHE tables (the least recently used goes first), so that a
 * process keeps tables of the peers it uses, not of the job. A copy serves
 * while the owner's seq reads what it read when it copied (one load of the
 * owner's control line per access): any registration or unregistration
 * since then makes the next access copy the table again, so an address of
 * a registration that is gone is refused at once. A global address has no
 * room for a generation, so once its entry serves a new registration the
 * old address reaches that one (as in the ACP library); entries are taken
 * in rotation, which puts that off by 254 registrations. */
#include "acp/acp_internal.h"
#include "boot/boot.h"
#include "pt2pt/pt2pt.h"
#include "transport/transport.h"
#include "util/lm_cvar.h"
#include "util/lm_hashmap.h"
#include "util/lm_mem.h"
#include <sched.h>
#include <string.h>

/* ---- this process's table ---- */

static void begin_change(lm_acp_ctl *ctl) { __atomic_store_n(&ctl->seq, ctl->seq + 1, __ATOMIC_RELEASE); }
static void end_change(lm_acp_ctl *ctl)
{
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&ctl->seq, ctl->seq + 1, __ATOMIC_RELEASE);
}

LM_ACP_API acp_atkey_t acp_register_memory(void *addr, size_t size, int color)
{
    static const char fn[] = "acp_register_memory";
    if (!lm_acp_ready(fn)) return ACP_ATKEY_NULL;
    if (!addr || size == 0) {
        lm_acp_error(fn, "cannot register %s", !addr ? "a region at NULL" : "a region of 0 bytes");
        return ACP_ATKEY_NULL;
    }
    if ((uint64_t)size > LM_ACP_MAX_REGION) {
        lm_acp_error(fn, "%zu bytes: a global address reaches %llu bytes into a registration at most", size,
                     (unsigned long long)LM_ACP_MAX_REGION);
        return ACP_ATKEY_NULL;
    }
    if (color < 0 || color >= LM_ACP_COLORS) {
        lm_acp_error(fn, "color %d is none of 0 .. %d (acp_colors)", color, LM_ACP_COLORS - 1);
        return ACP_ATKEY_NULL;
    }
    /* entries are taken in rotation, so that an address into a
     * registration that is gone stays refused for as long as possible
     * before its entry serves a new registration */
    lm_acp_slot *s = lm_acp.mine;
    static int last;
    int e = 0;
    for (int k = 1; k < LM_ACP_ENTRIES && !e; k++) {
        int cand = (last + k - 1) % (LM_ACP_ENTRIES - 1) + 1;
        if (cand >= (int)s->ctl.used || !s->table[cand].size) e = cand;
    }
    if (!e) {
        lm_acp_error(fn, "%d registrations are live, the most a process may hold", LM_ACP_ENTRIES - 1);
        return ACP_ATKEY_NULL;
    }
    begin_change(&s->ctl);
    s->table[e].base = (uint64_t)(uintptr_t)addr;
    s->table[e].size = size;
    s->table[e].color = (uint32_t)color;
    if (e >= (int)s->ctl.used) s->ctl.used = (uint32_t)e + 1;
    end_change(&s->ctl);
    last = e;
    return lm_acp_pack(lm_acp.comm->rank, color, e, s->table[e].gen);
}

/* The live entry of this process that key names, or NULL having said why. */
static lm_acp_entry *entry_of_key(const char *fn, acp_atkey_t key)
{
    int e = lm_acp_entry_of(key);
    lm_acp_entry *t = &lm_acp.mine->table[e];
    if (key == ACP_ATKEY_NULL) lm_acp_error(fn, "the key is ACP_ATKEY_NULL");
    else if (lm_acp_rank_of(key) != lm_acp.comm->rank)
        lm_acp_error(fn, "key 0x%016llx is of rank %d, not of this process (rank %d)", (unsigned long long)key,
                     lm_acp_rank_of(key), lm_acp.comm->rank);
    else if (e == 0 || e >= (int)lm_acp.mine->ctl.used || !t->size || t->gen != (uint32_t)lm_acp_offset_of(key))
        lm_acp_error(fn, "key 0x%016llx names no live registration (unregistered, or never issued)",
                     (unsigned long long)key);
    else return t;
    return NULL;
}

LM_ACP_API int acp_unregister_memory(acp_atkey_t atkey)
{
    if (!lm_acp_ready("acp_unregister_memory")) return -1;
    lm_acp_entry *t = entry_of_key("acp_unregister_memory", atkey);
    if (!t) return -1;
    lm_acp_ctl *ctl = &lm_acp.mine->ctl;
    begin_change(ctl);
    t->size = 0;
    t->gen++;
    while (ctl->used > 1 && !lm_acp.mine->table[ctl->used - 1].size) ctl->used--;
    end_change(ctl);
    lm_acp_tell_fetchers();
    return 0;
}

LM_ACP_API acp_ga_t acp_query_ga(acp_atkey_t atkey, void *addr)
{
    if (!lm_acp_ready("acp_query_ga")) return ACP_GA_NULL;
    lm_acp_entry *t = entry_of_key("acp_query_ga", atkey);
    if (!t) return ACP_GA_NULL;
    uint64_t a = (uint64_t)(uintptr_t)addr;
    if (a < t->base || a - t->base >= t->size) {
        lm_acp_error("acp_query_ga", "address %p is outside the registration of the key (%llu bytes at 0x%llx)", addr,
                     (unsigned long long)t->size, (unsigned long long)t->base);
        return ACP_GA_NULL;
    }
    return lm_acp_pack(lm_acp.comm->rank, (int)t->color, lm_acp_entry_of(atkey), a - t->base);
}

LM_ACP_API acp_ga_t acp_query_starter_ga(int rank)
{
    if (!lm_acp_ready("acp_query_starter_ga")) return ACP_GA_NULL;
    if (rank < 0 || rank >= lm_acp.comm->size) {
        lm_acp_error("acp_query_starter_ga", "rank %d is none of 0 .. %d", rank, lm_acp.comm->size - 1);
        return ACP_GA_NULL;
    }
    return lm_acp_pack(rank, 0, 0, 0);
}

LM_ACP_API void *acp_query_address(acp_ga_t ga)
{
    lm_acp_place p;
    if (!lm_acp_ready("acp_query_address") || !lm_acp_locate("acp_query_address", "global", ga, 0, 1, &p)) return NULL;
    if (p.rank != lm_acp.comm->rank) {
        lm_acp_error("acp_query_address", "address 0x%016llx is of rank %d, not of this process (rank %d)",
                     (unsigned long long)ga, p.rank, lm_acp.comm->rank);
        return NULL;
    }
    return p.here;
}

LM_ACP_API int acp_query_rank(acp_ga_t ga)
{
    if (!lm_acp_ready("acp_query_rank") || ga == ACP_GA_NULL) return -1;
    int r = lm_acp_rank_of(ga);
    if (r < lm_acp.comm->size) return r;
    lm_acp_error("acp_query_rank", "address 0x%016llx names rank %d of %d", (unsigned long long)ga, r,
                 lm_acp.comm->size);
    return -1;
}

LM_ACP_API int acp_query_color(acp_ga_t ga)
{
    if (!lm_acp_ready("acp_query_color") || ga == ACP_GA_NULL) return -1;
    return lm_acp_color_of(ga);
}

LM_ACP_API int acp_colors(void) { return lm_acp_ready("acp_colors") ? LM_ACP_COLORS : -1; }

/* ---- other processes' tables ---- */

typedef struct cached_table {
    uint64_t seq;  /* the owner's seq when copied */
    uint64_t used; /* when it was last used (for eviction) */
    uint32_t entries;
    lm_acp_entry table[]; /* the owner's entries 0 .. entries - 1 */
} cached_table;

static lm_hashmap cache = {.component = LM_MEM_RMA};
static uint64_t cache_clock;

static void free_value(int key, void *value, void *arg)
{
    (void)key, (void)arg;
    lm_free(LM_MEM_RMA, value);
}

void lm_acp_cache_forget(int rank) { lm_free(LM_MEM_RMA, lm_hashmap_remove(&cache, rank)); }

void lm_acp_cache_clear(void)
{
    lm_hashmap_foreach(&cache, free_value, NULL);
    lm_hashmap_destroy(&cache);
    lm_hashmap_init(&cache, LM_MEM_RMA);
}

struct oldest {
    int rank;
    uint64_t used;
};
static void find_oldest(int key, void *value, void *arg)
{
    struct oldest *o = arg;
    cached_table *t = value;
    if (o->rank < 0 || t->used < o->used) *o = (struct oldest){key, t->used};
}

/* A consistent copy of the owner's live entries (the owner changes them
 * between two even reads of its seq). */
static cached_table *copy_table(const lm_acp_slot *owner)
{
    for (;;) {
        uint64_t seq = __atomic_load_n(&owner->ctl.seq, __ATOMIC_ACQUIRE);
        if (seq & 1) {
            sched_yield();
            continue;
        }
        uint32_t n = __atomic_load_n(&owner->ctl.used, __ATOMIC_RELAXED);
        if (n > LM_ACP_ENTRIES) n = LM_ACP_ENTRIES;
        cached_table *t = lm_malloc(LM_MEM_RMA, sizeof *t + n * sizeof(lm_acp_entry));
        if (!t) return NULL;
        memcpy(t->table, owner->table, n * sizeof(lm_acp_entry));
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&owner->ctl.seq, __ATOMIC_RELAXED) == seq) {
            t->seq = seq;
            t->entries = n;
            return t;
        }
        lm_free(LM_MEM_RMA, t);
    }
}

/* The table of a process on another host, asked of it (it answers when it
 * enters the library). */
static cached_table *ask_table(int rank, int world)
{
    lm_acp_table_reply *r = lm_malloc(LM_MEM_RMA, sizeof *r);
    if (!r) return NULL;
    lm_osc_target target = {.reach = LM_OSC_MSG, .rank = rank, .world = world};
    lm_acp_call_arg a = {.what = LM_ACP_TABLE};
    int rc = lm_osc_call(lm_acp.ch, &target, LM_ACP_CALL, &a, sizeof a, NULL, 0, r, sizeof *r, NULL, NULL);
    if (rc == MPI_SUCCESS) rc = lm_osc_flush(lm_acp.ch, rank);
    uint32_t n = r->used <= LM_ACP_ENTRIES ? r->used : LM_ACP_ENTRIES;
    cached_table *t = rc == MPI_SUCCESS ? lm_malloc(LM_MEM_RMA, sizeof *t + n * sizeof(lm_acp_entry)) : NULL;
    if (t) {
        t->seq = r->seq;
        t->entries = n;
        memcpy(t->table, r->table, n * sizeof(lm_acp_entry));
    }
    lm_free(LM_MEM_RMA, r);
    return t;
}

/* The table of rank as of now. On this node (owner: its slot) the cached
 * copy serves while the owner's seq has not moved, else a fresh copy takes
 * its place; on another host (owner NULL) the copy serves until refresh
 * asks for a new one (the owner checks every GMA itself). */
static cached_table *table_of(int rank, int world, const lm_acp_slot *owner, int refresh)
{
    cached_table *t = lm_hashmap_get(&cache, rank);
    if (t && !refresh && (!owner || t->seq == __atomic_load_n(&owner->ctl.seq, __ATOMIC_ACQUIRE))) {
        t->used = ++cache_clock;
        return t;
    }
    if (t) {
        lm_hashmap_remove(&cache, rank);
        lm_free(LM_MEM_RMA, t);
    } else if (lm_hashmap_count(&cache) >= (size_t)lm_cvar(LM_CVAR_ACP_CACHE)) {
        struct oldest o = {-1, 0};
        lm_hashmap_foreach(&cache, find_oldest, &o);
        lm_free(LM_MEM_RMA, lm_hashmap_remove(&cache, o.rank));
        lm_osc_count.table_evictions++;
    }
    t = owner ? copy_table(owner) : ask_table(rank, world);
    if (!t) return NULL;
    lm_osc_count.table_fetches++;
    t->used = ++cache_clock;
    if (lm_hashmap_put(&cache, rank, t) != 0) {
        lm_free(LM_MEM_RMA, t);
        return NULL;
    }
    return t;
}

/* Entry e of a cached table if it is live and holds off + len bytes. */
static const lm_acp_entry *live_entry(const cached_table *t, int e, uint64_t off, size_t len)
{
    const lm_acp_entry *x = t && e < (int)t->entries && t->table[e].size ? &t->table[e] : NULL;
    return x && off <= x->size && len <= x->size - off ? x : NULL;
}

/* ---- translation ---- */

int lm_acp_locate(const char *fn, const char *which, acp_ga_t ga, size_t len, size_t align, lm_acp_place *p)
{
    if (ga == ACP_GA_NULL) {
        lm_acp_error(fn, "%s address is ACP_GA_NULL", which);
        return 0;
    }
    lm_comm *c = lm_acp.comm;
    int rank = lm_acp_rank_of(ga), e = lm_acp_entry_of(ga);
    uint64_t off = lm_acp_offset_of(ga);
    if (rank >= c->size) {
        lm_acp_error(fn, "%s address 0x%016llx names rank %d of %d", which, (unsigned long long)ga, rank, c->size);
        return 0;
    }
    *p = (lm_acp_place){.rank = rank, .registered = e != 0};
    const lm_acp_entry *entry;
    const lm_acp_slot *owner;
    int world = lm_comm_world_rank(c, rank);
    if (rank == c->rank) {
        owner = lm_acp.mine;
        entry = e < (int)owner->ctl.used && owner->table[e].size ? &owner->table[e] : NULL;
    } else if (!lm_boot_is_local(world)) {
        /* owners' word to drop copies first; a copy that does not cover
         * the address may be older than the registration: asked again once */
        lm_progress();
        const cached_table *t = table_of(rank, world, NULL, 0);
        entry = live_entry(t, e, off, len);
        if (t && !entry) entry = live_entry(t = table_of(rank, world, NULL, 1), e, off, len);
        if (!t) {
            lm_acp_error(fn, "cannot get rank %d's registration table", rank);
            return 0;
        }
        if (!entry && e < (int)t->entries && t->table[e].size) entry = &t->table[e]; /* said below: too short */
        owner = NULL;
    } else {
        owner = lm_acp_slot_of_local(lm_boot_local_rank_of(world));
        const cached_table *t = e == 0 ? NULL : table_of(rank, world, owner, 0);
        if (e != 0 && !t) {
            lm_acp_error(fn, "out of memory for rank %d's registration table", rank);
            return 0;
        }
        entry = e == 0 ? &owner->table[0] : e < (int)t->entries && t->table[e].size ? &t->table[e] : NULL;
    }
    if (!entry) {
        lm_acp_error(fn, "%s address 0x%016llx is in no live registration of rank %d (entry %d)", which,
                     (unsigned long long)ga, rank, e);
        return 0;
    }
    if (off > entry->size || len > entry->size - off) {
        lm_acp_error(fn, "%s address 0x%016llx: %zu bytes at offset %llu run past the end of its %s (%llu bytes)",
                     which, (unsigned long long)ga, len, (unsigned long long)off, e ? "registration" : "starter memory",
                     (unsigned long long)entry->size);
        return 0;
    }
    if ((entry->base + off) % align) {
        lm_acp_error(fn, "%s address 0x%016llx is not aligned to %zu bytes", which, (unsigned long long)ga, align);
        return 0;
    }
    p->owner = owner ? (lm_acp_ctl *)&owner->ctl : NULL;
    if (owner && e == 0) {
        char *starter = rank == c->rank ? lm_acp.starter : lm_acp_starter_of((lm_acp_slot *)owner);
        lm_acp.memo[(unsigned)rank % LM_ACP_MEMOS] = (lm_acp_memo){rank, starter, p->owner};
    }
    if (!owner) {
        p->target = (lm_osc_target){.reach = LM_OSC_MSG, .rank = rank, .world = world};
        p->entry = e;
        p->gen = entry->gen;
        p->off = off;
    } else if (rank == c->rank) {
        p->here = (char *)(uintptr_t)(entry->base + off);
    } else if (e == 0) {
        p->here = lm_acp_starter_of((lm_acp_slot *)owner) + off; /* DIRECT: mapped here */
    } else if (lm_transport_same_space(world)) {
        p->here = (char *)(uintptr_t)(entry->base + off); /* a rank of this address space */
    } else if (!lm_transport_single_copy(world)) {
        lm_acp_error(fn, "the kernel refuses single copies to rank %d's memory: not supported yet", rank);
        return 0;
    } else {
        p->target = (lm_osc_target){.reach = LM_OSC_CMA, .rank = rank, .world = world, .addr = entry->base + off};
    }
    return 1;
}

void lm_acp_memo_clear(void)
{
    for (int i = 0; i < LM_ACP_MEMOS; i++) lm_acp.memo[i] = (lm_acp_memo){.rank = -2};
}

void lm_acp_memory_reset(void)
{
    lm_acp_slot *s = lm_acp.mine;
    begin_change(&s->ctl);
    for (uint32_t e = 1; e < s->ctl.used; e++)
        if (s->table[e].size) {
            s->table[e].size = 0;
            s->table[e].gen++;
        }
    s->ctl.used = 1;
    end_change(&s->ctl);
    lm_acp_fetchers_clear();
    lm_acp_cache_clear();
}
