/* Communicator hints: an info object the communicator owns. */
#include "obj/comm_info.h"
#include "obj/info.h"
#include "util/lm_error.h"
#include "api/impl_gen.h"

int lm_comm_info_set(lm_comm *c, MPI_Info info)
{
    int nkeys, rc;
    if (info == MPI_INFO_NULL) return MPI_SUCCESS;
    if (!c->info && (rc = impl_MPI_Info_create(&c->info))) {
        c->info = 0;
        return rc;
    }
    impl_MPI_Info_get_nkeys(info, &nkeys);
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1];
        impl_MPI_Info_get_nthkey(info, i, key);
        const char *val = lm_info_value(lm_info_get(info), key);
        if (val && (rc = impl_MPI_Info_set(c->info, key, val))) return rc;
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
