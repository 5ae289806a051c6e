/* Partitioned communication over the point-to-point engine.
 *
 * Each MPI_Start of a partitioned pair moves the whole buffer as one
 * message: the send side posts it when the last partition has been marked
 * ready, the receive side posts one receive at MPI_Start, and every
 * partition has arrived once that receive is complete. The standard allows
 * this (MPI_Parrived may report a partition late, never early), and it keeps
 * flow control, rendezvous and derived types in the engine.
 *
 * Partitioned messages must match only partitioned receives, and in the
 * order in which the pairs were initialized, whatever the order of the
 * MPI_Pready calls. So they travel on a context of their own: the
 * communicator's point-to-point context with LM_PART_CTX_FLAG set and, in
 * the bits above it, how many partitioned sends (receives) this process had
 * initialized before on the same communicator, peer and tag (counted on the
 * communicator, so they start again with a new one that reuses its context
 * id). Both sides count the same initializations, so the n-th send init
 * meets the n-th receive init. */
#include "pt2pt/partitioned.h"
#include "pt2pt/pt2pt.h"
#include "datatype/datatype.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <string.h>

#define LM_PART_CTX_FLAG (1 << 16) /* above every communicator context id */
#define LM_PART_SEQ_SHIFT 17
#define LM_PART_SEQ_MASK 0x3fff /* keeps the context a positive int32 */

/* The communicator's counters (lm_comm.part_seq): a count of entries, then
 * the entries. Few peers and tags are ever used with partitioned
 * communication, so a list searched in order is enough. */
typedef struct part_counter {
    int peer, tag, is_send;
    unsigned n;
} part_counter;

typedef struct part_counters {
    size_t n, cap;
    part_counter e[];
} part_counters;

static int next_seq(lm_comm *c, int peer, int tag, int is_send, unsigned *seq)
{
    part_counters *t = c->part_seq;
    for (size_t i = 0; t && i < t->n; i++) {
        part_counter *p = &t->e[i];
        if (p->peer == peer && p->tag == tag && p->is_send == is_send) {
            *seq = p->n++;
            return MPI_SUCCESS;
        }
    }
    if (!t || t->n == t->cap) {
        size_t cap = t ? 2 * t->cap : 4;
        part_counters *n = lm_realloc(LM_MEM_PT2PT, t, sizeof *n + cap * sizeof n->e[0]);
        if (!n) return MPI_ERR_NO_MEM;
        if (!t) n->n = 0;
        n->cap = cap;
        c->part_seq = t = n;
    }
    t->e[t->n++] = (part_counter){peer, tag, is_send, 1};
    *seq = 0;
    return MPI_SUCCESS;
}

void lm_part_release(lm_request *r)
{
    lm_free(LM_MEM_PT2PT, r->part);
    r->part = NULL;
}

static int part_init(const char *fname, int kind, const void *buf, int partitions, MPI_Count count, MPI_Datatype dt,
                     int peer, int tag, MPI_Comm comm, MPI_Request *request)
{
    lm_comm *c = lm_comm_get(comm);
    lm_datatype *t = lm_datatype_get(dt);
    if (!c) return lm_err_comm(comm, MPI_ERR_COMM, fname, "invalid communicator");
    if (!t) return lm_err_comm(comm, MPI_ERR_TYPE, fname, "invalid datatype");
    if (partitions < 0) return lm_err_comm(comm, MPI_ERR_ARG, fname, "negative number of partitions %d", partitions);
    if (count > 0 && partitions > 0 && count > (MPI_Count)(((size_t)-1 >> 1) / (size_t)partitions))
        return lm_err_comm(comm, MPI_ERR_COUNT, fname, "partitions x count overflows");
    MPI_Count total = (MPI_Count)partitions * count;

    lm_request *r = lm_request_new(kind);
    if (!r) return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    r->part = lm_calloc(LM_MEM_PT2PT, 1, sizeof *r->part + (size_t)partitions);
    unsigned seq = 0;
    int rc = r->part ? next_seq(c, peer, tag, kind == LM_REQ_SEND, &seq) : MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) {
        lm_request_release(r);
        return lm_err_comm(comm, rc, fname, "out of memory");
    }
    r->part->partitions = partitions;
    r->mode = LM_MODE_STANDARD;
    r->comm = c;
    lm_request_hold_comm(r);
    r->ctx = c->context_id | LM_PART_CTX_FLAG | (int)((seq & LM_PART_SEQ_MASK) << LM_PART_SEQ_SHIFT);
    r->peer = peer;
    r->peer_world = peer >= 0 ? lm_comm_world_rank(c, peer) : -1;
    r->match_tag = tag;
    r->count = total;
    r->datatype = dt;
    if (lm_datatype_dense(t)) {
        r->buf = (char *)buf + (t->predefined ? 0 : t->true_lb);
        r->len = (size_t)(total * t->extent);
    } else {
        r->buf = (void *)buf;
        r->len = (size_t)(total * t->size);
        r->dtype = t;
        t->obj.refcount += !t->predefined; /* released with the request */
    }
    r->persistent = 1;
    r->complete = 1; /* inactive */
    *request = r->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return part_init("MPI_Psend_init", LM_REQ_SEND, buf, partitions, count, datatype, dest, tag, comm, request);
}

