/* Pipelined two copies: see pipe_copy.h.
 *
 * A pipe is a page of control words, then (from PIPE_PIECES_AT on) as
 * many pieces of PIPE_CHUNK bytes as the transport's pipe holds (the
 * depth). head counts the pieces the sender has put in, tail those the
 * receiver has taken out, each written by one side only; piece k lives in
 * slot k % depth. The
 * receiver resets both before it sends PIPE, and the sender touches the
 * pipe only between PIPE and its last piece, so a pipe whose last piece
 * is out is free again at once. */
#include "pt2pt/pipe_copy.h"
#include "pt2pt/copy_choice.h"
#include "pt2pt/pt2pt.h"
#include "pt2pt/engine_internal.h"
#include "transport/transport.h"
#include "datatype/datatype.h"
#include "util/lm_cvar.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "util/lm_state.h"
#include <stdatomic.h>
#include <string.h>

#define PIPE_CHUNK ((size_t)64 << 10)
/* The pieces start this far into the pipe: a page of control words, and
 * then not on a page boundary. Piece and user buffer both on page
 * boundaries (the common case: large buffers come from mmap) alias in the
 * caches' 4 KiB index, and a 2-rank 1 MiB ping-pong took 544 us through
 * such pieces against 208 us 192 bytes off (medians of 8 alternating
 * runs on the 2-core reference machine). */
#define PIPE_PIECES_AT (4096u + 192u)

typedef struct pipe_ctl {
    _Alignas(64) _Atomic uint64_t head; /* pieces put in (the sender's) */
    _Alignas(64) _Atomic uint64_t tail; /* pieces taken out (the receiver's) */
    /* pipe 0 only, written by its owner: the ways its exchanges take, for
     * the higher ranks that follow it (exchange_way): bit 2c set when size
     * class c has a way, bit 2c+1 set when that way is the pipes */
    _Alignas(64) _Atomic uint32_t exchange_ways;
} pipe_ctl;

/* One side of one message. */
typedef struct pipe_job {
    struct pipe_job *next;
    lm_request *req;
    pipe_ctl *ctl;
    char *slots;
    uint64_t done;   /* pieces this side has moved */
    uint64_t pieces; /* pieces of the message */
    uint64_t seen;   /* the other side's count, as last read */
    uint64_t
        t0; /* receiver, where the way was chosen by measurement (copy_choice.h): when the pipe was claimed; else 0 */
    size_t len;
    int index;             /* receiver: which of its pipes */
    lm_copy_regime regime; /* receiver, with t0: which measurements it adds to */
} pipe_job;

/* Receiver: a matched message that wants a pipe while all are busy. It
 * waits for the next pipe that frees rather than taking the single copy:
 * a stream of such messages (a window of 16 KiB sends, say) would
 * otherwise move four through pipes and every other one by a system call
 * that costs three times as much. */
typedef struct pipe_wait {
    struct pipe_wait *next;
    lm_request *req;
    uint64_t sreq;
    size_t len;
    int timed; /* its way was chosen by measurement: 1 + its lm_copy_regime; else 0 */
    int src_world;
} pipe_wait;

static struct {
    int npipes;
    uint64_t depth;
    unsigned free_mask; /* this receiver's pipes not in use */
    long mode;          /* LEANMPI_LARGE_COPY */
    size_t max;         /* LEANMPI_PIPE_MAX */
    size_t shared_max;  /* LEANMPI_SHARED_COPY_MAX */
    long ratio;         /* LEANMPI_PIPE_COPY_RATIO */
    long adapt;         /* LEANMPI_LARGE_COPY_ADAPT */
    int unbounded;      /* -1: not yet probed; 1: every size takes a pipe */
    pipe_job *sends, *recvs;
    pipe_wait *waiting, **waiting_tail; /* oldest first */
    int progress_slot;
} P = {.progress_slot = -1};

