/* Transport interface: how bytes move between ranks. The pt2pt, rma and acp
 * layers use only this. Peers are world ranks; a backend resolves a peer
 * lazily on first use (R1, R3).
 *
 * Active messages (AM): a header of at most LM_AM_HDR_MAX bytes plus a payload
 * of at most lm_transport_max_payload(peer) bytes. Messages from one sender to
 * one receiver are delivered in the order they were sent (all backends).
 * Delivery happens inside lm_transport_progress() of the receiver, by calling
 * the handler registered for the header's first byte (the AM id). The payload
 * pointer is valid only during the handler call.
 *
 * Large data: lm_transport_rget() copies straight from a peer's memory (cma:
 * process_vm_readv; pvas: memcpy). It returns LM_ENOTSUP when the backend
 * cannot, and the caller then pipelines through AMs.
 *
 * One-sided: memory allocated with lm_transport_shared_alloc() is reachable by
 * the node's ranks through put/get and 32/64-bit atomics; a region is named by
 * (owner world rank, lm_rkey, offset). */
#ifndef LM_TRANSPORT_H
#define LM_TRANSPORT_H
#include <stddef.h>
#include <stdint.h>

#define LM_OK 0
#define LM_EAGAIN (-11) /* no send resources now: progress and retry */
#define LM_ENOTSUP (-95)
#define LM_EINVAL (-22)
#define LM_ENOMEM (-12)
#define LM_EPEER (-113) /* peer unreachable (on another host, and no network backend) */
#define LM_EIO (-5)     /* the transport failed for good (LEANMPI_FAULT_SEND_AFTER fakes it) */

#define LM_AM_HDR_MAX 64
#define LM_AM_MAX_HANDLERS 32

typedef void (*lm_am_handler)(int src_world_rank, const void *hdr, size_t hdr_len, const void *payload,
                              size_t payload_len);

/* Called once by core init after lm_boot_init(). */
int lm_transport_init(void);
void lm_transport_finalize(void);
/* Why lm_transport_init failed. */
const char *lm_transport_error(void);
/* This process is about to meet processes of other jobs (dynamic
 * processes), which it reaches through the network like ranks on other
 * hosts: from now on the network opens at the first message to one of
 * them or when one asks for this process's address. */
void lm_transport_network_expected(void);
/* The network provider in use ("tcp;ofi_rxm", ...), NULL in a job on one node. */
const char *lm_transport_network(void);

void lm_transport_register_am(uint8_t am_id, lm_am_handler handler);

/* Gather form: payload given as two pieces (e.g. a staged header + user data).
 * hdr[0] is the AM id. LM_OK, LM_EAGAIN, LM_EPEER or LM_EINVAL. */
int lm_transport_am_sendv(int dst_world_rank, const void *hdr, size_t hdr_len, const void *p0, size_t l0,
                          const void *p1, size_t l1);
static inline int lm_transport_am_send(int dst_world_rank, const void *hdr, size_t hdr_len, const void *payload,
                                       size_t payload_len)
{
    return lm_transport_am_sendv(dst_world_rank, hdr, hdr_len, payload, payload_len, NULL, 0);
}
/* Largest payload_len (l0 + l1) an AM to this peer may carry. */
size_t lm_transport_max_payload(int dst_world_rank);

/* Copy len bytes from remote_addr in the peer's address space to local. */
int lm_transport_rget(int src_world_rank, void *local, uint64_t remote_addr, size_t len);
/* The reverse: copy len bytes from local to remote_addr in the peer's address
 * space (same mechanism and the same LM_ENOTSUP rule as rget). */
int lm_transport_rput(int dst_world_rank, uint64_t remote_addr, const void *local, size_t len);
/* Large messages to another host, read in place by the network's RMA:
 * lm_transport_expose makes [buf, buf + len) readable by peer dst and gives
 * the address and key that peer reads with and a handle for
 * lm_transport_unexpose, called once the peer has read (or given up).
 * lm_transport_rget_async reads len bytes at (addr, rkey) of peer src into
 * local in the background; done(arg) runs from a later progress call when
 * they are there. Both return LM_ENOTSUP where the peer is not reached that
 * way (this node, no RMA): the caller then moves the data otherwise. */
typedef void (*lm_rget_done)(void *arg);
int lm_transport_expose(int dst, const void *buf, size_t len, uint64_t *addr, uint64_t *rkey, void **handle);
void lm_transport_unexpose(void *handle);
int lm_transport_rget_async(int src, void *local, uint64_t addr, uint64_t rkey, size_t len, lm_rget_done done,
                            void *arg);
