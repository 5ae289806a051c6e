/* Native bootstrap: everything a rank needs comes from the node segment the
 * launcher created and passed down as an inherited descriptor
 * (LEANMPI_NODE_FD). Without a launcher the process is a singleton with a
 * private segment of the same layout, so the layers above never need to know
 * which case they are in. Under another launcher's server (PMIx, PMI-2,
 * PMI-1) boot_foreign.c makes the same segment and layout, and the keys of
 * other hosts and the end of the job go through that server's client.
 * LEANMPI_BOOT=auto|native|pmix|pmi|singleton picks one.
 *
 * Nothing here allocates: the state is one static struct and the segment. */
#include "boot/boot.h"
#include "boot/boot_foreign.h"
#include "util/lm_error.h"
#include "boot/kvs.h"
#include "boot/kvs_wire.h"
#include "boot/singleton_broker.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

lm_boot_counters lm_boot_count;
static lm_boot_info g_info;
static lm_kvs *g_kvs;
static int g_ready;
/* The socket to this host's launch agent (jobs across hosts), or -1. */
static int g_agent_fd = -1;
static pthread_mutex_t g_agent_lock = PTHREAD_MUTEX_INITIALIZER;
/* This job's number in the universe: 0 for the job mpirun started, then
 * one per spawned job (LEANMPI_JOB_NUM). */
static int g_job;
/* Under another launcher: its client (NULL under LeanMPI's own). */
static lm_boot_foreign g_foreign;
static const char *g_boot_name = "none";

static int env_int(const char *name, int *out)
{
    const char *s = getenv(name);
    if (!s || !*s) return 0;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end != '\0' || errno || v < 0 || v > 0x7fffffff) return -1;
    *out = (int)v;
    return 1;
}

static lm_rank_block *my_block(void) { return lm_node_segment_rank(g_info.segment, g_info.local_rank); }

static int init_native(int fd, int rank)
{
    lm_node_segment *seg;
    if (lm_node_segment_attach(fd, &seg) != 0) {
        fprintf(stderr, "LeanMPI: cannot attach the node segment (LEANMPI_NODE_FD=%d): %s\n", fd, strerror(errno));
        return -1;
    }
    const char *job = getenv("LEANMPI_JOB_ID");
    if (job && strncmp(job, seg->job_id, sizeof seg->job_id) != 0) {
        fprintf(stderr, "LeanMPI: LEANMPI_NODE_FD belongs to job '%s', not '%s'\n", seg->job_id, job);
        lm_node_segment_detach(seg);
        return -1;
    }
    const lm_layout *l = &seg->layout;
    if (rank >= l->world_size || lm_layout_node_of(l, rank) != l->node_id ||
        lm_layout_local_rank_of(l, rank) >= l->local_size) {
        fprintf(stderr, "LeanMPI: LEANMPI_RANK=%d does not belong to this node's segment\n", rank);
        lm_node_segment_detach(seg);
        return -1;
    }
    /* The mapping keeps the segment alive; closing the descriptor keeps it
     * out of processes this rank may start. */
    close(fd);
    g_info.segment = seg;
    g_info.world_rank = rank;
    g_info.world_size = l->world_size;
    g_info.reported_world_size = l->reported_world_size;
    g_info.universe_size = l->universe_size;
    g_info.local_rank = lm_layout_local_rank_of(l, rank);
    g_info.local_size = l->local_size;
    g_info.node_cpus = l->node_cpus;
    g_info.singleton = 0;
    int afd = -1;
    if (env_int("LEANMPI_AGENT_FD", &afd) == 1 && fcntl(afd, F_SETFD, FD_CLOEXEC) == 0)
        g_agent_fd = afd; /* kept out of the processes this rank may start */
    if (env_int("LEANMPI_JOB_NUM", &g_job) != 1) g_job = 0;
    /* ranks that share this address space (leanmpi-host): one node's, and
     * this one among them */
    const char *space = getenv("LEANMPI_ADDRESS_SPACE_RANKS");
    int first, count;
    if (space && sscanf(space, "%d,%d", &first, &count) == 2 && first >= 0 && count > 0 && rank >= first &&
        rank < first + count && first + count <= l->world_size) {
        g_info.space_first = first;
        g_info.space_count = count;
    }
    return 0;
}

/* A singleton's segment, as a descriptor its broker can map (or -1 when
 * it is anonymous memory), and whether the broker was tried already. */
static int g_singleton_seg_fd = -1;
static int g_broker_tried;
static char g_broker_why[256];

