/* Cooperative single copy: see coop_copy.h.
 *
 * Job record lifetime: the receiver allocates it and frees it only after the
 * sender has set sender_left, because the sender's last claim (the one that
 * finds nothing left) may come after the receiver has seen every piece done.
 * COPY_HELP reaches the sender before FIN (one sender-receiver pair keeps its
 * order), so a sender that completes its send has always let go already. */
#include "pt2pt/coop_copy.h"
#include "pt2pt/copy_choice.h"
#include "pt2pt/pt2pt.h"
#include "pt2pt/engine_internal.h"
#include "transport/transport.h"
#include "boot/boot.h"
#include "util/lm_state.h"
#include "util/lm_cvar.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

typedef struct coop_job {
    _Atomic uint64_t next;        /* next piece to claim */
    _Atomic uint64_t done;        /* pieces copied, by either side */
    _Atomic uint32_t sender_left; /* the sender will not touch the record again */
    uint32_t pad;
    uint64_t pieces, chunk, len;
} coop_job;

/* The receiver's side of one copy. */
typedef struct coop_copy {
    struct coop_copy *next;
    coop_job *job;
    lm_rkey key;
    lm_request *r; /* NULL once completed, while awaiting sender_left */
    uint64_t t0;   /* when the single copy was chosen by measurement (copy_choice.h), else 0 */
    int src_world;
    uint64_t sreq, src_addr;
} coop_copy;

static coop_copy *active;
static size_t min_bytes, chunk_bytes;
static int progress_slot = -1; /* on while a copy is active */

void lm_coop_copy_init(void)
{
    min_bytes = (size_t)lm_cvar(LM_CVAR_COOP_COPY_MIN);
    chunk_bytes = (size_t)lm_cvar(LM_CVAR_COOP_COPY_CHUNK);
    progress_slot = lm_progress_hook_register(lm_coop_copy_progress);
}

/* Each process_vm_readv/writev pays a system call and the pinning of its
 * pages before it copies (about 1.7 us a call on the 2-core reference
 * machine, a sixth of a 128 KiB piece), so pieces are as large as the
 * sharing allows: two halves, one for each side, never smaller than
 * COOP_COPY_CHUNK. A late side costs no more than copying alone: whoever
 * comes first takes the other half too. On 2 ranks this took 1 MiB
 * ping-pong from 48 to 44 us and MPI_Alltoall of 1 MiB blocks from 115 to
 * 104 us against fixed 128 KiB pieces. */
static size_t piece_bytes(size_t n)
{
    size_t half = ((n + 1) / 2 + 4095) & ~(size_t)4095;
    return half > chunk_bytes ? half : chunk_bytes;
}

int lm_coop_copy_start(lm_request *r, int src_world, uint64_t sreq, uint64_t src_addr, size_t n, uint64_t t0)
{
    if (min_bytes == 0 || n < min_bytes || n < 2 * chunk_bytes) return 0;
    if (src_world == lm_world_rank() || !lm_boot_is_local(src_world)) return 0;
    /* a single copy: process_vm_readv, or a memcpy in one address space */
    if (!lm_transport_single_copy(src_world)) return 0;
    coop_copy *c = lm_malloc(LM_MEM_PT2PT, sizeof *c);
    if (!c) return 0;
    lm_rkey key;
    coop_job *job = lm_transport_shared_alloc(sizeof *job, &key);
    if (!job) {
        lm_free(LM_MEM_PT2PT, c);
        return 0;
    }
    atomic_init(&job->next, 0);
    atomic_init(&job->done, 0);
    atomic_init(&job->sender_left, 0);
    job->chunk = piece_bytes(n);
    job->len = n;
    job->pieces = (n + job->chunk - 1) / job->chunk;
    *c = (coop_copy){
        .job = job, .key = key, .r = r, .t0 = t0, .src_world = src_world, .sreq = sreq, .src_addr = src_addr};
    c->next = active;
    active = c;
    lm_progress_hook_set_active(progress_slot, 1);
    /* Published before the packet: the sender reads the record when it
     * handles COPY_HELP. */
    atomic_thread_fence(memory_order_release);
    lm_pkt h = {.am_id = LM_AM_PT2PT,
                .type = LM_PKT_COPY_HELP,
                .sreq = sreq,
                .rreq = key,
                .addr = (uint64_t)(uintptr_t)r->buf,
                .size = n};
    lm_pt2pt_post_control(src_world, &h);
    return 1;
}

/* Claim and copy pieces until none is left; returns how many this side did. */
static uint64_t claim_pieces(coop_copy *c)
{
    coop_job *j = c->job;
    uint64_t n = 0;
    for (;;) {
        uint64_t k = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        if (k >= j->pieces) return n;
        size_t off = (size_t)(k * j->chunk);
        size_t len = j->len - off < j->chunk ? j->len - off : j->chunk;
        if (lm_transport_rget(c->src_world, (char *)c->r->buf + off, c->src_addr + off, len) != LM_OK)
            lm_fatal("single copy of %zu bytes from rank %d failed", len, c->src_world);
        atomic_fetch_add_explicit(&j->done, 1, memory_order_release);
        n++;
    }
}

int lm_coop_copy_progress(void)
{
    int events = 0;
    coop_copy **link = &active;
    while (*link) {
        coop_copy *c = *link;
        if (c->r) {
            events += (int)claim_pieces(c);
            if (atomic_load_explicit(&c->job->done, memory_order_acquire) < c->job->pieces) {
                link = &c->next; /* the sender is still copying its last piece */
                continue;
            }
            lm_request *r = c->r;
            c->r = NULL;
            r->bytes = (MPI_Count)c->job->len;
            /* only where no exchange is going on (engine.c) */
            if (c->t0) lm_copy_record_overlapped(LM_COPY_SINGLE, LM_COPY_ONE_WAY, c->job->len, c->t0);
            lm_pt2pt_send_fin(c->src_world, c->sreq);
            lm_request_complete(r);
            events++;
        }
        if (!atomic_load_explicit(&c->job->sender_left, memory_order_acquire)) {
            link = &c->next;
            continue;
        }
        *link = c->next;
        lm_transport_shared_free(c->job);
        lm_free(LM_MEM_PT2PT, c);
    }
    if (!active) lm_progress_hook_set_active(progress_slot, 0);
    return events;
}

int lm_coop_copy_busy(void) { return active != NULL; }

void lm_coop_copy_help(int receiver_world, const lm_pkt *h)
{
    const lm_request *s = (const lm_request *)(uintptr_t)h->sreq;
    lm_rkey key = h->rreq;
    coop_job j;
    if (lm_transport_get(receiver_world, key, 0, &j, sizeof j) != LM_OK)
        lm_fatal("rank %d sent an unreachable copy record", receiver_world);
    for (;;) {
        uint64_t k;
        lm_transport_atomic_fadd64(receiver_world, key, offsetof(coop_job, next), 1, &k);
        if (k >= j.pieces) break;
        size_t off = (size_t)(k * j.chunk);
        size_t len = j.len - off < j.chunk ? j.len - off : j.chunk;
        if (lm_transport_rput(receiver_world, h->addr + off, (const char *)s->buf + off, len) != LM_OK)
            lm_fatal("single copy of %zu bytes to rank %d failed", len, receiver_world);
        lm_transport_atomic_fadd64(receiver_world, key, offsetof(coop_job, done), 1, NULL);
    }
    lm_transport_atomic_swap32(receiver_world, key, offsetof(coop_job, sender_left), 1, NULL);
}
