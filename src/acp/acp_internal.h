/* The ACP basic layer's state, shared by its three files: acp_init.c
 * (start, stop, reset, the node area), acp_memory.c (registrations, global
 * addresses, the cache of other processes' tables) and acp_gma.c (copies,
 * atomics, handles).
 *
 * A global address (acp_ga_t) is 64 bits:
 *   63..44  rank + 1      (20 bits: 0 is ACP_GA_NULL; up to 1,048,575 ranks)
 *   43..42  color         (2 bits: LM_ACP_COLORS colors)
 *   41..34  entry         (8 bits: 0 the starter memory, 1..255 registrations)
 *   33..0   offset        (34 bits: registrations of up to 16 GiB)
 * An address translation key (acp_atkey_t) has the same rank, color and
 * entry, and in place of the offset the entry's generation, so that the
 * key of a registration that is gone is refused, not mistaken for its
 * successor in the same entry.
 *
 * Every process of a node has a slot in the node's ACP area (one memfd per
 * node, made by its lowest rank at acp_init): a control block, the
 * process's registration table and its starter memory. The node's other
 * processes reach starter memory there with loads, stores and CPU atomics
 * (DIRECT), and registered memory, which stays in its owner's private
 * memory, with single copies (CMA) after reading the owner's table. */
#ifndef LM_ACP_INTERNAL_H
#define LM_ACP_INTERNAL_H
#include <stddef.h>
#include <stdint.h>
#include "acp.h"
#include "obj/comm.h"
#include "osc/osc.h"

#define LM_ACP_API __attribute__((visibility("default")))

#define LM_ACP_RANK_SHIFT 44
#define LM_ACP_COLOR_SHIFT 42
#define LM_ACP_ENTRY_SHIFT 34
#define LM_ACP_MAX_RANKS ((1 << 20) - 1)
#define LM_ACP_COLORS 4
#define LM_ACP_ENTRIES 256
#define LM_ACP_OFFSET_MASK ((UINT64_C(1) << LM_ACP_ENTRY_SHIFT) - 1)
#define LM_ACP_MAX_REGION (UINT64_C(1) << LM_ACP_ENTRY_SHIFT)

static inline uint64_t lm_acp_pack(int rank, int color, int entry, uint64_t low)
{
    return (uint64_t)(rank + 1) << LM_ACP_RANK_SHIFT | (uint64_t)color << LM_ACP_COLOR_SHIFT |
           (uint64_t)entry << LM_ACP_ENTRY_SHIFT | (low & LM_ACP_OFFSET_MASK);
}
static inline int lm_acp_rank_of(uint64_t ga) { return (int)(ga >> LM_ACP_RANK_SHIFT) - 1; }
static inline int lm_acp_color_of(uint64_t ga) { return (int)(ga >> LM_ACP_COLOR_SHIFT) & 3; }
static inline int lm_acp_entry_of(uint64_t ga) { return (int)(ga >> LM_ACP_ENTRY_SHIFT) & 0xff; }
static inline uint64_t lm_acp_offset_of(uint64_t ga) { return ga & LM_ACP_OFFSET_MASK; }

/* One registration: where it is in its owner's process. size 0: free. */
typedef struct lm_acp_entry {
    uint64_t base, size;
    uint32_t color, gen; /* gen: bumped when the entry is freed */
    uint64_t pad;
} lm_acp_entry;

/* A slot's control block. seq is odd while the owner changes its table
 * and moves on with every change: a copy taken at an even seq that still
 * reads the same is exact. */
typedef struct lm_acp_ctl {
    uint32_t atomic_lock; /* held while an atomic runs on this process's registered memory */
    char pad0[60];
    uint64_t seq;
    uint32_t used; /* entries 0 .. used - 1 may be live */
    int32_t pid;
    char pad1[48];
} lm_acp_ctl;

typedef struct lm_acp_slot {
    lm_acp_ctl ctl;
    lm_acp_entry table[LM_ACP_ENTRIES];
    /* the starter memory follows, page-aligned */
} lm_acp_slot;

/* Where an address of a GMA is: here (a pointer this process may load
 * and store), or another process's memory reached through the engine. */
typedef struct lm_acp_place {
    int rank;             /* ACP rank of the owner */
    int registered;       /* registered memory (atomics run under the owner's lock) */
    char *here;           /* this process can load and store it, else NULL */
    lm_osc_target target; /* otherwise: CMA, or MSG on another host */
    lm_acp_ctl *owner;    /* the owner's control block (on this node; NULL on another host) */
    /* MSG: what the owner checks and finds the memory by */
    int entry;
    uint32_t gen;
    uint64_t off;
} lm_acp_place;

/* ---- processes on other hosts (acp_serve.c) ----
 * Their memory is reached through them: each GMA is one call of the
 * one-sided engine (kind LM_ACP_CALL; src/rma uses 0 and 1) that the owner
 * carries out on its own memory when it enters the library, after checking
 * the entry (its generation too) and the range itself. */
