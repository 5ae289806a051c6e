/* The finalizer list: what the runtime has started, undone newest first.
 *
 * Init (runtime/init.c) pushes one entry per start step that succeeded, so
 * a failed init unwinds exactly what had started (lm_finalizer_run_to its
 * mark) and finalize walks the whole list. State a layer creates lazily,
 * long after init (Fortran 90 parameterized types, retired collective
 * mailboxes), is freed by that layer's own stop; a layer that has no start
 * step may push an entry of its own when it first creates such state, and
 * it is then undone before the layers it uses. The list lives here, at the
 * bottom, so that no layer has to call up into the runtime to be
 * finalized. */
#ifndef LM_FINALIZER_H
#define LM_FINALIZER_H
#include <stddef.h>

typedef void (*lm_finalizer_fn)(void);

/* 0, or -1 when the list is full (LM_FINALIZERS_MAX entries). */
int lm_finalizer_push(const char *what, lm_finalizer_fn fn);
/* The current depth, to unwind to later. */
size_t lm_finalizer_mark(void);
/* Run and remove every entry pushed after mark, newest first. */
void lm_finalizer_run_to(size_t mark);

#define LM_FINALIZERS_MAX 32

#endif
