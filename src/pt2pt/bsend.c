/* Buffered sends. An attached buffer (the process's, or a communicator's,
 * which a buffered send on that communicator uses first) is carved
 * first-fit into blocks, one per message in flight; each block is charged
 * MPI_BSEND_OVERHEAD bytes on top of its data so users who size their
 * buffer by the standard's rule never run short. MPI_BUFFER_AUTOMATIC
 * gives each message memory of its own instead. Flushes wait for a
 * buffer's blocks to drain; the nonblocking ones complete from the
 * progress engine. */
#include "pt2pt/bsend.h"
#include "pt2pt/pt2pt.h"
#include "obj/comm.h"
#include "datatype/datatype.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <string.h>

typedef struct block {
    struct block *next;  /* sorted by offset */
    size_t offset, size; /* charged bytes */
    char *own;           /* MPI_BUFFER_AUTOMATIC: the block's own memory */
    lm_request *send;    /* internal send of the copy */
} block;

/* A buffer attached to the process, a communicator or a session. */
struct lm_bsend_pool {
    char *buffer;
    size_t buffer_size;
    int attached;
    int automatic; /* MPI_BUFFER_AUTOMATIC: memory per message */
    block *blocks;
    lm_request **flushes; /* MPI_*_iflush_buffer requests waiting for the blocks */
    int nflushes, flushes_cap;
    struct lm_bsend_pool *next_busy;
    int busy;
};

static lm_bsend_pool process_pool;
/* Pools with messages in flight or flushes waiting; the progress engine
 * advances them while this is non-NULL. */
static lm_bsend_pool *busy;
static int progress_slot = -1; /* on while a pool has messages in flight or flushes waiting */

static void mark_busy(lm_bsend_pool *p)
{
    if (p->busy) return;
    p->busy = 1;
    p->next_busy = busy;
    busy = p;
    lm_progress_hook_set_active(progress_slot, 1);
}

static void reap(lm_bsend_pool *p)
{
    block **link = &p->blocks;
    while (*link) {
        block *b = *link;
        if (b->send->complete) {
            *link = b->next;
            lm_request_release(b->send);
            lm_free(LM_MEM_PT2PT, b->own);
            lm_free(LM_MEM_PT2PT, b);
        } else {
            link = &b->next;
        }
    }
    if (p->blocks) return;
    for (int i = 0; i < p->nflushes; i++) lm_request_complete(p->flushes[i]);
    p->nflushes = 0;
}

int lm_bsend_progress(void)
{
    int n = 0;
    lm_bsend_pool **link = &busy;
    while (*link) {
        lm_bsend_pool *p = *link;
        reap(p);
        if (!p->blocks && !p->nflushes) {
            *link = p->next_busy;
            p->busy = 0;
            n++;
        } else {
            link = &p->next_busy;
        }
    }
    lm_progress_hook_set_active(progress_slot, busy != NULL);
    return n;
}

static block *reserve(lm_bsend_pool *p, size_t need)
{
    size_t at = 0;
    block **link = &p->blocks;
    char *own = NULL;
    if (p->automatic) {
        /* any amount: the block brings its own memory, kept in order at the end */
        if (!(own = lm_malloc(LM_MEM_PT2PT, need ? need : 1))) return NULL;
        while (*link) link = &(*link)->next;
    } else {
        for (; *link; link = &(*link)->next) {
            if ((*link)->offset - at >= need) break;
            at = (*link)->offset + (*link)->size;
        }
        if (!*link && p->buffer_size - at < need) return NULL;
        if (*link && (*link)->offset - at < need) return NULL;
    }
    block *b = lm_malloc(LM_MEM_PT2PT, sizeof *b);
    if (!b) {
        lm_free(LM_MEM_PT2PT, own);
        return NULL;
    }
    b->offset = at;
    b->size = need;
    b->own = own;
    b->send = NULL;
    b->next = *link;
    *link = b;
    return b;
}

