/* Single copy between processes of a node with process_vm_readv. */
#ifndef LM_TRANSPORT_CMA_H
#define LM_TRANSPORT_CMA_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "transport.h"

/* Lets siblings read this process (Yama) and probes once whether the kernel
 * allows the call (seccomp, container policy). enable = 0 turns it off. */
void lm_cma_init(int enable);
int lm_cma_available(void);
/* LM_OK, LM_ENOTSUP (not permitted: caller pipelines through AMs; cma stays
 * off from then on) or LM_EINVAL (bad address or process). */
int lm_cma_read(pid_t pid, void *local, uint64_t remote_addr, size_t len);
/* The other way: copy len bytes from local to remote_addr in pid. */
int lm_cma_write(pid_t pid, uint64_t remote_addr, const void *local, size_t len);
void lm_cma_counters(lm_transport_counters *out);
/* How many times as long a single copy of 256 KiB takes as a memcpy of it
 * here, measured on the first call (0: no single copy). Pinning pages
 * costs very different amounts on different machines: from a little more
 * than the memcpy to several times it (virtual machines). */
double lm_cma_cost_ratio(void);

#endif
