/* leanmpi-profile: what an MPI program sends to whom, for process mapping.
 *
 * A PMPI library: linked into a program (-lleanmpi-profile before the MPI
 * library) or preloaded (LD_PRELOAD), it wraps the point-to-point sends
 * and the collectives and records, per process:
 *   - every point-to-point peer (its rank in MPI_COMM_WORLD) with the bytes
 *     and messages sent to it (blocking, nonblocking, persistent starts,
 *     sendrecv);
 *   - every collective call signature: the collective, its communicator
 *     (by its members' world ranks), the root, the bytes of one block
 *     (count x type size, as the collective's count means it) and how many
 *     calls had it; v and w forms sum their per-member byte counts.
 * Nothing but counters is kept while the program runs (a table per peer
 * talked to and per distinct collective signature), so the cost of a call
 * is a lookup and an add. At MPI_Finalize rank 0 gathers every process's
 * records and writes one JSON file (docs/PROFILE.md describes it) to
 * $LEANMPI_PROFILE_OUT, or leanmpi-profile.json; written whole under a
 * temporary name and renamed, so a job that dies leaves no partial file.
 *
 * Standard MPI only (MPI-3.1 and later): the same source builds against
 * LeanMPI, Open MPI and MPICH (tools/profile/build.sh MPICC OUT). Its other
 * files: neighbourhood collectives, one-sided operations and the MPI-4
 * forms (profile_records.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "profile_records.h"
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- communicators -------------------------------------------------------
 * A communicator's members as world ranks, found once and kept as an
 * attribute (not copied by dup); `id` numbers them in this process in the
 * order met. Intercommunicators: their remote group's members, since sends
 * go there. */
static int keyval = MPI_KEYVAL_INVALID;
static int next_comm_id;
static comm_info **all_comms; /* every comm_info made, for the output */
static int ncomms, comms_cap;
static int profiling; /* between init and finalize */

/* Threads of a process granted MPI_THREAD_MULTIPLE record one at a time. */
static pthread_mutex_t record_lock = PTHREAD_MUTEX_INITIALIZER;
static int locking;
#define RECORD_BEGIN                                   \
    do {                                               \
        if (locking) pthread_mutex_lock(&record_lock); \
    } while (0)
#define RECORD_END                                       \
    do {                                                 \
        if (locking) pthread_mutex_unlock(&record_lock); \
    } while (0)

void lmp_lock(void) { RECORD_BEGIN; }
void lmp_unlock(void) { RECORD_END; }
int lmp_profiling(void) { return profiling; }

static int keep_comm(comm_info *ci)
{
    if (ncomms == comms_cap) {
        int cap = comms_cap ? 2 * comms_cap : 16;
        comm_info **t = realloc(all_comms, (size_t)cap * sizeof *t);
        if (!t) return 0;
        all_comms = t;
        comms_cap = cap;
    }
    all_comms[ncomms++] = ci;
    return 1;
}

static int drop_info(MPI_Comm c, int key, void *val, void *extra)
{
    (void)c;
    (void)key;
    (void)val;
    (void)extra;
    return MPI_SUCCESS; /* kept in all_comms until finalize writes it */
}

/* The communicator and datatype of the last call, for the common case of
 * many calls on the same ones (cleared when they are freed, whose handles
 * may come back for other objects). */
static MPI_Comm last_comm = MPI_COMM_NULL;
static comm_info *last_info;
static MPI_Datatype last_type = MPI_DATATYPE_NULL;
static int last_type_size;

comm_info *lmp_comm_info(MPI_Comm comm)
{
    void *val;
    int found = 0;
    if (!profiling || comm == MPI_COMM_NULL) return NULL;
    if (comm == last_comm) return last_info;
    if (PMPI_Comm_get_attr(comm, keyval, &val, &found) == MPI_SUCCESS && found) {
        last_comm = comm;
        return last_info = val;
    }
    int inter = 0, n = 0;
    PMPI_Comm_test_inter(comm, &inter);
    MPI_Group g, world;
    if (inter) PMPI_Comm_remote_group(comm, &g);
    else PMPI_Comm_group(comm, &g);
    PMPI_Group_size(g, &n);
    comm_info *ci = malloc(sizeof *ci + (size_t)n * sizeof(int));
    int *ranks = malloc((size_t)(n ? n : 1) * sizeof(int));
    if (!ci || !ranks || !keep_comm(ci)) {
        free(ci);
        free(ranks);
        PMPI_Group_free(&g);
        return NULL;
    }
    for (int i = 0; i < n; i++) ranks[i] = i;
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    PMPI_Group_translate_ranks(g, n, ranks, world, ci->world);
    for (int i = 0; i < n; i++)
        if (ci->world[i] == MPI_UNDEFINED) ci->world[i] = -1;
    PMPI_Group_free(&world);
    PMPI_Group_free(&g);
    free(ranks);
    ci->id = next_comm_id++;
    ci->size = n;
    ci->ndests = -1;
    ci->dests = NULL;
    ci->alg_state = 0;
    PMPI_Comm_set_attr(comm, keyval, ci);
    last_comm = comm;
    return last_info = ci;
}

