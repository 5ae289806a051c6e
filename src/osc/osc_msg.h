/* MSG reach (osc_msg.c): operations carried out by the target process
 * itself. Internal to the engine; osc.h is the interface. */
#ifndef LM_OSC_MSG_H
#define LM_OSC_MSG_H
#include "osc/osc.h"

int lm_osc_msg_put(lm_osc_channel *ch, const lm_osc_target *t, uint64_t off, size_t len, uint64_t count, int64_t stride,
                   const void *src, lm_osc_done done, void *arg);
int lm_osc_msg_get(lm_osc_channel *ch, const lm_osc_target *t, uint64_t off, size_t len, uint64_t count, int64_t stride,
                   void *dst, lm_osc_done done, void *arg);

#endif