static int init_singleton(void)
{
    lm_node_segment *seg;
    if (lm_node_segment_create_private(&seg, &g_singleton_seg_fd) != 0) {
        fprintf(stderr, "LeanMPI: cannot create a private segment: %s\n", strerror(errno));
        return -1;
    }
    g_info = (lm_boot_info){.world_rank = 0,
                            .world_size = 1,
                            .reported_world_size = 1,
                            .universe_size = 1,
                            .local_rank = 0,
                            .local_size = 1,
                            .singleton = 1,
                            .segment = seg};
    return 0;
}

/* Under another launcher's server: which = "pmix", "pmi" or NULL (the one
 * the environment shows). 1 started, 0 none there, -1 failed (said on
 * stderr, and the job ended through the server where one was reached). */
static int init_foreign(const char *which)
{
    char why[400];
    int rc = lm_boot_foreign_start(which, &g_foreign, why, sizeof why);
    if (rc == 0) return 0;
    if (rc < 0) {
        fprintf(stderr, "LeanMPI: cannot start under the launcher: %s\n", why);
        if (g_foreign.client) g_foreign.client->abort(1, why);
        g_foreign.client = NULL;
        return -1;
    }
    lm_node_segment *seg = g_foreign.segment;
    const lm_layout *l = &seg->layout;
    g_info = (lm_boot_info){.world_rank = g_foreign.world_rank,
                            .world_size = l->world_size,
                            .reported_world_size = l->reported_world_size,
                            .universe_size = l->universe_size,
                            .local_rank = lm_layout_local_rank_of(l, g_foreign.world_rank),
                            .local_size = l->local_size,
                            .node_cpus = l->node_cpus,
                            .singleton = 0,
                            .segment = seg};
    snprintf(g_broker_why, sizeof g_broker_why,
             "this job was started by another launcher (%s), which LeanMPI cannot ask for new processes",
             g_foreign.client->name);
    g_boot_name = g_foreign.client->name;
    return 1;
}

/* Which bootstrap: LEANMPI_BOOT, or the environment's (auto). 0 or -1. */
static int start_any(void)
{
    int fd = -1, rank = -1;
    int has_fd = env_int("LEANMPI_NODE_FD", &fd);
    int has_rank = env_int("LEANMPI_RANK", &rank);
    if (has_fd < 0 || has_rank < 0) {
        fprintf(stderr, "LeanMPI: LEANMPI_NODE_FD / LEANMPI_RANK are not valid numbers\n");
        return -1;
    }
    const char *want = getenv("LEANMPI_BOOT");
    if (!want || !*want || !strcmp(want, "auto")) {
        if (has_fd && has_rank) return g_boot_name = "native", init_native(fd, rank);
        int rc = init_foreign(NULL);
        if (rc != 0) return rc > 0 ? 0 : -1;
        /* srun started several tasks but gave them no server (--mpi=none,
         * or a site default of none): as singletons each would be a job of
         * its own, N copies of rank 0, so stop and say what to do */
        int tasks = 0;
        if (env_int("SLURM_STEP_NUM_TASKS", &tasks) > 0 && tasks > 1) {
            fprintf(stderr,
                    "LeanMPI: srun started %d tasks without a process-management server, so they cannot form one "
                    "job: run srun --mpi=pmix or --mpi=pmi2 (LEANMPI_BOOT=singleton runs each task alone)\n",
                    tasks);
            return -1;
        }
        return g_boot_name = "singleton", init_singleton();
    }
    if (!strcmp(want, "native")) {
        if (!(has_fd && has_rank)) {
            fprintf(stderr, "LeanMPI: LEANMPI_BOOT=native, but LEANMPI_NODE_FD and LEANMPI_RANK are not set "
                            "(start the program with LeanMPI's mpirun)\n");
            return -1;
        }
        return g_boot_name = "native", init_native(fd, rank);
    }
    if (!strcmp(want, "pmix") || !strcmp(want, "pmi")) return init_foreign(want) > 0 ? 0 : -1;
    if (!strcmp(want, "singleton")) return g_boot_name = "singleton", init_singleton();
    fprintf(stderr, "LeanMPI: LEANMPI_BOOT='%s': expected auto, native, pmix, pmi or singleton\n", want);
    return -1;
}

