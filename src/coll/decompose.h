/* Decomposition of LeanMPI's collectives into point-to-point messages: the
 * same generators that run a collective, run for every rank of a
 * communicator of np ranks that need not exist. This is what process
 * mapping reads to know the traffic a collective puts between each pair of
 * ranks; leanmpi-info --decompose prints it (the tool links the library's objects). */
#ifndef LM_DECOMPOSE_H
#define LM_DECOMPOSE_H
#include <stddef.h>

typedef struct lm_coll_query {
    const char *collective; /* "alltoall", "bcast", ... */
    const char *algorithm;  /* NULL: the one the selection table picks */
    int np;                 /* communicator size */
    size_t bytes;           /* block bytes on every rank (v forms: every block) */
    int root;
    size_t type_size;   /* reductions: bytes of one element (pieces never split one) */
    int commutative;    /* reductions: op commutative? */
    int node_local;     /* the ranks share one node: small data then goes through node shared
                                 memory (algorithm "shm"), whose reads are reported as messages
                                 from the rank that posted to the rank that reads */
    int ranks_per_node; /* >= 2 and < np: the ranks sit that many to a host in rank order
                           (jobs across hosts), where the hierarchical algorithms ("hier") apply */
} lm_coll_query;

/* One message of the decomposition, seen from `rank`: is_send, the peer,
 * bytes, and the step: the index of the round among `rank`'s own rounds
 * that move data (a relay receives in one step and sends in the next).
 * In node shared memory a rank posts once and several ranks read: the post
 * is reported as one send to each reader, in rank order, the read as the
 * reader's receive. */
typedef void (*lm_coll_message_fn)(int rank, int is_send, int step, int peer, size_t bytes, void *arg);

/* Calls fn for every send and receive of every rank, rank by rank, in
 * schedule order. Returns 0, or -1 with a message in err for an unknown
 * collective or algorithm, a bad size, or no memory. Sets *algorithm to the
 * name used. */
int lm_coll_decompose(const lm_coll_query *q, lm_coll_message_fn fn, void *arg, const char **algorithm, char *err,
                      size_t errlen);

/* For listings: the i-th algorithm (collective, name, summary, whether it
 * needs a commutative op; that pointer may be NULL), and the i-th row of
 * the selection table (oversubscribed: the row applies only where ranks
 * share cores; may be NULL); 0 past the end. */
int lm_coll_algorithm_info(int i, const char **collective, const char **name, const char **summary,
                           int *commutative_only);
int lm_coll_selection_row(int i, const char **collective, int *max_procs, size_t *max_bytes, const char **algorithm,
                          int *oversubscribed);

#endif
