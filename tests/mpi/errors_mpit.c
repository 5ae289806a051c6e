/* LMTEST-LEANMPI-ONLY */
/* MPI_T misuse: every call returns its MPI_T_ERR_* code (the tool interface
 * never invokes an error handler): invalid indices for every kind of
 * variable, category, enumeration, event and source; handles that are null,
 * freed or from another session; sessions used after free; calls before
 * MPI_T_init_thread and after the last MPI_T_finalize. Other libraries answer
 * several of these with MPI_T_ERR_INVALID or crash, hence LeanMPI only. */
#include "mpitest.h"

static void indices(void)
{
    int ncvar, npvar, ncat, nev = -1, nsrc = -1, idx[4], n;
    CHECK_EQ(MPI_T_cvar_get_num(&ncvar), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_get_num(&npvar), MPI_SUCCESS);
    CHECK_EQ(MPI_T_category_get_num(&ncat), MPI_SUCCESS);
    CHECK_EQ(MPI_T_event_get_num(&nev), MPI_SUCCESS);
    CHECK_EQ(MPI_T_source_get_num(&nsrc), MPI_SUCCESS);
    CHECK(ncvar > 0 && npvar > 0 && ncat > 0, "variables %d/%d, categories %d", ncvar, npvar, ncat);
    /* categories: past the end and negative */
    const int badcat[2] = {ncat, -1};
    for (int i = 0; i < 2; i++) {
        int c = badcat[i];
        CHECK_EQ(MPI_T_category_get_cvars(c, 4, idx), MPI_T_ERR_INVALID_INDEX);
        CHECK_EQ(MPI_T_category_get_pvars(c, 4, idx), MPI_T_ERR_INVALID_INDEX);
        CHECK_EQ(MPI_T_category_get_categories(c, 4, idx), MPI_T_ERR_INVALID_INDEX);
        CHECK_EQ(MPI_T_category_get_events(c, 4, idx), MPI_T_ERR_INVALID_INDEX);
        CHECK_EQ(MPI_T_category_get_num_events(c, &n), MPI_T_ERR_INVALID_INDEX);
    }
    /* variables: negative indices (past the end is in mpi_t.c) */
    MPI_T_cvar_handle ch;
    CHECK_EQ(MPI_T_cvar_handle_alloc(-1, NULL, &ch, &n), MPI_T_ERR_INVALID_INDEX);
    MPI_T_pvar_session s;
    MPI_T_pvar_handle ph;
    CHECK_EQ(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_handle_alloc(s, -1, NULL, &ph, &n), MPI_T_ERR_INVALID_INDEX);
    CHECK_EQ(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    /* no events and no sources: every index is invalid */
    CHECK_EQ(nev, 0);
    CHECK_EQ(nsrc, 0);
    char name[64];
    int len = (int)sizeof name;
    MPI_T_event_registration reg;
    CHECK_EQ(MPI_T_event_get_info(0, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             MPI_T_ERR_INVALID_INDEX);
    CHECK_EQ(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
    CHECK_EQ(MPI_T_event_get_index("no_such_event", &n), MPI_T_ERR_INVALID_NAME);
    MPI_Count ts;
    CHECK_EQ(MPI_T_source_get_timestamp(0, &ts), MPI_T_ERR_INVALID_INDEX);
    CHECK_EQ(MPI_T_source_get_info(0, name, &len, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    /* no enumerations: the null enum is no handle */
    CHECK_EQ(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &n, name, &len), MPI_T_ERR_INVALID_HANDLE);
    CHECK_EQ(MPI_T_enum_get_item(MPI_T_ENUM_NULL, 0, &n, name, &len), MPI_T_ERR_INVALID_HANDLE);
}

static void handles(void)
{
    int n, pvar = -1;
    /* control variable 0 (bound to no object) and a read-only performance variable */
    MPI_T_cvar_handle ch, stale;
    CHECK_EQ(MPI_T_cvar_handle_alloc(0, NULL, &ch, &n), MPI_SUCCESS);
    stale = ch;
    CHECK_EQ(MPI_T_cvar_handle_free(&ch), MPI_SUCCESS);
    CHECK(ch == MPI_T_CVAR_HANDLE_NULL, "cvar handle not reset by free");
    unsigned long long v[4];
    CHECK_EQ(MPI_T_cvar_read(stale, v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_EQ(MPI_T_cvar_write(stale, v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_EQ(MPI_T_cvar_write(MPI_T_CVAR_HANDLE_NULL, v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_EQ(MPI_T_cvar_handle_free(&stale), MPI_T_ERR_INVALID_HANDLE);

    CHECK_EQ(MPI_T_pvar_get_index("memory_peak_core", MPI_T_PVAR_CLASS_HIGHWATERMARK, &pvar), MPI_SUCCESS);
    MPI_T_pvar_session s, other, stale_s;
    MPI_T_pvar_handle h, stale_h;
    CHECK_EQ(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_session_create(&other), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_handle_alloc(s, pvar, NULL, &h, &n), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_read(s, h, v), MPI_SUCCESS);
    /* a handle of another session, the null handle, MPI_T_PVAR_ALL_HANDLES where one is needed */
    CHECK_EQ(MPI_T_pvar_read(other, h, v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_EQ(MPI_T_pvar_handle_free(other, &h), MPI_T_ERR_INVALID_HANDLE);
    CHECK_EQ(MPI_T_pvar_read(s, MPI_T_PVAR_HANDLE_NULL, v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_EQ(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, v), MPI_T_ERR_INVALID_HANDLE);
    /* a freed handle */
    stale_h = h;
    CHECK_EQ(MPI_T_pvar_handle_free(s, &h), MPI_SUCCESS);
    CHECK(h == MPI_T_PVAR_HANDLE_NULL, "pvar handle not reset by free");
    CHECK_EQ(MPI_T_pvar_read(s, stale_h, v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_EQ(MPI_T_pvar_handle_free(s, &stale_h), MPI_T_ERR_INVALID_HANDLE);
    /* a freed session and the null session */
    stale_s = s;
    CHECK_EQ(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_handle_alloc(stale_s, pvar, NULL, &h, &n), MPI_T_ERR_INVALID_SESSION);
    CHECK_EQ(MPI_T_pvar_start(stale_s, MPI_T_PVAR_ALL_HANDLES), MPI_T_ERR_INVALID_SESSION);
    CHECK_EQ(MPI_T_pvar_read(stale_s, stale_h, v), MPI_T_ERR_INVALID_SESSION);
    CHECK_EQ(MPI_T_pvar_session_free(&stale_s), MPI_T_ERR_INVALID_SESSION);
    CHECK_EQ(MPI_T_pvar_handle_alloc(MPI_T_PVAR_SESSION_NULL, pvar, NULL, &h, &n), MPI_T_ERR_INVALID_SESSION);
    CHECK_EQ(MPI_T_pvar_session_free(&other), MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    int provided, n;
    MPI_T_pvar_session s;
    /* before MPI_T_init_thread */
    CHECK_EQ(MPI_T_pvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_EQ(MPI_T_category_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_EQ(MPI_T_pvar_session_create(&s), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_EQ(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_EQ(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    indices();
    handles();
    MPI_Init(&argc, &argv);
    indices();
    handles();
    int rank = mt_rank(MPI_COMM_WORLD);
    MPI_Finalize();
    /* the last MPI_T_finalize ends the interface: handles kept past it are invalid */
    MPI_T_cvar_handle ch;
    CHECK_EQ(MPI_T_cvar_handle_alloc(0, NULL, &ch, &n), MPI_SUCCESS);
    CHECK_EQ(MPI_T_finalize(), MPI_SUCCESS);
    unsigned long long v[4];
    CHECK_EQ(MPI_T_cvar_read(ch, v), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_EQ(MPI_T_pvar_session_create(&s), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_EQ(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_EQ(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    CHECK_EQ(MPI_T_cvar_read(ch, v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_EQ(MPI_T_finalize(), MPI_SUCCESS);
    /* printed here: mt_pass needs MPI, finalized by now */
    if (rank == 0) {
        printf("PASS errors_mpit: invalid indices, handles and sessions, use outside MPI_T_init/finalize\n");
        fflush(stdout);
    }
    return 0;
}
