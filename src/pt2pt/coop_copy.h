/* Cooperative single copy of large rendezvous messages.
 *
 * With cma the receiver of a large message copies it straight out of the
 * sender's buffer. The sender meanwhile only waits for FIN, so for messages
 * of at least COOP_COPY_MIN bytes the two share the work: the receiver puts a
 * small job record in its node-shared arena and tells the sender about it
 * (COPY_HELP); then each side claims pieces (halves of the message, at
 * least COOP_COPY_CHUNK bytes) with an atomic counter, the receiver reading
 * (process_vm_readv) and the sender writing (process_vm_writev). A sender that does not progress costs
 * nothing: the receiver simply claims every piece itself. */
#ifndef LM_PT2PT_COOP_COPY_H
#define LM_PT2PT_COOP_COPY_H
#include <stddef.h>
#include <stdint.h>
#include "pt2pt/request.h"
#include "pt2pt/protocol.h"

void lm_coop_copy_init(void);
/* Receiver, on a matched RTS: start a shared copy of n bytes from src_addr in
 * src_world into r->buf. 1 when started (the copy completes r, sending FIN
 * for sreq, from a later progress call), 0 when this message does not
 * qualify and the caller copies as usual. t0: nonzero where the single
 * copy was chosen by measured cost (copy_choice.h), the time of that
 * choice; the copy records its cost when it completes. */
int lm_coop_copy_start(lm_request *r, int src_world, uint64_t sreq, uint64_t src_addr, size_t n, uint64_t t0);
/* Sender, on COPY_HELP from receiver_world: copy pieces until none is left. */
void lm_coop_copy_help(int receiver_world, const lm_pkt *h);
/* Receiver: claim pieces of the running copies, finish those that are
 * complete. Returns the number of events. */
int lm_coop_copy_progress(void);
/* Copies in flight, or job records the sender has not let go of yet. */
int lm_coop_copy_busy(void);
#endif
