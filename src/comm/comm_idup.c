/* The nonblocking duplicates (completed at the call: the agreement of a
 * context id is itself blocking here) and MPI_Comm_get_parent (no dynamic
 * processes: never a parent). */
#include "obj/comm.h"
#include "obj/comm_info.h"
#include "util/lm_error.h"
#include "pt2pt/request.h"
#include "api/impl_gen.h"

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
