/* Direct modex: a rank asks its host's launch agent for a key another host's
 * rank put, on first use (never all-to-all at start). The rank and its agent
 * share a SOCK_SEQPACKET socket pair (LEANMPI_AGENT_FD in the rank), one
 * request at a time per rank; the agent routes the request through the tree
 * of agents to the agent of the host that holds the key, which reads its
 * node KVS and sends the answer back the same way. These are the messages on
 * the rank's socket; header only, shared by the bootstrap and the launcher. */
#ifndef LM_BOOT_KVS_WIRE_H
#define LM_BOOT_KVS_WIRE_H
#include <stdint.h>
#include "boot/kvs.h"

typedef struct lm_kvs_request {
    int32_t rank;             /* the world rank that put the key */
    char key[LM_KVS_KEY_MAX]; /* the node KVS key, as that rank's node stores it */
} lm_kvs_request;

typedef struct lm_kvs_reply {
    int32_t result; /* the value's length, or -ENOENT (not put yet) */
    char value[LM_KVS_VALUE_MAX];
} lm_kvs_reply;

#endif