static int type_size(MPI_Datatype type)
{
    if (type == MPI_DATATYPE_NULL) return 0;
    if (type != last_type) {
        last_type_size = 0;
        PMPI_Type_size(type, &last_type_size);
        last_type = type;
    }
    return last_type_size;
}

/* ---- point-to-point ------------------------------------------------------
 * Open addressing by world rank: a process's table grows with the peers it
 * sends to, not with the job. */
typedef struct peer {
    int world; /* -1: free */
    uint64_t bytes, msgs;
} peer;

typedef struct peer_table {
    peer *p;
    size_t n, cap;
} peer_table;

static peer *peer_slot(peer_table *pt, int world)
{
    if (2 * (pt->n + 1) > pt->cap) {
        size_t cap = pt->cap ? 2 * pt->cap : 64;
        peer *t = malloc(cap * sizeof *t);
        if (!t) return NULL;
        for (size_t i = 0; i < cap; i++) t[i].world = -1;
        for (size_t i = 0; i < pt->cap; i++) {
            if (pt->p[i].world < 0) continue;
            size_t h = (size_t)pt->p[i].world * 2654435761u % cap;
            while (t[h].world >= 0) h = (h + 1) % cap;
            t[h] = pt->p[i];
        }
        free(pt->p);
        pt->p = t;
        pt->cap = cap;
    }
    size_t h = (size_t)world * 2654435761u % pt->cap;
    while (pt->p[h].world >= 0 && pt->p[h].world != world) h = (h + 1) % pt->cap;
    if (pt->p[h].world < 0) {
        pt->p[h] = (peer){.world = world};
        pt->n++;
    }
    return &pt->p[h];
}

/* The peers a process sent to, and those it reached by one-sided
 * operations. */
static peer_table sent, reached;

static void note_peer(peer_table *t, int world, uint64_t bytes)
{
    peer *p = peer_slot(t, world);
    if (p) {
        p->bytes += bytes;
        p->msgs++;
    }
}

void lmp_note_send(MPI_Comm comm, int dest, uint64_t bytes)
{
    if (dest == MPI_PROC_NULL || dest < 0 || !profiling) return;
    RECORD_BEGIN;
    comm_info *ci = lmp_comm_info(comm);
    if (ci && dest < ci->size && ci->world[dest] >= 0) note_peer(&sent, ci->world[dest], bytes);
    RECORD_END;
}

void lmp_note_rma(int world, uint64_t bytes)
{
    if (world < 0 || !profiling) return;
    RECORD_BEGIN;
    note_peer(&reached, world, bytes);
    RECORD_END;
}

static void note_send(int count, MPI_Datatype type, int dest, MPI_Comm comm)
{
    if (dest == MPI_PROC_NULL || dest < 0 || !profiling) return;
    RECORD_BEGIN;
    uint64_t bytes = (uint64_t)(count > 0 ? count : 0) * (uint64_t)type_size(type);
    RECORD_END;
    lmp_note_send(comm, dest, bytes);
}

/* ---- collectives ----------------------------------------------------------
 * One record per distinct (collective, communicator, root, block bytes);
 * v and w forms keep one record per (collective, communicator, root) with
 * the bytes per member summed over their calls. */
static const char *const coll_name[C_COUNT] = {
    "barrier",  "bcast",     "reduce",    "allreduce",      "gather",
    "gatherv",  "scatter",   "scatterv",  "allgather",      "allgatherv",
    "alltoall", "alltoallv", "alltoallw", "reduce_scatter", "reduce_scatter_block",
    "scan",     "exscan"};

