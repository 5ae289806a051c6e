/* Network backend on the kernel's TCP: active messages to ranks on other
 * hosts over plain sockets, for networks where the kernel is the transport
 * (Ethernet, and the veth links of the virtual cluster).
 *
 * Why next to libfabric: its socket providers add a layer of their own on
 * top of the kernel's. Between two virtual hosts of this machine, an
 * 8-byte one-way latency (fi_pingpong) took 5.2 us on net, 5.5 us on tcp
 * endpoints and 6.7 us on tcp;ofi_rxm, against 4.2 us for a socket that
 * the reader polls; MPICH's UCX got 4.8 us. So the network layer takes
 * libfabric where it finds hardware (cxi, efa, psm3, verbs) and this
 * backend otherwise (transport.c; LEANMPI_NETWORK=tcp|ofi chooses).
 *
 * Like ofi: started only in a job that spans hosts, at the first message
 * to another host or when a peer there asks for this rank's address; the
 * address (a listening socket's IPv4 address and port) goes through the
 * node's store under "tcp" and is fetched on first contact, so a rank
 * holds state (one socket each way, a small staging buffer) only for the
 * peers it talks with. Each rank sends on the connection it opened to a
 * peer and reads on the ones peers opened to it: per pair and direction
 * one ordered byte stream, so messages arrive in the order sent.
 *
 * Large messages go by rendezvous without copies of their own: the
 * receiver asks the sender for the exposed bytes (lm_tcp_rget_async), the
 * sender writes them from the program's buffer, and the receiver reads
 * them from the socket into the program's buffer. One-sided windows use
 * the same reads, and writes the other way: a write frame is read from the
 * socket straight into the exposed window memory, then acknowledged. */
#ifndef LM_TRANSPORT_TCP_H
#define LM_TRANSPORT_TCP_H
#include <stddef.h>
#include "transport.h"

typedef struct lm_tcp_config {
    int world_rank;
    int job; /* this process's job in the universe (boot.h) */
    int (*proc_id)(int job, int rank);
    int (*put)(const char *key, const void *value, size_t len);
    long (*get)(int world_rank, const char *key, void *value, size_t cap);
} lm_tcp_config;

/* LM_OK, or LM_EIO with lm_tcp_error() saying why. */
int lm_tcp_init(const lm_tcp_config *cfg);
/* Writes what is queued (boundedly), then closes every socket. */
void lm_tcp_finalize(void);
const char *lm_tcp_error(void);

/* Same contract as lm_transport_am_sendv; LM_EAGAIN also while the peer has
 * not published its address yet or its connection is full. */
int lm_tcp_send(int dst, const void *hdr, size_t hdr_len, const void *p0, size_t l0, const void *p1, size_t l1);
size_t lm_tcp_max_payload(void);
/* Rendezvous (transport.h: lm_transport_expose, lm_transport_unexpose,
 * lm_transport_rget_async). */
int lm_tcp_expose(const void *buf, size_t len, uint64_t *addr, uint64_t *rkey, void **handle);
void lm_tcp_unexpose(void *handle);
int lm_tcp_rget_async(int src, void *local, uint64_t addr, uint64_t rkey, size_t len, lm_rget_done done, void *arg);
/* One-sided windows (transport.h: lm_transport_expose_rma,
 * lm_transport_rput_async): memory exposed for peers' reads and writes; a
 * write is a frame the peer's transport reads into the exposed memory and
 * acknowledges, done running at the acknowledgement. */
int lm_tcp_expose_rma(void *buf, size_t len, uint64_t *addr, uint64_t *rkey, void **handle);
int lm_tcp_rput_async(int dst, const void *local, uint64_t addr, uint64_t rkey, size_t len, lm_rget_done done,
                      void *arg);
int lm_tcp_progress(void);
void lm_tcp_counters(lm_transport_counters *out);

#endif
