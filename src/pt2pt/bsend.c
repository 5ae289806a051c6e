/* The attached buffer is carved first-fit into blocks, one per message in
 * flight; each block is charged MPI_BSEND_OVERHEAD bytes on top of its data
 * so users who size their buffer by the standard's rule never run short. */
#include "pt2pt/bsend.h"
#include "pt2pt/pt2pt.h"
#include "datatype/datatype.h"
#include "core/lm_error.h"
#include "core/lm_mem.h"
#include "binding/impl_gen.h"
#include <string.h>

typedef struct block {
    struct block *next;   /* sorted by offset */
    size_t offset, size;  /* charged bytes */
    lm_request *send;     /* internal send of the copy */
} block;

static char *buffer;
static size_t buffer_size;
static block *blocks;

void lm_bsend_progress(void)
{
    block **link = &blocks;
    while (*link) {
        block *b = *link;
        if (b->send->complete) {
            *link = b->next;
            lm_request_release(b->send);
            lm_free(LM_MEM_PT2PT, b);
        } else {
            link = &b->next;
        }
    }
}

static block *reserve(size_t need)
{
    size_t at = 0;
    block **link = &blocks;
    for (; *link; link = &(*link)->next) {
        if ((*link)->offset - at >= need) break;
        at = (*link)->offset + (*link)->size;
    }
    if (!*link && buffer_size - at < need) return NULL;
    if (*link && (*link)->offset - at < need) return NULL;
    block *b = lm_malloc(LM_MEM_PT2PT, sizeof *b);
    if (!b) return NULL;
    b->offset = at;
    b->size = need;
    b->send = NULL;
    b->next = *link;
    *link = b;
    return b;
}

static void unreserve(block *b)
{
    for (block **link = &blocks; *link; link = &(*link)->next)
        if (*link == b) {
            *link = b->next;
            break;
        }
    lm_free(LM_MEM_PT2PT, b);
}

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
    block *b = NULL;
    if (dest != MPI_PROC_NULL) {
        /* Blocks keep 16-byte alignment, but the padding is taken out of the
         * MPI_BSEND_OVERHEAD charge (a multiple of 16), never added to it:
         * the standard promises data + MPI_BSEND_OVERHEAD per message is
         * enough. */
        _Static_assert(MPI_BSEND_OVERHEAD % 16 == 0 && MPI_BSEND_OVERHEAD >= 16, "bsend charge keeps alignment");
        size_t need = ((len + 15) & ~(size_t)15) + MPI_BSEND_OVERHEAD - 16;
        b = buffer ? reserve(need) : NULL;
        if (!b)
            return lm_err_comm(comm, MPI_ERR_BUFFER, fname,
                               "attached buffer too small for %zu more bytes (%zu attached)", len, buffer_size);
        if (dense) memcpy(buffer + b->offset, (const char *)buf + (t->predefined ? 0 : t->true_lb), len);
        else lm_typemap_pack(t, buf, count, 0, buffer + b->offset, len);
        lm_request *s;
        int rc = lm_isend_bytes(buffer + b->offset, len, dest, tag, c, c->context_id, &s);
        if (rc != MPI_SUCCESS) {
            unreserve(b);
            return lm_err_comm(comm, rc, fname, "send failed");
        }
        b->send = s;
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

static int attach(void *buf, MPI_Count size)
{
    if (buffer) return lm_err_noobj(MPI_ERR_BUFFER, "MPI_Buffer_attach", "a buffer is already attached");
    if (size < 0) return lm_err_noobj(MPI_ERR_ARG, "MPI_Buffer_attach", "negative size");
    buffer = buf;
    buffer_size = (size_t)size;
    return MPI_SUCCESS;
}

static int detach(void *buffer_addr, MPI_Count *size)
{
    unsigned idle = 0;
    while (blocks) {
        lm_progress_wait(&idle);
        lm_bsend_progress();
    }
    *(void **)buffer_addr = buffer;
    *size = (MPI_Count)buffer_size;
    buffer = NULL;
    buffer_size = 0;
    return MPI_SUCCESS;
}

int impl_MPI_Buffer_attach(void *buf, int size) { return attach(buf, size); }
int impl_MPI_Buffer_attach_c(void *buf, MPI_Count size) { return attach(buf, size); }

int impl_MPI_Buffer_detach(void *buffer_addr, int *size)
{
    MPI_Count s;
    int rc = detach(buffer_addr, &s);
    *size = (int)s;
    return rc;
}

int impl_MPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size) { return detach(buffer_addr, size); }
