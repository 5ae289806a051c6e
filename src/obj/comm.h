/* Communicators. A communicator is a group (compact, R4), a context id pair
 * (point-to-point and collective traffic never match each other), this
 * process's rank, an error handler, and optional name/attributes. */
#ifndef LM_COMM_H
#define LM_COMM_H
#include "mpi.h"
#include "util/lm_handle.h"
#include "obj/group.h"

/* Context ids every process reserves from the start (comm/context_id.c
 * hands out the others). */
#define LM_CONTEXT_WORLD 0
#define LM_CONTEXT_SELF 2
/* Over the world ranks, for agreements that have no parent communicator
 * (MPI_Comm_create_from_group). */
#define LM_CONTEXT_GROUP_AGREEMENT 4
/* A communicator whose id is still being agreed (MPI_Comm_idup): outside
 * every mask, so nothing can match it and nothing is released for it. */
#define LM_CONTEXT_PENDING 0xfffe

/* Largest tag; the value of the MPI_TAG_UB attribute. */
#define LM_TAG_UB 1073741823

typedef struct lm_comm {
    lm_object obj;
    uint16_t context_id; /* pt2pt matching context; collectives use context_id + 1 */
    int rank;            /* my rank in the (local) group */
    int size;            /* local group size */
    int is_inter;
    lm_group *group;        /* local group */
    lm_group *remote_group; /* intercommunicators only */
    MPI_Errhandler errhandler;
    char name[MPI_MAX_OBJECT_NAME];
    struct lm_attr_list *attrs;
    struct lm_topo *topo;       /* process topology (comm/topo.h), NULL for none */
    uint32_t coll_seq;          /* collective sequence number (tags internal collectives) */
    uint32_t inter_agree_seq;   /* intercommunicators: agreements across both groups started on
                                   it, the same count on every member (tags its leaders' traffic) */
    struct lm_comm *local_comm; /* intercommunicators only: a hidden intracommunicator over the
                                   local group, for collectives and agreements (comm/intercomm.h) */
    MPI_Info info;              /* hints (comm/comm_info.h), 0 for none */
    /* partitioned-communication initializations per peer and tag (one
     * lm_malloc block owned by pt2pt/partitioned.c), freed with the
     * communicator; NULL until the first one */
    void *part_seq;
    /* the buffer attached with MPI_Comm_attach_buffer (pt2pt/bsend.c),
     * NULL until the first one */
    struct lm_bsend_pool *bsend;
    /* node shared-memory mailboxes for collectives (coll/coll_shm.h), NULL
     * until the first blocking collective sets them up, if it can */
    struct lm_coll_shm *coll_shm;
    int coll_shm_tried;
    /* the executor of the last blocking collective, kept for a repeat of
     * the same call (coll/coll_api.c); it holds the communicator until
     * MPI_Comm_free gives it back */
    struct lm_coll_hot *coll_hot;
    /* ranks per node when its ranks come in node blocks across hosts
     * (hierarchical collectives, coll/coll_api.c): 0 not known yet, -1 not so */
    int coll_ppn;
    /* 1 + the index in lm_coll_algs of the algorithm the last collective
     * started on it runs, 0 before the first (MPI_T's coll_algorithm) */
    int coll_alg;
    /* operations in flight that use it (handle requests, collective
     * schedules); MPI_Comm_free while some are pending only hides it, and
     * the last one to finish destroys it (MPI-4.1 section 7.4.3) */
    int pending;
    int freed;
} lm_comm;

/* The communicator for a handle, or NULL if not a valid live communicator
 * (MPI_COMM_NULL included; a freed one with operations still pending too). */
lm_comm *lm_comm_get(MPI_Comm comm);
/* World rank of comm-rank r (remote group for intercommunicators). */
static inline int lm_comm_world_rank(const lm_comm *c, int r)
{
    return lm_group_world_rank(c->is_inter ? c->remote_group : c->group, r);
}
/* Size of the group a rank argument refers to (remote group for intercomms). */
static inline int lm_comm_peer_size(const lm_comm *c) { return c->is_inter ? lm_group_size(c->remote_group) : c->size; }

/* An operation in flight holds c; dropping the last hold of a freed
 * communicator destroys it. */
void lm_comm_hold(lm_comm *c);
void lm_comm_drop(lm_comm *c);

/* In a simulated job (mpirun --simulate-world-size): does c reach ranks
 * that do not run? Collectives over it cannot complete. */
int lm_comm_has_simulated(const lm_comm *c);

/* A new intracommunicator over g (its reference passes to the communicator)
 * on context id, inheriting parent's error handler; NULL when out of memory. */
lm_comm *lm_comm_new_intra(lm_group *g, uint16_t id, lm_comm *parent);

/* The communicator for a handle, or NULL with *rc set to the error recorded
 * (MPI_ERR_COMM, naming fname). */
lm_comm *lm_comm_checked(MPI_Comm comm, const char *fname, int *rc);

/* Layers above hang state on communicators (bsend pools, collective
 * mailboxes and kept executors, context ids, partitioned sequences) and
 * register here to free it: free hooks run at MPI_Comm_free, destroy hooks
 * when the last operation in flight has let go. Hooks run newest first.
 * MPI_SUCCESS, or MPI_ERR_INTERN when the table is full. */
typedef void (*lm_comm_hook)(lm_comm *c);
int lm_comm_on_free(lm_comm_hook fn);
int lm_comm_on_destroy(lm_comm_hook fn);

int lm_comm_init_builtin(void); /* MPI_COMM_WORLD, MPI_COMM_SELF */
/* At finalize, before the layers above stop: their hooks run on the two
 * predefined communicators. */
void lm_comm_release_predefined(void);
void lm_comm_finalize(void);

#endif
