/* MSG reach (osc_msg.c): operations carried out by the target process
 * itself. Internal to the engine; osc.h is the interface. */
#ifndef LM_OSC_MSG_H
#define LM_OSC_MSG_H
#include "osc/osc.h"

int lm_osc_msg_put(lm_osc_channel *ch, const lm_osc_target *t, uint64_t off, size_t len, uint64_t count, int64_t stride,
                   const void *src, lm_osc_done done, void *arg);
int lm_osc_msg_get(lm_osc_channel *ch, const lm_osc_target *t, uint64_t off, size_t len, uint64_t count, int64_t stride,
                   void *dst, lm_osc_done done, void *arg);

/* Operations the channel tracks like MSG ones (pending per rank, waited
 * for by lm_osc_flush) but that complete by callbacks (osc_net.c): a
 * tracked operation starts with one part (its issuing), gains one per
 * transfer in flight (lm_osc_track_part) and ends, its done called with
 * the first error of a part, once every part is done. lm_osc_untrack drops
 * one whose parts never started, without calling done. */
typedef struct msg_op lm_osc_tracked;
lm_osc_tracked *lm_osc_track(lm_osc_channel *ch, int rank, lm_osc_done done, void *arg);
void lm_osc_track_part(lm_osc_tracked *op);
void lm_osc_track_part_done(lm_osc_tracked *op, int err);
void lm_osc_untrack(lm_osc_channel *ch, lm_osc_tracked *op);

/* NET reach (osc_net.c): transfers by the network's RMA. */
int lm_osc_net_transfer(lm_osc_channel *ch, const lm_osc_target *t, uint64_t off, size_t len, uint64_t count,
                        int64_t stride, char *local, int put, lm_osc_done done, void *arg);

#endif