#define LM_ACP_CALL 2
enum lm_acp_call_what { LM_ACP_TABLE, LM_ACP_PUT, LM_ACP_GET, LM_ACP_ATOMIC, LM_ACP_FORGET };
typedef struct lm_acp_call_arg {
    uint32_t what, entry, gen, width, op, pad;
    uint64_t off, len, value, compare;
} lm_acp_call_arg;
/* The answer to LM_ACP_TABLE: the owner's live entries. */
typedef struct lm_acp_table_reply {
    uint64_t seq;
    uint32_t used, pad;
    lm_acp_entry table[LM_ACP_ENTRIES];
} lm_acp_table_reply;
void lm_acp_serve_init(void);
/* After a registration went: every process of another host that copied
 * this process's table since the last change is told to drop its copy
 * (LM_ACP_FORGET; answered when it enters the library). */
void lm_acp_tell_fetchers(void);
/* Forget who copied the table (acp_reset, acp_finalize: every copy goes). */
void lm_acp_fetchers_clear(void);
/* Drop the cached copy of rank's table (acp_memory.c). */
void lm_acp_cache_forget(int rank);

/* Atomics (acp_gma.c) */
enum lm_acp_atomic_op { LM_ACP_CAS, LM_ACP_SWAP, LM_ACP_ADD, LM_ACP_XOR, LM_ACP_OR, LM_ACP_AND };
/* On memory this process can load and store: a CPU atomic where lock is
 * NULL (starter memory), else a read-modify-write under that owner's
 * atomic lock (registered memory). The value before. */
uint64_t lm_acp_atomic_here(char *at, int width, int op, uint64_t value, uint64_t compare, lm_acp_ctl *lock);

/* The starter memory of a process of this node (or this process), as the
 * last translation found it: a GMA on starter memory is then a few
 * compares, not a lookup (lm_acp_find). */
typedef struct lm_acp_memo {
    int rank; /* ACP rank, or -2 (never a rank, nor the -1 of ACP_GA_NULL) */
    char *starter;
    lm_acp_ctl *ctl;
} lm_acp_memo;
#define LM_ACP_MEMOS 4

typedef struct lm_acp_state {
    int up;
    lm_acp_memo memo[LM_ACP_MEMOS]; /* by rank % LM_ACP_MEMOS */
    lm_comm *comm;                  /* private: ACP ranks are its ranks */
    lm_osc_channel *ch;
    size_t starter_size; /* every process's, set at launch */
    size_t slot_size;    /* page-aligned slot: control, table, starter memory */
    char *area;          /* this node's slots, by local rank */
    size_t area_len;
    int area_fd;      /* the node's lowest rank, until the others have mapped the area */
    int area_counted; /* this process counts the area in the memory report */
    lm_acp_slot *mine;
    char *starter;  /* this process's starter memory */
    int64_t issued; /* handle of the last GMA issued */
} lm_acp_state;

extern lm_acp_state lm_acp;

/* "fn: what went wrong" on standard error (every failure says it once). */
void lm_acp_error(const char *fn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Says that the library is not up, naming fn; 0. */
int lm_acp_not_up(const char *fn);
/* 1 when the library is up; else says so naming fn and returns 0. */
static inline int lm_acp_ready(const char *fn) { return __builtin_expect(lm_acp.up, 1) || lm_acp_not_up(fn); }

static inline lm_acp_slot *lm_acp_slot_of_local(int local_rank)
{
    return (lm_acp_slot *)(lm_acp.area + (size_t)local_rank * lm_acp.slot_size);
}
#define LM_ACP_STARTER_OFFSET ((sizeof(lm_acp_slot) + 4095) & ~(size_t)4095)
static inline char *lm_acp_starter_of(lm_acp_slot *s) { return (char *)s + LM_ACP_STARTER_OFFSET; }

/* acp_memory.c: the place of len bytes at ga, checked against the
 * registration they must lie in (0, having said why naming fn, if they do
 * not); for atomics align is the alignment ga needs (else 1). */
int lm_acp_locate(const char *fn, const char *which, acp_ga_t ga, size_t len, size_t align, lm_acp_place *p);
/* lm_acp_locate, with starter memory of a process it met before found in
 * line. */
static inline int lm_acp_find(const char *fn, const char *which, acp_ga_t ga, size_t len, size_t align, lm_acp_place *p)
{
    int rank = lm_acp_rank_of(ga);
    uint64_t off = lm_acp_offset_of(ga);
    const lm_acp_memo *m = &lm_acp.memo[(unsigned)rank % LM_ACP_MEMOS];
    if (__builtin_expect(m->rank == rank && lm_acp_entry_of(ga) == 0 && off <= lm_acp.starter_size &&
                             len <= lm_acp.starter_size - off && (uintptr_t)(m->starter + off) % align == 0,
                         1)) {
        p->rank = rank;
        p->registered = 0;
        p->here = m->starter + off;
        p->owner = m->ctl;
        return 1;
    }
    return lm_acp_locate(fn, which, ga, len, align, p);
}
void lm_acp_memo_clear(void);
/* Forget every registration of this process and every cached table. */
void lm_acp_memory_reset(void);
void lm_acp_cache_clear(void);

#endif
