/* Handles: every MPI object is a 32-bit integer handle.
 *
 *   bit  31      0: every handle is a non-negative int, as bindings that
 *                widen handles to unsigned integers (mpi4py) expect
 *   bits 30..27  kind  (LM_KIND_*), never 0, so a zeroed handle is invalid
 *   bits 26..25  tier  0 = the kind's NULL handle, 1 = predefined, 2 = dynamic
 *   bits 24..0   predefined: index into the kind's predefined table
 *                dynamic:    generation (5 bits, 24..20) | slot index (20 bits)
 *
 * Integer handles make validation cheap and exact: a freed object's slot gets a
 * new generation, so a stale handle is reported instead of dereferenced.
 * Object storage grows in chunks only as objects are created (R1). */
#ifndef LM_HANDLE_H
#define LM_HANDLE_H
#include "util/lm_copy.h"
#include <stddef.h>
#include <stdint.h>

enum lm_kind {
    LM_KIND_COMM = 1,
    LM_KIND_GROUP = 2,
    LM_KIND_DATATYPE = 3,
    LM_KIND_OP = 4,
    LM_KIND_ERRHANDLER = 5,
    LM_KIND_REQUEST = 6,
    LM_KIND_INFO = 7,
    LM_KIND_WIN = 8,
    LM_KIND_MESSAGE = 9,
    LM_KIND_SESSION = 10,
    LM_KIND_FILE = 11,
    LM_KIND_COUNT = 12
};

#define LM_TIER_NULL 0u
#define LM_TIER_BUILTIN 1u
#define LM_TIER_DYNAMIC 2u

#define LM_HANDLE(kind, tier, payload) \
    ((int)(((uint32_t)(kind) << 27) | ((uint32_t)(tier) << 25) | ((uint32_t)(payload)&0x1ffffffu)))
/* A handle with bit 31 set is no handle: its kind reads as 0 (invalid). */
#define LM_HANDLE_KIND(h) ((((uint32_t)(h)) >> 31) ? 0u : (unsigned)(((uint32_t)(h)) >> 27))
#define LM_HANDLE_TIER(h) ((unsigned)((((uint32_t)(h)) >> 25) & 3u))
#define LM_HANDLE_INDEX(h) ((unsigned)(((uint32_t)(h)) & 0x1ffffffu))
#define LM_HANDLE_SLOT(h) ((unsigned)(((uint32_t)(h)) & 0xfffffu))
#define LM_NULL_HANDLE(kind) LM_HANDLE(kind, LM_TIER_NULL, 0)

/* Every object starts with this header. */
typedef struct lm_object {
    int handle;   /* its own handle */
    int refcount; /* user reference + internal references */
} lm_object;

/* Allocate a zeroed object of obj_size bytes (>= sizeof(lm_object)); its
 * handle is stored in the header. NULL when out of memory. */
void *lm_object_alloc(enum lm_kind kind, size_t obj_size);
/* Release the slot; any later lookup of the handle fails. */
void lm_object_free(void *obj);
/* The last handle found per kind by lm_object_lookup_remember (forgotten
 * when its object is freed): calls on one window repeat, and the repeat
 * is a compare in the caller, with no table read; every lookup of the
 * kind, the argument checks' included, tries it first. */
typedef struct lm_handle_memo {
    int handle; /* 0 with obj NULL when none */
    void *obj;
} lm_handle_memo;
extern lm_handle_memo lm_handle_last[LM_KIND_COUNT];
/* The table of a kind as the in-line paths read it: slots by index
 * (lm_handle.c grows the array; a slot's obj is NULL, or a kept object whose
 * handle is 0 while the slot is free), the free list, and the objects kept
 * in free slots for reuse (all of kept_size bytes). */
typedef struct lm_handle_slot {
    lm_object *obj;
    uint32_t next_free;  /* free-list link (slot index + 1; 0 = end) */
    uint32_t generation; /* 0..31 */
} lm_handle_slot;
typedef struct lm_handle_index {
    lm_handle_slot *slots;
    uint32_t used;      /* slots ever handed out */
    uint32_t free_head; /* index + 1; 0 = none */
    size_t kept_size;   /* size of the kept objects */
    size_t live;
    int kept; /* free slots holding an object */
} lm_handle_index;
extern lm_handle_index lm_handle_indexes[LM_KIND_COUNT];
#define LM_HANDLE_OBJECTS_KEPT 256

/* lm_object_alloc and lm_object_free in line, for a kind whose objects all
 * have one size known to the caller (requests): the common case, a free
 * slot that kept an object of that size, is a pop and a clear; anything
 * else goes to the general functions. */
