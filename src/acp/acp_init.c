/* The ACP basic layer's infrastructure: acp_init, acp_finalize, acp_reset,
 * acp_abort, acp_sync, acp_rank, acp_procs.
 *
 * ACP is one more user of the runtime that MPI_Init and sessions share
 * (runtime/init.c): a program may start MPI and ACP in either order and
 * end them in either order, and both then use the same transports. ACP
 * ranks are the ranks of a private communicator over the job (the world's
 * order until acp_reset renumbers them), whose context carries acp_sync
 * and the engine's request messages.
 *
 * The node's lowest rank makes the node's ACP area (one memfd: a slot per
 * process of the node, acp_internal.h) and hands it to the others with a
 * message each (its pid and descriptor, opened through /proc). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include "acp/acp_internal.h"
#include "boot/boot.h"
#include "coll/coll_basic.h"
#include "comm/context_id.h"
#include "rma/win_segment.h"
#include "pt2pt/pt2pt.h"
#include "runtime/runtime.h"
#include "util/lm_cvar.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

lm_acp_state lm_acp;

#define TAG_AREA 1

void lm_acp_error(const char *fn, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", fn, text);
}

int lm_acp_not_up(const char *fn)
{
    lm_acp_error(fn, "ACP is not initialized (acp_init was not called, or acp_finalize was)");
    return 0;
}

/* ---- arguments the ACP launcher appends ---- */

/* --acp-NAME VALUE or --acp-NAME=VALUE. The starter memory's size is the
 * one LeanMPI uses; the others describe the ACP launcher's own wiring
 * (ranks, ports, hosts, devices), which LeanMPI's bootstrap replaces. */
static const char *const acp_options[] = {
    "startermemsize", "size-smem",   "size-smem-cl", "size-smem-dl", "myrank",   "nprocs",     "taskid", "port-local",
    "port-remote",    "host-remote", "envent",       "nodefile",     "portfile", "offsetrank", NULL,
};

static int known_option(const char *name, size_t len)
{
    for (int i = 0; acp_options[i]; i++)
        if (strlen(acp_options[i]) == len && !strncmp(acp_options[i], name, len)) return 1;
    return 0;
}

/* Removes the --acp-* arguments; 0, or -1 for one it does not know (or
 * without its value). *starter gets the starter memory size if given. */
static int take_arguments(int *argc, char ***argv, long *starter)
{
    if (!argc || !argv || !*argv) return 0;
    char **v = *argv;
    int kept = 0;
    for (int i = 0; i < *argc; i++) {
        if (!v[i] || strncmp(v[i], "--acp-", 6) != 0) {
            v[kept++] = v[i];
            continue;
        }
        const char *name = v[i] + 6, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const char *value = eq ? eq + 1 : i + 1 < *argc ? v[i + 1] : NULL;
        if (!known_option(name, len) || !value) {
            lm_acp_error("acp_init", "%s argument '%s'", value ? "unknown" : "no value for the", v[i]);
            return -1;
        }
        if (!eq) i++;
        if ((len == 14 && !strncmp(name, "startermemsize", len)) || (len == 9 && !strncmp(name, "size-smem", len))) {
            char *end;
            long n = strtol(value, &end, 0);
            if (*end || n < 0) {
                lm_acp_error("acp_init", "starter memory size '%s' is not a size in bytes", value);
                return -1;
            }
            *starter = n;
        }
    }
    for (int i = kept; i < *argc; i++) v[i] = NULL;
    *argc = kept;
    return 0;
}

/* ---- the node's ACP area ---- */

typedef struct area_announce {
    int32_t pid, fd;
    uint64_t len;
} area_announce;

static int map_fd(int fd, size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return -1;
    lm_acp.area = p;
    lm_acp.area_len = len;
    return 0;
}

