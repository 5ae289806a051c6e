/* The tool information interface: usable before MPI_Init and after
 * MPI_Finalize between MPI_T_init_thread and MPI_T_finalize (reference
 * counted), every control and performance variable and category found again
 * by its name, handles read, and the error codes for invalid indices,
 * names, handles and sessions (returned, never raised).  Under LeanMPI also:
 * LEANMPI_EAGER_LIMIT equals the environment's value when set, read-only
 * variables refuse writes, and the transport byte counters grow by at least
 * the bytes sent to a neighbour. */
#include "mpitest.h"

#define N_BYTES 1000

/* Every cvar: name -> index round trip; read when bound to no object. */
static void check_cvars(int read)
{
    int num;
    CHECK_EQ(MPI_T_cvar_get_num(&num), MPI_SUCCESS);
    CHECK(num >= 0, "num cvars %d", num);
    for (int i = 0; i < num; i++) {
        char name[256], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc, verb, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum et;
        int rc = MPI_T_cvar_get_info(i, name, &name_len, &verb, &dt, &et, desc, &desc_len, &bind, &scope);
        if (rc == MPI_T_ERR_INVALID_INDEX) continue; /* allowed: a variable gone since get_num */
        CHECK_EQ(rc, MPI_SUCCESS);
        CHECK(name_len == (int)strlen(name) + 1, "cvar %d name_len %d for '%s'", i, name_len, name);
        int idx = -1;
        CHECK_EQ(MPI_T_cvar_get_index(name, &idx), MPI_SUCCESS);
        CHECK(idx == i, "cvar '%s': index %d, get_index %d", name, i, idx);
        if (bind != MPI_T_BIND_NO_OBJECT || !read) continue;
        MPI_T_cvar_handle h;
        int count = -1;
        CHECK_EQ(MPI_T_cvar_handle_alloc(i, NULL, &h, &count), MPI_SUCCESS);
        CHECK(count >= 0, "cvar '%s' count %d", name, count);
        /* MPI_T allows only basic types of at most 8 bytes: 64 per element is plenty. */
        long long *buf = calloc((size_t)count + 1, 64);
        int rc_read = MPI_T_cvar_read(h, buf);
#ifndef LEANMPI /* Open MPI 4.1: some variables are no longer readable after MPI_Init */
        if (rc_read == MPI_T_ERR_INVALID_INDEX) rc_read = MPI_SUCCESS;
#endif
        CHECK(rc_read == MPI_SUCCESS, "cvar '%s' read: %d", name, rc_read);
        free(buf);
        CHECK_EQ(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
        CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle not reset by free");
    }
}

static void check_pvars(void)
{
    int num;
    CHECK_EQ(MPI_T_pvar_get_num(&num), MPI_SUCCESS);
    for (int i = 0; i < num; i++) {
        char name[256], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc, verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum et;
        int rc = MPI_T_pvar_get_info(i, name, &name_len, &verb, &cls, &dt, &et, desc, &desc_len, &bind, &ro, &cont,
                                     &atomic);
        if (rc == MPI_T_ERR_INVALID_INDEX) continue;
#ifndef LEANMPI /* Open MPI 4.1 says so of some variables after MPI_Init */
        if (rc == MPI_T_ERR_INVALID) continue;
#endif
        CHECK_EQ(rc, MPI_SUCCESS);
        CHECK(cls >= MPI_T_PVAR_CLASS_STATE && cls <= MPI_T_PVAR_CLASS_GENERIC, "pvar '%s' class %d", name, cls);
        int idx = -1;
        CHECK_EQ(MPI_T_pvar_get_index(name, cls, &idx), MPI_SUCCESS);
        CHECK(idx == i, "pvar '%s': index %d, get_index %d", name, i, idx);
    }
}

static void check_categories(void)
{
    int num, ncvar, npvar;
    CHECK_EQ(MPI_T_category_get_num(&num), MPI_SUCCESS);
    CHECK_EQ(MPI_T_cvar_get_num(&ncvar), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_get_num(&npvar), MPI_SUCCESS);
    for (int i = 0; i < num; i++) {
        char name[256], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc, nc, np, ncat;
        int rc = MPI_T_category_get_info(i, name, &name_len, desc, &desc_len, &nc, &np, &ncat);
        if (rc == MPI_T_ERR_INVALID_INDEX) continue;
        CHECK_EQ(rc, MPI_SUCCESS);
        int idx = -1;
        CHECK_EQ(MPI_T_category_get_index(name, &idx), MPI_SUCCESS);
        CHECK(idx == i, "category '%s': index %d, get_index %d", name, i, idx);
        int *ind = malloc(sizeof(int) * (size_t)(nc + np + ncat + 1));
        CHECK_EQ(MPI_T_category_get_cvars(i, nc, ind), MPI_SUCCESS);
        for (int k = 0; k < nc; k++) CHECK(ind[k] >= 0 && ind[k] < ncvar, "category '%s' cvar %d", name, ind[k]);
        CHECK_EQ(MPI_T_category_get_pvars(i, np, ind), MPI_SUCCESS);
        for (int k = 0; k < np; k++) CHECK(ind[k] >= 0 && ind[k] < npvar, "category '%s' pvar %d", name, ind[k]);
        CHECK_EQ(MPI_T_category_get_categories(i, ncat, ind), MPI_SUCCESS);
        for (int k = 0; k < ncat; k++) CHECK(ind[k] >= 0 && ind[k] < num, "category '%s' sub %d", name, ind[k]);
        free(ind);
    }
    int stamp = -1;
    CHECK_EQ(MPI_T_category_changed(&stamp), MPI_SUCCESS);
}

static void check_errors(void)
{
    int ncvar, npvar, ncat, idx;
    char name[256], desc[1024];
    int name_len = sizeof name, desc_len = sizeof desc, verb, bind, scope, cls, ro, cont, atomic, nc, np, nk;
    MPI_Datatype dt;
    MPI_T_enum et;
    CHECK_EQ(MPI_T_cvar_get_num(&ncvar), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_get_num(&npvar), MPI_SUCCESS);
    CHECK_EQ(MPI_T_category_get_num(&ncat), MPI_SUCCESS);
    /* Open MPI 4.1 answers an index past the end with MPI_T_ERR_INVALID. */
    int rc = MPI_T_cvar_get_info(ncvar, name, &name_len, &verb, &dt, &et, desc, &desc_len, &bind, &scope);
    CHECK(rc == MPI_T_ERR_INVALID_INDEX || rc == MPI_T_ERR_INVALID, "cvar index %d past the end: %d", ncvar, rc);
    rc = MPI_T_category_get_info(ncat, name, &name_len, desc, &desc_len, &nc, &np, &nk);
    CHECK(rc == MPI_T_ERR_INVALID_INDEX || rc == MPI_T_ERR_INVALID, "category index %d past the end: %d", ncat, rc);
    CHECK_EQ(MPI_T_cvar_get_index("no_such_variable_xyzzy", &idx), MPI_T_ERR_INVALID_NAME);
    CHECK_EQ(MPI_T_pvar_get_index("no_such_variable_xyzzy", MPI_T_PVAR_CLASS_COUNTER, &idx), MPI_T_ERR_INVALID_NAME);
    CHECK_EQ(MPI_T_category_get_index("no_such_category_xyzzy", &idx), MPI_T_ERR_INVALID_NAME);
    MPI_T_cvar_handle ch;
    int count;
    rc = MPI_T_cvar_handle_alloc(ncvar, NULL, &ch, &count);
    CHECK(rc == MPI_T_ERR_INVALID_INDEX || rc == MPI_T_ERR_INVALID, "cvar handle for index %d: %d", ncvar, rc);
    MPI_T_pvar_session s, bad = MPI_T_PVAR_SESSION_NULL;
    MPI_T_pvar_handle ph;
    CHECK_EQ(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
#ifdef LEANMPI /* MPICH 4.0 crashes, Open MPI 4.1 answers MPI_T_ERR_INVALID */
    CHECK_EQ(MPI_T_pvar_handle_alloc(s, npvar, NULL, &ph, &count), MPI_T_ERR_INVALID_INDEX);
#else
    (void)ph;
#endif
    CHECK_EQ(MPI_T_pvar_session_free(&bad), MPI_T_ERR_INVALID_SESSION);
    CHECK_EQ(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    CHECK(s == MPI_T_PVAR_SESSION_NULL, "session not reset by free");
#ifdef LEANMPI
    /* A negative index (Open MPI: MPI_T_ERR_INVALID), NULL strings (MPICH
     * 4.0 crashes) and made-up handles are left open by other libraries. */
    /* MPICH 4.0 crashes on a pvar index past the end. */
    CHECK_EQ(
        MPI_T_pvar_get_info(npvar, name, &name_len, &verb, &cls, &dt, &et, desc, &desc_len, &bind, &ro, &cont, &atomic),
        MPI_T_ERR_INVALID_INDEX);
    CHECK_EQ(MPI_T_cvar_get_info(ncvar, name, &name_len, &verb, &dt, &et, desc, &desc_len, &bind, &scope),
             MPI_T_ERR_INVALID_INDEX);
    CHECK_EQ(MPI_T_cvar_get_index(NULL, &idx), MPI_T_ERR_INVALID_NAME);
    CHECK_EQ(MPI_T_pvar_get_index(NULL, MPI_T_PVAR_CLASS_COUNTER, &idx), MPI_T_ERR_INVALID_NAME);
    CHECK_EQ(MPI_T_category_get_index(NULL, &idx), MPI_T_ERR_INVALID_NAME);
    name_len = 0;
    CHECK_EQ(MPI_T_cvar_get_info(-1, NULL, &name_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             MPI_T_ERR_INVALID_INDEX);
    CHECK_EQ(MPI_T_cvar_get_info(0, NULL, &name_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_SUCCESS);
    CHECK_EQ(name_len, (int)strlen("LEANMPI_EAGER_LIMIT") + 1);
    name_len = 4;
    CHECK_EQ(MPI_T_cvar_get_info(0, name, &name_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_SUCCESS);
    CHECK(name_len == 4 && strcmp(name, "LEA") == 0, "truncated name '%s' (%d)", name, name_len);
    unsigned long long v;
    CHECK_EQ(MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, &v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_EQ(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_read(s, MPI_T_PVAR_HANDLE_NULL, &v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_EQ(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    int n = -1;
    CHECK_EQ(MPI_T_source_get_num(&n), MPI_SUCCESS);
    CHECK_EQ(n, 0);
    CHECK_EQ(MPI_T_event_get_num(&n), MPI_SUCCESS);
    CHECK_EQ(n, 0);
#endif
}

#ifdef LEANMPI
static long long read_cvar(const char *name)
{
    int idx, count;
    MPI_T_cvar_handle h;
    MPI_Count v = -1;
    CHECK_EQ(MPI_T_cvar_get_index(name, &idx), MPI_SUCCESS);
    CHECK_EQ(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count), MPI_SUCCESS);
    CHECK_EQ(count, 1);
    CHECK_EQ(MPI_T_cvar_read(h, &v), MPI_SUCCESS);
    CHECK_EQ(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    return v;
}

static void check_leanmpi_cvars(void)
{
    long long eager = read_cvar("LEANMPI_EAGER_LIMIT");
    const char *env = getenv("LEANMPI_EAGER_LIMIT");
    const char *protocol = getenv("LEANMPI_PROTOCOL");
    if (env && *env) CHECK(eager == strtoll(env, NULL, 0), "EAGER_LIMIT %lld, environment '%s'", eager, env);
    else if (protocol && !strcmp(protocol, "resource-saving"))
        CHECK(eager == 128, "EAGER_LIMIT %lld in the resource-saving protocol, expected 128", eager);
    /* fast-path buffers: no limit by default, 1024 peers when saving resources */
    long long fb_peers = read_cvar("LEANMPI_FASTBOX_PEERS");
    if (!getenv("LEANMPI_FASTBOX_PEERS"))
        CHECK(fb_peers == (protocol && !strcmp(protocol, "resource-saving") ? 1024 : 0),
              "FASTBOX_PEERS %lld under protocol '%s'", fb_peers, protocol ? protocol : "default");
    int idx, count, scope;
    MPI_Datatype dt;
    MPI_T_cvar_handle h;
    CHECK_EQ(MPI_T_cvar_get_index("LEANMPI_EAGER_LIMIT", &idx), MPI_SUCCESS);
    CHECK_EQ(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, &dt, NULL, NULL, NULL, NULL, &scope), MPI_SUCCESS);
    CHECK(dt == MPI_COUNT, "EAGER_LIMIT datatype");
    CHECK_EQ(scope, MPI_T_SCOPE_READONLY);
    CHECK_EQ(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count), MPI_SUCCESS);
    MPI_Count v = 1;
    CHECK_EQ(MPI_T_cvar_write(h, &v), MPI_T_ERR_CVAR_SET_NEVER);
    CHECK_EQ(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    CHECK_EQ(MPI_T_cvar_handle_free(&h), MPI_T_ERR_INVALID_HANDLE);
    /* MEMREPORT is read at MPI_Finalize, so it may change: off here, so the
     * test prints no report whatever the environment says. */
    CHECK_EQ(MPI_T_cvar_get_index("LEANMPI_MEMREPORT", &idx), MPI_SUCCESS);
    CHECK_EQ(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count), MPI_SUCCESS);
    v = 0;
    CHECK_EQ(MPI_T_cvar_write(h, &v), MPI_SUCCESS);
    v = 7;
    CHECK_EQ(MPI_T_cvar_write(h, &v), MPI_T_ERR_INVALID); /* outside [0, 1] */
    CHECK_EQ(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    CHECK_EQ(read_cvar("LEANMPI_MEMREPORT"), 0);
}

static MPI_T_pvar_handle pvar_handle(MPI_T_pvar_session s, const char *name, int cls)
{
    int idx, count;
    MPI_T_pvar_handle h;
    CHECK_EQ(MPI_T_pvar_get_index(name, cls, &idx), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count), MPI_SUCCESS);
    CHECK_EQ(count, 1);
    return h;
}

/* Send N_BYTES to the right neighbour, receive from the left: the sum over
 * transports of bytes sent and received grows by at least N_BYTES. */
static void check_leanmpi_counters(void)
{
    int rank = mt_rank(MPI_COMM_WORLD), size = mt_size(MPI_COMM_WORLD);
    MPI_T_pvar_session s;
    CHECK_EQ(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    MPI_T_pvar_handle hs = pvar_handle(s, "transport_all_am_bytes_sent", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle hr = pvar_handle(s, "transport_all_am_bytes_received", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle hg = pvar_handle(s, "transport_all_rget_bytes", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle hp = pvar_handle(s, "transport_all_pipe_bytes_received", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle hm = pvar_handle(s, "memory_peak_core", MPI_T_PVAR_CLASS_HIGHWATERMARK);
    unsigned long long sent0, recv0, rget0, pipe0, sent1, recv1, rget1, pipe1, peak;
    CHECK_EQ(MPI_T_pvar_read(s, hs, &sent0), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_read(s, hr, &recv0), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_read(s, hg, &rget0), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_read(s, hp, &pipe0), MPI_SUCCESS);
    char *out = calloc(N_BYTES, 1), *in = calloc(N_BYTES, 1);
    CHECK_MPI(MPI_Sendrecv(out, N_BYTES, MPI_BYTE, (rank + 1) % size, 5, in, N_BYTES, MPI_BYTE,
                           (rank + size - 1) % size, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_EQ(MPI_T_pvar_read(s, hs, &sent1), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_read(s, hr, &recv1), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_read(s, hg, &rget1), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_read(s, hp, &pipe1), MPI_SUCCESS);
    /* An eager message carries the data; above the eager limit the sender
     * sends only a header and the data comes by a single copy or through a
     * pipe. */
    if (N_BYTES <= read_cvar("LEANMPI_EAGER_LIMIT"))
        CHECK(sent1 - sent0 >= N_BYTES, "sent grew by %llu", sent1 - sent0);
    CHECK(recv1 - recv0 + rget1 - rget0 + pipe1 - pipe0 >= N_BYTES, "received grew by %llu + %llu + %llu",
          recv1 - recv0, rget1 - rget0, pipe1 - pipe0);
    /* pipes forced and the message above the eager limit: it came through one */
    if (size > 1 && read_cvar("LEANMPI_LARGE_COPY") == 2 && N_BYTES > read_cvar("LEANMPI_EAGER_LIMIT"))
        CHECK(pipe1 - pipe0 >= N_BYTES, "pipe bytes received grew by %llu", pipe1 - pipe0);
    CHECK_EQ(MPI_T_pvar_read(s, hm, &peak), MPI_SUCCESS);
    CHECK(peak > 0, "peak core memory 0");
    CHECK_EQ(MPI_T_pvar_start(s, hs), MPI_T_ERR_PVAR_NO_STARTSTOP);
    CHECK_EQ(MPI_T_pvar_stop(s, hs), MPI_T_ERR_PVAR_NO_STARTSTOP);
    CHECK_EQ(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_reset(s, hs), MPI_T_ERR_PVAR_NO_WRITE);
    CHECK_EQ(MPI_T_pvar_readreset(s, hs, &sent1), MPI_T_ERR_PVAR_NO_WRITE);
    CHECK_EQ(MPI_T_pvar_write(s, hs, &sent1), MPI_T_ERR_PVAR_NO_WRITE);
    /* A handle belongs to its session. */
    MPI_T_pvar_session s2;
    CHECK_EQ(MPI_T_pvar_session_create(&s2), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_read(s2, hs, &sent1), MPI_T_ERR_INVALID_HANDLE);
    CHECK_EQ(MPI_T_pvar_session_free(&s2), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_handle_free(s, &hm), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_read(s, hm, &peak), MPI_T_ERR_INVALID_HANDLE);
    /* Freeing the session frees hs and hr with it. */
    CHECK_EQ(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    free(out);
    free(in);
}
#endif

#ifdef LEANMPI
/* coll_algorithm: bound to a communicator, an item of its enumeration;
 * none before the first collective, then what LEANMPI_BCAST_ALGORITHM
 * (set before MPI_Init) forces and what the table picks for an alltoall. */
static void check_coll_algorithm(void)
{
    int idx, n, value, len;
    char name[128];
    MPI_T_enum et;
    MPI_Datatype dt;
    int cls, bind, ro, cont, atomic, verb, nlen = sizeof name, dlen = 0;
    CHECK_EQ(MPI_T_pvar_get_index("coll_algorithm", MPI_T_PVAR_CLASS_STATE, &idx), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_get_info(idx, name, &nlen, &verb, &cls, &dt, &et, NULL, &dlen, &bind, &ro, &cont, &atomic),
             MPI_SUCCESS);
    CHECK(dt == MPI_INT && bind == MPI_T_BIND_MPI_COMM && et != MPI_T_ENUM_NULL, "coll_algorithm's type and binding");
    len = sizeof name;
    CHECK_EQ(MPI_T_enum_get_info(et, &n, name, &len), MPI_SUCCESS);
    CHECK(n > 20 && strcmp(name, "coll_algorithm") == 0, "enumeration %s of %d items", name, n);
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int count;
    CHECK_EQ(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count), MPI_T_ERR_INVALID_HANDLE);
    CHECK_EQ(MPI_T_pvar_handle_alloc(s, idx, &c, &h, &count), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_read(s, h, &value), MPI_SUCCESS);
    CHECK(value == -1, "no collective yet: %d", value);
    int x = 1;
    MPI_Bcast(&x, 1, MPI_INT, 0, c);
    CHECK_EQ(MPI_T_pvar_read(s, h, &value), MPI_SUCCESS);
    len = sizeof name;
    CHECK_EQ(MPI_T_enum_get_item(et, value + 1, &x, name, &len), MPI_SUCCESS);
    CHECK(x == value && strcmp(name, "bcast:chain") == 0, "bcast ran %s (%d), forced to chain", name, value);
    int size = mt_size(c), *a = calloc((size_t)size, sizeof(int)), *b = calloc((size_t)size, sizeof(int));
    for (int i = 0; i < 2; i++) { /* the second from the kept executor */
        MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, c);
        CHECK_EQ(MPI_T_pvar_read(s, h, &value), MPI_SUCCESS);
        len = sizeof name;
        CHECK_EQ(MPI_T_enum_get_item(et, value + 1, &x, name, &len), MPI_SUCCESS);
        CHECK(strncmp(name, "alltoall:", 9) == 0, "an alltoall ran %s", name);
    }
    free(a);
    free(b);
    CHECK_EQ(MPI_T_enum_get_item(et, n, &x, name, &len), MPI_T_ERR_INVALID_INDEX);
    CHECK_EQ(MPI_T_pvar_handle_free(s, &h), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    MPI_Comm_free(&c);
}
#endif

int main(int argc, char **argv)
{
    int provided, num;
    CHECK_EQ(MPI_T_cvar_get_num(&num), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_EQ(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE, "provided %d", provided);
    /* Before MPI_Init. */
    check_cvars(1);
    check_pvars();
    check_categories();
    check_errors();
#ifdef LEANMPI
    check_leanmpi_cvars();
#endif

#ifdef LEANMPI
    setenv("LEANMPI_BCAST_ALGORITHM", "chain", 1); /* for check_coll_algorithm */
#endif
    MPI_Init(&argc, &argv);
    CHECK_EQ(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS); /* count 2 */
#ifdef LEANMPI
    check_cvars(1);
#else
    check_cvars(0); /* Open MPI 4.1 crashes reading some variables after MPI_Init */
#endif
    check_pvars();
    check_categories();
    check_errors();
#ifdef LEANMPI
    check_leanmpi_cvars();
    check_leanmpi_counters();
    check_coll_algorithm();
#endif
    CHECK_EQ(MPI_T_finalize(), MPI_SUCCESS); /* count 1: still usable */
    mt_pass("MPI_T between MPI_Init and MPI_Finalize");
    MPI_Finalize();

    /* After MPI_Finalize. */
    CHECK_EQ(MPI_T_cvar_get_num(&num), MPI_SUCCESS);
    check_pvars();
    check_categories();
#ifndef OPEN_MPI /* Open MPI 4.1 crashes in the last MPI_T_finalize after MPI_Finalize */
    CHECK_EQ(MPI_T_finalize(), MPI_SUCCESS);
    CHECK_EQ(MPI_T_cvar_get_num(&num), MPI_T_ERR_NOT_INITIALIZED);
#endif
    return 0;
}
