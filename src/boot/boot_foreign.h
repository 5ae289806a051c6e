/* Start-up under another launcher's server (boot_foreign.c). */
#ifndef LM_BOOT_FOREIGN_H
#define LM_BOOT_FOREIGN_H
#include "boot/boot_client.h"
#include "boot/node_segment.h"
#include <stddef.h>

typedef struct lm_boot_foreign {
    const lm_boot_client *client;
    lm_node_segment *segment; /* this node's, created or attached */
    int seg_fd;               /* the creator's descriptor, kept open; -1 elsewhere */
    int world_rank;
} lm_boot_foreign;

/* which: "pmix" or "pmi" to ask for one (LEANMPI_BOOT), NULL to take the one
 * the environment shows. 1 started (out filled), 0 no such launcher started
 * this process, -1 failed (why says why; the client, if one was reached, is
 * in out->client so the caller can end the job through it). */
int lm_boot_foreign_start(const char *which, lm_boot_foreign *out, char *why, size_t cap);
/* At finalize, on the segment's creator: wait (bounded) until every rank
 * of the node has attached, so that the descriptor they open stays there. */
void lm_boot_foreign_wait_attached(lm_node_segment *seg, int local_size);

#endif
