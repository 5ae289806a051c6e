/* Partitioned point-to-point communication (MPI-4.1 section 4). A partitioned
 * request is a persistent send or receive request of the engine with a
 * partition record attached (lm_request.part); see partitioned.c. */
#ifndef LM_PARTITIONED_H
#define LM_PARTITIONED_H
#include "pt2pt/request.h"

typedef struct lm_partitioned {
    int partitions;
    int nready;            /* send side: partitions marked ready since MPI_Start */
    unsigned char ready[]; /* one flag per partition (send side) */
} lm_partitioned;

/* MPI_Start of a partitioned request (r->part set). */
int lm_part_start(lm_request *r, const char *fname);
/* Free the partition record (from lm_request_release). */
void lm_part_release(lm_request *r);
/* At point-to-point start: the communicator destroy hook that frees the
 * per-peer sequence counters. */
int lm_partitioned_init(void);

#endif
