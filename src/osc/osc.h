/* The one-sided engine: moving bytes into and out of memory that another
 * process exposes, remote atomics, and completion. MPI windows (src/rma)
 * stand on it, and so will the ACP library; it knows nothing of windows,
 * epochs or datatypes, only of targets, byte ranges and channels.
 *
 * A target is a range of another process's memory and how this process
 * reaches it:
 *   DIRECT  mapped here (node-shared memory): plain loads and stores, and
 *           CPU atomics that work across processes;
 *   CMA     private memory of a process on this node, copied once with
 *           process_vm_writev/readv, without the owner's help;
 *   NET     memory of a process on another host that the network's RMA
 *           reaches (exposed with lm_transport_expose_rma): transfers are
 *           the provider's reads and writes (osc_net.c); calls go as MSG;
 *   MSG     anything else: a request message on the channel's
 *           communicator, carried out by the owner inside its progress
 *           loop (osc_msg.c), answered by a reply.
 * DIRECT and CMA operations are complete when the call returns; NET and
 * MSG ones when the network says so or their reply has arrived
 * (lm_osc_flush). Operations from one
 * process to one target through MSG are carried out in the order issued.
 *
 * Strided transfers are the unit: count blocks of len bytes, stride
 * bytes apart, starting at offset off of the target; the local side is
 * one contiguous run of count * len bytes. Callers turn datatypes into
 * such runs (src/rma walks a type's leaves). */
#ifndef LM_OSC_H
#define LM_OSC_H
#include <stddef.h>
#include <stdint.h>
#include "obj/comm.h"
#include "pt2pt/request.h"

typedef enum lm_osc_reach { LM_OSC_DIRECT, LM_OSC_CMA, LM_OSC_MSG, LM_OSC_NET } lm_osc_reach;

typedef struct lm_osc_target {
    lm_osc_reach reach;
    int rank;      /* the owner's rank in the channel's communicator */
    int world;     /* and in MPI_COMM_WORLD */
    char *mapped;  /* DIRECT: where the range starts in this process */
    uint64_t addr; /* CMA, MSG, NET: where it starts in the owner's process */
    /* NET: where it starts for the network, and the key of its exposure */
    uint64_t net_addr, rkey;
} lm_osc_target;

/* Operations on the target complete after the call (NET, MSG): a
 * caller's completion state must outlive the call. */
static inline int lm_osc_async(const lm_osc_target *t) { return t->reach == LM_OSC_MSG || t->reach == LM_OSC_NET; }

/* A channel carries the MSG traffic of one window (or ACP context) over
 * the point-to-point context of a private communicator, and keeps the
 * operations in flight. owner is handed back to the call handlers. serve:
 * this process's memory may be reached through MSG, so the channel's
 * requests are served at every progress call. */
typedef struct lm_osc_channel lm_osc_channel;
int lm_osc_channel_new(lm_comm *c, void *owner, int serve, lm_osc_channel **out);
/* Waits for nothing: flush first. */
void lm_osc_channel_free(lm_osc_channel *ch);

/* Completion of one MSG operation as seen by its issuer: done(arg, err)
 * runs once when the reply has arrived (err: an MPI error class the owner
 * reported), before lm_osc_flush returns; a user request (MPI_Rput...) is
 * completed there. */
typedef void (*lm_osc_done)(void *arg, int err);

/* Transfers. Return MPI_SUCCESS or an MPI error class. For MSG targets
 * src must stay untouched and dst unread until done has run (or a flush
 * returned); done may be NULL. */
int lm_osc_put(lm_osc_channel *ch, const lm_osc_target *t, uint64_t off, size_t len, uint64_t count, int64_t stride,
               const void *src, lm_osc_done done, void *arg);
int lm_osc_get(lm_osc_channel *ch, const lm_osc_target *t, uint64_t off, size_t len, uint64_t count, int64_t stride,
               void *dst, lm_osc_done done, void *arg);

/* Calls: work a layer above defines and the owner carries out on its own
 * memory (the accumulate family on memory no one else can reach; on NET
 * targets too, whose owner's node applies its own atomics). The
 * handler gets the owner, the issuer's rank, the argument block, the data
 * sent and room for out_len bytes of answer; it returns an MPI error class,
 * which travels back to the issuer's done. */
typedef int (*lm_osc_call_fn)(void *owner, int origin_rank, const void *arg, size_t arg_len, const void *data,
                              size_t data_len, void *out, size_t out_len);
#define LM_OSC_CALL_KINDS 4
void lm_osc_register_call(int kind, lm_osc_call_fn fn);
int lm_osc_call(lm_osc_channel *ch, const lm_osc_target *t, int kind, const void *arg, size_t arg_len, const void *data,
                size_t data_len, void *out, size_t out_len, lm_osc_done done, void *arg_done);

