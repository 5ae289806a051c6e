/* MPI_T performance variables: memory use per component (lm_mem) and the
 * transport counters per backend (lm_transport_get_counters).
 *
 * Names, lowercase:
 *   memory_current_<component>   bytes allocated now        CLASS_LEVEL
 *   memory_peak_<component>      most bytes ever allocated  CLASS_HIGHWATERMARK
 *   memory_shared_<component>    node-shared bytes mapped   CLASS_SIZE
 *   transport_<backend>_<field>  transport counters         CLASS_COUNTER
 *   onesided_<field>             one-sided engine counters  CLASS_COUNTER
 *   boot_key_fetches             keys fetched from the launcher (direct modex) CLASS_COUNTER
 *   coll_algorithm               the algorithm of a communicator's last collective CLASS_STATE
 * with <backend> one of all (the sum), self, shm, cma, ofi, listed only with the
 * fields that backend counts. Every variable is continuous (start/stop:
 * MPI_T_ERR_PVAR_NO_STARTSTOP) and read-only (reset, readreset, write:
 * MPI_T_ERR_PVAR_NO_WRITE). All but coll_algorithm are
 * MPI_UNSIGNED_LONG_LONG process-wide totals bound to no object, which
 * other sessions also read; coll_algorithm is an MPI_INT bound to a
 * communicator (MPI_T_BIND_MPI_COMM), an item of the enumeration
 * coll_algorithm (mpit.h): which collective algorithm the last collective
 * started on it runs, as the selection table or a LEANMPI_<COLL>_ALGORITHM
 * override chose it (-1 before the first; intercommunicator and
 * neighbourhood collectives leave it). */
#include "runtime/mpit.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include "boot/boot.h"
#include "transport/transport.h"
#include "osc/osc.h"
#include "osc/mcs_rwlock.h"
#include "obj/comm.h"
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

enum pvar_source { SRC_MEM_CURRENT, SRC_MEM_PEAK, SRC_MEM_SHARED, SRC_TRANSPORT, SRC_COUNTER, SRC_COLL_ALGORITHM };

typedef struct {
    char name[64];
    char desc[160];
    int var_class;
    enum pvar_source source;
    int arg;      /* memory component, or index into backends[] */
    size_t field; /* offset in lm_transport_counters */
} pvar_desc;

static const struct {
    const char *name;
    size_t offset;
    const char *what;
} fields[] = {
    {"am_sent", offsetof(lm_transport_counters, am_sent), "active messages sent"},
    {"am_bytes_sent", offsetof(lm_transport_counters, am_bytes_sent),
     "bytes sent in active messages (header and payload)"},
    {"am_received", offsetof(lm_transport_counters, am_received), "active messages received"},
    {"am_bytes_received", offsetof(lm_transport_counters, am_bytes_received),
     "bytes received in active messages (header and payload)"},
    {"fastbox_sent", offsetof(lm_transport_counters, fastbox_sent), "active messages sent through a fast box"},
    {"queue_sent", offsetof(lm_transport_counters, queue_sent), "active messages sent through a receive queue"},
    {"send_eagain", offsetof(lm_transport_counters, send_eagain),
     "sends refused for lack of resources (retried later)"},
    {"rget_ops", offsetof(lm_transport_counters, rget_ops), "single-copy reads from a peer's memory"},
    {"rget_bytes", offsetof(lm_transport_counters, rget_bytes), "bytes copied by single-copy reads"},
    {"pipe_bytes_sent", offsetof(lm_transport_counters, pipe_bytes_sent),
     "bytes of rendezvous messages put into receivers' pipes"},
    {"pipe_bytes_received", offsetof(lm_transport_counters, pipe_bytes_received),
     "bytes of rendezvous messages taken out of this process's pipes"},
    {"mr_registrations", offsetof(lm_transport_counters, mr_registrations),
     "buffers registered with the network for peers' RMA reads"},
    {"mr_cache_hits", offsetof(lm_transport_counters, mr_cache_hits),
     "exposures that reused a cached registration instead of registering"},
    {"rput_ops", offsetof(lm_transport_counters, rput_ops), "network writes into peers' window memory (one-sided Put)"},
    {"rput_bytes", offsetof(lm_transport_counters, rput_bytes),
     "bytes written into peers' window memory by the network"},
};
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