static inline void *lm_object_alloc_sized(enum lm_kind kind, size_t size)
{
    lm_handle_index *x = &lm_handle_indexes[kind];
    uint32_t f = x->free_head;
    if (f && x->kept_size == size) {
        lm_handle_slot *s = &x->slots[f - 1];
        lm_object *o = s->obj;
        if (o) {
            x->free_head = s->next_free;
            x->kept--;
            x->live++;
            lm_zero(o, size);
            o->handle = LM_HANDLE(kind, LM_TIER_DYNAMIC, (s->generation << 20) | (f - 1));
            o->refcount = 1;
            return o;
        }
    }
    return lm_object_alloc(kind, size);
}
/* The slot of o back on its kind's free list, o's handle resolving no
 * more; o stays in the slot (the caller keeps or frees it). */
static inline lm_handle_slot *lm_object_slot_release(lm_object *o)
{
    unsigned kind = LM_HANDLE_KIND(o->handle);
    lm_handle_index *x = &lm_handle_indexes[kind];
    uint32_t i = LM_HANDLE_SLOT(o->handle);
    lm_handle_slot *s = &x->slots[i];
    if (lm_handle_last[kind].handle == o->handle) lm_handle_last[kind] = (lm_handle_memo){0, NULL};
    o->handle = 0; /* later lookups of the old handle fail */
    s->generation = (s->generation + 1) & 31u;
    s->next_free = x->free_head;
    x->free_head = i + 1;
    x->live--;
    return s;
}
/* Whether a freed object of this size stays in its slot for reuse. */
static inline int lm_object_keep(lm_handle_index *x, size_t size)
{
    if (x->kept >= LM_HANDLE_OBJECTS_KEPT || (x->kept && x->kept_size != size)) return 0;
    x->kept++;
    x->kept_size = size;
    return 1;
}
/* Out of line: the memory of a released object that is not kept. */
void lm_object_drop(lm_handle_slot *s, lm_object *o, enum lm_kind kind);
static inline void lm_object_free_sized(void *obj, size_t size)
{
    lm_object *o = obj;
    enum lm_kind kind = (enum lm_kind)LM_HANDLE_KIND(o->handle);
    lm_handle_slot *s = lm_object_slot_release(o);
    if (!lm_object_keep(&lm_handle_indexes[kind], size)) lm_object_drop(s, o, kind);
}

/* The object of a dynamic handle by its slot: one compare for kind and
 * tier (bit 31 included), one bound, one load, one compare of the
 * object's own handle. */
static inline void *lm_object_in_table(int handle, enum lm_kind kind)
{
    if (((uint32_t)handle >> 25) != (((uint32_t)kind << 2) | LM_TIER_DYNAMIC)) return NULL;
    uint32_t i = LM_HANDLE_SLOT(handle);
    const lm_handle_index *x = &lm_handle_indexes[kind];
    if (i >= x->used) return NULL;
    lm_object *o = x->slots[i].obj;
    return o && o->handle == handle ? o : NULL;
}
/* Dynamic object for a handle, or NULL if the handle is not a live dynamic
 * object of that kind. Predefined objects are resolved by each kind's
 * module. In line: the kind's remembered handle first (a compare), then
 * the table. */
static inline void *lm_object_lookup(int handle, enum lm_kind kind)
{
    const lm_handle_memo *m = &lm_handle_last[kind];
    if (handle == m->handle) return m->obj; /* handle 0 finds NULL */
    return lm_object_in_table(handle, kind);
}
/* The same, remembering what it found in the table: for kinds whose calls
 * repeat on one object (a window's lock, put and flush). */
static inline void *lm_object_lookup_remember(int handle, enum lm_kind kind)
{
    lm_handle_memo *m = &lm_handle_last[kind];
    if (handle == m->handle) return m->obj;
    void *o = lm_object_in_table(handle, kind);
    if (o) *m = (lm_handle_memo){handle, o};
    return o;
}
/* The object of the kind's remembered handle when it is this one, else
 * NULL (the caller then looks it up): handle 0 finds NULL. */
static inline void *lm_object_memo(int handle, enum lm_kind kind)
{
    const lm_handle_memo *m = &lm_handle_last[kind];
    return handle == m->handle ? m->obj : NULL;
}
/* Visit every live dynamic object of a kind (used at finalize for leak checks). */
void lm_object_foreach(enum lm_kind kind, void (*fn)(void *obj, void *arg), void *arg);
size_t lm_object_live_count(enum lm_kind kind);
/* At MPI_Finalize: free the recycled objects and the slot tables of kinds
 * with no live object left. Objects the program never freed keep their
 * slots (and stay reachable). */
void lm_object_finalize(void);

#endif
