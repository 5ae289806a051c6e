/* Info objects: ordered (key, value) string pairs, and the predefined
 * read-only MPI_INFO_ENV describing how the process was started. */
#ifndef LM_INFO_H
#define LM_INFO_H
#include "mpi.h"

struct lm_info;
/* The info object for a handle (MPI_INFO_ENV included), or NULL. */
struct lm_info *lm_info_get(MPI_Info info);
/* The value of key in info, or NULL when absent. */
const char *lm_info_value(const struct lm_info *info, const char *key);

#endif