/* Which fields each backend counts (bit i: fields[i]); "all" sums them. */
static const struct {
    const char *name;
    unsigned mask;
} backends[] = {
    {"all", 0x7fff}, {"self", 0x1cf}, {"shm", 0x67f}, {"cma", 0x180}, {"ofi", 0x79cf}, {"tcp", 0x61cf},
};
#define NBACKENDS ((int)(sizeof backends / sizeof backends[0]))

/* Counters of the layers (boot.h, osc.h, mcs_rwlock.h), each in its
 * layer's category. */
static unsigned long long lock_wait_ns(void) { return (unsigned long long)(lm_mcs_count.wait_seconds * 1e9); }
#define ONESIDED_COUNTER(name, what, counter, read)     \
    {                                                   \
        name, what, LM_MPIT_CAT_ONESIDED, counter, read \
    }
static const struct {
    const char *name, *what;
    int category;
    const uint64_t *counter; /* or */
    unsigned long long (*read)(void);
} counters[] = {
    {"boot_key_fetches",
     "keys of processes on other hosts or in other jobs fetched from the launcher (its agents or its PMIx/PMI "
     "server)",
     LM_MPIT_CAT_CORE, &lm_boot_count.key_fetches, NULL},
    ONESIDED_COUNTER("onesided_atomics", "atomic read-modify-writes on exposed memory (locks, lock_all, post/complete)",
                     &lm_osc_count.atomics, NULL),
    ONESIDED_COUNTER("onesided_lock_acquisitions",
                     "passive-target locks taken (shared and exclusive, lock_all per rank)", &lm_mcs_count.acquisitions,
                     NULL),
    ONESIDED_COUNTER("onesided_lock_waits", "lock acquisitions that had to wait", &lm_mcs_count.waits, NULL),
    ONESIDED_COUNTER("onesided_lock_wait_ns", "nanoseconds spent waiting for locks", NULL, lock_wait_ns),
    ONESIDED_COUNTER("onesided_requests_sent", "operations sent to targets that carry them out (no single copy)",
                     &lm_osc_count.msg_requests, NULL),
    ONESIDED_COUNTER("onesided_requests_served", "operations this process carried out for others",
                     &lm_osc_count.msg_served, NULL),
    ONESIDED_COUNTER("onesided_bytes_put", "bytes written to targets by put", &lm_osc_count.bytes_put, NULL),
    ONESIDED_COUNTER("onesided_bytes_got", "bytes read from targets by get", &lm_osc_count.bytes_got, NULL),
    ONESIDED_COUNTER("onesided_table_fetches", "ACP registration tables of other processes copied into the cache",
                     &lm_osc_count.table_fetches, NULL),
    ONESIDED_COUNTER("onesided_table_evictions", "ACP registration tables dropped from the cache to make room",
                     &lm_osc_count.table_evictions, NULL),
};
#define NCOUNTERS ((int)(sizeof counters / sizeof counters[0]))

#define MAX_PVARS (3 * LM_MEM_COMPONENT_COUNT + NBACKENDS * NFIELDS + NCOUNTERS + 1)
static pvar_desc table[MAX_PVARS];
static int npvars;

