/* MPI send and receive calls: argument checks are done by the generated
 * entry points; here the request is built and handed to the engine. The
 * blocking forms keep the request on the stack. */
#include "pt2pt/pt2pt.h"
#include "pt2pt/bsend.h"
#include "datatype/datatype.h"
#include "util/lm_copy.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "util/lm_state.h"
#include "api/impl_gen.h"
#include <string.h>

/* The request's peer, tag and data, for a communicator and type known to
 * be valid. */
static inline void describe_with(lm_request *r, lm_comm *c, lm_datatype *t, const void *buf, MPI_Count count,
                                 MPI_Datatype dt, int peer, int tag)
{
    r->comm = c;
    lm_request_hold_comm(r);
    r->ctx = c->context_id;
    r->peer = peer;
    r->peer_world = peer >= 0 ? lm_comm_world_rank(c, peer) : -1;
    r->match_tag = tag;
    r->count = count;
    r->datatype = dt;
    if (lm_datatype_dense(t)) {
        r->buf = (char *)buf + (t->predefined ? 0 : t->true_lb);
        r->len = (size_t)(count * t->extent);
        r->dtype = NULL;
    } else {
        /* the packed stream; handle requests keep the type alive, since
         * the user may free it while the operation is in flight */
        r->buf = (void *)buf;
        r->len = (size_t)(count * t->size);
        r->dtype = t;
        if (r->obj.handle) t->obj.refcount += !t->predefined;
    }
}

static int describe(lm_request *r, const char *fname, const void *buf, MPI_Count count, MPI_Datatype dt, int peer,
                    int tag, MPI_Comm comm, lm_comm **cp)
{
    lm_comm *c = lm_comm_get(comm);
    lm_datatype *t = lm_datatype_get(dt);
    if (!c) return lm_err_comm(comm, MPI_ERR_COMM, fname, "invalid communicator");
    if (!t) return lm_err_comm(comm, MPI_ERR_TYPE, fname, "invalid datatype");
    describe_with(r, c, t, buf, count, dt, peer, tag);
    *cp = c;
    return MPI_SUCCESS;
}

/* The plain case of a send or receive, seen at a glance (the fast paths
 * below): a live intracommunicator, a rank of it (or MPI_ANY_SOURCE for a
 * receive), a tag in range (or MPI_ANY_TAG for a receive), a committed
 * type, a count >= 0 and a buffer that is not NULL unless empty. NULL for
 * anything else, which the entry point's checks then explain. */
static inline lm_comm *plain_args(const void *buf, MPI_Count count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                                  int recv, lm_datatype **tp)
{
    lm_comm *c = lm_comm_get(comm);
    lm_datatype *t = lm_datatype_get(dt);
    if (!c || !t || !t->committed || c->is_inter || count < 0 || (!buf && count) || buf == MPI_IN_PLACE ||
        lm_world_simulated)
        return NULL;
    if ((unsigned)peer >= (unsigned)c->size && !(recv && peer == MPI_ANY_SOURCE)) return NULL;
    if ((unsigned)tag > LM_TAG_UB && !(recv && tag == MPI_ANY_TAG)) return NULL;
    *tp = t;
    return c;
}

static int finish(lm_request *r, lm_comm *c, const char *fname, MPI_Status *status)
{
    lm_progress_until(&r->complete);
    lm_request_status(r, status);
    if (r->error != MPI_SUCCESS)
        return lm_err_comm(c->obj.handle, r->error, fname, "message from rank %d with tag %d: %lld bytes received",
                           r->source, r->tag, (long long)r->bytes);
    return MPI_SUCCESS;
}

/* A blocking send described on the stack: started and waited for. */
static int send_and_wait(lm_request *r, const char *fname, int dest, MPI_Comm comm)
{
    int rc = lm_send_start(r);
    if (rc == MPI_SUCCESS && !r->complete) lm_progress_until(&r->complete);
    if (rc == MPI_SUCCESS) rc = r->error; /* a queued packet the transport refused */
    if (rc != MPI_SUCCESS) return lm_err_comm(comm, rc, fname, "send to rank %d failed", dest);
    return MPI_SUCCESS;
}

