#include "pt2pt/request.h"
#include "pt2pt/partitioned.h"
#include "util/lm_mem.h"
#include "datatype/datatype.h"
#include <string.h>

lm_request lm_request_done = {.kind = LM_REQ_SEND, .complete = 1};

lm_request *lm_request_new(int kind)
{
    lm_request *r = lm_object_alloc_sized(LM_KIND_REQUEST, sizeof *r);
    if (r) r->kind = (uint8_t)kind;
    return r;
}

void lm_request_release_parts(lm_request *r)
{
    /* handle requests hold a reference on a type with gaps (describe) */
    if (r->dtype) lm_datatype_release(r->dtype);
    if (r->holds_comm) lm_comm_drop(r->comm);
    if (r->ext_free) r->ext_free(r);
    if (r->part) lm_part_release(r);
}

void lm_request_complete(lm_request *r)
{
    if (r->pack_tmp) {
        lm_free(LM_MEM_PT2PT, r->pack_tmp);
        r->pack_tmp = NULL;
    }
    lm_request *parent = r->parent;
    if (parent) {
        /* the receive half gives the status; the first error is kept */
        if (r->kind == LM_REQ_RECV) {
            parent->source = r->source;
            parent->tag = r->tag;
            parent->bytes = r->bytes;
        }
        if (r->error != MPI_SUCCESS && parent->error == MPI_SUCCESS) parent->error = r->error;
    }
    r->complete = 1;
    if (r->user_freed && !r->persistent) lm_request_release(r);
    if (parent && --parent->pending == 0) lm_request_complete(parent);
}

void lm_status_set(MPI_Status *st, int source, int tag, int error, MPI_Count bytes, int cancelled)
{
    if (st == MPI_STATUS_IGNORE) return;
    st->MPI_SOURCE = source;
    st->MPI_TAG = tag;
    st->MPI_ERROR = error;
    st->count_lo = (int)(bytes & 0xffffffff);
    st->count_hi_and_cancelled = (int)((bytes >> 32) & 0x7fffffff) | (cancelled ? (int)0x80000000u : 0);
}

void lm_request_status(const lm_request *r, MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE) return;
    /* MPI_ERROR is left alone: only the multiple-completion calls set it,
     * when they return MPI_ERR_IN_STATUS. */
    int error = st->MPI_ERROR;
    if (r->kind == LM_REQ_SEND) lm_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, error, 0, r->cancelled);
    else lm_status_set(st, r->source, r->tag, error, r->bytes, r->cancelled);
}