void lm_pipe_copy_init(void)
{
    size_t bytes = 0;
    P.npipes = lm_transport_pipes(&bytes);
    if (P.npipes > 0 && bytes > PIPE_PIECES_AT) P.depth = (bytes - PIPE_PIECES_AT) / PIPE_CHUNK;
    if (P.depth == 0) P.npipes = 0;
    P.free_mask = P.npipes ? (1u << P.npipes) - 1 : 0;
    P.mode = lm_cvar(LM_CVAR_LARGE_COPY);
    P.max = (size_t)lm_cvar(LM_CVAR_PIPE_MAX);
    P.shared_max = (size_t)lm_cvar(LM_CVAR_SHARED_COPY_MAX);
    P.ratio = lm_cvar(LM_CVAR_PIPE_COPY_RATIO);
    P.adapt = lm_cvar(LM_CVAR_LARGE_COPY_ADAPT);
    lm_copy_choice_reset();
    P.unbounded = -1;
    P.sends = P.recvs = NULL;
    P.waiting = NULL;
    P.waiting_tail = &P.waiting;
    P.progress_slot = lm_progress_hook_register(lm_pipe_copy_progress);
}

/* LEANMPI_LARGE_COPY=0: which rendezvous messages take a pipe. Measured
 * on the 2-core reference machine (2-rank ping-pong, medians of
 * alternating runs, single copy against pipe): 16 KiB 4.5 against 1.5 us,
 * 64 KiB 12.4 against 6.1; exchanges of 64 KiB blocks at 2 ranks 12.8
 * against 9.8. Above 128 KiB the outcome follows what a single copy costs
 * against a memcpy, which depends on the machine: on a 16-core machine the
 * single copy was ahead at 1 MiB (MPI_Allgather of 1 MiB blocks: 175
 * against 238 us at 2 ranks), while on the 2-core reference machine,
 * where process_vm_readv of 256 KiB took 6 to 8 times as long as a
 * memcpy of it, pipes were ahead at every size up to 16 MiB (2026-11-28,
 * 4 alternating runs each: 1 MiB ping-pong 34.5 against 66 us, streaming
 * 22 against 15.5 GB/s, 16 MiB streaming 18.6 against 13.4 GB/s, 2-rank
 * MPI_Alltoall of 1 MiB blocks 80 against 94 us), and also where ranks
 * share cores (4 ranks on 2 cores, 3 alternating runs: 1 MiB bcast 77-115
 * against 158-230 us, allreduce 195-200 against 430-535, alltoall 405-430
 * against 630-650; 64 KiB alltoall 28.5 against 46). So the receiver
 * probes that ratio once (lm_transport_single_copy_cost), at the first
 * message that would otherwise take the single copy, and takes pipes for
 * every message where it reaches PIPE_COPY_RATIO. Where it does not, the
 * pipes lose where ranks share cores (4 ranks on 2 cores, exchanges of 64
 * KiB: 82 against 108 us, when a single copy cost less there): a pipe
 * moves only while both sides run, a single copy needs the receiver
 * alone. Data with gaps, or a peer that cannot be read in one copy, has
 * only the streamed alternative, which also needs both sides: pipes. The
 * probe's word is only the first guess: the receiver then goes by what
 * each way has cost it (copy_choice.h), since the pipes' cost changes with
 * the machine's state while the probe's ratio does not. 
 * Where ranks share cores the single copy is taken whatever the probe
 * says, in one address space too: measured again (2026-11-29, 2 cores,
 * the probe saying the single copy was slow), NPB IS class B at 4 ranks
 * took 0.54 s by single copy against 0.69 by pipes (0.47 against 0.67 in
 * one address space), and 1 MiB collectives at 4 ranks alltoall 660
 * against 2,400 us, at 8 ranks allgather 4.4-5.6 against 10-14 ms and
 * alltoall 5.4 against 11 ms: the partner of a pipe is mostly not running. */