static int blocking_send(const char *fname, int mode, const void *buf, MPI_Count count, MPI_Datatype dt, int dest,
                         int tag, MPI_Comm comm)
{
    if (mode == LM_MODE_BUFFERED) {
        /* buffered: complete as soon as it is copied; no request to hand
         * back (one made here could never be freed) */
        return lm_bsend_start(fname, buf, count, dt, dest, tag, comm, NULL);
    }
    lm_request r;
    lm_zero(&r, sizeof r);
    r.kind = LM_REQ_SEND;
    r.mode = (uint8_t)mode;
    lm_comm *c;
    int rc = describe(&r, fname, buf, count, dt, dest, tag, comm, &c);
    if (rc != MPI_SUCCESS) return rc;
    return send_and_wait(&r, fname, dest, comm);
}

/* A send request started; on failure it never reaches the program. */
static int start_send_request(lm_request *r, const char *fname, int dest, MPI_Comm comm, MPI_Request *request)
{
    *request = r->obj.handle;
    int rc = lm_send_start(r);
    if (rc != MPI_SUCCESS) {
        *request = MPI_REQUEST_NULL;
        lm_request_release(r);
        return lm_err_comm(comm, rc, fname, "send to rank %d failed", dest);
    }
    return MPI_SUCCESS;
}

static int nonblocking_send(const char *fname, int mode, const void *buf, MPI_Count count, MPI_Datatype dt, int dest,
                            int tag, MPI_Comm comm, MPI_Request *request, int persistent)
{
    if (mode == LM_MODE_BUFFERED && !persistent) return lm_bsend_start(fname, buf, count, dt, dest, tag, comm, request);
    lm_request *r = lm_request_new(LM_REQ_SEND);
    if (!r) return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    r->mode = (uint8_t)mode;
    lm_comm *c;
    int rc = describe(r, fname, buf, count, dt, dest, tag, comm, &c);
    if (rc != MPI_SUCCESS) {
        lm_request_release(r);
        return rc;
    }
    if (persistent) {
        *request = r->obj.handle;
        r->persistent = 1;
        r->complete = 1; /* inactive */
        return MPI_SUCCESS;
    }
    return start_send_request(r, fname, dest, comm, request);
}

static int recv_request(const char *fname, void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag,
                        MPI_Comm comm, MPI_Request *request, int persistent)
{
    lm_request *r = lm_request_new(LM_REQ_RECV);
    if (!r) return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    lm_comm *c;
    int rc = describe(r, fname, buf, count, dt, source, tag, comm, &c);
    if (rc != MPI_SUCCESS) {
        lm_request_release(r);
        return rc;
    }
    *request = r->obj.handle;
    if (persistent) {
        r->persistent = 1;
        r->complete = 1;
        return MPI_SUCCESS;
    }
    return lm_recv_start(r);
}

/* ---- fast paths: the plain case, without a second look at the arguments */

/* Dense data that the transport takes at once (lm_send_bytes_now): 1 with
 * *rc set when it was sent, or the transport failed; 0 when the send needs
 * a request. */
static inline int sent_now(const void *buf, int count, const lm_datatype *t, int dest, int tag, lm_comm *c,
                           MPI_Comm comm, const char *fname, int *rc)
{
    if (!lm_datatype_dense(t)) return 0;
    int sent;
    *rc = lm_send_bytes_now((const char *)buf + (t->predefined ? 0 : t->true_lb), (size_t)count * t->extent, dest, tag,
                            c, c->context_id, &sent);
    if (*rc != MPI_SUCCESS) *rc = lm_err_comm(comm, *rc, fname, "send to rank %d failed", dest);
    return *rc != MPI_SUCCESS || sent;
}

int fast_MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, int *rc)
{
    lm_datatype *t;
    lm_comm *c = plain_args(buf, count, dt, dest, tag, comm, 0, &t);
    if (!c) return 0;
    if (sent_now(buf, count, t, dest, tag, c, comm, "MPI_Send", rc)) return 1;
    lm_request r;
    lm_zero(&r, sizeof r);
    r.kind = LM_REQ_SEND;
    describe_with(&r, c, t, buf, count, dt, dest, tag);
    *rc = send_and_wait(&r, "MPI_Send", dest, comm);
    return 1;
}