int lm_boot_init(lm_boot_info *info)
{
    /* from now on a fatal internal error ends the whole job */
    lm_fatal_set_exit(lm_boot_abort);
    if (!g_ready) {
        if (start_any() != 0) return -1;
        g_kvs = lm_kvs_from(lm_node_segment_at(g_info.segment, g_info.segment->kvs_offset));
        lm_rank_block *rb = my_block();
        atomic_store(&rb->pid, (int32_t)getpid());
        /* The launcher reads this state when the rank exits: INITIALIZED at
         * a clean exit means the program forgot MPI_Finalize. */
        atomic_store(&rb->state, LM_RANK_INITIALIZED);
        g_ready = 1;
    }
    if (info) *info = g_info;
    return 0;
}

void lm_boot_set_state(int state)
{
    if (g_ready) atomic_store(&my_block()->state, state);
}

/* The segment stays mapped: the shm transport area lives inside it and other
 * layers may still touch it during their own teardown; the mapping goes away
 * with the process. */
void lm_boot_finalize(void)
{
    lm_boot_set_state(LM_RANK_FINALIZED);
    if (!g_foreign.client) return;
    if (g_foreign.seg_fd >= 0) lm_boot_foreign_wait_attached(g_info.segment, g_info.local_size);
    g_foreign.client->finalize();
    g_foreign.client = NULL;
}

const char *lm_boot_name(void) { return g_boot_name; }

int lm_boot_publishes_on_demand(void) { return g_foreign.client == NULL; }

int lm_boot_publish(void) { return g_foreign.client ? g_foreign.client->publish() : 0; }

const lm_boot_info *lm_boot(void) { return g_ready ? &g_info : NULL; }

int lm_boot_world_size_hint(void)
{
    if (g_ready) return g_info.reported_world_size;
    int n = 1;
    if (env_int("LEANMPI_SIZE", &n) == 1 && n > 0) return n;
    /* other launchers: Hydra and srun (PMI), Open MPI's and PRRTE's */
    if (env_int("PMI_SIZE", &n) == 1 && n > 0) return n;
    return env_int("OMPI_COMM_WORLD_SIZE", &n) == 1 && n > 0 ? n : 1;
}

/* Keys are stored as "<world rank>:<key>" so get(rank, key) names exactly the
 * entry that rank put. */
static int make_key(char *buf, int world_rank, const char *key)
{
    int n = snprintf(buf, LM_KVS_KEY_MAX, "%d:%s", world_rank, key);
    return (n < 0 || n >= LM_KVS_KEY_MAX) ? -EINVAL : 0;
}

int lm_boot_put(const char *key, const void *value, size_t len)
{
    char k[LM_KVS_KEY_MAX];
    if (!g_ready || !g_kvs) return -EINVAL;
    int rc = make_key(k, g_info.world_rank, key);
    if (!rc) rc = lm_kvs_put(g_kvs, k, value, len);
    /* ranks of other hosts read it from the launcher's server */
    if (!rc && g_foreign.client && g_info.segment->layout.node_count > 1) rc = g_foreign.client->put(key, value, len);
    return rc;
}

/* One request to the launcher and its answer (kvs_wire.h): the answer's
 * length, or -errno. */
static long ask_launcher(const void *req, size_t len, void *reply, size_t cap)
{
    long n = -EIO;
    pthread_mutex_lock(&g_agent_lock);
    /* a singleton's first request starts its broker */
    if (g_agent_fd < 0 && g_info.singleton && !g_broker_tried) {
        g_broker_tried = 1;
        if (g_singleton_seg_fd < 0)
            snprintf(g_broker_why, sizeof g_broker_why, "this singleton's segment cannot be shared with a launcher");
        else g_agent_fd = lm_singleton_broker_start(g_singleton_seg_fd, g_broker_why, sizeof g_broker_why);
    }
    if (g_agent_fd < 0) {
        pthread_mutex_unlock(&g_agent_lock);
        return -ENOTSUP;
    }
    if (send(g_agent_fd, req, len, MSG_NOSIGNAL) == (ssize_t)len) {
        ssize_t got;
        do got = recv(g_agent_fd, reply, cap, 0);
        while (got < 0 && errno == EINTR);
        if (got > 0) n = got;
    }
    pthread_mutex_unlock(&g_agent_lock);
    return n;
}

long lm_boot_ctl(const void *req, size_t len, void *reply, size_t cap)
{
    if (!g_ready) return -EINVAL;
    return ask_launcher(req, len, reply, cap);
}

int lm_boot_job(void) { return g_job; }

const char *lm_boot_no_launcher_reason(void) { return g_broker_why[0] ? g_broker_why : NULL; }

/* A key of a rank on another host or in another job, through the launcher:
 * one request, one answer (found, or -ENOENT when that rank has not put it
 * yet). */
