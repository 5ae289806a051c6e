/* MPI_Init / MPI_Finalize and the runtime queries that go with them. */
#include "obj/user_errors.h"
#include "util/lm_state.h"
#include "util/lm_finalizer.h"
#include "runtime/runtime.h"
#include "runtime/session.h"
#include "coll/coll_basic.h"
#include "comm/context_id.h"
#include "comm/dynamic.h"
#include "rma/win.h"
#include "util/lm_cs.h"
#include "util/lm_cvar.h"
#include "util/lm_error.h"
#include "util/lm_handle.h"
#include "util/lm_mem.h"
#include "boot/boot.h"
#include "boot/node_segment.h"
#include "transport/shm_layout.h"
#include "transport/transport.h"
#include "pt2pt/pt2pt.h"
#include "pt2pt/bsend.h"
#include "obj/attr.h"
#include "obj/comm.h"
#include "datatype/datatype.h"
#include "api/impl_gen.h"
#include <pthread.h>
#include <stdlib.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The world model's state (what MPI_Initialized/MPI_Finalized report). */
static int state = LM_STATE_NOT_INITIALIZED;
static int thread_level = MPI_THREAD_SINGLE;
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
/* The finalizer list's depth before the runtime started. */
static size_t runtime_mark;

/* What the layers below read through lm_state.h. */
static void publish_state(void) { lm_state_publish_init(users > 0 ? LM_STATE_INITIALIZED : state); }

/* A child of fork() inherits the rank's connections, its place in the
 * node's shared memory and, where ranks share an address space, a copy of
 * every rank of the group: its MPI calls would act as the rank's. It is
 * marked so that they end the job with the cause instead. */