int fast_MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *request,
                   int *rc)
{
    lm_datatype *t;
    lm_comm *c = plain_args(buf, count, dt, dest, tag, comm, 0, &t);
    if (!c || !request) return 0;
    if (sent_now(buf, count, t, dest, tag, c, comm, "MPI_Isend", rc)) {
        /* complete, and nothing to tell about it later */
        *request = *rc == MPI_SUCCESS ? LM_REQUEST_DONE : MPI_REQUEST_NULL;
        return 1;
    }
    lm_request *r = lm_request_new(LM_REQ_SEND);
    if (!r) return 0; /* the checked path says it */
    describe_with(r, c, t, buf, count, dt, dest, tag);
    *rc = start_send_request(r, "MPI_Isend", dest, comm, request);
    return 1;
}

int fast_MPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *request,
                   int *rc)
{
    lm_datatype *t;
    lm_comm *c = plain_args(buf, count, dt, source, tag, comm, 1, &t);
    if (!c || !request) return 0;
    lm_request *r = lm_request_new(LM_REQ_RECV);
    if (!r) return 0;
    describe_with(r, c, t, buf, count, dt, source, tag);
    *request = r->obj.handle;
    *rc = lm_recv_start(r);
    return 1;
}

#define SEND_FAMILY(NAME, MODE, CT)                                                                         \
    int impl_MPI_##NAME(const void *buf, CT count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) \
    {                                                                                                       \
        return blocking_send("MPI_" #NAME, MODE, buf, count, datatype, dest, tag, comm);                    \
    }
#define ISEND_FAMILY(NAME, MODE, CT, PERSISTENT)                                                                 \
    int impl_MPI_##NAME(const void *buf, CT count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,      \
                        MPI_Request *request)                                                                    \
    {                                                                                                            \
        return nonblocking_send("MPI_" #NAME, MODE, buf, count, datatype, dest, tag, comm, request, PERSISTENT); \
    }

SEND_FAMILY(Send, LM_MODE_STANDARD, int)
SEND_FAMILY(Send_c, LM_MODE_STANDARD, MPI_Count)
SEND_FAMILY(Ssend, LM_MODE_SYNC, int)
SEND_FAMILY(Ssend_c, LM_MODE_SYNC, MPI_Count)
SEND_FAMILY(Rsend, LM_MODE_READY, int)
SEND_FAMILY(Rsend_c, LM_MODE_READY, MPI_Count)
SEND_FAMILY(Bsend, LM_MODE_BUFFERED, int)
SEND_FAMILY(Bsend_c, LM_MODE_BUFFERED, MPI_Count)
ISEND_FAMILY(Isend, LM_MODE_STANDARD, int, 0)
ISEND_FAMILY(Isend_c, LM_MODE_STANDARD, MPI_Count, 0)
ISEND_FAMILY(Issend, LM_MODE_SYNC, int, 0)
ISEND_FAMILY(Issend_c, LM_MODE_SYNC, MPI_Count, 0)
ISEND_FAMILY(Irsend, LM_MODE_READY, int, 0)
ISEND_FAMILY(Irsend_c, LM_MODE_READY, MPI_Count, 0)
ISEND_FAMILY(Ibsend, LM_MODE_BUFFERED, int, 0)
ISEND_FAMILY(Ibsend_c, LM_MODE_BUFFERED, MPI_Count, 0)
ISEND_FAMILY(Send_init, LM_MODE_STANDARD, int, 1)
ISEND_FAMILY(Send_init_c, LM_MODE_STANDARD, MPI_Count, 1)
ISEND_FAMILY(Ssend_init, LM_MODE_SYNC, int, 1)
ISEND_FAMILY(Ssend_init_c, LM_MODE_SYNC, MPI_Count, 1)
ISEND_FAMILY(Rsend_init, LM_MODE_READY, int, 1)
ISEND_FAMILY(Rsend_init_c, LM_MODE_READY, MPI_Count, 1)
ISEND_FAMILY(Bsend_init, LM_MODE_BUFFERED, int, 1)
ISEND_FAMILY(Bsend_init_c, LM_MODE_BUFFERED, MPI_Count, 1)

static int blocking_recv(void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
                         MPI_Status *status)
{
    lm_request r;
    lm_zero(&r, sizeof r);
    r.kind = LM_REQ_RECV;
    lm_comm *c;
    int rc = describe(&r, "MPI_Recv", buf, count, dt, source, tag, comm, &c);
    if (rc != MPI_SUCCESS) return rc;
    lm_recv_start(&r);
    return finish(&r, c, "MPI_Recv", status);
}

int fast_MPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status *status,
                  int *rc)
{
    lm_datatype *t;
    lm_comm *c = plain_args(buf, count, dt, source, tag, comm, 1, &t);
    if (!c) return 0;
    lm_request r;
    lm_zero(&r, sizeof r);
    r.kind = LM_REQ_RECV;
    describe_with(&r, c, t, buf, count, dt, source, tag);
    lm_recv_start(&r);
    *rc = finish(&r, c, "MPI_Recv", status);
    return 1;
}