static int single_copy_slow(void)
{
    if (P.unbounded < 0) {
        double cost = P.ratio > 0 ? lm_transport_single_copy_cost() : 0;
        P.unbounded = cost > 0 && cost >= (double)P.ratio;
    }
    return P.unbounded;
}

/* An exchange takes one way on both sides. Each receiver measures only
 * what its own receives cost, not what its choice costs the peer: a
 * receiver taking single copies loads its own core with them while the
 * pipes of the other direction load both cores, and each side then finds
 * its own way cheaper. In that mixed state a 2-rank exchange of 32 KiB
 * messages (bidirectional bandwidth) ran at 7.8-8.3 GB/s, against 13.2
 * with pipes both ways and 15.0 with single copies both ways (2026-11-29,
 * 2-core reference machine). So in an exchange the higher rank takes the
 * way the lower one publishes, and only the lower one measures. */
static int follows_exchange_way(size_t n, int src_world, int *pipe)
{
    if (src_world > lm_world_rank()) return 0;
    const pipe_ctl *lead = (const pipe_ctl *)lm_transport_pipe(src_world, 0);
    uint32_t ways = atomic_load_explicit(&lead->exchange_ways, memory_order_relaxed);
    int c = lm_copy_class(n);
    if (!(ways >> (2 * c) & 1u)) return 0;
    *pipe = (int)(ways >> (2 * c + 1) & 1u);
    return 1;
}

static void publish_exchange_way(size_t n, lm_copy_way way)
{
    pipe_ctl *mine = (pipe_ctl *)lm_transport_pipe(lm_world_rank(), 0);
    int c = lm_copy_class(n);
    uint32_t was = atomic_load_explicit(&mine->exchange_ways, memory_order_relaxed);
    uint32_t now = (was & ~(3u << (2 * c))) | 1u << (2 * c) | (uint32_t)way << (2 * c + 1);
    if (now != was) atomic_store_explicit(&mine->exchange_ways, now, memory_order_relaxed);
}

/* Where ranks have cores of their own and either way can move the
 * message, the way measured cheaper so far (copy_choice.h; first guess and
 * LARGE_COPY_ADAPT=0: pipes up to PIPE_MAX, the probe's word above);
 * *timed: the choice was made that way, so its cost is recorded. */
static int wants_pipe(size_t n, int single_copy_possible, int src_world, int exchanging, int *timed)
{
    switch (P.mode) {
    case 1: return 0;
    case 2: return 1;
    default:
        /* a rank of this address space: the single copy is a memcpy (in
         * two halves where the sender helps), which beats the pipes while
         * the halves stay in the caches; beyond, both cores copying cache-
         * sized pieces in turn win. 2 ranks on the 2-core reference
         * machine, ping-pong: 1 MiB 28 us by memcpy halves against 33 by
         * pipes (140 by one memcpy alone), 2 MiB 135 against 62, 4 MiB 270
         * against 124 (2026-11-28). Not where this rank is exchanging
         * (rendezvous sends of its own in flight): both cores are busy
         * copying then, and one memcpy costs less than two (NPB IS class
         * B, 2 ranks: 0.48 against 0.66 s, 2026-11-29). */
        if (single_copy_possible && lm_transport_same_space(src_world))
            return n > P.shared_max && !lm_oversubscribed() && !exchanging;
        if (!single_copy_possible) return 1;
        if (lm_oversubscribed()) return 0;
        if (!P.adapt) return n <= P.max || single_copy_slow();
        lm_copy_way guess = n <= P.max || single_copy_slow() ? LM_COPY_PIPE : LM_COPY_SINGLE;
        if (!exchanging) {
            *timed = 1 + LM_COPY_ONE_WAY;
            return lm_copy_choose(n, LM_COPY_ONE_WAY, guess) == LM_COPY_PIPE;
        }
        int pipe;
        if (follows_exchange_way(n, src_world, &pipe)) return pipe;
        *timed = 1 + LM_COPY_EXCHANGE;
        pipe = lm_copy_choose(n, LM_COPY_EXCHANGE, guess) == LM_COPY_PIPE;
        publish_exchange_way(n, lm_copy_best(n, LM_COPY_EXCHANGE, guess));
        return pipe;
    }
}

