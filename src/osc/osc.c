/* Transfers to DIRECT and CMA targets, and the atomics. Both reaches
 * complete inside the call: a DIRECT transfer is memcpy on the mapping, a
 * CMA one a single process_vm_writev/readv per block (the transport's
 * rput/rget). MSG targets go to osc_msg.c, NET ones to osc_net.c. */
#include "osc/osc.h"
#include "osc/osc_msg.h"
#include "transport/transport.h"
#include <string.h>

lm_osc_counters lm_osc_count;

static int cma_blocks(const lm_osc_target *t, uint64_t off, size_t len, uint64_t count, int64_t stride, char *local,
                      int put)
{
    for (uint64_t k = 0; k < count; k++) {
        uint64_t remote = t->addr + off + (uint64_t)((int64_t)k * stride);
        int rc = put ? lm_transport_rput(t->world, remote, local + k * len, len)
                     : lm_transport_rget(t->world, local + k * len, remote, len);
        /* refused by the kernel after all, or the owner's memory is not
         * there (a range the layer above could not check) */
        if (rc == LM_ENOTSUP) return MPI_ERR_OTHER;
        if (rc != LM_OK) return MPI_ERR_RMA_RANGE;
    }
    return MPI_SUCCESS;
}

/* Both directions of a DIRECT or CMA transfer (MSG goes to osc_msg.c):
 * local is the contiguous side. */
static int transfer(lm_osc_channel *ch, const lm_osc_target *t, uint64_t off, size_t len, uint64_t count,
                    int64_t stride, char *local, int put, lm_osc_done done, void *arg)
{
    if (count == 0 || len == 0) {
        if (done) done(arg, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    *(put ? &lm_osc_count.bytes_put : &lm_osc_count.bytes_got) += len * count;
    if (t->reach == LM_OSC_MSG)
        return put ? lm_osc_msg_put(ch, t, off, len, count, stride, local, done, arg)
                   : lm_osc_msg_get(ch, t, off, len, count, stride, local, done, arg);
    /* blocks that touch are one block */
    if ((int64_t)len == stride) {
        len *= count;
        count = 1;
    }
    if (t->reach == LM_OSC_NET) return lm_osc_net_transfer(ch, t, off, len, count, stride, local, put, done, arg);
    int rc = MPI_SUCCESS;
    if (t->reach == LM_OSC_CMA) {
        rc = cma_blocks(t, off, len, count, stride, local, put);
    } else {
        for (uint64_t k = 0; k < count; k++) {
            char *remote = t->mapped + off + (int64_t)k * stride;
            if (put) memcpy(remote, local + k * len, len);
            else memcpy(local + k * len, remote, len);
        }
    }
    if (done) done(arg, rc);
    return rc;
}

int lm_osc_put(lm_osc_channel *ch, const lm_osc_target *t, uint64_t off, size_t len, uint64_t count, int64_t stride,
               const void *src, lm_osc_done done, void *arg)
{
    return transfer(ch, t, off, len, count, stride, (char *)src, 1, done, arg);
}

int lm_osc_get(lm_osc_channel *ch, const lm_osc_target *t, uint64_t off, size_t len, uint64_t count, int64_t stride,
               void *dst, lm_osc_done done, void *arg)
{
    return transfer(ch, t, off, len, count, stride, dst, 0, done, arg);
}