/* Wait until every MSG operation to rank (-1: to every rank) has its
 * reply, serving requests meanwhile. The first error an operation reported
 * is returned (the others' done still ran). Inline up to the common case,
 * a channel with nothing to serve, nothing in flight and no error to
 * report (every window whose memory is reached directly or with single
 * copies): the flush of an 8-byte put is then two loads. */
typedef struct lm_osc_channel_head {
    int serve;   /* this process's memory is reached through MSG: serve at every progress call */
    int pending; /* MSG operations without a reply */
    int err;     /* the first error an answered operation reported, for the next flush */
} lm_osc_channel_head;
int lm_osc_flush_wait(lm_osc_channel *ch, int rank);
/* Nothing to serve, nothing in flight, no error to report: a flush now
 * would return MPI_SUCCESS at once. */
static inline int lm_osc_idle(const lm_osc_channel *ch)
{
    const lm_osc_channel_head *h = (const lm_osc_channel_head *)ch; /* a channel starts with its head */
    return !h->serve && !h->pending && !h->err;
}
static inline int lm_osc_flush(lm_osc_channel *ch, int rank)
{
    return lm_osc_idle(ch) ? MPI_SUCCESS : lm_osc_flush_wait(ch, rank);
}
/* MSG operations still without a reply (to rank, or all for -1). */
int lm_osc_pending(const lm_osc_channel *ch, int rank);

/* Counters for MPI_T (performance variables). */
typedef struct lm_osc_counters {
    uint64_t atomics;      /* atomic read-modify-writes on exposed memory */
    uint64_t msg_requests; /* operations sent as MSG requests */
    uint64_t msg_served;   /* MSG requests this process carried out */
    uint64_t bytes_put, bytes_got;
    /* ACP: other processes' registration tables copied, and copies
     * dropped to make room in the cache (src/acp/acp_memory.c) */
    uint64_t table_fetches, table_evictions;
} lm_osc_counters;
extern lm_osc_counters lm_osc_count;

/* Atomics on DIRECT memory, counted in the remote-atomics pvar; inline,
 * as the locks are a few of them and little else. Sequentially
 * consistent, so that a lock built on them orders the data it protects. */
#define LM_OSC_ATOMIC_RMW(name, type, builtin)      \
    static inline type name(type *p, type v)        \
    {                                               \
        type was = builtin(p, v, __ATOMIC_SEQ_CST); \
        lm_osc_count.atomics++;                     \
        return was;                                 \
    }
LM_OSC_ATOMIC_RMW(lm_osc_fetch_add64, uint64_t, __atomic_fetch_add)
LM_OSC_ATOMIC_RMW(lm_osc_swap64, uint64_t, __atomic_exchange_n)
LM_OSC_ATOMIC_RMW(lm_osc_fetch_and64, uint64_t, __atomic_fetch_and)
LM_OSC_ATOMIC_RMW(lm_osc_fetch_or64, uint64_t, __atomic_fetch_or)
LM_OSC_ATOMIC_RMW(lm_osc_fetch_xor64, uint64_t, __atomic_fetch_xor)
LM_OSC_ATOMIC_RMW(lm_osc_fetch_add32, uint32_t, __atomic_fetch_add)
LM_OSC_ATOMIC_RMW(lm_osc_swap32, uint32_t, __atomic_exchange_n)
LM_OSC_ATOMIC_RMW(lm_osc_fetch_and32, uint32_t, __atomic_fetch_and)
LM_OSC_ATOMIC_RMW(lm_osc_fetch_or32, uint32_t, __atomic_fetch_or)
LM_OSC_ATOMIC_RMW(lm_osc_fetch_xor32, uint32_t, __atomic_fetch_xor)
#undef LM_OSC_ATOMIC_RMW

/* Compare-and-swap: 1 when *p held expected (now desired); *old (if not
 * NULL) gets what *p held. */
#define LM_OSC_ATOMIC_CAS(name, type)                                                                       \
    static inline int name(type *p, type expected, type desired, type *old)                                 \
    {                                                                                                       \
        int ok = __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
        lm_osc_count.atomics++;                                                                             \
        if (old) *old = expected;                                                                           \
        return ok;                                                                                          \
    }
LM_OSC_ATOMIC_CAS(lm_osc_cas64, uint64_t)
LM_OSC_ATOMIC_CAS(lm_osc_cas32, uint32_t)
#undef LM_OSC_ATOMIC_CAS

/* Start step of the engine (registers its progress hook); called by the
 * layer above at its own start. */
int lm_osc_init(void);

#endif
