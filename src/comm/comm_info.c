/* Communicator hints, the nonblocking duplicates (completed at the call: the
 * agreement of a context id is itself blocking here) and MPI_Comm_get_parent
 * (no dynamic processes: never a parent). */
#include "comm/comm_info.h"
#include "core/info.h"
#include "core/lm_error.h"
#include "pt2pt/request.h"
#include "binding/impl_gen.h"

/* Without this, a failure of the internal info calls would be raised on
 * MPI_COMM_SELF's handler with their names; callers raise their own. */
static int quiet(int rc) { return rc == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_NO_MEM; }

int lm_comm_info_set(lm_comm *c, MPI_Info info)
{
    int nkeys, rc;
    if (info == MPI_INFO_NULL) return MPI_SUCCESS;
    if (!c->info && (rc = quiet(impl_MPI_Info_create(&c->info)))) {
        c->info = 0;
        return rc;
    }
    impl_MPI_Info_get_nkeys(info, &nkeys);
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1];
        impl_MPI_Info_get_nthkey(info, i, key);
        const char *val = lm_info_value(lm_info_get(info), key);
        if (val && (rc = quiet(impl_MPI_Info_set(c->info, key, val)))) return rc;
    }
    return MPI_SUCCESS;
}

void lm_comm_info_free(lm_comm *c)
{
    if (c->info) impl_MPI_Info_free(&c->info);
    c->info = 0;
}

int impl_MPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    lm_comm *c = lm_comm_get(comm);
    if (!c) return lm_err_comm(comm, MPI_ERR_COMM, "MPI_Comm_set_info", "invalid communicator");
    int rc = lm_comm_info_set(c, info);
    return rc ? lm_err_comm(comm, rc, "MPI_Comm_set_info", "out of memory") : MPI_SUCCESS;
}

int impl_MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    lm_comm *c = lm_comm_get(comm);
    if (!c) return lm_err_comm(comm, MPI_ERR_COMM, "MPI_Comm_get_info", "invalid communicator");
    int rc = c->info ? impl_MPI_Info_dup(c->info, info_used) : impl_MPI_Info_create(info_used);
    return rc ? lm_err_comm(comm, MPI_ERR_NO_MEM, "MPI_Comm_get_info", "out of memory") : MPI_SUCCESS;
}

/* A request that is complete from the start, with an empty status. */
static int completed_request(MPI_Comm comm, const char *fname, MPI_Request *request)
{
    lm_request *r = lm_request_new(LM_REQ_COLL);
    if (!r) return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    r->source = MPI_ANY_SOURCE;
    r->tag = MPI_ANY_TAG;
    lm_request_complete(r);
    *request = r->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    int rc = impl_MPI_Comm_dup(comm, newcomm);
    if (rc) return rc;
    rc = completed_request(comm, "MPI_Comm_idup", request);
    if (rc) impl_MPI_Comm_free(newcomm);
    return rc;
}

int impl_MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    int rc = impl_MPI_Comm_dup_with_info(comm, info, newcomm);
    if (rc) return rc;
    rc = completed_request(comm, "MPI_Comm_idup_with_info", request);
    if (rc) impl_MPI_Comm_free(newcomm);
    return rc;
}

int impl_MPI_Comm_get_parent(MPI_Comm *parent)
{
    *parent = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
