/* Small self-checking helpers shared by the MPI program tests.
 *
 * Every failed check prints "FAIL file:line [rank R] what" to stderr and
 * ends the whole job with MPI_Abort(MPI_COMM_WORLD, 1), so a failure on one
 * rank can never leave the others hanging.  Only standard MPI is used, so the
 * same programs run unchanged against other MPI implementations. */
#ifndef LEANMPI_TESTS_MPITEST_H
#define LEANMPI_TESTS_MPITEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int mt_world_rank(void)
{
    int init = 0, fin = 0, r = -1;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin) MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static inline void mt_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    char msg[1024];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL %s:%d [rank %d] %s\n", file, line, mt_world_rank(), msg);
    fflush(stderr);
    fflush(stdout);
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin) MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* CHECK(cond, "fmt", ...): fails with the condition text and the message. */
#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            char mt_m_[768];                                                    \
            snprintf(mt_m_, sizeof mt_m_, __VA_ARGS__);                         \
            mt_fail(__FILE__, __LINE__, "check '%s' failed: %s", #cond, mt_m_); \
        }                                                                       \
    } while (0)

/* CHECK_EQ(a, b): integer equality, both values printed. */
#define CHECK_EQ(a, b)                                                                                                \
    do {                                                                                                              \
        long long mt_a_ = (long long)(a), mt_b_ = (long long)(b);                                                     \
        if (mt_a_ != mt_b_) mt_fail(__FILE__, __LINE__, "'%s' == %lld, expected '%s' == %lld", #a, mt_a_, #b, mt_b_); \
    } while (0)

static inline const char *mt_errstr(int code)
{
    static char s[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    s[0] = '\0';
    if (MPI_Error_string(code, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "(no error string)");
    return s;
}

/* CHECK_MPI(call): the call must return MPI_SUCCESS. */
#define CHECK_MPI(call)                                                                           \
    do {                                                                                          \
        int mt_rc_ = (call);                                                                      \
        if (mt_rc_ != MPI_SUCCESS)                                                                \
            mt_fail(__FILE__, __LINE__, "%s returned %d (%s)", #call, mt_rc_, mt_errstr(mt_rc_)); \
    } while (0)

/* CHECK_ERRCLASS(rc, cls): rc is an error code whose class is cls. */
#define CHECK_ERRCLASS(rc, cls)                                                                                      \
    do {                                                                                                             \
        int mt_rc_ = (rc), mt_cl_ = -1;                                                                              \
        if (mt_rc_ == MPI_SUCCESS) mt_fail(__FILE__, __LINE__, "expected error class %s, got MPI_SUCCESS", #cls);    \
        MPI_Error_class(mt_rc_, &mt_cl_);                                                                            \
        if (mt_cl_ != (cls))                                                                                         \
            mt_fail(__FILE__, __LINE__, "expected error class %s (%d), got class %d (%s)", #cls, (int)(cls), mt_cl_, \
                    mt_errstr(mt_rc_));                                                                              \
    } while (0)

static inline int mt_rank(MPI_Comm c)
{
    int r;
    MPI_Comm_rank(c, &r);
    return r;
}
static inline int mt_size(MPI_Comm c)
{
    int s;
    MPI_Comm_size(c, &s);
    return s;
}

/* Errors return their class instead of ending the job: on MPI_COMM_WORLD,
 * and on MPI_COMM_SELF, where errors on an invalid or null handle (which have
 * no object of their own) are raised (MPI-4.1 section 9.3). */
static inline void mt_errors_return(void)
{
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
}

/* Rank 0 of COMM_WORLD reports a passed part of a test. */
static inline void mt_pass(const char *what)
{
    if (mt_world_rank() == 0) {
        printf("PASS %s\n", what);
        fflush(stdout);
    }
}

/* For tests that need more ranks than were started: report and finish. */
static inline int mt_skip_unless(int min_procs, const char *what)
{
    int size = mt_size(MPI_COMM_WORLD);
    if (size >= min_procs) return 0;
    if (mt_world_rank() == 0) {
        printf("SKIP %s (needs %d processes, have %d)\n", what, min_procs, size);
        fflush(stdout);
    }
    return 1;
}

/* A time budget for polling loops so that no test can spin forever. */
#define MT_POLL_LIMIT_S 60.0

/* The value of the MPI_T performance variable named want (one of
 * LeanMPI's process-wide counters, no object bound), or ~0 when there is
 * none by that name. */
static inline unsigned long long mt_read_pvar(const char *want)
{
    int n, idx = -1, provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_get_num(&n);
    for (int i = 0; i < n && idx < 0; i++) {
        char name[128], desc[512];
        int nl = sizeof name, dl = sizeof desc, verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum et;
        MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &et, desc, &dl, &bind, &ro, &cont, &atomic);
        if (!strcmp(name, want)) idx = i;
    }
    unsigned long long v = ~0ull;
    if (idx >= 0) {
        MPI_T_pvar_session s;
        MPI_T_pvar_handle h;
        int count;
        MPI_T_pvar_session_create(&s);
        MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count);
        MPI_T_pvar_read(s, h, &v);
        MPI_T_pvar_handle_free(s, &h);
        MPI_T_pvar_session_free(&s);
    }
    MPI_T_finalize();
    return v;
}

#endif