/* The node's lowest rank makes the area; the others open it. */
static int make_area(void)
{
    const lm_boot_info *b = lm_boot();
    lm_comm *c = lm_acp.comm;
    size_t len = (size_t)b->local_size * lm_acp.slot_size;
    int ok = 1;
    if (b->local_rank == 0) {
        char name[64];
        snprintf(name, sizeof name, "leanmpi-acp-%d", (int)getpid());
        int fd = memfd_create(name, MFD_CLOEXEC);
        ok = fd >= 0 && ftruncate(fd, (off_t)len) == 0 && map_fd(fd, len) == 0;
        area_announce a = {.pid = (int32_t)getpid(), .fd = ok ? fd : -1, .len = len};
        /* one message to each process of the node: no table of the job */
        for (int r = 0; r < c->size; r++) {
            if (r == c->rank || !lm_boot_is_local(lm_comm_world_rank(c, r))) continue;
            lm_request *req;
            int rc = lm_isend_bytes(&a, sizeof a, r, TAG_AREA, c, c->context_id, &req);
            if (!rc) rc = lm_wait_release(req, NULL);
            if (rc) ok = 0;
        }
        /* everyone has opened it once the barrier in acp_init is passed */
        lm_acp.area_fd = fd;
    } else {
        area_announce a;
        lm_request *req;
        int rc = lm_irecv_bytes(&a, sizeof a, MPI_ANY_SOURCE, TAG_AREA, c, c->context_id, &req);
        if (!rc) rc = lm_wait_release(req, NULL);
        ok = !rc && a.fd >= 0 && a.len == len;
        if (ok) {
            char path[64];
            snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)a.pid, (int)a.fd);
            int fd = open(path, O_RDWR | O_CLOEXEC);
            struct stat st;
            ok = fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size == len && map_fd(fd, len) == 0;
            if (fd >= 0) close(fd);
        }
    }
    if (!ok) return -1;
    if (b->local_rank == 0) lm_mem_note_shared(LM_MEM_RMA, (long)len);
    lm_acp.area_counted = b->local_rank == 0;
    lm_acp.mine = lm_acp_slot_of_local(b->local_rank);
    lm_acp.starter = lm_acp_starter_of(lm_acp.mine);
    lm_acp_ctl *ctl = &lm_acp.mine->ctl;
    ctl->pid = (int32_t)getpid();
    ctl->used = 1;
    lm_acp.mine->table[0] = (lm_acp_entry){.base = (uint64_t)(uintptr_t)lm_acp.starter, .size = lm_acp.starter_size};
    return 0;
}

static void drop_area(void)
{
    if (lm_acp.area) munmap(lm_acp.area, lm_acp.area_len);
    if (lm_acp.area_counted) lm_mem_note_shared(LM_MEM_RMA, -(long)lm_acp.area_len);
    lm_acp.area_counted = 0;
    if (lm_acp.area_fd >= 0) close(lm_acp.area_fd);
    lm_acp.area = NULL;
    lm_acp.area_fd = -1;
    lm_acp.mine = NULL;
    lm_acp.starter = NULL;
}

/* ---- the private communicator ---- */

static lm_comm *new_comm(lm_comm *parent, lm_group *g)
{
    uint16_t id;
    if (lm_context_id_allocate(parent, &id)) return NULL;
    lm_comm *c = lm_comm_new_intra(g, id, parent);
    if (!c) {
        lm_group_release(g);
        lm_context_id_release(id);
        return NULL;
    }
    snprintf(c->name, sizeof c->name, "ACP communicator");
    return c;
}

static void free_comm(lm_comm *c)
{
    MPI_Comm h = c->obj.handle;
    impl_MPI_Comm_free(&h);
}

/* ---- the calls ---- */

/* Processes on other hosts reach this one's memory through it. */
static int serves_others(void) { return lm_boot_node_count() > 1; }

static void stop(void)
{
    if (lm_acp.ch) lm_osc_channel_free(lm_acp.ch);
    lm_acp.ch = NULL;
    lm_acp_cache_clear();
    lm_acp_memo_clear();
    drop_area();
    if (lm_acp.comm) free_comm(lm_acp.comm);
    lm_acp.comm = NULL;
    lm_acp.up = 0;
    lm_runtime_release();
}

LM_ACP_API int acp_init(int *argc, char ***argv)
{
    if (lm_acp.up) {
        lm_acp_error("acp_init", "ACP is already initialized");
        return -1;
    }
    lm_cvar_load();
    long starter = lm_cvar(LM_CVAR_ACP_STARTER_SIZE);
    if (take_arguments(argc, argv, &starter)) return -1;
    if (lm_runtime_acquire("acp_init", MPI_THREAD_SINGLE, NULL) != MPI_SUCCESS) {
        lm_acp_error("acp_init", "%s", lm_err_last_message());
        return -1;
    }
    memset(&lm_acp, 0, sizeof lm_acp);
    lm_acp_memo_clear();
    lm_acp.area_fd = -1;
    lm_acp.starter_size = (size_t)starter;
    lm_acp.slot_size = LM_ACP_STARTER_OFFSET + ((size_t)starter + 4095) / 4096 * 4096;
    lm_comm *world = lm_comm_get(MPI_COMM_WORLD);
    const char *failure = NULL;
    if (world->size > LM_ACP_MAX_RANKS) {
        lm_acp_error("acp_init", "%d processes: a global address holds ranks up to %d", world->size,
                     LM_ACP_MAX_RANKS - 1);
        lm_runtime_release();
        return -1;
    }
    lm_group_retain(world->group);
    lm_acp.comm = new_comm(world, world->group);
    if (!lm_acp.comm) failure = "cannot create the ACP communicator";
    int ok = !failure && make_area() == 0;
    if (!failure && !ok) failure = "cannot share the node's ACP area (starter memory and tables)";
    /* the same verdict everywhere: nobody waits for a process that failed */
    if (lm_acp.comm && lm_coll_allreduce(&ok, 1, sizeof ok, lm_win_and_int, NULL, lm_acp.comm) != MPI_SUCCESS) ok = 0;
    lm_acp_serve_init();
    if (ok && lm_osc_channel_new(lm_acp.comm, &lm_acp, serves_others(), &lm_acp.ch) != MPI_SUCCESS) ok = 0;
    if (!ok) {
        lm_acp_error("acp_init", "%s", failure ? failure : "another process could not start");
        stop();
        return -1;
    }
    /* the node's others have mapped the area: its descriptor can go */
    if (lm_acp.area_fd >= 0) close(lm_acp.area_fd);
    lm_acp.area_fd = -1;
    lm_acp.up = 1;
    return 0;
}

