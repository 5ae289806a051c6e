/* Communicator constructors from groups (MPI_Comm_create, collective over
 * the parent, also on intercommunicators; MPI_Comm_create_group, collective
 * over the group only) and the split by node (MPI_Comm_split_type). */
#include "obj/comm.h"
#include "comm/context_id.h"
#include "comm/intercomm.h"
#include "util/lm_error.h"
#include "util/lm_state.h"
#include "boot/boot.h"
#include "api/impl_gen.h"
#include <string.h>

static int refuse_inter(MPI_Comm comm, const char *fname)
{
    return lm_err_comm(comm, MPI_ERR_COMM, fname, "comm must be an intracommunicator");
}

/* Every member of g must belong to the parent: the new communicator's
 * traffic and its context id agreement go through the parent's processes. */
static int is_subgroup(const lm_group *g, const lm_comm *p)
{
    for (int i = 0; i < g->size; i++)
        if (lm_group_rank_of(p->group, lm_group_world_rank(g, i)) == MPI_UNDEFINED) return 0;
    return 1;
}

static int finish(MPI_Comm comm, lm_group *g, uint16_t id, lm_comm *p, MPI_Comm *newcomm, const char *fname)
{
    lm_group_retain(g);
    lm_comm *c = lm_comm_new_intra(g, id, p);
    if (!c) {
        lm_group_release(g);
        lm_context_id_release(id);
        return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    }
    *newcomm = c->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    const char *fname = "MPI_Comm_create";
    lm_comm *p = lm_comm_get(comm);
    if (!p) return lm_err_comm(comm, MPI_ERR_COMM, fname, "invalid communicator");
    /* an invalid group here still takes part in the agreement, so that the
     * other processes fail too instead of waiting */
    lm_group *g = lm_group_get(group);
    if (!g) return lm_context_id_abstain(p, lm_err_comm(comm, MPI_ERR_GROUP, fname, "invalid group"));
    if (!is_subgroup(g, p))
        return lm_context_id_abstain(p, lm_err_comm(comm, MPI_ERR_GROUP, fname, "group is not a subgroup of comm's"));
    if (p->is_inter) {
        /* each side passes a subgroup of its own group: the split by
         * membership, ordered by rank in the group */
        int in = g->my_rank != MPI_UNDEFINED;
        lm_comm *c;
        int rc = lm_intercomm_split(p, in ? 0 : MPI_UNDEFINED, in ? g->my_rank : 0, &c);
        if (rc) return lm_err_comm(comm, rc, fname, "intercommunicator creation failed");
        *newcomm = c ? c->obj.handle : MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    /* One id for every caller: processes passing different (disjoint)
     * groups, as MPI allows, can share it since their traffic never meets. */
    uint16_t id;
    int bad, rc = lm_context_id_allocate_checked(p, MPI_SUCCESS, &id, &bad);
    if (rc) return lm_err_comm(comm, rc, fname, "context id agreement failed");
    if (bad) return lm_context_id_peer_invalid(comm, bad, fname);
    if (g->my_rank == MPI_UNDEFINED) {
        lm_context_id_release(id);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    return finish(comm, g, id, p, newcomm, fname);
}

int impl_MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    const char *fname = "MPI_Comm_create_group";
    lm_comm *p = lm_comm_get(comm);
    if (!p) return lm_err_comm(comm, MPI_ERR_COMM, fname, "invalid communicator");
    if (p->is_inter) return refuse_inter(comm, fname);
    lm_group *g = lm_group_get(group);
    if (!g) return lm_err_comm(comm, MPI_ERR_GROUP, fname, "invalid group");
    /* a process outside the group takes no part (MPI-4.1 section 7.4.2) */
    if (g->my_rank == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    if (!is_subgroup(g, p)) return lm_err_comm(comm, MPI_ERR_GROUP, fname, "group is not a subgroup of comm's");
    uint16_t id;
    int rc = lm_context_id_allocate_group(p, g, tag, &id);
    if (rc) return lm_err_comm(comm, rc, fname, "context id agreement failed");
    return finish(comm, g, id, p, newcomm, fname);
}

/* The color of this process's node: the lowest rank of p on it (the
 * lowest world rank on an intercommunicator, which both sides name alike),
 * so that every process on a node computes the same one without
 * communicating. */
static int node_color(const lm_comm *p)
{
    int me = lm_world_rank();
    if (p->is_inter) {
        for (int w = 0; w < me; w++)
            if (lm_boot_is_local(w)) return w;
        return me;
    }
    for (int i = 0; i < p->rank; i++) {
        int w = lm_comm_world_rank(p, i);
        if (w == me || lm_boot_is_local(w)) return i;
    }
    return p->rank;
}

#define HW_RESOURCE_KEY "mpi_hw_resource_type"
#define HW_SHARED_MEMORY "mpi_shared_memory"

/* Does info ask for the one hardware resource this library splits by? */
static int asks_shared_memory(MPI_Info info)
{
    if (info == MPI_INFO_NULL) return 0;
    char value[sizeof HW_SHARED_MEMORY + 1];
    int len = (int)sizeof value, flag = 0;
    if (impl_MPI_Info_get_string(info, HW_RESOURCE_KEY, &len, value, &flag) != MPI_SUCCESS || !flag) return 0;
    return strcmp(value, HW_SHARED_MEMORY) == 0;
}

int impl_MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    const char *fname = "MPI_Comm_split_type";
    lm_comm *p = lm_comm_get(comm);
    if (!p) return lm_err_comm(comm, MPI_ERR_COMM, fname, "invalid communicator");
    int color;
    if (split_type == MPI_UNDEFINED) {
        color = MPI_UNDEFINED;
    } else if (split_type == MPI_COMM_TYPE_SHARED) {
        color = node_color(p);
    } else if (split_type == MPI_COMM_TYPE_HW_GUIDED || split_type == MPI_COMM_TYPE_RESOURCE_GUIDED) {
        /* the node's shared memory is the only resource known; any other
         * request (or none) gives MPI_COMM_NULL */
        color = asks_shared_memory(info) ? node_color(p) : MPI_UNDEFINED;
    } else if (split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
        /* the node, when it is a strict subset of comm; the size test
         * agrees everywhere, since a node smaller than comm means every
         * node is */
        int rc = impl_MPI_Comm_split(comm, node_color(p), key, newcomm);
        if (rc) return rc;
        lm_comm *n = lm_comm_get(*newcomm);
        if (n && n->size < p->size) {
            return info == MPI_INFO_NULL ? MPI_SUCCESS : impl_MPI_Info_set(info, HW_RESOURCE_KEY, HW_SHARED_MEMORY);
        }
        return impl_MPI_Comm_free(newcomm);
    } else {
        return lm_context_id_abstain(p, lm_err_comm(comm, MPI_ERR_ARG, fname, "invalid split_type %d", split_type));
    }
    return impl_MPI_Comm_split(comm, color, key, newcomm);
}