static pipe_job *job_new(lm_request *req, char *pipe, size_t len, int index)
{
    pipe_job *j = lm_malloc(LM_MEM_PT2PT, sizeof *j);
    if (!j) return NULL;
    *j = (pipe_job){.req = req,
                    .ctl = (pipe_ctl *)pipe,
                    .slots = pipe + PIPE_PIECES_AT,
                    .pieces = (len + PIPE_CHUNK - 1) / PIPE_CHUNK,
                    .len = len,
                    .index = index};
    return j;
}

/* Receiver: take a free pipe for r and tell the sender. 0 if no memory
 * (the caller decides what else to do). */
/* t0: when the pipe was claimed, where the way was chosen by measurement
 * (a wait for a free pipe is the other messages' time); else 0. */
static int claim(lm_request *r, int src_world, uint64_t sreq, size_t n, uint64_t t0, lm_copy_regime regime)
{
    int index = __builtin_ctz(P.free_mask);
    char *pipe = lm_transport_pipe(lm_world_rank(), index);
    pipe_job *j = pipe ? job_new(r, pipe, n, index) : NULL;
    if (!j) return 0;
    j->t0 = t0;
    j->regime = regime;
    P.free_mask &= ~(1u << index);
    atomic_store_explicit(&j->ctl->head, 0, memory_order_relaxed);
    atomic_store_explicit(&j->ctl->tail, 0, memory_order_relaxed);
    j->next = P.recvs;
    P.recvs = j;
    lm_progress_hook_set_active(P.progress_slot, 1);
    /* the reset is visible before the sender can act on the packet */
    atomic_thread_fence(memory_order_release);
    lm_pkt h = {.am_id = LM_AM_PT2PT, .type = LM_PKT_PIPE, .sreq = sreq, .rreq = (uint64_t)index, .size = n};
    lm_pt2pt_post_control(src_world, &h);
    return 1;
}

int lm_pipe_copy_start(lm_request *r, int src_world, uint64_t sreq, size_t n, int single_copy_possible, int exchanging,
                       uint64_t *t0)
{
    *t0 = 0;
    if (n == 0 || !P.npipes || src_world == lm_world_rank() || !lm_transport_pipe(src_world, 0)) return 0;
    int timed = 0;
    int pipe = wants_pipe(n, single_copy_possible, src_world, exchanging, &timed);
    if (timed) *t0 = lm_copy_clock_ns();
    if (!pipe) return 0;
    if (P.free_mask) return claim(r, src_world, sreq, n, *t0, timed ? (lm_copy_regime)(timed - 1) : LM_COPY_ONE_WAY);
    /* every pipe is busy, so the hook is active and frees one soon */
    pipe_wait *w = lm_malloc(LM_MEM_PT2PT, sizeof *w);
    if (!w) return 0;
    *w = (pipe_wait){.req = r, .sreq = sreq, .len = n, .timed = timed, .src_world = src_world};
    *P.waiting_tail = w;
    P.waiting_tail = &w->next;
    return 1;
}

/* Receiver: a pipe has freed; give it to the oldest waiting message. */
static void start_waiting(void)
{
    pipe_wait *w = P.waiting;
    if (!(P.waiting = w->next)) P.waiting_tail = &P.waiting;
    if (!claim(w->req, w->src_world, w->sreq, w->len, w->timed ? lm_copy_clock_ns() : 0,
               w->timed ? (lm_copy_regime)(w->timed - 1) : LM_COPY_ONE_WAY))
        lm_fatal("out of memory receiving a message from rank %d", w->src_world);
    lm_free(LM_MEM_PT2PT, w);
}

