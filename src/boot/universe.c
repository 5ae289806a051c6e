/* Ids of other jobs' processes (boot.h): a process meets them through
 * dynamic-process calls and their messages, and gives each the next id
 * from LM_PROC_FOREIGN up. Two tables, both sized by the processes met,
 * never by the universe (R1): the names in id order, and a map from a name
 * to its id. A name is packed into one int for the map: the job in the bits
 * above 20, the rank below, which bounds ranks of other jobs at 2^20 and
 * jobs at LM_JOB_MAX. */
#include "boot/boot.h"
#include "boot/kvs_wire.h"
#include "util/lm_hashmap.h"
#include "util/lm_mem.h"

#include <pthread.h>
#include <stdint.h>

#define RANK_BITS 20

typedef struct proc_name {
    int32_t job, rank;
} proc_name;

static struct {
    pthread_mutex_t lock; /* the transport meets names from any thread */
    lm_hashmap by_name;   /* packed name -> id - LM_PROC_FOREIGN + 1 */
    int ready;
    proc_name *names;
    int n, cap;
} U = {.lock = PTHREAD_MUTEX_INITIALIZER};

int lm_boot_proc_id(int job, int rank)
{
    if (job == lm_boot_job()) return rank;
    if (job < 0 || job >= LM_JOB_MAX || rank < 0 || rank >= (1 << RANK_BITS)) return -1;
    int key = (job << RANK_BITS) | rank, id = -1;
    pthread_mutex_lock(&U.lock);
    if (!U.ready) {
        lm_hashmap_init(&U.by_name, LM_MEM_PEER_TABLE);
        U.ready = 1;
    }
    uintptr_t v = (uintptr_t)lm_hashmap_get(&U.by_name, key);
    if (v) {
        id = LM_PROC_FOREIGN + (int)v - 1;
    } else {
        if (U.n == U.cap) {
            int cap = U.cap ? 2 * U.cap : 16;
            proc_name *p = lm_realloc(LM_MEM_PEER_TABLE, U.names, (size_t)cap * sizeof *p);
            if (p) U.names = p, U.cap = cap;
        }
        if (U.n < U.cap && lm_hashmap_put(&U.by_name, key, (void *)(uintptr_t)(U.n + 1)) == 0) {
            U.names[U.n] = (proc_name){job, rank};
            id = LM_PROC_FOREIGN + U.n++;
        }
    }
    pthread_mutex_unlock(&U.lock);
    return id;
}

int lm_boot_proc_name(int id, int *job, int *rank)
{
    if (id >= 0 && id < LM_PROC_FOREIGN) {
        *job = lm_boot_job();
        *rank = id;
        return 0;
    }
    int rc = -1;
    pthread_mutex_lock(&U.lock);
    if (id >= LM_PROC_FOREIGN && id - LM_PROC_FOREIGN < U.n) {
        *job = U.names[id - LM_PROC_FOREIGN].job;
        *rank = U.names[id - LM_PROC_FOREIGN].rank;
        rc = 0;
    }
    pthread_mutex_unlock(&U.lock);
    return rc;
}

void lm_boot_procs_release(void)
{
    pthread_mutex_lock(&U.lock);
    if (U.ready) lm_hashmap_destroy(&U.by_name);
    lm_free(LM_MEM_PEER_TABLE, U.names);
    U.names = NULL;
    U.n = U.cap = U.ready = 0;
    pthread_mutex_unlock(&U.lock);
}
