/* Network backend on libfabric: active messages to ranks on other hosts.
 *
 * Started only in a job that spans hosts, so a job on one node never opens
 * a fabric. Each rank opens one reliable datagram endpoint (FI_EP_RDM with
 * send-after-send order, `tcp;ofi_rxm` on Ethernet, verbs, efa or cxi where
 * the hardware exists; LEANMPI_OFI_PROVIDER overrides the choice) and
 * publishes its address in its node's store under "ofi". A peer's address
 * is fetched and inserted into the address vector on the first message to
 * it (dynamic add procs: the table grows with the peers contacted, never
 * with the job). Messages travel in bounce buffers from two fixed pools
 * (sends and posted receives), so memory does not grow with traffic either;
 * a message that fits the provider's inject size needs no buffer at all. */
#ifndef LM_TRANSPORT_OFI_H
#define LM_TRANSPORT_OFI_H
#include <stddef.h>
#include "transport.h"

typedef struct lm_ofi_config {
    int world_rank;
    int job; /* this process's job in the universe (boot.h) */
    /* The id of a process of another job that sent a message (boot.h:
     * lm_boot_proc_id), -1 when out of memory. */
    int (*proc_id)(int job, int rank);
    /* The store the addresses go through: publish this rank's, read a peer's
     * (length, or -ENOENT while the peer has not published yet). */
    int (*put)(const char *key, const void *value, size_t len);
    long (*get)(int world_rank, const char *key, void *value, size_t cap);
    /* Unused registrations kept for reuse (mr_cache.h), where the provider's
     * registrations do not pin memory. */
    int mr_cache_max;
    /* Only a provider for network hardware (cxi, efa, psm3, verbs): LM_ENOTSUP
     * when there is none (the tcp backend serves then, transport.c). */
    int hardware_only;
} lm_ofi_config;

/* LM_OK; LM_ENOTSUP when built without libfabric; LM_EIO when no provider
 * fits or the endpoint cannot be opened (lm_ofi_error() says why). */
int lm_ofi_init(const lm_ofi_config *cfg);
/* Waits (boundedly) for sends in flight, then closes everything. */
void lm_ofi_finalize(void);
const char *lm_ofi_error(void);
/* "tcp;ofi_rxm", ... once started; NULL before. */
const char *lm_ofi_provider(void);

/* Same contract as lm_transport_am_sendv; LM_EAGAIN also while the peer has
 * not published its address yet. */
int lm_ofi_send(int dst_world_rank, const void *hdr, size_t hdr_len, const void *p0, size_t l0, const void *p1,
                size_t l1);
size_t lm_ofi_max_payload(void);
/* Rendezvous by the provider's RMA read (transport.h: lm_transport_expose,
 * lm_transport_unexpose, lm_transport_rget_async). */
int lm_ofi_expose(const void *buf, size_t len, uint64_t *addr, uint64_t *rkey, void **handle);
void lm_ofi_unexpose(void *handle);
int lm_ofi_rget_async(int src, void *local, uint64_t addr, uint64_t rkey, size_t len, lm_rget_done done, void *arg);
/* One-sided windows (transport.h: lm_transport_expose_rma,
 * lm_transport_rput_async): memory registered for peers' reads and writes
 * for its lifetime, and a write with delivery completion. */
int lm_ofi_expose_rma(void *buf, size_t len, uint64_t *addr, uint64_t *rkey, void **handle);
void lm_ofi_unexpose_rma(void *handle);
int lm_ofi_rput_async(int dst, const void *local, uint64_t addr, uint64_t rkey, size_t len, lm_rget_done done,
                      void *arg);
int lm_ofi_progress(void);
void lm_ofi_counters(lm_transport_counters *out);

#endif
