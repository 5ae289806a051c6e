/* What the transport needs to know about its process and node. Normally
 * filled from lm_boot() by lm_transport_init(); unit tests fill it directly
 * (a shared mapping and forked processes) so they need no launcher. */
#ifndef LM_TRANSPORT_ENV_H
#define LM_TRANSPORT_ENV_H
#include <stddef.h>
#include <sys/types.h>

typedef struct lm_transport_env {
    int world_rank;
    int local_rank, local_size;
    void *shm_area;                       /* formatted by lm_shm_area_format */
    int (*local_rank_of)(int world_rank); /* < 0: not on this node */
    pid_t (*pid_of)(int world_rank);      /* 0: unknown */
    int fastbox_threshold;                /* 0: never claim fast boxes */
    int fastbox_max;                      /* slots a receiver serves (<= LM_SHM_FB_SLOTS) */
    int fastbox_peers;                    /* receivers a sender holds fast boxes at (0: any number) */
    int cma_enable;
    /* world ranks space_first .. + space_count - 1 share this address
     * space: a single copy from or to them is a memcpy (count 0: none) */
    int space_first, space_count;
    /* A job across hosts starts the network backend (ofi.h), whose
     * addresses go through the bootstrap's store; NULL/0 otherwise. */
    int multi_node;
    int (*kvs_put)(const char *key, const void *value, size_t len);
    long (*kvs_get)(int world_rank, const char *key, void *value, size_t cap);
    int (*key_wanted)(void);           /* a peer on another host waits for our address */
    int job;                           /* this process's job in the universe (boot.h) */
    int (*proc_id)(int job, int rank); /* the id of another job's process (boot.h) */
} lm_transport_env;

int lm_transport_init_env(const lm_transport_env *env);
/* Local rank of a world rank, or < 0 if it is on another node. */
int lm_transport_local_rank(int world_rank);

#endif