/* One-sided windows across hosts, where the network has RMA (the ofi
 * backend on a provider with FI_RMA; LM_ENOTSUP otherwise, and the layer
 * above has the owner carry operations out): lm_transport_expose_rma
 * makes [buf, buf + len) readable and writable by every peer until
 * lm_transport_unexpose_rma (it opens the network if it is not open yet);
 * lm_transport_rput_async writes len bytes from local at (addr, rkey) of
 * peer dst, done(arg) running from a later progress call once they are in
 * the peer's memory (LM_EAGAIN while the peer's address is not published;
 * lm_transport_rget_async reads the same way). The peer must enter the
 * library for the provider to move the bytes where its progress is manual
 * (the socket providers). */
int lm_transport_expose_rma(void *buf, size_t len, uint64_t *addr, uint64_t *rkey, void **handle);
void lm_transport_unexpose_rma(void *handle);
int lm_transport_rput_async(int dst, const void *local, uint64_t addr, uint64_t rkey, size_t len, lm_rget_done done,
                            void *arg);
/* Which single-copy mechanism rget uses for this peer: "memcpy" (this
 * process, or a rank in its address space), "cma", or "none". */
const char *lm_transport_rget_mechanism(int world_rank);
/* 1 when the peer is a rank in this process's address space
 * (mpirun --address-space=shared): its addresses are valid here. */
int lm_transport_same_space(int world_rank);
/* A single copy reaches this peer's memory (memcpy or cma). */
static inline int lm_transport_single_copy(int world_rank)
{
    const char *m = lm_transport_rget_mechanism(world_rank);
    return m[0] == 'm' || m[0] == 'c';
}
/* How many times as long a single copy between ranks of this node takes
 * as a memcpy of the same bytes (256 KiB, probed on the first call; 0
 * where there is no single copy). */
double lm_transport_single_copy_cost(void);

/* Pipes, for pipelined two copies of large data where single copy is slow:
 * every rank on a node owns the same number of node-shared buffers of the
 * same size, which its senders fill while it empties them (the protocol on
 * them is pt2pt's). lm_transport_pipes: how many each rank owns (0: none)
 * and their size; lm_transport_pipe: where pipe index of a rank on this
 * node is mapped here (NULL for a rank off this node). */
int lm_transport_pipes(size_t *bytes);
void *lm_transport_pipe(int world_rank, int index);
/* What the layer above moved through pipes, so that the counters show all
 * traffic (the shm backend's). */
void lm_transport_count_pipe(size_t sent, size_t received);

/* Poll every backend once; returns the number of events handled. */
int lm_transport_progress(void);

/* One-sided access to node-shared memory. */
typedef uint64_t lm_rkey; /* offset of the region in the owner's shared arena */
void *lm_transport_shared_alloc(size_t len, lm_rkey *key);
void lm_transport_shared_free(void *p);
/* Where [key, key + len) of a node-local peer's region is mapped in this
 * process, for direct loads and stores (C11 atomics work across processes
 * on it); NULL when the peer is on another node or the range is not inside
 * a live region. */
void *lm_transport_shared_ptr(int world_rank, lm_rkey key, size_t len);
int lm_transport_put(int dst_world_rank, lm_rkey key, size_t offset, const void *src, size_t len);
int lm_transport_get(int src_world_rank, lm_rkey key, size_t offset, void *dst, size_t len);
int lm_transport_atomic_fadd64(int rank, lm_rkey key, size_t offset, uint64_t add, uint64_t *old);
int lm_transport_atomic_swap64(int rank, lm_rkey key, size_t offset, uint64_t val, uint64_t *old);
int lm_transport_atomic_cas64(int rank, lm_rkey key, size_t offset, uint64_t expected, uint64_t desired, uint64_t *old);
int lm_transport_atomic_fadd32(int rank, lm_rkey key, size_t offset, uint32_t add, uint32_t *old);
int lm_transport_atomic_swap32(int rank, lm_rkey key, size_t offset, uint32_t val, uint32_t *old);
int lm_transport_atomic_cas32(int rank, lm_rkey key, size_t offset, uint32_t expected, uint32_t desired, uint32_t *old);
int lm_transport_flush(int rank);

/* Counters for MPI_T and the memory report. */
typedef struct lm_transport_counters {
    uint64_t am_sent, am_bytes_sent, am_received, am_bytes_received;
    uint64_t rget_ops, rget_bytes;
    uint64_t pipe_bytes_sent, pipe_bytes_received; /* counted by pt2pt (lm_transport_count_pipe) */
    uint64_t fastbox_sent, queue_sent, send_eagain;
    uint64_t mr_registrations, mr_cache_hits; /* network: buffers registered for RMA, and reuses */
    uint64_t rput_ops, rput_bytes;            /* network: writes into peers' exposed memory (one-sided Put) */
} lm_transport_counters;
void lm_transport_get_counters(const char *backend, lm_transport_counters *out);

#endif