static void unreserve(lm_bsend_pool *p, block *b)
{
    for (block **link = &p->blocks; *link; link = &(*link)->next)
        if (*link == b) {
            *link = b->next;
            break;
        }
    lm_free(LM_MEM_PT2PT, b->own);
    lm_free(LM_MEM_PT2PT, b);
}

/* The buffer a buffered send on c uses: the communicator's, else the
 * process's. */
static lm_bsend_pool *pool_for(lm_comm *c) { return c->bsend && c->bsend->attached ? c->bsend : &process_pool; }

int lm_bsend_start(const char *fname, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    lm_comm *c = lm_comm_get(comm);
    lm_datatype *t = lm_datatype_get(dt);
    if (!c || !t) return lm_err_comm(comm, MPI_ERR_ARG, fname, "invalid communicator or datatype");
    /* a type with gaps is packed into the block */
    int dense = lm_datatype_dense(t);
    size_t len = (size_t)(count * (dense ? t->extent : t->size));
    lm_bsend_progress();
    lm_bsend_pool *p = pool_for(c);
    block *b = NULL;
    if (dest != MPI_PROC_NULL) {
        /* Blocks keep 16-byte alignment, but the padding is taken out of the
         * MPI_BSEND_OVERHEAD charge (a multiple of 16), never added to it:
         * the standard promises data + MPI_BSEND_OVERHEAD per message is
         * enough. */
        _Static_assert(MPI_BSEND_OVERHEAD % 16 == 0 && MPI_BSEND_OVERHEAD >= 16, "bsend charge keeps alignment");
        size_t need = ((len + 15) & ~(size_t)15) + MPI_BSEND_OVERHEAD - 16;
        b = p->attached ? reserve(p, need) : NULL;
        if (!b)
            return lm_err_comm(comm, MPI_ERR_BUFFER, fname,
                               "attached buffer too small for %zu more bytes (%zu attached)", len, p->buffer_size);
        char *at = b->own ? b->own : p->buffer + b->offset;
        if (dense) memcpy(at, (const char *)buf + (t->predefined ? 0 : t->true_lb), len);
        else lm_typemap_pack(t, buf, count, 0, at, len);
        lm_request *s;
        int rc = lm_isend_bytes(at, len, dest, tag, c, c->context_id, &s);
        if (rc != MPI_SUCCESS) {
            unreserve(p, b);
            return lm_err_comm(comm, rc, fname, "send failed");
        }
        b->send = s;
        mark_busy(p);
    }
    if (request) {
        lm_request *r = lm_request_new(LM_REQ_SEND);
        if (!r) return lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
        r->comm = c;
        r->complete = 1;
        *request = r->obj.handle;
    }
    return MPI_SUCCESS;
}

static int attach(lm_bsend_pool *p, void *buf, MPI_Count size, const char *fname)
{
    if (p->attached) return lm_err_noobj(MPI_ERR_BUFFER, fname, "a buffer is already attached");
    int automatic = buf == MPI_BUFFER_AUTOMATIC;
    if (size < 0 && !automatic) return lm_err_noobj(MPI_ERR_ARG, fname, "negative size");
    p->attached = 1;
    p->automatic = automatic;
    p->buffer = automatic ? NULL : buf;
    p->buffer_size = automatic ? 0 : (size_t)size;
    return MPI_SUCCESS;
}

/* Wait until every message buffered in p has left. */
static void drain(lm_bsend_pool *p)
{
    unsigned idle = 0;
    lm_bsend_progress();
    while (p->blocks) {
        lm_progress_wait(&idle);
        lm_bsend_progress();
    }
}

static int detach(lm_bsend_pool *p, void *buffer_addr, MPI_Count *size)
{
    drain(p);
    *(void **)buffer_addr = p->automatic ? MPI_BUFFER_AUTOMATIC : p->buffer;
    *size = (MPI_Count)p->buffer_size;
    p->buffer = NULL;
    p->buffer_size = 0;
    p->attached = p->automatic = 0;
    return MPI_SUCCESS;
}

static int detach_int(lm_bsend_pool *p, void *buffer_addr, int *size)
{
    MPI_Count s = 0;
    int rc = detach(p, buffer_addr, &s);
    *size = (int)s;
    return rc;
}

