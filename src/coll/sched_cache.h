/* Schedules already built, for calls that would build the same one again.
 *
 * A generator's output depends only on its spec (coll_alg.h) and on the
 * scratch already reserved before it runs (staged data), and selection
 * only on the spec: so a schedule built once is exactly what the same
 * call would build again. Back-to-back collectives with the same
 * arguments (the common case in loops) then skip selection and
 * generation. Only small schedules of forms without per-rank arrays are
 * kept, a few at a time. */
#ifndef LM_SCHED_CACHE_H
#define LM_SCHED_CACHE_H
#include "coll/coll_alg.h"

/* Fill s (freshly initialised, scratch_bytes already reserved for staging)
 * with the schedule of a; returns 1, or 0 when none is kept. */
int lm_sched_cache_get(const lm_coll_spec *a, lm_sched *s);
/* Keep s, just built for a from a schedule whose scratch before
 * generation was scratch_before (nothing kept if it does not qualify). */
void lm_sched_cache_put(const lm_coll_spec *a, size_t scratch_before, const lm_sched *s);

#endif