int impl_MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    return blocking_recv(buf, count, datatype, source, tag, comm, status);
}

int impl_MPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                    MPI_Status *status)
{
    return blocking_recv(buf, count, datatype, source, tag, comm, status);
}

int impl_MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    return recv_request("MPI_Irecv", buf, count, datatype, source, tag, comm, request, 0);
}

int impl_MPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                     MPI_Request *request)
{
    return recv_request("MPI_Irecv_c", buf, count, datatype, source, tag, comm, request, 0);
}

int impl_MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                       MPI_Request *request)
{
    return recv_request("MPI_Recv_init", buf, count, datatype, source, tag, comm, request, 1);
}

int impl_MPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                         MPI_Request *request)
{
    return recv_request("MPI_Recv_init_c", buf, count, datatype, source, tag, comm, request, 1);
}

static int sendrecv(const char *fname, const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag,
                    void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                    MPI_Status *status)
{
    lm_request s, r;
    lm_zero(&s, sizeof s);
    lm_zero(&r, sizeof r);
    s.kind = LM_REQ_SEND;
    r.kind = LM_REQ_RECV;
    lm_comm *c;
    int rc = describe(&r, fname, rbuf, rcount, rtype, source, rtag, comm, &c);
    if (rc == MPI_SUCCESS) rc = describe(&s, fname, sbuf, scount, stype, dest, stag, comm, &c);
    if (rc != MPI_SUCCESS) return rc;
    lm_recv_start(&r);
    rc = lm_send_start(&s);
    if (rc == MPI_SUCCESS) {
        lm_progress_until(&s.complete);
        rc = s.error;
    }
    if (rc != MPI_SUCCESS) {
        /* the receive lives on this stack frame: it must leave the queue */
        if (!r.complete && !lm_recv_cancel(&r)) lm_progress_until(&r.complete); /* matched already */
        return lm_err_comm(comm, rc, fname, "send to rank %d failed", dest);
    }
    return finish(&r, c, fname, status);
}

int impl_MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return sendrecv("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                    recvtag, comm, status);
}

int impl_MPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                        MPI_Comm comm, MPI_Status *status)
{
    return sendrecv("MPI_Sendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                    recvtag, comm, status);
}

/* The send half of a replace form goes from a copy of buf, since the receive
 * half overwrites buf: a plain copy for dense data, else the packed stream,
 * sent as bytes. On success *copy (NULL when empty) is the caller's to free
 * and *scount / *stype describe it. */
static int replace_copy(const char *fname, void *buf, MPI_Count count, MPI_Datatype dt, MPI_Comm comm, void **copy,
                        MPI_Count *scount, MPI_Datatype *stype)
{
    lm_datatype *t = lm_datatype_get(dt);
    int dense = t && lm_datatype_dense(t);
    size_t len = t ? (size_t)(count * (dense ? t->extent : t->size)) : 0;
    *copy = NULL;
    *scount = dense ? count : (MPI_Count)len;
    *stype = dense ? dt : MPI_BYTE;
    if (!len) return MPI_SUCCESS;
    *copy = lm_malloc(LM_MEM_PT2PT, len);
    if (!*copy) return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    if (dense) memcpy(*copy, buf, len);
    else lm_typemap_pack(t, buf, count, 0, *copy, len);
    return MPI_SUCCESS;
}

static int sendrecv_replace(const char *fname, void *buf, MPI_Count count, MPI_Datatype dt, int dest, int stag,
                            int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    void *copy;
    MPI_Count scount;
    MPI_Datatype stype;
    int rc = replace_copy(fname, buf, count, dt, comm, &copy, &scount, &stype);
    if (rc != MPI_SUCCESS) return rc;
    rc = sendrecv(fname, copy, scount, stype, dest, stag, buf, count, dt, source, rtag, comm, status);
    lm_free(LM_MEM_PT2PT, copy);
    return rc;
}

int impl_MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                              int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_replace("MPI_Sendrecv_replace", buf, count, datatype, dest, sendtag, source, recvtag, comm, status);
}

