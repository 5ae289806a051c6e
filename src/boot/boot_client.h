/* Clients of other launchers' process-management servers: PMIx (prterun,
 * Open MPI's mpirun, srun --mpi=pmix) and PMI-2 / PMI-1 (MPICH's Hydra,
 * srun --mpi=pmi2). boot_foreign.c builds the node segment and the job
 * layout on top of one of them; the layers above see the same lm_boot
 * interface as under LeanMPI's own launcher.
 *
 * A client answers who this process is and where the job's ranks are,
 * carries keys between processes (put, then make visible, then get from
 * any rank: the server's key-value store) and ends the job. Keys and
 * values are the caller's; a client encodes them for its wire. */
#ifndef LM_BOOT_CLIENT_H
#define LM_BOOT_CLIENT_H
#include "boot/node_segment.h"

#include <stddef.h>

/* What a client learned from its server at start. */
typedef struct lm_boot_client_info {
    int rank, size, appnum, universe_size;
    char job_id[32]; /* the server's name of the job (namespace, kvsname), cut to fit */
    /* Placement as the server sees it: the job's hosts, this host's index,
     * this process's rank among the host's ranks, how many there are, the
     * lowest of them and the next (-1: none). boot_foreign.c turns it into
     * a block or cyclic layout (no table), each host checking its own part. */
    int node_id, node_count, local_rank, local_size, first_local, next_local;
    /* The whole job's placement as blocks (a VECTOR layout), where the
     * server gives it (PMI's PMI_process_mapping); nblocks 0 otherwise. */
    int nblocks;
    lm_layout_block block[LM_LAYOUT_BLOCKS_MAX];
} lm_boot_client_info;

typedef struct lm_boot_client {
    const char *name; /* "pmix", "pmi2", "pmi1": what leanmpi-info reports */
    /* 1 when a get of a key another process has not made visible yet waits
     * for it (PMIx direct modex), 0 when it fails until a fence (PMI). */
    int get_waits;
    int (*put)(const char *key, const void *value, size_t len);
    /* Make this process's puts visible to the others (PMI: a fence of all
     * ranks, which every rank must call; PMIx: a commit, local). */
    int (*publish)(void);
    /* The value rank put under key: its length (copied up to cap), -ENOENT
     * when it is not there, -EIO when the server cannot be asked. */
    long (*get)(int rank, const char *key, void *value, size_t cap);
    void (*abort)(int code, const char *message);
    void (*finalize)(void);
    /* Optional (NULL where the start gave the whole placement): the ranks
     * the server placed on node `node`: how many, the lowest, and whether
     * they are consecutive. 0, or -1 when the server cannot say. */
    int (*node_ranks)(int node, int *count, int *lowest, int *contiguous);
} lm_boot_client;

/* Each returns 1 with *client set and *info filled when its server is
 * there (by the environment the launcher gave this process), 0 when this
 * process was not started by such a launcher, -1 when it was but the
 * server could not be used (why says so). `forced`: the user asked for
 * this client by LEANMPI_BOOT, so a missing environment is an error too. */
int lm_boot_pmix_open(int forced, const lm_boot_client **client, lm_boot_client_info *info, char *why, size_t cap);
int lm_boot_pmi_open(int forced, const lm_boot_client **client, lm_boot_client_info *info, char *why, size_t cap);

/* Hex for values on text wires: 2*len+1 bytes of out; decoding returns
 * the length or -1. Keys of the layers above are names ([A-Za-z0-9._-]). */
void lm_boot_hex_encode(const void *value, size_t len, char *out);
long lm_boot_hex_decode(const char *hex, void *value, size_t cap);

#endif