static void build_table(void)
{
    if (npvars) return;
    static const struct {
        const char *prefix;
        int var_class;
        const char *what;
    } mem[] = {
        {"memory_current", MPI_T_PVAR_CLASS_LEVEL, "bytes allocated now"},
        {"memory_peak", MPI_T_PVAR_CLASS_HIGHWATERMARK, "most bytes allocated at any time"},
        {"memory_shared", MPI_T_PVAR_CLASS_SIZE, "bytes of node-shared memory mapped (counted by one rank per node)"},
    };
    for (int k = 0; k < 3; k++)
        for (int c = 0; c < LM_MEM_COMPONENT_COUNT; c++) {
            pvar_desc *d = &table[npvars++];
            const char *comp = lm_mem_component_name((enum lm_mem_component)c);
            snprintf(d->name, sizeof d->name, "%s_%s", mem[k].prefix, comp);
            snprintf(d->desc, sizeof d->desc, "%s: %s", comp, mem[k].what);
            d->var_class = mem[k].var_class;
            d->source = (enum pvar_source)k;
            d->arg = c;
        }
    for (int b = 0; b < NBACKENDS; b++)
        for (int f = 0; f < NFIELDS; f++) {
            if (!(backends[b].mask & (1u << f))) continue;
            pvar_desc *d = &table[npvars++];
            snprintf(d->name, sizeof d->name, "transport_%s_%s", backends[b].name, fields[f].name);
            snprintf(d->desc, sizeof d->desc, "%s transport%s: %s", backends[b].name, b == 0 ? "s together" : "",
                     fields[f].what);
            d->var_class = MPI_T_PVAR_CLASS_COUNTER;
            d->source = SRC_TRANSPORT;
            d->arg = b;
            d->field = fields[f].offset;
        }
    for (int k = 0; k < NCOUNTERS; k++) {
        pvar_desc *d = &table[npvars++];
        snprintf(d->name, sizeof d->name, "%s", counters[k].name);
        snprintf(d->desc, sizeof d->desc, "%s", counters[k].what);
        d->var_class = MPI_T_PVAR_CLASS_COUNTER;
        d->source = SRC_COUNTER;
        d->arg = k;
    }
    pvar_desc *d = &table[npvars++];
    snprintf(d->name, sizeof d->name, "coll_algorithm");
    snprintf(d->desc, sizeof d->desc,
             "the algorithm the last collective started on the communicator runs (enumeration coll_algorithm)");
    d->var_class = MPI_T_PVAR_CLASS_STATE;
    d->source = SRC_COLL_ALGORITHM;
}

int lm_mpit_pvar_count(void)
{
    build_table();
    return npvars;
}

int lm_mpit_pvar_category(int i)
{
    build_table();
    if (table[i].source == SRC_COUNTER) return counters[table[i].arg].category;
    if (table[i].source == SRC_COLL_ALGORITHM) return LM_MPIT_CAT_COLL;
    return table[i].source == SRC_TRANSPORT ? LM_MPIT_CAT_TRANSPORT : LM_MPIT_CAT_MEMORY;
}

static unsigned long long pvar_value(const pvar_desc *d)
{
    switch (d->source) {
    case SRC_MEM_CURRENT: return lm_mem_current((enum lm_mem_component)d->arg);
    case SRC_MEM_PEAK: return lm_mem_peak((enum lm_mem_component)d->arg);
    case SRC_MEM_SHARED: return lm_mem_shared((enum lm_mem_component)d->arg);
    case SRC_TRANSPORT: {
        lm_transport_counters c;
        lm_transport_get_counters(backends[d->arg].name, &c);
        uint64_t v;
        memcpy(&v, (const char *)&c + d->field, sizeof v);
        return v;
    }
    case SRC_COUNTER: return counters[d->arg].counter ? *counters[d->arg].counter : counters[d->arg].read();
    case SRC_COLL_ALGORITHM: break; /* bound: read through its handle */
    }
    return 0;
}

/* Sessions and handles are checked against the live lists before use. */
struct leanmpi_t_pvar_handle {
    int index;
    MPI_Comm comm; /* the object of a variable bound to a communicator */
    struct leanmpi_t_pvar_handle *next;
};
struct leanmpi_t_pvar_session {
    struct leanmpi_t_pvar_handle *handles;
    struct leanmpi_t_pvar_session *next;
};
static struct leanmpi_t_pvar_session *sessions;

static struct leanmpi_t_pvar_session **find_session(MPI_T_pvar_session s)
{
    for (struct leanmpi_t_pvar_session **p = &sessions; *p; p = &(*p)->next)
        if (*p == s) return p;
    return NULL;
}

static struct leanmpi_t_pvar_handle **find_handle(struct leanmpi_t_pvar_session *s, MPI_T_pvar_handle h)
{
    for (struct leanmpi_t_pvar_handle **p = &s->handles; *p; p = &(*p)->next)
        if (*p == h) return p;
    return NULL;
}

static void free_session(struct leanmpi_t_pvar_session *s)
{
    while (s->handles) {
        struct leanmpi_t_pvar_handle *h = s->handles;
        s->handles = h->next;
        lm_free(LM_MEM_CORE, h);
    }
    lm_free(LM_MEM_CORE, s);
}

