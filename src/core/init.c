/* MPI_Init / MPI_Finalize and the runtime queries that go with them. */
#include "core/user_errors.h"
#include "core/lm_state.h"
#include "core/lm_cs.h"
#include "core/lm_cvar.h"
#include "core/lm_error.h"
#include "core/lm_handle.h"
#include "core/lm_mem.h"
#include "boot/boot.h"
#include "transport/transport.h"
#include "pt2pt/pt2pt.h"
#include "pt2pt/bsend.h"
#include "comm/attr.h"
#include "comm/comm.h"
#include "datatype/datatype.h"
#include "binding/impl_gen.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The world model's state (what MPI_Initialized/MPI_Finalized report).
 * Atomic: those two may be called from any thread at any time, also while
 * another thread is in MPI_Init_thread. */
static atomic_int state = LM_STATE_NOT_INITIALIZED;
static int thread_level = MPI_THREAD_SINGLE;
static int oversubscribed;
static pthread_t main_thread;

/* The runtime (bootstrap, transports, matching engine) is shared by the world
 * model and every session: the first of MPI_Init/MPI_Session_init starts it,
 * and it is in use while the world model is initialized or a session is open
 * (`users`). When the last user leaves before MPI_Finalize was ever called
 * (a program of sessions only), the runtime is only put to rest: this
 * process counts as finalized for the launcher, but a later MPI_Init or
 * MPI_Session_init wakes it again; its memory goes at exit. After
 * MPI_Finalize the last user tears it down for good. */
static int runtime_up, runtime_gone, resting, users;

int lm_initialized_state(void) { return users > 0 ? LM_STATE_INITIALIZED : state; }
int lm_world_rank(void) { return lm_boot() ? lm_boot()->world_rank : 0; }
int lm_world_size(void) { return lm_boot() ? lm_boot()->world_size : 1; }
int lm_world_simulated;
int lm_thread_level(void) { return thread_level; }
int lm_oversubscribed(void) { return oversubscribed; }

static int usable_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* The node segment is shared by the node's ranks: local rank 0 alone counts
 * it, per part, so that summing the reports of a node counts it once (R6).
 * These are the sizes mapped; pages are touched only as they are used. */
static void note_node_segment(const lm_boot_info *info)
{
    const lm_node_segment *seg = info->segment;
    if (!seg || info->local_rank != 0) return;
    uint64_t parts = seg->kvs_size + seg->transport_size;
    lm_mem_note_shared(LM_MEM_KVS, (long)seg->kvs_size);
    lm_mem_note_shared(LM_MEM_TRANSPORT, (long)seg->transport_size);
    if (seg->total_size > parts) lm_mem_note_shared(LM_MEM_BOOT, (long)(seg->total_size - parts));
}

static void teardown(void);

static void teardown_at_exit(void)
{
    if (resting) teardown();
}

/* Start the runtime or wake it, for one more user. */
int lm_runtime_acquire(const char *fname, int required, int *provided)
{
    if (runtime_gone)
        return lm_err_noobj(MPI_ERR_OTHER, fname, "MPI cannot be started again after MPI_Finalize");
    /* Up to MPI_THREAD_SERIALIZED the caller serializes its calls; at
     * MPI_THREAD_MULTIPLE every call runs in the critical section. */
    int level = required < MPI_THREAD_SINGLE ? MPI_THREAD_SINGLE
                : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE : required;
    if (!runtime_up) {
        lm_cvar_load();
        lm_boot_info info;
        int rc = lm_boot_init(&info);
        if (rc) return lm_err_noobj(MPI_ERR_OTHER, fname, "cannot start: bootstrap failed");
        oversubscribed = info.local_size > usable_cores();
        lm_world_simulated = info.reported_world_size > info.world_size;
        note_node_segment(&info);
        if (lm_datatype_init_builtin() || lm_comm_init_builtin())
            return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
        if (lm_transport_init() != LM_OK) return lm_err_noobj(MPI_ERR_OTHER, fname, "cannot start the transports");
        lm_pt2pt_init();
        main_thread = pthread_self();
        thread_level = level;
        runtime_up = 1;
    }
    if (level > thread_level) thread_level = level;
    if (level == MPI_THREAD_MULTIPLE) lm_cs_enable();
    if (provided) *provided = level;
    resting = 0;
    users++;
    lm_boot_set_state(LM_RANK_INITIALIZED);
    return MPI_SUCCESS;
}