typedef struct coll_rec {
    int kind, comm, root;
    int alg;        /* the library's algorithm (an item of alg_names), -1 unknown */
    uint64_t bytes; /* one block (not for v/w forms) */
    uint64_t calls;
    uint64_t *counts; /* v/w forms: bytes per member, summed; NULL otherwise */
    int ncounts;
} coll_rec;

static coll_rec *colls;
static size_t ncolls, colls_cap;
static size_t last_hit;

static coll_rec *coll_slot(int kind, int comm, int root, uint64_t bytes, int ncounts)
{
    if (last_hit < ncolls) {
        coll_rec *r = &colls[last_hit];
        if (r->kind == kind && r->comm == comm && r->root == root && r->bytes == bytes) return r;
    }
    for (size_t i = 0; i < ncolls; i++) {
        coll_rec *r = &colls[i];
        if (r->kind == kind && r->comm == comm && r->root == root && r->bytes == bytes) {
            last_hit = i;
            return r;
        }
    }
    if (ncolls == colls_cap) {
        size_t cap = colls_cap ? 2 * colls_cap : 16;
        coll_rec *t = realloc(colls, cap * sizeof *t);
        if (!t) return NULL;
        colls = t;
        colls_cap = cap;
    }
    coll_rec *r = &colls[ncolls];
    *r = (coll_rec){.kind = kind, .comm = comm, .root = root, .bytes = bytes, .ncounts = ncounts, .alg = -1};
    if (ncounts && !(r->counts = calloc((size_t)ncounts, sizeof *r->counts))) return NULL;
    last_hit = ncolls++;
    return r;
}

/* (not through the cache of the last type: callers may hold the lock) */
uint64_t lmp_type_bytes(MPI_Count count, MPI_Datatype type)
{
    int tsize = 0;
    if (type != MPI_DATATYPE_NULL) PMPI_Type_size(type, &tsize);
    return (uint64_t)(count > 0 ? count : 0) * (uint64_t)tsize;
}
#define type_bytes lmp_type_bytes

int lmp_note_coll(int kind, MPI_Comm comm, int root, uint64_t bytes)
{
    if (!profiling) return -1;
    RECORD_BEGIN;
    comm_info *ci = lmp_comm_info(comm);
    coll_rec *r = ci ? coll_slot(kind, ci->id, root, bytes, 0) : NULL;
    if (r) r->calls++;
    int rec = r ? (int)(r - colls) : -1;
    RECORD_END;
    return rec;
}

/* counts[i] elements of `type` (or of types[i]) for member i */
int lmp_note_coll_v(int kind, MPI_Comm comm, int root, const int *counts, const MPI_Count *wide, MPI_Datatype type,
                    const MPI_Datatype *types)
{
    if (!profiling || (!counts && !wide)) return -1;
    RECORD_BEGIN;
    comm_info *ci = lmp_comm_info(comm);
    coll_rec *r = ci ? coll_slot(kind, ci->id, root, 0, ci->size) : NULL;
    if (r) {
        r->calls++;
        for (int i = 0; i < ci->size; i++)
            r->counts[i] += type_bytes(wide ? wide[i] : counts[i], types ? types[i] : type);
    }
    int rec = r ? (int)(r - colls) : -1;
    RECORD_END;
    return rec;
}

/* ---- algorithms ------------------------------------------------------------
 * Where the MPI library tells through MPI_T which algorithm a
 * communicator's last collective ran (LeanMPI: the state variable
 * coll_algorithm, bound to the communicator, an item of an enumeration
 * "collective:algorithm"), each collective record gets it; elsewhere
 * nothing is asked after the first look. */
static int alg_index = -1; /* the variable, -1 where the library has none */
static MPI_T_pvar_session alg_session;
static char **alg_names; /* by value + 1 (value -1: none) */
static int nalg_names;