static void mark_forked_child(void)
{
    if (lm_initialized_state() == LM_STATE_INITIALIZED) lm_state_publish_init(LM_STATE_FORKED);
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

static lm_boot_info boot_info;

static int start_boot(void)
{
    lm_cvar_load();
    /* a singleton makes its own segment, with room for the shm transport */
    lm_node_segment_set_transport_area(lm_shm_area_size, lm_shm_area_format);
    if (lm_boot_init(&boot_info)) return MPI_ERR_OTHER;
    /* the launcher's count where there is one: the same for every rank of
     * the node (collectives choose algorithms by it) */
    int cpus = boot_info.node_cpus > 0 ? boot_info.node_cpus : lm_node_usable_cpus();
    lm_state_publish_world(boot_info.world_rank, boot_info.world_size,
                           boot_info.reported_world_size > boot_info.world_size, boot_info.local_size > cpus);
    note_node_segment(&boot_info);
    return MPI_SUCCESS;
}
static char transport_failure[400] = "cannot start the transports";
static int start_transport(void)
{
    if (lm_transport_init() == LM_OK) return MPI_SUCCESS;
    snprintf(transport_failure, sizeof transport_failure, "cannot start the transports: %s", lm_transport_error());
    return MPI_ERR_OTHER;
}
static int start_objects(void) { return lm_comm_init_builtin(); }
static int start_datatypes(void) { return lm_datatype_init_builtin(); }
static int start_pt2pt(void) { return lm_pt2pt_init(); }
static void stop_objects(void)
{
    lm_comm_finalize();
    lm_attr_finalize();
    lm_user_errors_release();
}
static void stop_handles(void) { lm_object_finalize(); }

/* The runtime's parts, bottom layer first. Each step that succeeds pushes
 * its stop on the finalizer list: finalize undoes them newest first, and a
 * step that fails unwinds exactly the ones before it. A step's start also
 * registers what its layer hooks into the layers below (progress hooks,
 * communicator hooks, attribute kinds); state a layer creates lazily later
 * is freed by that layer's stop. */
static const struct start_step {
    const char *name;
    int (*start)(void);
    void (*stop)(void);
    const char *failure;
} start_steps[] = {
    {"handles", NULL, stop_handles, NULL},
    {"boot", start_boot, lm_boot_finalize, "bootstrap failed"},
    {"transport", start_transport, lm_transport_finalize, transport_failure},
    {"objects", start_objects, stop_objects, "cannot create the predefined communicators"},
    {"datatypes", start_datatypes, lm_datatype_finalize, "cannot create the predefined datatypes"},
    {"pt2pt", start_pt2pt, lm_pt2pt_finalize, "cannot start point-to-point communication"},
    {"collectives", lm_coll_init, lm_coll_finalize, "cannot start the collectives"},
    {"communicators", lm_comm_layer_init, NULL, "cannot start the communicator constructors"},
    {"one-sided", lm_rma_init, NULL, "cannot start one-sided communication"},
    {"sessions", lm_sessions_init, lm_sessions_finalize, "cannot start sessions"},
};

static int start(const char *fname)
{
    /* LEANMPI_FAULT_INIT_STEP: the tests' proof that a failed step unwinds
     * exactly what had started (a later init then succeeds); fires once */
    static int fault_fired;
    long fault_step = fault_fired ? 0 : lm_cvar(LM_CVAR_FAULT_INIT_STEP);
    runtime_mark = lm_finalizer_mark();
    for (size_t i = 0; i < sizeof start_steps / sizeof start_steps[0]; i++) {
        const struct start_step *s = &start_steps[i];
        int injected = fault_step == (long)i + 1;
        if (injected) fault_fired = 1;
        int rc = injected ? MPI_ERR_OTHER : s->start ? s->start() : MPI_SUCCESS;
        if (rc == MPI_SUCCESS && s->stop && lm_finalizer_push(s->name, s->stop) != 0) {
            s->stop();
            rc = MPI_ERR_INTERN;
        }
        if (rc != MPI_SUCCESS) {
            lm_finalizer_run_to(runtime_mark);
            return lm_err_noobj(rc, fname, "cannot start: %s%s", s->failure ? s->failure : s->name,
                                injected ? " (injected by LEANMPI_FAULT_INIT_STEP)" : "");
        }
    }
    return MPI_SUCCESS;
}

/* Start the runtime or wake it, for one more user. */
int lm_runtime_acquire(const char *fname, int required, int *provided)
{
    if (runtime_gone) return lm_err_noobj(MPI_ERR_OTHER, fname, "MPI cannot be started again after MPI_Finalize");
    /* Up to MPI_THREAD_SERIALIZED the caller serializes its calls; at
     * MPI_THREAD_MULTIPLE every call runs in the critical section. */
    int level = required < MPI_THREAD_SINGLE     ? MPI_THREAD_SINGLE
                : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                                 : required;
    if (!runtime_up) {
        int rc = start(fname);
        if (rc) return rc;
        main_thread = pthread_self();
        thread_level = level;
        runtime_up = 1;
        static int fork_hook;
        if (!fork_hook) fork_hook = pthread_atfork(NULL, NULL, mark_forked_child) == 0;
    }
    if (level > thread_level) thread_level = level;
    lm_state_publish_thread_level(thread_level);
    if (level == MPI_THREAD_MULTIPLE) lm_cs_enable();
    if (provided) *provided = level;
    resting = 0;
    users++;
    publish_state();
    lm_boot_set_state(LM_RANK_INITIALIZED);
    return MPI_SUCCESS;
}

/* One user leaves; the last one puts the runtime to rest or tears it down. */
void lm_runtime_release(void)
{
    if (--users > 0) return;
    publish_state();
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
    if (lm_cvar(LM_CVAR_MEMREPORT)) lm_mem_report(lm_world_rank());
    lm_boot_set_state(LM_RANK_FINALIZED);
    /* state the layers above hang on the predefined communicators goes
     * while those layers are still up */
    lm_comm_release_predefined();
    lm_finalizer_run_to(runtime_mark);
}

static int init(const char *fname, int required, int *provided)
{
    if (state != LM_STATE_NOT_INITIALIZED)
        return lm_err_noobj(MPI_ERR_OTHER, fname,
                            state == LM_STATE_INITIALIZED ? "MPI is already initialized" : "MPI was finalized");
    int rc = lm_runtime_acquire(fname, required, provided);
    if (rc) return rc;
    state = LM_STATE_INITIALIZED;
    publish_state();
    /* a spawned job meets its parent before its program runs */
    rc = lm_dynamic_connect_parent();
    if (rc) return lm_err_noobj(rc, fname, "cannot connect to the parent job");
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
    /* a level outside the four is a wrong argument, not a wish for the
     * highest one: nothing starts */
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return lm_err_noobj(MPI_ERR_ARG, "MPI_Init_thread",
                            "required thread level %d is none of MPI_THREAD_SINGLE (%d) .. MPI_THREAD_MULTIPLE (%d)",
                            required, MPI_THREAD_SINGLE, MPI_THREAD_MULTIPLE);
    return init("MPI_Init_thread", required, provided);
}

int impl_MPI_Finalize(void)
{
    if (state != LM_STATE_INITIALIZED) return lm_err_noobj(MPI_ERR_OTHER, "MPI_Finalize", "MPI_Init was not called");
    /* MPI_COMM_SELF's attributes are deleted first, while MPI is still
     * fully usable by their delete callbacks (MPI-4.1 section 11.2.2). */
    lm_attr_finalize_comms();
    /* Open sessions keep the runtime (MPI-4.1 section 11.3.1). */
    state = LM_STATE_FINALIZED;
    publish_state();
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