/* The common checks of calls taking (session, handle): MPI_SUCCESS with *out
 * set to the handle (NULL for MPI_T_PVAR_ALL_HANDLES when allowed). */
static int check_session_handle(MPI_T_pvar_session s, MPI_T_pvar_handle h, int all_ok,
                                struct leanmpi_t_pvar_handle **out)
{
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    if (!find_session(s)) return MPI_T_ERR_INVALID_SESSION;
    if (h == MPI_T_PVAR_ALL_HANDLES) {
        if (!all_ok) return MPI_T_ERR_INVALID_HANDLE;
        *out = NULL;
        return MPI_SUCCESS;
    }
    if (!find_handle(s, h)) return MPI_T_ERR_INVALID_HANDLE;
    *out = h;
    return MPI_SUCCESS;
}

int impl_MPI_T_pvar_get_num(int *num_pvar)
{
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    if (num_pvar) *num_pvar = lm_mpit_pvar_count();
    return MPI_SUCCESS;
}

int impl_MPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                             MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind,
                             int *readonly, int *continuous, int *atomic)
{
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    if (pvar_index < 0 || pvar_index >= lm_mpit_pvar_count()) return MPI_T_ERR_INVALID_INDEX;
    const pvar_desc *d = &table[pvar_index];
    lm_mpit_copy_string(d->name, name, name_len);
    lm_mpit_copy_string(d->desc, desc, desc_len);
    int algorithm = d->source == SRC_COLL_ALGORITHM;
    if (verbosity) *verbosity = d->source == SRC_TRANSPORT ? MPI_T_VERBOSITY_TUNER_BASIC : MPI_T_VERBOSITY_USER_BASIC;
    if (var_class) *var_class = d->var_class;
    if (datatype) *datatype = algorithm ? MPI_INT : MPI_UNSIGNED_LONG_LONG;
    if (enumtype) *enumtype = algorithm ? &lm_mpit_coll_algorithms : MPI_T_ENUM_NULL;
    if (bind) *bind = algorithm ? MPI_T_BIND_MPI_COMM : MPI_T_BIND_NO_OBJECT;
    if (readonly) *readonly = 1;
    if (continuous) *continuous = 1;
    if (atomic) *atomic = 0;
    return MPI_SUCCESS;
}