/* One user leaves; the last one puts the runtime to rest or tears it down. */
void lm_runtime_release(void)
{
    if (--users > 0) return;
    /* Messages this process still owes its peers (rendezvous data, queued
     * packets, buffered sends) must go out before it leaves. */
    while (lm_pt2pt_busy()) {
        if (!lm_progress()) sched_yield();
    }
    if (state == LM_STATE_FINALIZED) {
        teardown();
        return;
    }
    static int exit_hook;
    if (!exit_hook) exit_hook = atexit(teardown_at_exit) == 0;
    resting = 1;
    lm_boot_set_state(LM_RANK_FINALIZED);
}

static void teardown(void)
{
    resting = 0;
    runtime_up = 0;
    runtime_gone = 1;
    int world_rank = lm_world_rank();
    if (lm_cvar(LM_CVAR_MEMREPORT)) lm_mem_report(world_rank);
    lm_boot_set_state(LM_RANK_FINALIZED);
    lm_sessions_finalize();
    lm_pt2pt_finalize();
    lm_transport_finalize();
    lm_comm_finalize();
    lm_attr_finalize();
    lm_user_errors_release();
    lm_boot_finalize();
    /* last: the layers above hand their objects back to these tables */
    lm_f90_types_finalize();
    lm_datatype_finalize();
    lm_object_finalize();
}

static int init(const char *fname, int required, int *provided)
{
    if (state != LM_STATE_NOT_INITIALIZED)
        return lm_err_noobj(MPI_ERR_OTHER, fname, state == LM_STATE_INITIALIZED ? "MPI is already initialized"
                                                                                  : "MPI was finalized");
    int rc = lm_runtime_acquire(fname, required, provided);
    if (rc) return rc;
    state = LM_STATE_INITIALIZED;
    return MPI_SUCCESS;
}

int impl_MPI_Init(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return init("MPI_Init", MPI_THREAD_SINGLE, NULL);
}

int impl_MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)argc, (void)argv;
    return init("MPI_Init_thread", required, provided);
}

int impl_MPI_Finalize(void)
{
    if (state != LM_STATE_INITIALIZED)
        return lm_err_noobj(MPI_ERR_OTHER, "MPI_Finalize", "MPI_Init was not called");
    /* MPI_COMM_SELF's attributes are deleted first, while MPI is still
     * fully usable by their delete callbacks (MPI-4.1 section 11.2.2). */
    lm_attr_finalize_comms();
    /* Open sessions keep the runtime (MPI-4.1 section 11.3.1). */
    state = LM_STATE_FINALIZED;
    lm_runtime_release();
    return MPI_SUCCESS;
}

int impl_MPI_Initialized(int *flag)
{
    *flag = state != LM_STATE_NOT_INITIALIZED;
    return MPI_SUCCESS;
}

int impl_MPI_Finalized(int *flag)
{
    *flag = state == LM_STATE_FINALIZED;
    return MPI_SUCCESS;
}

int impl_MPI_Query_thread(int *provided)
{
    *provided = thread_level;
    return MPI_SUCCESS;
}

int impl_MPI_Is_thread_main(int *flag)
{
    *flag = pthread_equal(pthread_self(), main_thread);
    return MPI_SUCCESS;
}

int impl_MPI_Abort(MPI_Comm comm, int errorcode)
{
    (void)comm; /* every rank of the job ends: the launcher owns the job */
    char msg[128];
    snprintf(msg, sizeof msg, "MPI_Abort called with error code %d", errorcode);
    fflush(stdout);
    fflush(stderr);
    lm_boot_abort(errorcode, msg);
}

int impl_MPI_Get_processor_name(char *name, int *resultlen)
{
    char host[MPI_MAX_PROCESSOR_NAME];
    if (gethostname(host, sizeof host) != 0) strcpy(host, "localhost");
    host[sizeof host - 1] = 0;
    *resultlen = snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", host);
    return MPI_SUCCESS;
}

int impl_MPI_Get_version(int *version, int *subversion)
{
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int impl_MPI_Get_library_version(char *version, int *resultlen)
{
    *resultlen = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "LeanMPI %s (MPI %d.%d)", LEANMPI_VERSION,
                          MPI_VERSION, MPI_SUBVERSION);
    return MPI_SUCCESS;
}
