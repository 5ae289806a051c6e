/* The finalizer list (lm_finalizer.h): a fixed array, so pushing never
 * allocates and unwinding cannot fail. */
#include "util/lm_finalizer.h"

static struct {
    const char *what;
    lm_finalizer_fn fn;
} entries[LM_FINALIZERS_MAX];
static size_t depth;

int lm_finalizer_push(const char *what, lm_finalizer_fn fn)
{
    if (depth == LM_FINALIZERS_MAX) return -1;
    entries[depth].what = what;
    entries[depth].fn = fn;
    depth++;
    return 0;
}

size_t lm_finalizer_mark(void) { return depth; }

void lm_finalizer_run_to(size_t mark)
{
    while (depth > mark) {
        /* popped first: a finalizer that pushes (it should not) cannot loop */
        lm_finalizer_fn fn = entries[--depth].fn;
        fn();
    }
}