int impl_MPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    if (!name) return MPI_T_ERR_INVALID_NAME;
    int n = lm_mpit_pvar_count();
    for (int i = 0; i < n; i++)
        if (table[i].var_class == var_class && strcmp(table[i].name, name) == 0) {
            if (pvar_index) *pvar_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

int impl_MPI_T_pvar_session_create(MPI_T_pvar_session *pe_session)
{
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    if (!pe_session) return MPI_T_ERR_INVALID;
    struct leanmpi_t_pvar_session *s = lm_malloc(LM_MEM_CORE, sizeof *s);
    if (!s) return MPI_T_ERR_OUT_OF_SESSIONS;
    s->handles = NULL;
    s->next = sessions;
    sessions = s;
    *pe_session = s;
    return MPI_SUCCESS;
}

int impl_MPI_T_pvar_session_free(MPI_T_pvar_session *pe_session)
{
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    struct leanmpi_t_pvar_session **p = pe_session ? find_session(*pe_session) : NULL;
    if (!p) return MPI_T_ERR_INVALID_SESSION;
    struct leanmpi_t_pvar_session *s = *p;
    *p = s->next;
    free_session(s);
    *pe_session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}

int impl_MPI_T_pvar_handle_alloc(MPI_T_pvar_session pe_session, int pvar_index, void *obj_handle,
                                 MPI_T_pvar_handle *handle, int *count)
{
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    if (!find_session(pe_session)) return MPI_T_ERR_INVALID_SESSION;
    if (pvar_index < 0 || pvar_index >= lm_mpit_pvar_count()) return MPI_T_ERR_INVALID_INDEX;
    if (!handle) return MPI_T_ERR_INVALID;
    /* the bound variable takes a reference to a communicator handle; the
     * others ignore obj_handle */
    MPI_Comm comm = MPI_COMM_NULL;
    if (table[pvar_index].source == SRC_COLL_ALGORITHM) {
        if (!obj_handle || !lm_comm_get(*(MPI_Comm *)obj_handle)) return MPI_T_ERR_INVALID_HANDLE;
        comm = *(MPI_Comm *)obj_handle;
    }
    struct leanmpi_t_pvar_handle *h = lm_malloc(LM_MEM_CORE, sizeof *h);
    if (!h) return MPI_T_ERR_OUT_OF_HANDLES;
    h->index = pvar_index;
    h->comm = comm;
    h->next = pe_session->handles;
    pe_session->handles = h;
    *handle = h;
    if (count) *count = 1;
    return MPI_SUCCESS;
}

int impl_MPI_T_pvar_handle_free(MPI_T_pvar_session pe_session, MPI_T_pvar_handle *handle)
{
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    if (!find_session(pe_session)) return MPI_T_ERR_INVALID_SESSION;
    struct leanmpi_t_pvar_handle **p = handle ? find_handle(pe_session, *handle) : NULL;
    if (!p) return MPI_T_ERR_INVALID_HANDLE;
    struct leanmpi_t_pvar_handle *h = *p;
    *p = h->next;
    lm_free(LM_MEM_CORE, h);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

/* Start and stop: every variable is continuous, so a single handle cannot be
 * started or stopped; MPI_T_PVAR_ALL_HANDLES applies to the (no) handles of
 * non-continuous variables and succeeds. */
int impl_MPI_T_pvar_start(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    struct leanmpi_t_pvar_handle *h;
    int rc = check_session_handle(pe_session, handle, 1, &h);
    if (rc != MPI_SUCCESS) return rc;
    return h ? MPI_T_ERR_PVAR_NO_STARTSTOP : MPI_SUCCESS;
}

int impl_MPI_T_pvar_stop(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    struct leanmpi_t_pvar_handle *h;
    int rc = check_session_handle(pe_session, handle, 1, &h);
    if (rc != MPI_SUCCESS) return rc;
    return h ? MPI_T_ERR_PVAR_NO_STARTSTOP : MPI_SUCCESS;
}

int impl_MPI_T_pvar_read(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, void *buf)
{
    struct leanmpi_t_pvar_handle *h;
    int rc = check_session_handle(pe_session, handle, 0, &h);
    if (rc != MPI_SUCCESS) return rc;
    if (!buf) return MPI_T_ERR_INVALID;
    if (table[h->index].source == SRC_COLL_ALGORITHM) {
        /* a communicator freed since reads as none */
        lm_comm *c = lm_comm_get(h->comm);
        int v = c ? c->coll_alg - 1 : -1;
        memcpy(buf, &v, sizeof v);
        return MPI_SUCCESS;
    }
    unsigned long long v = pvar_value(&table[h->index]);
    memcpy(buf, &v, sizeof v);
    return MPI_SUCCESS;
}

int impl_MPI_T_pvar_readreset(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, void *buf)
{
    (void)buf;
    struct leanmpi_t_pvar_handle *h;
    int rc = check_session_handle(pe_session, handle, 0, &h);
    if (rc != MPI_SUCCESS) return rc;
    return MPI_T_ERR_PVAR_NO_WRITE;
}

/* MPI_T_PVAR_ALL_HANDLES resets the writable variables of the session:
 * there are none, which is success. */
int impl_MPI_T_pvar_reset(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    struct leanmpi_t_pvar_handle *h;
    int rc = check_session_handle(pe_session, handle, 1, &h);
    if (rc != MPI_SUCCESS) return rc;
    return h ? MPI_T_ERR_PVAR_NO_WRITE : MPI_SUCCESS;
}

int impl_MPI_T_pvar_write(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, const void *buf)
{
    (void)buf;
    struct leanmpi_t_pvar_handle *h;
    int rc = check_session_handle(pe_session, handle, 0, &h);
    if (rc != MPI_SUCCESS) return rc;
    return MPI_T_ERR_PVAR_NO_WRITE;
}

void lm_mpit_pvar_release_all(void)
{
    while (sessions) {
        struct leanmpi_t_pvar_session *s = sessions;
        sessions = s->next;
        free_session(s);
    }
}
