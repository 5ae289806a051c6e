/* Which MPI functions this build implements, for `leanmpi-info --unsupported`.
 * Exported from the library so the tool can ask it. */
#ifndef LM_FUNCTION_TABLE_H
#define LM_FUNCTION_TABLE_H
#include <stddef.h>

#if defined(__GNUC__)
#define LM_EXPORT __attribute__((visibility("default")))
#else
#define LM_EXPORT
#endif

LM_EXPORT size_t lm_function_count(void);
/* "MPI_Send", ...; NULL when i is out of range. */
LM_EXPORT const char *lm_function_name(size_t i);
/* 1 when a real implementation replaced the default that raises
 * MPI_ERR_UNSUPPORTED_OPERATION. */
LM_EXPORT int lm_function_implemented(size_t i);

#endif