static void find_algorithm_variable(void)
{
    int provided, idx, n = 0, len;
    MPI_T_enum et = MPI_T_ENUM_NULL;
    MPI_Datatype dt;
    int verb, cls, bind, ro, cont, atomic, nlen = 0, dlen = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return;
    if (MPI_T_pvar_get_index("coll_algorithm", MPI_T_PVAR_CLASS_STATE, &idx) != MPI_SUCCESS ||
        MPI_T_pvar_get_info(idx, NULL, &nlen, &verb, &cls, &dt, &et, NULL, &dlen, &bind, &ro, &cont, &atomic) !=
            MPI_SUCCESS ||
        dt != MPI_INT || bind != MPI_T_BIND_MPI_COMM || et == MPI_T_ENUM_NULL ||
        MPI_T_enum_get_info(et, &n, NULL, &(int){0}) != MPI_SUCCESS || n < 1 ||
        !(alg_names = calloc((size_t)n, sizeof *alg_names)) || MPI_T_pvar_session_create(&alg_session) != MPI_SUCCESS)
        return;
    for (int i = 0; i < n; i++) {
        int value;
        char name[128];
        len = sizeof name;
        if (MPI_T_enum_get_item(et, i, &value, name, &len) != MPI_SUCCESS || value + 1 < 0 || value + 1 >= n) continue;
        char *colon = strchr(name, ':');
        alg_names[value + 1] = strdup(colon ? colon + 1 : name);
    }
    nalg_names = n;
    alg_index = idx;
}

static void forget_algorithm_variable(void)
{
    if (alg_index < 0) return;
    MPI_T_pvar_session_free(&alg_session);
    for (int i = 0; i < nalg_names; i++) free(alg_names[i]);
    free(alg_names);
    alg_index = -1;
    MPI_T_finalize();
}

/* The algorithm the library says comm's last collective ran: an index of
 * alg_names, 0 where unknown. Under the record lock. */
static int algorithm_of(MPI_Comm comm)
{
    comm_info *ci = lmp_comm_info(comm);
    if (ci && !ci->alg_state) {
        MPI_Comm c = comm;
        int made = MPI_T_pvar_handle_alloc(alg_session, alg_index, &c, &ci->alg_handle, &(int){0});
        ci->alg_state = made == MPI_SUCCESS ? 1 : -1;
    }
    int value = -1;
    if (ci && ci->alg_state > 0 && MPI_T_pvar_read(alg_session, ci->alg_handle, &value) == MPI_SUCCESS &&
        value + 1 > 0 && value + 1 < nalg_names && alg_names[value + 1])
        return value + 1;
    return 0;
}

int lmp_ran(int rc, MPI_Comm comm, int rec)
{
    if (alg_index < 0 || rec < 0 || rc != MPI_SUCCESS || !profiling) return rc;
    RECORD_BEGIN;
    int alg = algorithm_of(comm);
    if (alg && (size_t)rec < ncolls) colls[rec].alg = alg;
    RECORD_END;
    return rc;
}
#define note_coll_v(kind, comm, root, counts, type, types) lmp_note_coll_v(kind, comm, root, counts, NULL, type, types)

static int my_rank(MPI_Comm comm)
{
    int r = -1;
    PMPI_Comm_rank(comm, &r);
    return r;
}

/* ---- output ---------------------------------------------------------------- */
typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if (t->s && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? 2 * t->cap : 4096;
        while (cap <= t->len + (size_t)n) cap *= 2;
        char *s = realloc(t->s, cap);
        if (!s) return;
        t->s = s;
        t->cap = cap;
    }
}

static void peers_json(text *t, const peer_table *pt)
{
    int first = 1;
    for (size_t i = 0; i < pt->cap; i++) {
        if (pt->p[i].world < 0) continue;
        put(t, "%s[%d, %llu, %llu]", first ? "" : ", ", pt->p[i].world, (unsigned long long)pt->p[i].bytes,
            (unsigned long long)pt->p[i].msgs);
        first = 0;
    }
}

/* This process's records as one JSON object. */
static void rank_json(text *t, int world_rank)
{
    put(t, "{\"rank\": %d, \"comms\": [", world_rank);
    for (int i = 0; i < ncomms; i++) {
        put(t, "%s{\"id\": %d, \"members\": [", i ? ", " : "", all_comms[i]->id);
        for (int m = 0; m < all_comms[i]->size; m++) put(t, "%s%d", m ? ", " : "", all_comms[i]->world[m]);
        put(t, "]}");
    }
    put(t, "],\n  \"p2p\": [");
    peers_json(t, &sent);
    put(t, "],\n  \"rma\": [");
    peers_json(t, &reached);
    put(t, "],\n  \"collectives\": [");
    for (size_t i = 0; i < ncolls; i++) {
        const coll_rec *r = &colls[i];
        put(t, "%s\n    {\"op\": \"%s\", \"comm\": %d, \"root\": %d, \"calls\": %llu", i ? "," : "", coll_name[r->kind],
            r->comm, r->root, (unsigned long long)r->calls);
        if (r->alg > 0) put(t, ", \"algorithm\": \"%s\"", alg_names[r->alg]);
        if (r->counts) {
            put(t, ", \"counts\": [");
            for (int m = 0; m < r->ncounts; m++) put(t, "%s%llu", m ? ", " : "", (unsigned long long)r->counts[m]);
            put(t, "]}");
        } else {
            put(t, ", \"bytes\": %llu}", (unsigned long long)r->bytes);
        }
    }
    put(t, "]}");
}

