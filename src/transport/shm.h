/* Shared-memory backend: cells through per-receiver MPSC queues, fast boxes
 * for hot pairs, and one-sided access to per-rank arenas. */
#ifndef LM_TRANSPORT_SHM_H
#define LM_TRANSPORT_SHM_H
#include <stddef.h>
#include <stdint.h>
#include "transport.h"

typedef struct lm_shm_peer lm_shm_peer;

typedef struct lm_shm_config {
    int fastbox_threshold; /* messages before claiming a fast box; 0: never */
    int fastbox_max;       /* slots this job's receivers serve */
    int fastbox_peers;     /* receivers this sender holds fast boxes at; 0: no limit */
} lm_shm_config;

int lm_shm_init(void *area, int world_rank, int local_rank, int local_size, const lm_shm_config *cfg);
void lm_shm_finalize(void);
/* Per-peer send state, created on first contact. NULL if out of memory. */
lm_shm_peer *lm_shm_peer_get(int local_rank);
int lm_shm_send(lm_shm_peer *p, const void *hdr, size_t hdr_len, const void *p0, size_t l0, const void *p1, size_t l1);
int lm_shm_progress(void);
size_t lm_shm_max_payload(void);
void lm_shm_counters(lm_transport_counters *out);

/* How many pipes each rank owns and their size (lm_transport_pipes);
 * pipe i of local_rank (lm_transport_pipe), NULL when out of range. */
int lm_shm_pipes(size_t *bytes);
void *lm_shm_pipe(int local_rank, int i);
void lm_shm_count_pipe(size_t sent, size_t received);

/* One-sided (shm_arena.c, shm_rma.c). */
void *lm_shm_arena_alloc(size_t len, uint64_t *rkey);
void lm_shm_arena_free(void *p);
/* Address of [rkey+offset, +len) in local_rank's arena, or NULL if out of
 * the region. */
void *lm_shm_arena_resolve(int local_rank, uint64_t rkey, size_t offset, size_t len);

#endif
