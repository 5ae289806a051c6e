/* Datatypes. Predefined types come from the generated table
 * (builtin_types_gen.c); derived types are dynamic objects (later). */
#ifndef LM_DATATYPE_H
#define LM_DATATYPE_H
#include <stdbool.h>
#include "mpi.h"
#include "core/lm_handle.h"

typedef struct lm_datatype {
    lm_object obj;
    MPI_Count size;        /* bytes of data */
    MPI_Aint lb, extent;
    MPI_Aint true_lb, true_extent;
    bool committed;
    bool contiguous;       /* count elements are count * extent bytes copied as is from true_lb */
    bool predefined;
    int basic_id;          /* predefined: its index; derived: -1 */
    int basic_size;        /* size of the basic element it is made of (0 if mixed) */
    int combiner;          /* MPI_COMBINER_* that made it */
    const char *name;
} lm_datatype;

/* The datatype for a handle, or NULL if invalid or freed. */
lm_datatype *lm_datatype_get(MPI_Datatype t);
int lm_datatype_init_builtin(void);
/* At MPI_Finalize: predefined handles resolve to NULL from then on. */
void lm_datatype_finalize(void);

#endif
