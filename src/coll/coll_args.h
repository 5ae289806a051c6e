/* Array arguments of the collectives: int[] in the classic forms,
 * MPI_Count[] or MPI_Aint[] in the large-count ones; one reader for both. */
#ifndef LM_COLL_ARGS_H
#define LM_COLL_ARGS_H
#include <stdint.h>
#include "mpi.h"

typedef struct {
    const void *p;
    int wide; /* 64-bit elements */
} lm_arr;
#define LM_ARR(x) ((lm_arr){(x), sizeof((x)[0]) == 8})

static inline MPI_Count lm_arr_at(lm_arr a, int i)
{
    return a.wide ? ((const int64_t *)a.p)[i] : ((const int *)a.p)[i];
}

/* How a collective call runs. */
enum { LM_RUN_BLOCKING, LM_RUN_NONBLOCKING, LM_RUN_PERSISTENT };

#endif
