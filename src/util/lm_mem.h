/* Memory accounting (rule R6): every allocation names the component it is
 * for, so the per-component totals can be reported (LEANMPI_MEMREPORT=1)
 * and read as MPI_T performance variables. */
#ifndef LM_MEM_H
#define LM_MEM_H
#include <stddef.h>

enum lm_mem_component {
    LM_MEM_CORE,
    LM_MEM_BOOT,
    LM_MEM_KVS,
    LM_MEM_TRANSPORT,
    LM_MEM_PEER_TABLE,
    LM_MEM_PT2PT,
    LM_MEM_COLL,
    LM_MEM_DATATYPE,
    LM_MEM_COMM,
    LM_MEM_REQUEST,
    LM_MEM_ATTR,
    LM_MEM_RMA,
    LM_MEM_USER_BUFFER,
    LM_MEM_COMPONENT_COUNT
};

void *lm_malloc(enum lm_mem_component c, size_t n);
void *lm_calloc(enum lm_mem_component c, size_t nmemb, size_t size);
void *lm_realloc(enum lm_mem_component c, void *p, size_t n);
void lm_free(enum lm_mem_component c, void *p);
char *lm_strdup(enum lm_mem_component c, const char *s);
/* Bytes requested when p was allocated by lm_malloc/lm_calloc/lm_realloc. */
size_t lm_alloc_size(const void *p);

/* Shared segments are counted once per node, by the process that maps them
 * first (node-local rank 0 for the node segment). */
void lm_mem_note_shared(enum lm_mem_component c, long delta_bytes);

const char *lm_mem_component_name(enum lm_mem_component c);
size_t lm_mem_current(enum lm_mem_component c);
size_t lm_mem_peak(enum lm_mem_component c);
size_t lm_mem_shared(enum lm_mem_component c);
/* Print the per-component table to stderr (called at finalize). */
void lm_mem_report(int world_rank);

#endif
