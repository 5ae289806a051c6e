/* What the point-to-point engine offers the protocol pieces beside it
 * (coop_copy.c, pipe_copy.c): control packets that keep the per-destination order. */
#ifndef LM_PT2PT_ENGINE_INTERNAL_H
#define LM_PT2PT_ENGINE_INTERNAL_H
#include <stdint.h>
#include "pt2pt/protocol.h"

/* Send a full-header packet with no payload to dst now, or queue it behind
 * what is already queued. Ends the job if it cannot even be queued. */
void lm_pt2pt_post_control(int dst, const lm_pkt *h);
/* Tell the sender of a rendezvous message that its buffer is free. */
void lm_pt2pt_send_fin(int dst, uint64_t sreq);
/* The sender's side of a rendezvous message is done: its buffer is free. */
struct lm_request;
void lm_pt2pt_send_done(struct lm_request *s);
#endif
