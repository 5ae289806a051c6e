/* Bootstrap: how a rank learns who it is and where its peers are. As small as
 * possible: the native backend reads everything from the node segment. */
#ifndef LM_BOOT_H
#define LM_BOOT_H
#include <stddef.h>
#include <stdint.h>
#include "node_segment.h"

typedef struct lm_boot_info {
    int world_rank;
    int world_size;          /* ranks that really run */
    int reported_world_size; /* MPI_COMM_WORLD size (simulated jobs report more) */
    int universe_size;       /* MPI_UNIVERSE_SIZE: processes the launcher has room for */
    int local_rank;
    int local_size;
    int node_cpus; /* CPUs of this node for its ranks, one value for all of them (0: unknown) */
    int singleton; /* started without a launcher */
    /* mpirun --address-space=shared: world ranks space_first ..
     * space_first + space_count - 1 share this process's address space
     * (each its own copy of the program); count 0 where none does */
    int space_first, space_count;
    lm_node_segment *segment;
} lm_boot_info;

/* Native backend when LEANMPI_NODE_FD and LEANMPI_RANK are set, else a
 * PMIx or PMI client where such a launcher started the process, else
 * singleton; LEANMPI_BOOT=auto|native|pmix|pmi|singleton forces one. */
int lm_boot_init(lm_boot_info *info);
/* The bootstrap in use: "native", "pmix", "pmi2", "pmi1", "singleton";
 * "none" before init. For leanmpi-info. */
const char *lm_boot_name(void);
/* 0 where no one asks a rank for its keys on demand (another launcher's
 * server): a layer whose keys ranks of other hosts need publishes them at
 * start and then calls lm_boot_publish, on every rank alike (PMI: a fence).
 * 1 under LeanMPI's own launcher (lm_boot_key_wanted). */
int lm_boot_publishes_on_demand(void);
int lm_boot_publish(void);
void lm_boot_set_state(int state); /* enum lm_rank_state of this rank */
void lm_boot_finalize(void);
/* Forget the ids of other jobs' processes (universe.c), at the end. */
void lm_boot_procs_release(void);
const lm_boot_info *lm_boot(void);
/* MPI_COMM_WORLD's size, also before lm_boot_init (from what the launcher
 * exported; 1 without a launcher). */
int lm_boot_world_size_hint(void);

int lm_boot_put(const char *key, const void *value, size_t len);
/* The value process id (a world rank, or a process of another job: see
 * below) put under key: its length (copies up to cap bytes), or -ENOENT
 * while it is not there. A rank on another host or in another job is
 * asked of the launcher on each call (direct modex, kvs_wire.h); -EIO when
 * that cannot be done. */
long lm_boot_get(int id, const char *key, void *value, size_t cap);

/* Processes of other jobs of the universe (MPI_Comm_spawn, accept and
 * connect, join). Within a process every peer has one id: its world rank
 * when it is of this job, else an id at or above LM_PROC_FOREIGN that this
 * process gives it the first time it meets it (universe.c), so the layers
 * above (groups, the transport) name such a peer like any other. The
 * universe-wide name of a process is (job, world rank in that job); ids
 * are this process's own and never travel. */
#define LM_PROC_FOREIGN (1 << 29)
int lm_boot_job(void); /* this process's job */
/* The id of (job, rank): the world rank for this job; -1 out of memory or
 * outside the limits. */
int lm_boot_proc_id(int job, int rank);
/* The name behind an id: 0, or -1 for an id never given out. */
int lm_boot_proc_name(int id, int *job, int *rank);
/* One request to the launcher (kvs_wire.h) and its answer: the answer's
 * length, or -ENOTSUP when no launcher serves this process, -EIO when the
 * launcher is gone. A singleton's first request starts mpirun as its
 * launcher (singleton_broker.h); where that failed,
 * lm_boot_no_launcher_reason says why (NULL otherwise). */
long lm_boot_ctl(const void *req, size_t len, void *reply, size_t cap);
const char *lm_boot_no_launcher_reason(void);

/* 1 once since the last call when a rank on another host asked for a key
 * of this rank that was not there: whoever publishes keys on demand (the
 * network transport its address) publishes now. */
int lm_boot_key_wanted(void);
int lm_boot_is_local(int world_rank);
/* The node (host) of a world rank in this job's layout; -1 for another
 * job's process. */
int lm_boot_node_of(int id);
/* Hosts this job spans (1 on one node). */
int lm_boot_node_count(void);
int lm_boot_local_rank_of(int world_rank);
int lm_boot_pid_of(int world_rank); /* 0 if not (yet) known */

/* Keys of processes on other hosts or in other jobs that this process
 * fetched from the launcher (its agents, or another launcher's server),
 * counted when answered: with direct modex a rank that talks to k peers
 * fetches O(k) keys whatever the job's size (MPI_T: boot_key_fetches). */
typedef struct lm_boot_counters {
    uint64_t key_fetches;
} lm_boot_counters;
extern lm_boot_counters lm_boot_count;

/* Record the abort in the segment (rank, code, message) and end this process;
 * the launcher sees it and ends every other rank. */
void lm_boot_abort(int errorcode, const char *message) __attribute__((noreturn));

#endif