static void write_profile(void)
{
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    text mine = {0};
    rank_json(&mine, rank);
    int len = mine.s ? (int)mine.len : 0;
    int *lens = rank == 0 ? calloc((size_t)size, sizeof *lens) : NULL;
    int *displs = rank == 0 ? calloc((size_t)size, sizeof *displs) : NULL;
    PMPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char *all = NULL;
    if (rank == 0) {
        long total = 0;
        for (int i = 0; i < size; i++) {
            displs[i] = (int)total;
            total += lens[i];
        }
        all = malloc((size_t)total + 1);
    }
    PMPI_Gatherv(mine.s, len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0 && all) {
        const char *out = getenv("LEANMPI_PROFILE_OUT");
        if (!out || !*out) out = "leanmpi-profile.json";
        char tmp[4096], lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int liblen = 0;
        PMPI_Get_library_version(lib, &liblen);
        /* the first line, at most 100 characters (MPICH's goes on with its
         * whole configuration), as a JSON string */
        lib[strcspn(lib, "\r\n")] = 0;
        if (strlen(lib) > 100) lib[100] = 0;
        for (char *c = lib; *c; c++)
            if (*c == '"' || *c == '\\' || (unsigned char)*c < 32) *c = ' ';
        snprintf(tmp, sizeof tmp, "%s.tmp%d", out, (int)getpid());
        FILE *f = fopen(tmp, "w");
        int ok = f != NULL;
        if (f) {
            fprintf(f,
                    "{\"format\": \"leanmpi-profile\", \"version\": 1, \"world_size\": %d,\n \"library\": \"%s\",\n "
                    "\"ranks\": [\n",
                    size, lib);
            for (int i = 0; i < size; i++) {
                fprintf(f, "%s  ", i ? ",\n" : "");
                fwrite(all + displs[i], 1, (size_t)lens[i], f);
            }
            fprintf(f, "\n]}\n");
            ok = !ferror(f);
            ok &= fclose(f) == 0;
        }
        if (ok) ok = rename(tmp, out) == 0;
        if (!ok) {
            fprintf(stderr, "leanmpi-profile: cannot write %s\n", out);
            unlink(tmp);
        }
    }
    free(all);
    free(lens);
    free(displs);
    free(mine.s);
}

/* ---- start and end ------------------------------------------------------- */
static void start(void)
{
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, drop_info, &keyval, NULL) == MPI_SUCCESS) profiling = 1;
    if (profiling) find_algorithm_variable();
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) start();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) {
        locking = *provided == MPI_THREAD_MULTIPLE;
        start();
    }
    return rc;
}

int MPI_Comm_free(MPI_Comm *comm)
{
    RECORD_BEGIN;
    if (*comm == last_comm) last_comm = MPI_COMM_NULL;
    RECORD_END;
    return PMPI_Comm_free(comm);
}

int MPI_Comm_disconnect(MPI_Comm *comm)
{
    RECORD_BEGIN;
    if (*comm == last_comm) last_comm = MPI_COMM_NULL;
    RECORD_END;
    return PMPI_Comm_disconnect(comm);
}

int MPI_Type_free(MPI_Datatype *type)
{
    RECORD_BEGIN;
    if (*type == last_type) last_type = MPI_DATATYPE_NULL;
    RECORD_END;
    return PMPI_Type_free(type);
}

int MPI_Finalize(void)
{
    if (profiling) {
        write_profile();
        profiling = 0;
        forget_algorithm_variable();
    }
    return PMPI_Finalize();
}

/* ---- the wrappers ----------------------------------------------------------
 * MPI-3 made the send buffers const; earlier headers are not supported. */