static int iflush(lm_bsend_pool *p, MPI_Request *request, const char *fname)
{
    lm_request *r = lm_request_new(LM_REQ_SEND);
    if (!r) return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
    lm_bsend_progress();
    if (p && p->blocks) {
        if (p->nflushes == p->flushes_cap) {
            int cap = p->flushes_cap ? 2 * p->flushes_cap : 4;
            lm_request **n = lm_realloc(LM_MEM_PT2PT, p->flushes, (size_t)cap * sizeof *n);
            if (!n) {
                lm_request_release(r);
                return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
            }
            p->flushes = n;
            p->flushes_cap = cap;
        }
        p->flushes[p->nflushes++] = r;
        mark_busy(p);
    } else {
        r->complete = 1;
    }
    *request = r->obj.handle;
    return MPI_SUCCESS;
}

static void comm_freed(lm_comm *c) { lm_bsend_pool_free(&c->bsend); }

int lm_bsend_init(void)
{
    progress_slot = lm_progress_hook_register(lm_bsend_progress);
    if (progress_slot < 0) return MPI_ERR_INTERN;
    return lm_comm_on_free(comm_freed);
}

void lm_bsend_pool_free(lm_bsend_pool **pool)
{
    lm_bsend_pool *p = *pool;
    if (!p) return;
    drain(p);
    lm_bsend_progress(); /* completes waiting flushes and leaves the busy list */
    lm_free(LM_MEM_PT2PT, p->flushes);
    lm_free(LM_MEM_PT2PT, p);
    *pool = NULL;
}

static lm_bsend_pool *comm_pool(MPI_Comm comm, const char *fname, int create, int *rc)
{
    lm_comm *c = lm_comm_get(comm);
    *rc = MPI_SUCCESS;
    if (!c) {
        *rc = lm_err_comm(comm, MPI_ERR_COMM, fname, "invalid communicator");
        return NULL;
    }
    if (!c->bsend && create && !(c->bsend = lm_calloc(LM_MEM_PT2PT, 1, sizeof *c->bsend)))
        *rc = lm_err_comm(comm, MPI_ERR_NO_MEM, fname, "out of memory");
    return c->bsend;
}

/* process */
int impl_MPI_Buffer_attach(void *buf, int size) { return attach(&process_pool, buf, size, "MPI_Buffer_attach"); }
int impl_MPI_Buffer_attach_c(void *buf, MPI_Count size)
{
    return attach(&process_pool, buf, size, "MPI_Buffer_attach_c");
}
int impl_MPI_Buffer_detach(void *buffer_addr, int *size) { return detach_int(&process_pool, buffer_addr, size); }
int impl_MPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size) { return detach(&process_pool, buffer_addr, size); }
int impl_MPI_Buffer_flush(void)
{
    drain(&process_pool);
    return MPI_SUCCESS;
}
int impl_MPI_Buffer_iflush(MPI_Request *request) { return iflush(&process_pool, request, "MPI_Buffer_iflush"); }

