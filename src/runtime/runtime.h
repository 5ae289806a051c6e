/* The runtime shared by the world model and the sessions (init.c): acquire
 * starts or wakes it for one more user (raising the error itself and
 * returning its code on failure), release lets one go. */
#ifndef LM_RUNTIME_H
#define LM_RUNTIME_H

int lm_runtime_acquire(const char *fname, int required_thread_level, int *provided);
void lm_runtime_release(void);

#endif