static long get_remote(int job, int rank, const char *k, void *value, size_t cap)
{
    lm_kvs_request req = {.type = LM_REQ_KVS_GET, .job = job, .rank = rank};
    snprintf(req.key, sizeof req.key, "%s", k);
    lm_kvs_reply rep;
    long got = ask_launcher(&req, sizeof req, &rep, sizeof rep);
    if (got == -ENOTSUP) return -ENOENT;
    if (got != (long)sizeof rep) return -EIO;
    long n = rep.result;
    if (n > LM_KVS_VALUE_MAX) return -EIO;
    if (n > 0) memcpy(value, rep.value, (size_t)n < cap ? (size_t)n : cap);
    if (n >= 0) lm_boot_count.key_fetches++;
    return n;
}

long lm_boot_get(int id, const char *key, void *value, size_t cap)
{
    char k[LM_KVS_KEY_MAX];
    if (!g_ready || !g_kvs || id < 0) return -ENOENT;
    if (id >= LM_PROC_FOREIGN) {
        int job, rank;
        if (lm_boot_proc_name(id, &job, &rank) != 0 || make_key(k, rank, key)) return -ENOENT;
        return get_remote(job, rank, k, value, cap);
    }
    if (id >= g_info.world_size || make_key(k, id, key)) return -ENOENT;
    if (!lm_boot_is_local(id) && g_foreign.client) {
        long n = g_foreign.client->get(id, key, value, cap);
        if (n >= 0) lm_boot_count.key_fetches++;
        return n;
    }
    if (!lm_boot_is_local(id)) return get_remote(g_job, id, k, value, cap);
    return lm_kvs_get(g_kvs, k, value, cap);
}

int lm_boot_key_wanted(void)
{
    if (!g_ready) return 0;
    _Atomic int32_t *w = &my_block()->key_wanted;
    return atomic_load_explicit(w, memory_order_relaxed) && atomic_exchange(w, 0);
}

int lm_boot_is_local(int world_rank)
{
    if (!g_ready || world_rank < 0 || world_rank >= g_info.world_size) return 0;
    return lm_layout_node_of(&g_info.segment->layout, world_rank) == g_info.segment->layout.node_id;
}

int lm_boot_node_of(int id)
{
    if (!g_ready || id < 0 || id >= g_info.world_size) return -1;
    return lm_layout_node_of(&g_info.segment->layout, id);
}

int lm_boot_node_count(void) { return g_ready ? g_info.segment->layout.node_count : 1; }

int lm_boot_local_rank_of(int world_rank)
{
    if (!lm_boot_is_local(world_rank)) return -1;
    return lm_layout_local_rank_of(&g_info.segment->layout, world_rank);
}

int lm_boot_pid_of(int world_rank)
{
    int lr = lm_boot_local_rank_of(world_rank);
    if (lr < 0) return 0;
    return atomic_load(&lm_node_segment_rank(g_info.segment, lr)->pid);
}

/* Exit status of an aborting rank, the same value the launcher exits with:
 * the error code when it fits 1..255, 255 above, and 1 for codes <= 0 so an
 * aborted job never looks successful to a shell. */
static int abort_status(int errorcode)
{
    if (errorcode <= 0) return 1;
    return errorcode > 255 ? 255 : errorcode;
}

void lm_boot_abort(int errorcode, const char *message)
{
    if (!message) message = "";
    fflush(stdout);
    fflush(stderr);
    if (!g_ready || g_info.singleton || g_foreign.client) {
        fprintf(stderr, "LeanMPI: MPI_Abort was called with error code %d%s%s\n", errorcode, *message ? ": " : "",
                message);
        /* the launcher's server ends the other ranks */
        if (g_foreign.client) g_foreign.client->abort(abort_status(errorcode), message);
        _exit(abort_status(errorcode));
    }
    lm_node_segment *seg = g_info.segment;
    lm_abort_record *ar = &seg->abort_record;
    /* claimed: 0 free, 1 being written, 2 complete. Only the first aborting
     * rank writes the record; the launcher waits for 2 before reading it. */
    int32_t expected = 0;
    if (atomic_compare_exchange_strong(&ar->claimed, &expected, 1)) {
        ar->world_rank = g_info.world_rank;
        ar->errorcode = errorcode;
        snprintf(ar->message, sizeof ar->message, "%s", message);
        atomic_store_explicit(&ar->claimed, 2, memory_order_release);
    }
    atomic_store(&my_block()->state, LM_RANK_ABORTED);
    /* Exiting is the notification: the launcher reaps this process, finds
     * the record and ends the other ranks. */
    _exit(abort_status(errorcode));
}