int impl_MPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,
                                int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_replace("MPI_Sendrecv_replace_c", buf, count, datatype, dest, sendtag, source, recvtag, comm,
                            status);
}

/* Nonblocking sendrecv: two internal requests, released as they complete,
 * and the user's request, which completes with the second of them and takes
 * the receive's status. `copy` (the replace form's send data) is freed then. */
static int isendrecv(const char *fname, const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag,
                     void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, void *copy,
                     MPI_Request *request)
{
    lm_request *p = lm_request_new(LM_REQ_RECV), *s = lm_request_new(LM_REQ_SEND), *r = lm_request_new(LM_REQ_RECV);
    lm_comm *c;
    int rc = p && s && r ? MPI_SUCCESS : lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    if (rc == MPI_SUCCESS) rc = describe(r, fname, rbuf, rcount, rtype, source, rtag, comm, &c);
    if (rc == MPI_SUCCESS) rc = describe(s, fname, sbuf, scount, stype, dest, stag, comm, &c);
    if (rc != MPI_SUCCESS) {
        if (p) lm_request_release(p);
        if (s) lm_request_release(s);
        if (r) lm_request_release(r);
        lm_free(LM_MEM_PT2PT, copy);
        return rc;
    }
    p->comm = c;
    p->pack_tmp = copy;
    p->pending = 2;
    s->parent = r->parent = p;
    s->user_freed = r->user_freed = 1;
    *request = p->obj.handle;
    lm_recv_start(r);
    rc = lm_send_start(s);
    if (rc == MPI_SUCCESS) return MPI_SUCCESS;
    /* the send never started: withdraw the receive, finish both halves and
     * the request the program will not get */
    s->parent = r->parent = NULL;
    lm_recv_cancel(r); /* released now, or as it lands if it has matched already */
    lm_request_complete(s);
    p->pack_tmp = NULL;
    lm_free(LM_MEM_PT2PT, copy);
    lm_request_release(p);
    *request = MPI_REQUEST_NULL;
    return lm_err_comm(comm, rc, fname, "send to rank %d failed", dest);
}

int impl_MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                       MPI_Request *request)
{
    return isendrecv("MPI_Isendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                     recvtag, comm, NULL, request);
}

int impl_MPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                         MPI_Comm comm, MPI_Request *request)
{
    return isendrecv("MPI_Isendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                     source, recvtag, comm, NULL, request);
}

static int isendrecv_replace(const char *fname, void *buf, MPI_Count count, MPI_Datatype dt, int dest, int stag,
                             int source, int rtag, MPI_Comm comm, MPI_Request *request)
{
    void *copy;
    MPI_Count scount;
    MPI_Datatype stype;
    int rc = replace_copy(fname, buf, count, dt, comm, &copy, &scount, &stype);
    if (rc != MPI_SUCCESS) return rc;
    /* the copy lives until the user's request completes */
    return isendrecv(fname, copy, scount, stype, dest, stag, buf, count, dt, source, rtag, comm, copy, request);
}

int impl_MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                               int recvtag, MPI_Comm comm, MPI_Request *request)
{
    return isendrecv_replace("MPI_Isendrecv_replace", buf, count, datatype, dest, sendtag, source, recvtag, comm,
                             request);
}

int impl_MPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,
                                 int recvtag, MPI_Comm comm, MPI_Request *request)
{
    return isendrecv_replace("MPI_Isendrecv_replace_c", buf, count, datatype, dest, sendtag, source, recvtag, comm,
                             request);
}
