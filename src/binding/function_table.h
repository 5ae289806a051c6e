/* Which MPI functions this build implements, for `leanmpi-info --unsupported`
 * (which links the library's objects: nothing here is exported). */
#ifndef LM_FUNCTION_TABLE_H
#define LM_FUNCTION_TABLE_H
#include <stddef.h>

size_t lm_function_count(void);
/* "MPI_Send", ...; NULL when i is out of range. */
const char *lm_function_name(size_t i);
/* 1 when a real implementation replaced the default that raises
 * MPI_ERR_UNSUPPORTED_OPERATION. */
int lm_function_implemented(size_t i);

#endif
