/* Loopback: messages to my own rank wait in a private FIFO and are delivered
 * by the next progress call, never inside the send (a handler may send). */
#ifndef LM_TRANSPORT_SELF_H
#define LM_TRANSPORT_SELF_H
#include <stddef.h>
#include "transport.h"

void lm_self_init(int world_rank);
void lm_self_finalize(void);
int lm_self_send(const void *hdr, size_t hdr_len, const void *p0, size_t l0, const void *p1, size_t l1);
int lm_self_progress(void);
void lm_self_counters(lm_transport_counters *out);
/* A single copy within this process (rendezvous to oneself), counted as an rget. */
void lm_self_count_copy(size_t len);

#endif
