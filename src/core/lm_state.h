/* Library-wide state: init/finalize status and the facts every layer needs. */
#ifndef LM_STATE_H
#define LM_STATE_H

enum lm_init_state { LM_STATE_NOT_INITIALIZED = 0, LM_STATE_INITIALIZED = 1, LM_STATE_FINALIZED = 2 };

int lm_initialized_state(void);
int lm_world_rank(void);
int lm_world_size(void);   /* ranks that really run */
int lm_thread_level(void);
/* Node is oversubscribed (more local ranks than usable cores): idle waits yield. */
int lm_oversubscribed(void);

#endif