void lm_pipe_copy_feed(int receiver_world, const lm_pkt *h)
{
    lm_request *s = (lm_request *)(uintptr_t)h->sreq;
    char *pipe = lm_transport_pipe(receiver_world, (int)h->rreq);
    if (!pipe || h->size > s->len) lm_fatal("rank %d offered a pipe this process cannot fill", receiver_world);
    atomic_thread_fence(memory_order_acquire);
    pipe_job *j = job_new(s, pipe, (size_t)h->size, (int)h->rreq);
    if (!j) lm_fatal("out of memory streaming a message to rank %d", receiver_world);
    j->next = P.sends;
    P.sends = j;
    /* the hook runs in this very progress pass, after the transport */
    lm_progress_hook_set_active(P.progress_slot, 1);
}

/* Where piece k starts in the message, and its length. */
static size_t piece(const pipe_job *j, uint64_t k, size_t *len)
{
    size_t off = (size_t)k * PIPE_CHUNK;
    *len = j->len - off < PIPE_CHUNK ? j->len - off : PIPE_CHUNK;
    return off;
}

static char *slot(const pipe_job *j, uint64_t k) { return j->slots + (size_t)(k % P.depth) * PIPE_CHUNK; }

/* Sender: put pieces in while there is room; 1 when the last is in. */
static int fill(pipe_job *j, int *events)
{
    lm_request *s = j->req;
    while (j->done < j->pieces) {
        if (j->done - j->seen >= P.depth) {
            j->seen = atomic_load_explicit(&j->ctl->tail, memory_order_acquire);
            if (j->done - j->seen >= P.depth) return 0;
        }
        size_t len, off = piece(j, j->done, &len);
        char *dst = slot(j, j->done);
        if (s->dtype) lm_typemap_pack(s->dtype, s->buf, s->count, (MPI_Count)off, dst, len);
        else memcpy(dst, (const char *)s->buf + off, len);
        atomic_store_explicit(&j->ctl->head, ++j->done, memory_order_release);
        (*events)++;
    }
    return 1;
}

/* Receiver: take pieces out while there are any; 1 when the last is out. */
static int drain(pipe_job *j, int *events)
{
    lm_request *r = j->req;
    while (j->done < j->pieces) {
        if (j->done == j->seen) {
            j->seen = atomic_load_explicit(&j->ctl->head, memory_order_acquire);
            if (j->done == j->seen) return 0;
        }
        size_t len, off = piece(j, j->done, &len);
        const char *src = slot(j, j->done);
        if (r->dtype) lm_typemap_unpack(r->dtype, r->buf, r->count, (MPI_Count)off, src, len);
        else memcpy((char *)r->buf + off, src, len);
        atomic_store_explicit(&j->ctl->tail, ++j->done, memory_order_release);
        (*events)++;
    }
    return 1;
}

int lm_pipe_copy_progress(void)
{
    int events = 0;
    for (pipe_job **link = &P.sends; *link;) {
        pipe_job *j = *link;
        if (!fill(j, &events)) {
            link = &j->next;
            continue;
        }
        *link = j->next;
        lm_transport_count_pipe(j->len, 0);
        lm_pt2pt_send_done(j->req);
        lm_free(LM_MEM_PT2PT, j);
    }
    for (pipe_job **link = &P.recvs; *link;) {
        pipe_job *j = *link;
        if (!drain(j, &events)) {
            link = &j->next;
            continue;
        }
        *link = j->next;
        lm_transport_count_pipe(0, j->len);
        P.free_mask |= 1u << j->index;
        j->req->bytes = (MPI_Count)j->len;
        if (j->t0) lm_copy_record_overlapped(LM_COPY_PIPE, j->regime, j->len, j->t0);
        lm_request_complete(j->req);
        lm_free(LM_MEM_PT2PT, j);
        if (P.waiting) start_waiting();
    }
    if (!P.sends && !P.recvs) lm_progress_hook_set_active(P.progress_slot, 0);
    return events;
}

int lm_pipe_copy_busy(void) { return P.sends != NULL || P.recvs != NULL || P.waiting != NULL; }
