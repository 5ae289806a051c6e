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
/* Dynamic object for a handle, or NULL if the handle is not a live dynamic
 * object of that kind. Predefined objects are resolved by each kind's module.
 * The last handle found per kind is remembered (and forgotten when its
 * object is freed): calls on one window or one communicator repeat, and
 * the repeat is a compare in the caller, without a call into the table. */
typedef struct lm_handle_memo {
    int handle; /* 0 with obj NULL when none */
    void *obj;
} lm_handle_memo;
extern lm_handle_memo lm_handle_last[LM_KIND_COUNT];
void *lm_object_lookup_table(int handle, enum lm_kind kind);
/* The object of the kind's last looked-up handle when it is this one, else
 * NULL (lm_object_lookup then knows): for paths that keep even the call
 * of a lookup out of line. */
static inline void *lm_object_memo(int handle, enum lm_kind kind)
{
    const lm_handle_memo *m = &lm_handle_last[kind];
    return handle == m->handle ? m->obj : NULL;
}
static inline void *lm_object_lookup(int handle, enum lm_kind kind)
{
    const lm_handle_memo *m = &lm_handle_last[kind];
    if (handle == m->handle) return m->obj; /* handle 0 finds NULL */
    return lm_object_lookup_table(handle, kind);
}
/* Visit every live dynamic object of a kind (used at finalize for leak checks). */
void lm_object_foreach(enum lm_kind kind, void (*fn)(void *obj, void *arg), void *arg);
size_t lm_object_live_count(enum lm_kind kind);
/* At MPI_Finalize: free the recycled objects and the slot tables of kinds
 * with no live object left. Objects the program never freed keep their
 * slots (and stay reachable). */
void lm_object_finalize(void);

#endif
