/* Test-only stand-ins for the core and boot services the transport calls,
 * so transport unit tests link without the rest of the library. The tests
 * initialise the transport with lm_transport_init_env(), so the boot stubs
 * are never reached. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "boot/boot.h"
#include "util/lm_cvar.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"

void *lm_malloc(enum lm_mem_component c, size_t n) { return malloc(n); }
void *lm_calloc(enum lm_mem_component c, size_t nmemb, size_t size) { return calloc(nmemb, size); }
void *lm_realloc(enum lm_mem_component c, void *p, size_t n) { return realloc(p, n); }
void lm_free(enum lm_mem_component c, void *p) { free(p); }
char *lm_strdup(enum lm_mem_component c, const char *s) { return strdup(s); }

long lm_cvar(enum lm_cvar_id id)
{
    switch (id) {
    case LM_CVAR_FASTBOX_THRESHOLD: return 8;
    case LM_CVAR_FASTBOX_MAX: return 8;
    case LM_CVAR_CMA_ENABLE: return 1;
    default: return 0;
    }
}

const lm_boot_info *lm_boot(void) { return NULL; }
int lm_boot_is_local(int world_rank) { return 0; }
int lm_boot_local_rank_of(int world_rank) { return -1; }
int lm_boot_pid_of(int world_rank) { return 0; }
int lm_boot_put(const char *key, const void *value, size_t len) { return -EINVAL; }
long lm_boot_get(int world_rank, const char *key, void *value, size_t cap) { return -ENOENT; }
int lm_boot_key_wanted(void) { return 0; }
int lm_boot_publishes_on_demand(void) { return 1; }
int lm_boot_publish(void) { return 0; }
int lm_boot_job(void) { return 0; }
int lm_boot_proc_id(int job, int rank) { return job == 0 ? rank : -1; }

void lm_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    _exit(1);
}
