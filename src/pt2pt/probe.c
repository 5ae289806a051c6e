/* Probe and matched probe. A matched message (MPI_Mprobe) is taken off the
 * unexpected queue and held by a message handle until MPI_Mrecv. */
#include "pt2pt/pt2pt.h"
#include "datatype/datatype.h"
#include "util/lm_error.h"
#include "api/impl_gen.h"
#include <string.h>

#define MESSAGE_NO_PROC_INDEX 0

typedef struct lm_message {
    lm_object obj;
    struct lm_unexpected *u;
    lm_comm *comm;
} lm_message;

static int iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    lm_comm *c = lm_comm_get(comm);
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        lm_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, status ? status->MPI_ERROR : 0, 0, 0);
        return MPI_SUCCESS;
    }
    lm_iprobe(source, tag, c, c->context_id, flag, status);
    if (!*flag && lm_progress()) lm_iprobe(source, tag, c, c->context_id, flag, status);
    return MPI_SUCCESS;
}

int impl_MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    return iprobe(source, tag, comm, flag, status);
}

int impl_MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    int flag = 0;
    lm_comm *c = lm_comm_get(comm);
    if (source == MPI_PROC_NULL) return iprobe(source, tag, comm, &flag, status);
    unsigned idle = 0;
    for (;;) {
        lm_iprobe(source, tag, c, c->context_id, &flag, status);
        if (flag) return MPI_SUCCESS;
        lm_progress_wait(&idle);
    }
}

static int improbe(const char *fname, int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                   MPI_Status *status, int blocking)
{
    lm_comm *c = lm_comm_get(comm);
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        lm_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, status ? status->MPI_ERROR : 0, 0, 0);
        return MPI_SUCCESS;
    }
    unsigned idle = 0;
    for (;;) {
        struct lm_unexpected *u = lm_mprobe_take(source, tag, c, c->context_id, status);
        if (!u) {
            if (blocking) {
                lm_progress_wait(&idle);
                continue;
            }
            lm_progress();
            u = lm_mprobe_take(source, tag, c, c->context_id, status);
            if (!u) {
                *flag = 0;
                return MPI_SUCCESS;
            }
        }
        lm_message *m = lm_object_alloc(LM_KIND_MESSAGE, sizeof *m);
        if (!m) return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
        m->u = u;
        m->comm = c;
        *message = m->obj.handle;
        *flag = 1;
        return MPI_SUCCESS;
    }
}

int impl_MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    return improbe("MPI_Improbe", source, tag, comm, flag, message, status, 0);
}

int impl_MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    int flag;
    return improbe("MPI_Mprobe", source, tag, comm, &flag, message, status, 1);
}

static int mrecv(const char *fname, void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *message,
                 MPI_Request *request, MPI_Status *status)
{
    lm_datatype *t = lm_datatype_get(dt);
    if (*message == MPI_MESSAGE_NO_PROC) {
        *message = MPI_MESSAGE_NULL;
        if (request) {
            lm_request *r = lm_request_new(LM_REQ_RECV);
            if (!r) return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
            r->source = MPI_PROC_NULL;
            r->tag = MPI_ANY_TAG;
            r->complete = 1;
            *request = r->obj.handle;
        } else {
            lm_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, status ? status->MPI_ERROR : 0, 0, 0);
        }
        return MPI_SUCCESS;
    }
    lm_message *m = lm_object_lookup(*message, LM_KIND_MESSAGE);
    if (!m) return lm_err_noobj(MPI_ERR_REQUEST, fname, "invalid message handle");
    lm_request stack_req, *r = &stack_req;
    if (request) {
        r = lm_request_new(LM_REQ_RECV);
        if (!r) return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
    } else {
        memset(r, 0, sizeof *r);
        r->kind = LM_REQ_RECV;
    }
    r->comm = m->comm;
    r->ctx = m->comm->context_id;
    r->count = count;
    r->datatype = dt;
    if (lm_datatype_dense(t)) {
        r->buf = (char *)buf + (t->predefined ? 0 : t->true_lb);
        r->len = (size_t)(count * t->extent);
    } else {
        /* unpacked from the packed stream, as in send_recv.c's describe */
        r->buf = buf;
        r->len = (size_t)(count * t->size);
        r->dtype = t;
        if (r->obj.handle) t->obj.refcount += !t->predefined;
    }
    struct lm_unexpected *u = m->u;
    lm_comm *c = m->comm;
    lm_object_free(m);
    *message = MPI_MESSAGE_NULL;
    lm_mrecv_start(r, u);
    if (request) {
        *request = r->obj.handle;
        return MPI_SUCCESS;
    }
    lm_progress_until(&r->complete);
    lm_request_status(r, status);
    if (r->error != MPI_SUCCESS) return lm_err_comm(c->obj.handle, r->error, fname, "receive failed");
    return MPI_SUCCESS;
}

int impl_MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status)
{
    return mrecv("MPI_Mrecv", buf, count, datatype, message, NULL, status);
}

int impl_MPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status)
{
    return mrecv("MPI_Mrecv_c", buf, count, datatype, message, NULL, status);
}

int impl_MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request)
{
    return mrecv("MPI_Imrecv", buf, count, datatype, message, request, MPI_STATUS_IGNORE);
}

int impl_MPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request)
{
    return mrecv("MPI_Imrecv_c", buf, count, datatype, message, request, MPI_STATUS_IGNORE);
}
