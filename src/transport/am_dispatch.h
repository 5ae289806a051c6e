/* The AM handler table, shared by the backends so delivery is one indexed
 * call with no lookup. */
#ifndef LM_AM_DISPATCH_H
#define LM_AM_DISPATCH_H
#include <stddef.h>
#include <stdio.h>
#include "transport.h"

extern lm_am_handler lm_am_handlers[LM_AM_MAX_HANDLERS];

static inline void lm_am_deliver(int src, const void *hdr, size_t hdr_len, const void *payload, size_t payload_len)
{
    uint8_t id = *(const uint8_t *)hdr;
    lm_am_handler h = id < LM_AM_MAX_HANDLERS ? lm_am_handlers[id] : NULL;
    if (h) h(src, hdr, hdr_len, payload, payload_len);
    else fprintf(stderr, "leanmpi: dropped active message with unregistered id %u from rank %d\n", (unsigned)id, src);
}

#endif
