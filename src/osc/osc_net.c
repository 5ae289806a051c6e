/* NET reach: transfers to memory of a process on another host by the
 * network's own RMA (the provider's reads and writes, transport.h:
 * lm_transport_rput_async / lm_transport_rget_async) into memory its owner
 * exposed for the window's lifetime.
 *
 * No request message and no reply: the owner's process never sees the
 * operation above its transport. A transfer of count blocks is count
 * provider operations, tracked on the channel as one operation (osc_msg.h:
 * lm_osc_track), so that flushes wait for it like for a MSG one and the
 * issuer's done runs once, when the last block is complete at the target
 * (writes are asked for delivery completion).
 *
 * Where the provider's progress is manual (the socket providers), the
 * bytes move while the owner's process enters the library, as for MSG;
 * hardware providers move them on their own. */
#include "osc/osc_msg.h"
#include "pt2pt/pt2pt.h"
#include "transport/transport.h"

static void part_done(void *arg) { lm_osc_track_part_done(arg, MPI_SUCCESS); }

/* One block, retried while the provider's queue is full or the owner's
 * address is still on its way (published when its network opened). */
static int block(const lm_osc_target *t, uint64_t remote, char *local, size_t len, int put, lm_osc_tracked *op)
{
    for (;;) {
        int rc = put ? lm_transport_rput_async(t->world, local, remote, t->rkey, len, part_done, op)
                     : lm_transport_rget_async(t->world, local, remote, t->rkey, len, part_done, op);
        if (rc != LM_EAGAIN) return rc;
        lm_progress();
    }
}

int lm_osc_net_transfer(lm_osc_channel *ch, const lm_osc_target *t, uint64_t off, size_t len, uint64_t count,
                        int64_t stride, char *local, int put, lm_osc_done done, void *arg)
{
    lm_osc_tracked *op = lm_osc_track(ch, t->rank, done, arg);
    if (!op) return MPI_ERR_NO_MEM;
    for (uint64_t k = 0; k < count; k++) {
        lm_osc_track_part(op);
        int rc = block(t, t->net_addr + off + (uint64_t)((int64_t)k * stride), local + k * len, len, put, op);
        if (rc == LM_OK) continue;
        int err = rc == LM_ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER;
        lm_osc_track_part_done(op, err); /* the block that did not start */
        if (k == 0) {
            /* nothing in flight: the call fails, done does not run */
            lm_osc_untrack(ch, op);
            return err;
        }
        break; /* the blocks in flight finish first; done reports err */
    }
    lm_osc_track_part_done(op, MPI_SUCCESS); /* issued */
    return MPI_SUCCESS;
}
