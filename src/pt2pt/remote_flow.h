/* Flow control toward receivers on other hosts (remote_flow.c).
 *
 * On a node, a receiver publishes the eager bytes it holds unmatched in
 * its rank block, and senders read it before each eager send (engine.c).
 * A sender on another host cannot read that word, so the receiver tells
 * it instead: the first eager message a remote sender lands unmatched
 * while the receiver is over UNEXPECTED_LIMIT brings it a CONGESTED notice
 * (on), and it sends by rendezvous (header only) until the receiver is
 * back to half the limit and says so (off). Notices go only at those two
 * transitions and only to senders that sent while it was over; what a
 * sender sent before its notice arrived is the overshoot (the messages in
 * flight on that link). Both sides keep state only for such peers. */
#ifndef LM_PT2PT_REMOTE_FLOW_H
#define LM_PT2PT_REMOTE_FLOW_H
#include <stddef.h>

/* Receiver: eager data from src_world was queued unmatched while this
 * process holds more than the limit; tells src_world once. */
void lm_remote_flow_over(int src_world);
/* Receiver: now at or below half the limit; tells every sender told. */
void lm_remote_flow_relieved(void);
/* Whether some sender has been told (the engine checks the relief only then). */
int lm_remote_flow_told_any(void);

/* Sender: a CONGESTED notice from a receiver (on: 1 or 0). */
void lm_remote_flow_notice(int receiver_world, int on);
/* Sender: whether the receiver, on another host, said it is congested. */
int lm_remote_flow_congested(int dst_world);

/* Forget everything (MPI_Finalize; a later init starts empty). */
void lm_remote_flow_reset(void);

#endif