LM_ACP_API int acp_finalize(void)
{
    if (!lm_acp_ready("acp_finalize")) return -1;
    acp_complete(ACP_HANDLE_ALL);
    /* nobody's memory goes while another process may still reach it */
    int rc = lm_coll_barrier(lm_acp.comm);
    lm_acp_memory_reset();
    stop();
    if (rc != MPI_SUCCESS) lm_acp_error("acp_finalize", "the closing barrier failed");
    return rc == MPI_SUCCESS ? 0 : -1;
}

/* An ACP communicator whose rank i is the process that asked for rank i:
 * every process brings its new rank, and all check that they make a
 * permutation (the same verdict everywhere). */
static int renumber(int rank, lm_comm **out)
{
    lm_comm *c = lm_acp.comm;
    int n = c->size;
    int *wanted = lm_malloc(LM_MEM_RMA, (size_t)n * sizeof *wanted);
    int *world_of = lm_malloc(LM_MEM_RMA, (size_t)n * sizeof *world_of);
    int ok = wanted && world_of && rank >= 0 && rank < n;
    int rc = lm_coll_allreduce(&ok, 1, sizeof ok, lm_win_and_int, NULL, c);
    if (!rc && ok) rc = lm_coll_allgather(&rank, sizeof rank, wanted, c);
    if (!rc && ok) {
        for (int r = 0; r < n; r++) world_of[r] = -1;
        for (int r = 0; r < n && ok; r++) {
            if (world_of[wanted[r]] >= 0) ok = 0;
            else world_of[wanted[r]] = lm_comm_world_rank(c, r);
        }
    }
    lm_group *g = !rc && ok ? lm_group_new_list(world_of, n) : NULL;
    lm_free(LM_MEM_RMA, wanted);
    lm_free(LM_MEM_RMA, world_of);
    if (rc || !ok) return rc ? -1 : 1;
    *out = g ? new_comm(c, g) : NULL;
    return *out ? 0 : -1;
}

LM_ACP_API int acp_reset(int rank)
{
    if (!lm_acp_ready("acp_reset")) return -1;
    acp_complete(ACP_HANDLE_ALL);
    int rc = lm_coll_barrier(lm_acp.comm);
    lm_comm *fresh = NULL;
    int verdict = rc == MPI_SUCCESS ? renumber(rank, &fresh) : -1;
    if (verdict != 0) {
        if (verdict > 0)
            lm_acp_error("acp_reset", "the new ranks (this process asked for %d) are not a permutation of 0 .. %d",
                         rank, lm_acp.comm->size - 1);
        else lm_acp_error("acp_reset", "cannot renumber the processes");
        return -1;
    }
    lm_osc_channel_free(lm_acp.ch);
    lm_acp.ch = NULL;
    free_comm(lm_acp.comm);
    lm_acp.comm = fresh;
    lm_acp_memory_reset();
    lm_acp_memo_clear(); /* ranks have new numbers */
    memset(lm_acp.starter, 0, lm_acp.starter_size);
    lm_acp.issued = 0;
    int ok = lm_osc_channel_new(fresh, &lm_acp, serves_others(), &lm_acp.ch) == MPI_SUCCESS;
    /* nobody reaches the new numbering's memory before every process has
     * cleared its own */
    if (lm_coll_allreduce(&ok, 1, sizeof ok, lm_win_and_int, NULL, fresh) != MPI_SUCCESS || !ok) {
        lm_acp_error("acp_reset", "cannot restart the one-sided engine");
        return -1;
    }
    return 0;
}

LM_ACP_API void acp_abort(const char *str)
{
    char text[512];
    snprintf(text, sizeof text, "acp_abort: %s", str ? str : "(no message)");
    fprintf(stderr, "%s\n", text);
    fflush(stdout);
    fflush(stderr);
    lm_boot_abort(1, text);
}

LM_ACP_API int acp_sync(void)
{
    if (!lm_acp_ready("acp_sync")) return -1;
    /* what this process issued is done before the others go on */
    acp_complete(ACP_HANDLE_ALL);
    if (lm_coll_barrier(lm_acp.comm) == MPI_SUCCESS) return 0;
    lm_acp_error("acp_sync", "the barrier failed");
    return -1;
}

LM_ACP_API int acp_rank(void) { return lm_acp_ready("acp_rank") ? lm_acp.comm->rank : -1; }

LM_ACP_API int acp_procs(void) { return lm_acp_ready("acp_procs") ? lm_acp.comm->size : -1; }