#define SEND(name)                                                                                  \
    int MPI_##name(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) \
    {                                                                                               \
        note_send(count, type, dest, comm);                                                         \
        return PMPI_##name(buf, count, type, dest, tag, comm);                                      \
    }
SEND(Send)
SEND(Bsend)
SEND(Ssend)
SEND(Rsend)

#define ISEND(name)                                                                                                   \
    int MPI_##name(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req) \
    {                                                                                                                 \
        note_send(count, type, dest, comm);                                                                           \
        return PMPI_##name(buf, count, type, dest, tag, comm, req);                                                   \
    }
ISEND(Isend)
ISEND(Ibsend)
ISEND(Issend)
ISEND(Irsend)

/* Persistent sends and collectives count at each start: their requests
 * are remembered until freed (few live at once in practice: a list). */
typedef struct persistent {
    MPI_Request req;
    int kind; /* -1: a send to dest, else the collective */
    int dest_or_root;
    uint64_t bytes;
    MPI_Comm comm;
    int alg; /* a collective's algorithm, chosen when it was made */
    struct persistent *next;
} persistent;
static persistent *persistents;

static void remember_as(MPI_Request req, int kind, int dest_or_root, uint64_t bytes, MPI_Comm comm)
{
    persistent *p = malloc(sizeof *p);
    if (!p) return;
    RECORD_BEGIN;
    int alg = kind >= 0 && alg_index >= 0 ? algorithm_of(comm) : 0;
    *p = (persistent){req, kind, dest_or_root, bytes, comm, alg, persistents};
    persistents = p;
    RECORD_END;
}

static void remember(MPI_Request req, int count, MPI_Datatype type, int dest, MPI_Comm comm)
{
    remember_as(req, -1, dest, type_bytes(count, type), comm);
}

void lmp_remember_coll(MPI_Request req, int kind, MPI_Comm comm, int root, uint64_t bytes)
{
    remember_as(req, kind, root, bytes, comm);
}

#define SEND_INIT(name)                                                                                               \
    int MPI_##name(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req) \
    {                                                                                                                 \
        int rc = PMPI_##name(buf, count, type, dest, tag, comm, req);                                                 \
        if (rc == MPI_SUCCESS) remember(*req, count, type, dest, comm);                                               \
        return rc;                                                                                                    \
    }
SEND_INIT(Send_init)
SEND_INIT(Bsend_init)
SEND_INIT(Ssend_init)
SEND_INIT(Rsend_init)

static void note_start(MPI_Request req)
{
    persistent found = {.req = MPI_REQUEST_NULL};
    RECORD_BEGIN;
    for (persistent *p = persistents; p; p = p->next)
        if (p->req == req) {
            found = *p;
            break;
        }
    RECORD_END;
    if (found.req == MPI_REQUEST_NULL) return;
    if (found.kind < 0) lmp_note_send(found.comm, found.dest_or_root, found.bytes);
    else {
        int rec = lmp_note_coll(found.kind, found.comm, found.dest_or_root, found.bytes);
        RECORD_BEGIN;
        if (rec >= 0 && found.alg && (size_t)rec < ncolls) colls[rec].alg = found.alg;
        RECORD_END;
    }
}

int MPI_Start(MPI_Request *req)
{
    note_start(*req);
    return PMPI_Start(req);
}

int MPI_Startall(int n, MPI_Request reqs[])
{
    for (int i = 0; i < n; i++) note_start(reqs[i]);
    return PMPI_Startall(n, reqs);
}

int MPI_Request_free(MPI_Request *req)
{
    RECORD_BEGIN;
    for (persistent **p = &persistents; *p; p = &(*p)->next)
        if ((*p)->req == *req) {
            persistent *dead = *p;
            *p = dead->next;
            free(dead);
            break;
        }
    RECORD_END;
    return PMPI_Request_free(req);
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
                 MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    note_send(scount, stype, dest, comm);
    return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag, int source, int rtag,
                         MPI_Comm comm, MPI_Status *status)
{
    note_send(count, type, dest, comm);
    return PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, status);
}