int impl_MPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return part_init("MPI_Precv_init", LM_REQ_RECV, buf, partitions, count, datatype, source, tag, comm, request);
}

/* The counters go with the communicator. */
static void comm_destroyed(lm_comm *c)
{
    lm_free(LM_MEM_PT2PT, c->part_seq);
    c->part_seq = NULL;
}

int lm_partitioned_init(void) { return lm_comm_on_destroy(comm_destroyed); }

/* The send leaves once every partition is ready. */
static int send_if_ready(lm_request *r, const char *fname)
{
    if (r->part->nready < r->part->partitions) return MPI_SUCCESS;
    int rc = lm_send_start(r);
    return rc == MPI_SUCCESS ? rc : lm_err_comm(r->comm->obj.handle, rc, fname, "send failed");
}

int lm_part_start(lm_request *r, const char *fname)
{
    if (r->kind == LM_REQ_RECV) return lm_recv_start(r);
    memset(r->part->ready, 0, (size_t)r->part->partitions);
    r->part->nready = 0;
    r->complete = 0;
    r->error = MPI_SUCCESS;
    return send_if_ready(r, fname);
}

/* The partitioned request behind a handle, of the wanted side and active. */
static int active_part(MPI_Request request, int kind, const char *fname, lm_request **out)
{
    lm_request *r = lm_request_get(request);
    if (!r || !r->part || r->kind != kind)
        return lm_err_noobj(MPI_ERR_REQUEST, fname, "not a partitioned %s request",
                            kind == LM_REQ_SEND ? "send" : "receive");
    *out = r;
    return MPI_SUCCESS;
}

static int mark_ready(lm_request *r, int partition, const char *fname)
{
    lm_partitioned *p = r->part;
    if (partition < 0 || partition >= p->partitions)
        return lm_err_comm(r->comm->obj.handle, MPI_ERR_ARG, fname, "partition %d out of range [0, %d)", partition,
                           p->partitions);
    if (p->ready[partition])
        return lm_err_comm(r->comm->obj.handle, MPI_ERR_ARG, fname, "partition %d is already ready", partition);
    p->ready[partition] = 1;
    p->nready++;
    return MPI_SUCCESS;
}

static int check_active(lm_request *r, const char *fname)
{
    if (!r->active)
        return lm_err_comm(r->comm->obj.handle, MPI_ERR_REQUEST, fname, "the request is not active (no MPI_Start)");
    return MPI_SUCCESS;
}

int impl_MPI_Pready(int partition, MPI_Request request)
{
    lm_request *r = NULL;
    int rc = active_part(request, LM_REQ_SEND, "MPI_Pready", &r);
    if (rc == MPI_SUCCESS) rc = check_active(r, "MPI_Pready");
    if (rc == MPI_SUCCESS) rc = mark_ready(r, partition, "MPI_Pready");
    return rc == MPI_SUCCESS ? send_if_ready(r, "MPI_Pready") : rc;
}

int impl_MPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    lm_request *r = NULL;
    int rc = active_part(request, LM_REQ_SEND, "MPI_Pready_range", &r);
    if (rc == MPI_SUCCESS) rc = check_active(r, "MPI_Pready_range");
    if (rc != MPI_SUCCESS) return rc;
    if (partition_low > partition_high || partition_low < 0 || partition_high >= r->part->partitions)
        return lm_err_comm(r->comm->obj.handle, MPI_ERR_ARG, "MPI_Pready_range",
                           "partition range [%d, %d] not within [0, %d)", partition_low, partition_high,
                           r->part->partitions);
    for (int i = partition_low; i <= partition_high; i++) {
        rc = mark_ready(r, i, "MPI_Pready_range");
        if (rc != MPI_SUCCESS) return rc;
    }
    return send_if_ready(r, "MPI_Pready_range");
}

int impl_MPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    lm_request *r = NULL;
    int rc = active_part(request, LM_REQ_SEND, "MPI_Pready_list", &r);
    if (rc == MPI_SUCCESS) rc = check_active(r, "MPI_Pready_list");
    if (rc != MPI_SUCCESS) return rc;
    if (length < 0)
        return lm_err_comm(r->comm->obj.handle, MPI_ERR_ARG, "MPI_Pready_list", "negative length %d", length);
    if (length > 0 && !array_of_partitions)
        return lm_err_comm(r->comm->obj.handle, MPI_ERR_ARG, "MPI_Pready_list", "array_of_partitions is NULL");
    for (int i = 0; i < length; i++) {
        rc = mark_ready(r, array_of_partitions[i], "MPI_Pready_list");
        if (rc != MPI_SUCCESS) return rc;
    }
    return send_if_ready(r, "MPI_Pready_list");
}

int impl_MPI_Parrived(MPI_Request request, int partition, int *flag)
{
    lm_request *r = NULL;
    int rc = active_part(request, LM_REQ_RECV, "MPI_Parrived", &r);
    if (rc != MPI_SUCCESS) return rc;
    if (partition < 0 || partition >= r->part->partitions)
        return lm_err_comm(r->comm->obj.handle, MPI_ERR_ARG, "MPI_Parrived", "partition %d out of range [0, %d)",
                           partition, r->part->partitions);
    /* an inactive request has nothing outstanding (MPI-4.1 section 4.2.3) */
    if (r->active && !r->complete) lm_progress();
    *flag = !r->active || r->complete;
    return MPI_SUCCESS;
}
