/* Node key-value store: an open-addressing table inside the node segment,
 * written and read directly by the ranks of the node (no daemon, no copy per
 * process). Keys are strings up to LM_KVS_KEY_MAX-1 bytes, values up to
 * LM_KVS_VALUE_MAX bytes; entries are write-once. */
#ifndef LM_KVS_H
#define LM_KVS_H
#include <stddef.h>
#include <stdint.h>

#define LM_KVS_KEY_MAX 64
#define LM_KVS_VALUE_MAX 256

typedef struct lm_kvs lm_kvs; /* lives in shared memory */

size_t lm_kvs_size(unsigned nslots);
/* Initialise a table of nslots entries in mem (creator only). */
lm_kvs *lm_kvs_format(void *mem, unsigned nslots);
lm_kvs *lm_kvs_from(void *mem);
/* 0 on success; -EEXIST if the key exists; -ENOSPC when full; -EINVAL for bad sizes. */
int lm_kvs_put(lm_kvs *kvs, const char *key, const void *value, size_t len);
/* Copies up to cap bytes; returns the value length, or -ENOENT. */
long lm_kvs_get(lm_kvs *kvs, const char *key, void *value, size_t cap);

#endif