/* Collectives: blocking and nonblocking forms record alike. */
int MPI_Barrier(MPI_Comm comm)
{
    int rec = lmp_note_coll(C_BARRIER, comm, -1, 0);
    return lmp_ran(PMPI_Barrier(comm), comm, rec);
}
int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    int rec = lmp_note_coll(C_BARRIER, comm, -1, 0);
    return lmp_ran(PMPI_Ibarrier(comm, req), comm, rec);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    int rec = lmp_note_coll(C_BCAST, comm, root, type_bytes(count, type));
    return lmp_ran(PMPI_Bcast(buf, count, type, root, comm), comm, rec);
}
int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req)
{
    int rec = lmp_note_coll(C_BCAST, comm, root, type_bytes(count, type));
    return lmp_ran(PMPI_Ibcast(buf, count, type, root, comm, req), comm, rec);
}

int MPI_Reduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
    int rec = lmp_note_coll(C_REDUCE, comm, root, type_bytes(count, type));
    return lmp_ran(PMPI_Reduce(s, r, count, type, op, root, comm), comm, rec);
}
int MPI_Ireduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request *req)
{
    int rec = lmp_note_coll(C_REDUCE, comm, root, type_bytes(count, type));
    return lmp_ran(PMPI_Ireduce(s, r, count, type, op, root, comm, req), comm, rec);
}

int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    int rec = lmp_note_coll(C_ALLREDUCE, comm, -1, type_bytes(count, type));
    return lmp_ran(PMPI_Allreduce(s, r, count, type, op, comm), comm, rec);
}
int MPI_Iallreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    int rec = lmp_note_coll(C_ALLREDUCE, comm, -1, type_bytes(count, type));
    return lmp_ran(PMPI_Iallreduce(s, r, count, type, op, comm, req), comm, rec);
}

/* Rooted gathers and scatters: the block is what one member contributes or
 * gets; the root's side, where the non-roots' arguments are not
 * significant. */
static uint64_t rooted_block(MPI_Comm comm, int root, int scount, MPI_Datatype stype, int rcount, MPI_Datatype rtype,
                             int gather)
{
    int me = my_rank(comm);
    if (gather) return me == root ? type_bytes(rcount, rtype) : type_bytes(scount, stype);
    return me == root ? type_bytes(scount, stype) : type_bytes(rcount, rtype);
}

int MPI_Gather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root, MPI_Comm comm)
{
    int rec = lmp_note_coll(C_GATHER, comm, root, rooted_block(comm, root, sc, st, rc, rt, 1));
    return lmp_ran(PMPI_Gather(s, sc, st, r, rc, rt, root, comm), comm, rec);
}
int MPI_Igather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root, MPI_Comm comm,
                MPI_Request *req)
{
    int rec = lmp_note_coll(C_GATHER, comm, root, rooted_block(comm, root, sc, st, rc, rt, 1));
    return lmp_ran(PMPI_Igather(s, sc, st, r, rc, rt, root, comm, req), comm, rec);
}

int MPI_Scatter(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root, MPI_Comm comm)
{
    int rec = lmp_note_coll(C_SCATTER, comm, root, rooted_block(comm, root, sc, st, rc, rt, 0));
    return lmp_ran(PMPI_Scatter(s, sc, st, r, rc, rt, root, comm), comm, rec);
}
int MPI_Iscatter(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root, MPI_Comm comm,
                 MPI_Request *req)
{
    int rec = lmp_note_coll(C_SCATTER, comm, root, rooted_block(comm, root, sc, st, rc, rt, 0));
    return lmp_ran(PMPI_Iscatter(s, sc, st, r, rc, rt, root, comm, req), comm, rec);
}

/* v forms: the root's counts are the ones that say who sends what; other
 * members record what they contribute in their own slot. */
static int note_rooted_v(int kind, MPI_Comm comm, int root, const int *counts, MPI_Datatype type, int mine,
                         MPI_Datatype mytype)
{
    if (!profiling) return -1;
    int me = my_rank(comm);
    if (me == root) return note_coll_v(kind, comm, root, counts, type, NULL);
    RECORD_BEGIN;
    comm_info *ci = lmp_comm_info(comm);
    coll_rec *r = ci ? coll_slot(kind, ci->id, root, 0, ci->size) : NULL;
    if (r) {
        r->calls++;
        if (me >= 0 && me < ci->size) r->counts[me] += type_bytes(mine, mytype);
    }
    int rec = r ? (int)(r - colls) : -1;
    RECORD_END;
    return rec;
}