/* communicator */
static int comm_attach(MPI_Comm comm, void *buf, MPI_Count size, const char *fname)
{
    int rc;
    lm_bsend_pool *p = comm_pool(comm, fname, 1, &rc);
    return p ? attach(p, buf, size, fname) : rc;
}
int impl_MPI_Comm_attach_buffer(MPI_Comm comm, void *buf, int size)
{
    return comm_attach(comm, buf, size, "MPI_Comm_attach_buffer");
}
int impl_MPI_Comm_attach_buffer_c(MPI_Comm comm, void *buf, MPI_Count size)
{
    return comm_attach(comm, buf, size, "MPI_Comm_attach_buffer_c");
}
static int comm_detach(MPI_Comm comm, void *buffer_addr, MPI_Count *size, const char *fname)
{
    int rc;
    lm_bsend_pool *p = comm_pool(comm, fname, 0, &rc);
    if (rc) return rc;
    if (!p || !p->attached) return lm_err_comm(comm, MPI_ERR_BUFFER, fname, "no buffer is attached");
    return detach(p, buffer_addr, size);
}
int impl_MPI_Comm_detach_buffer(MPI_Comm comm, void *buffer_addr, int *size)
{
    MPI_Count s = 0;
    int rc = comm_detach(comm, buffer_addr, &s, "MPI_Comm_detach_buffer");
    if (!rc) *size = (int)s;
    return rc;
}
int impl_MPI_Comm_detach_buffer_c(MPI_Comm comm, void *buffer_addr, MPI_Count *size)
{
    return comm_detach(comm, buffer_addr, size, "MPI_Comm_detach_buffer_c");
}
int impl_MPI_Comm_flush_buffer(MPI_Comm comm)
{
    int rc;
    lm_bsend_pool *p = comm_pool(comm, "MPI_Comm_flush_buffer", 0, &rc);
    if (p) drain(p);
    return rc;
}
int impl_MPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request)
{
    int rc;
    lm_bsend_pool *p = comm_pool(comm, "MPI_Comm_iflush_buffer", 0, &rc);
    return rc ? rc : iflush(p, request, "MPI_Comm_iflush_buffer");
}

/* session: its own buffer, attached and flushed like a communicator's */
static lm_bsend_pool **(*session_slot_of)(MPI_Session);

void lm_bsend_set_session_slots(lm_bsend_pool **(*slot_of)(MPI_Session)) { session_slot_of = slot_of; }

static lm_bsend_pool *session_pool(MPI_Session session, const char *fname, int create, int *rc)
{
    lm_bsend_pool **slot = session_slot_of ? session_slot_of(session) : NULL;
    *rc = MPI_SUCCESS;
    if (!slot) {
        *rc = lm_err_session(session, MPI_ERR_SESSION, fname, "invalid session");
        return NULL;
    }
    if (!*slot && create && !(*slot = lm_calloc(LM_MEM_PT2PT, 1, sizeof **slot)))
        *rc = lm_err_session(session, MPI_ERR_NO_MEM, fname, "out of memory");
    return *slot;
}
static int session_attach(MPI_Session session, void *buf, MPI_Count size, const char *fname)
{
    int rc;
    lm_bsend_pool *p = session_pool(session, fname, 1, &rc);
    return p ? attach(p, buf, size, fname) : rc;
}
int impl_MPI_Session_attach_buffer(MPI_Session session, void *buf, int size)
{
    return session_attach(session, buf, size, "MPI_Session_attach_buffer");
}
int impl_MPI_Session_attach_buffer_c(MPI_Session session, void *buf, MPI_Count size)
{
    return session_attach(session, buf, size, "MPI_Session_attach_buffer_c");
}
static int session_detach(MPI_Session session, void *buffer_addr, MPI_Count *size, const char *fname)
{
    int rc;
    lm_bsend_pool *p = session_pool(session, fname, 0, &rc);
    if (rc) return rc;
    if (!p || !p->attached) return lm_err_session(session, MPI_ERR_BUFFER, fname, "no buffer is attached");
    return detach(p, buffer_addr, size);
}
int impl_MPI_Session_detach_buffer(MPI_Session session, void *buffer_addr, int *size)
{
    MPI_Count s = 0;
    int rc = session_detach(session, buffer_addr, &s, "MPI_Session_detach_buffer");
    if (!rc) *size = (int)s;
    return rc;
}
int impl_MPI_Session_detach_buffer_c(MPI_Session session, void *buffer_addr, MPI_Count *size)
{
    return session_detach(session, buffer_addr, size, "MPI_Session_detach_buffer_c");
}
int impl_MPI_Session_flush_buffer(MPI_Session session)
{
    int rc;
    lm_bsend_pool *p = session_pool(session, "MPI_Session_flush_buffer", 0, &rc);
    if (p) drain(p);
    return rc;
}
int impl_MPI_Session_iflush_buffer(MPI_Session session, MPI_Request *request)
{
    int rc;
    lm_bsend_pool *p = session_pool(session, "MPI_Session_iflush_buffer", 0, &rc);
    return rc ? rc : iflush(p, request, "MPI_Session_iflush_buffer");
}
