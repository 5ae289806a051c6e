/* Control variables: every tunable is read from the environment as
 * LEANMPI_<NAME> once at init, listed in one table (lm_cvar.c), reported by
 * leanmpi-info and (later) enumerable through MPI_T. */
#ifndef LM_CVAR_H
#define LM_CVAR_H
#include <stddef.h>

typedef struct lm_cvar_desc {
    const char *name;        /* without the LEANMPI_ prefix, e.g. "EAGER_LIMIT" */
    long default_value;
    long min_value, max_value;
    const char *description;
} lm_cvar_desc;

enum lm_cvar_id {
    LM_CVAR_EAGER_LIMIT,        /* bytes sent eagerly; above: rendezvous */
    LM_CVAR_CMA_ENABLE,         /* use process_vm_readv for large messages when permitted */
    LM_CVAR_FASTBOX_THRESHOLD,  /* messages to one peer before a fast box is claimed */
    LM_CVAR_FASTBOX_MAX,        /* fast boxes a receiver serves at most */
    LM_CVAR_FASTBOX_PEERS,      /* receivers one sender holds fast boxes at, at most (0: no limit) */
    LM_CVAR_UNEXPECTED_LIMIT,   /* eager bytes a receiver may hold unmatched; then senders use rendezvous */
    LM_CVAR_PIPELINE_CHUNK,     /* bytes per chunk when large data goes through cells */
    LM_CVAR_MEMREPORT,          /* print the memory table at finalize */
    LM_CVAR_SHM_ARENA_SIZE,     /* bytes of one-sided shared memory per rank (read by mpirun) */
    LM_CVAR_COOP_COPY_MIN,      /* rendezvous bytes from which sender and receiver share the copy */
    LM_CVAR_COOP_COPY_CHUNK,    /* smallest piece of a shared copy */
    LM_CVAR_COLL_SHM,           /* node shared-memory mailboxes for collectives on one-node communicators */
    LM_CVAR_COUNT
};

extern const lm_cvar_desc lm_cvar_table[LM_CVAR_COUNT];

/* For leanmpi-info: the description and current value of cvar i (NULL past the end). */
__attribute__((visibility("default"))) const lm_cvar_desc *lm_cvar_describe(int i, long *value);
void lm_cvar_load(void);              /* read the environment (idempotent) */
long lm_cvar(enum lm_cvar_id id);
/* For MPI_T_cvar_write: 0, or -1 when value is outside [min, max]. Only
 * variables read after init (MPI_T scope LOCAL) may be changed this way. */
int lm_cvar_set(enum lm_cvar_id id, long value);
/* String-valued parameters, e.g. LEANMPI_PROTOCOL; NULL if unset. */
const char *lm_param_string(const char *name);

#endif