int MPI_Gatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rcs[], const int displs[], MPI_Datatype rt,
                int root, MPI_Comm comm)
{
    int rec = note_rooted_v(C_GATHERV, comm, root, rcs, rt, sc, st);
    return lmp_ran(PMPI_Gatherv(s, sc, st, r, rcs, displs, rt, root, comm), comm, rec);
}
int MPI_Scatterv(const void *s, const int scs[], const int displs[], MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                 int root, MPI_Comm comm)
{
    int rec = note_rooted_v(C_SCATTERV, comm, root, scs, st, rc, rt);
    return lmp_ran(PMPI_Scatterv(s, scs, displs, st, r, rc, rt, root, comm), comm, rec);
}

int MPI_Allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm)
{
    int rec = lmp_note_coll(C_ALLGATHER, comm, -1, type_bytes(rc, rt));
    return lmp_ran(PMPI_Allgather(s, sc, st, r, rc, rt, comm), comm, rec);
}
int MPI_Iallgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm,
                   MPI_Request *req)
{
    int rec = lmp_note_coll(C_ALLGATHER, comm, -1, type_bytes(rc, rt));
    return lmp_ran(PMPI_Iallgather(s, sc, st, r, rc, rt, comm, req), comm, rec);
}
int MPI_Allgatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rcs[], const int displs[],
                   MPI_Datatype rt, MPI_Comm comm)
{
    int rec = note_coll_v(C_ALLGATHERV, comm, -1, rcs, rt, NULL);
    return lmp_ran(PMPI_Allgatherv(s, sc, st, r, rcs, displs, rt, comm), comm, rec);
}

int MPI_Alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm)
{
    int rec = lmp_note_coll(C_ALLTOALL, comm, -1, type_bytes(rc, rt));
    return lmp_ran(PMPI_Alltoall(s, sc, st, r, rc, rt, comm), comm, rec);
}
int MPI_Ialltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm,
                  MPI_Request *req)
{
    int rec = lmp_note_coll(C_ALLTOALL, comm, -1, type_bytes(rc, rt));
    return lmp_ran(PMPI_Ialltoall(s, sc, st, r, rc, rt, comm, req), comm, rec);
}
/* alltoallv/w: what this member sends to each (in place: what it receives,
 * the same by the call's symmetry) */
int MPI_Alltoallv(const void *s, const int scs[], const int sds[], MPI_Datatype st, void *r, const int rcs[],
                  const int rds[], MPI_Datatype rt, MPI_Comm comm)
{
    int rec = s == MPI_IN_PLACE ? note_coll_v(C_ALLTOALLV, comm, -1, rcs, rt, NULL)
                                : note_coll_v(C_ALLTOALLV, comm, -1, scs, st, NULL);
    return lmp_ran(PMPI_Alltoallv(s, scs, sds, st, r, rcs, rds, rt, comm), comm, rec);
}
int MPI_Alltoallw(const void *s, const int scs[], const int sds[], const MPI_Datatype sts[], void *r, const int rcs[],
                  const int rds[], const MPI_Datatype rts[], MPI_Comm comm)
{
    int rec = s == MPI_IN_PLACE ? note_coll_v(C_ALLTOALLW, comm, -1, rcs, MPI_DATATYPE_NULL, rts)
                                : note_coll_v(C_ALLTOALLW, comm, -1, scs, MPI_DATATYPE_NULL, sts);
    return lmp_ran(PMPI_Alltoallw(s, scs, sds, sts, r, rcs, rds, rts, comm), comm, rec);
}

int MPI_Reduce_scatter(const void *s, void *r, const int rcs[], MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    int rec = note_coll_v(C_REDUCE_SCATTER, comm, -1, rcs, type, NULL);
    return lmp_ran(PMPI_Reduce_scatter(s, r, rcs, type, op, comm), comm, rec);
}
int MPI_Reduce_scatter_block(const void *s, void *r, int rc, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    int rec = lmp_note_coll(C_REDUCE_SCATTER_BLOCK, comm, -1, type_bytes(rc, type));
    return lmp_ran(PMPI_Reduce_scatter_block(s, r, rc, type, op, comm), comm, rec);
}

int MPI_Scan(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    int rec = lmp_note_coll(C_SCAN, comm, -1, type_bytes(count, type));
    return lmp_ran(PMPI_Scan(s, r, count, type, op, comm), comm, rec);
}
int MPI_Exscan(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    int rec = lmp_note_coll(C_EXSCAN, comm, -1, type_bytes(count, type));
    return lmp_ran(PMPI_Exscan(s, r, count, type, op, comm), comm, rec);
}
