/* Building schedules: a growing array of steps cut into rounds. */
#include "coll/sched.h"
#include "util/lm_mem.h"
#include <string.h>

void lm_sched_init(lm_sched *s)
{
    s->steps = s->inline_steps;
    s->nsteps = 0;
    s->cap = LM_SCHED_INLINE_STEPS;
    s->round_end = s->inline_rounds;
    s->nrounds = 0;
    s->widest = 0;
    s->rounds_cap = LM_SCHED_INLINE_ROUNDS;
    s->scratch_bytes = 0;
    s->failed = 0;
}

void lm_sched_free(lm_sched *s)
{
    if (s->steps != s->inline_steps) lm_free(LM_MEM_COLL, s->steps);
    if (s->round_end != s->inline_rounds) lm_free(LM_MEM_COLL, s->round_end);
    lm_sched_init(s);
}

/* Double an array that starts inline: the first growth copies it out. */
static void *grow(void *arr, const void *inline_arr, size_t used, size_t new_bytes)
{
    if (arr != inline_arr) return lm_realloc(LM_MEM_COLL, arr, new_bytes);
    void *n = lm_malloc(LM_MEM_COLL, new_bytes);
    if (n) memcpy(n, arr, used);
    return n;
}

static lm_step *add(lm_sched *s, int kind)
{
    if (s->failed) return NULL;
    if (s->nsteps == s->cap) {
        size_t cap = 2 * s->cap;
        lm_step *n = grow(s->steps, s->inline_steps, s->nsteps * sizeof *n, cap * sizeof *n);
        if (!n) {
            s->failed = 1;
            return NULL;
        }
        s->steps = n;
        s->cap = cap;
    }
    lm_step *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof *st);
    st->kind = (uint8_t)kind;
    st->peer = -1;
    return st;
}

void lm_sched_send(lm_sched *s, int peer, int slot, size_t off, size_t bytes)
{
    lm_step *st = add(s, LM_STEP_SEND);
    if (!st) return;
    st->peer = peer;
    st->src_slot = (uint8_t)slot;
    st->src_off = off;
    st->bytes = bytes;
}

void lm_sched_recv(lm_sched *s, int peer, int slot, size_t off, size_t bytes)
{
    lm_step *st = add(s, LM_STEP_RECV);
    if (!st) return;
    st->peer = peer;
    st->dst_slot = (uint8_t)slot;
    st->dst_off = off;
    st->bytes = bytes;
}

static void local(lm_sched *s, int kind, int src_slot, size_t src_off, int dst_slot, size_t dst_off, size_t bytes)
{
    /* moving nothing, or a range onto itself, is no step at all */
    if (!bytes || (kind == LM_STEP_COPY && src_slot == dst_slot && src_off == dst_off)) return;
    lm_step *st = add(s, kind);
    if (!st) return;
    st->src_slot = (uint8_t)src_slot;
    st->src_off = src_off;
    st->dst_slot = (uint8_t)dst_slot;
    st->dst_off = dst_off;
    st->bytes = bytes;
    st->blocks = 1;
}

void lm_sched_copy_blocks(lm_sched *s, int src_slot, size_t src_off, int src_stride, int dst_slot, size_t dst_off,
                          int dst_stride, size_t bytes, uint32_t blocks)
{
    if (!blocks || !bytes) return;
    /* strides of exactly one block on both sides are one contiguous copy */
    if (blocks == 1 || (src_stride == 1 && dst_stride == 1)) {
        lm_sched_copy(s, src_slot, src_off, dst_slot, dst_off, bytes * blocks);
        return;
    }
    if (src_stride < INT16_MIN || src_stride > INT16_MAX || dst_stride < INT16_MIN || dst_stride > INT16_MAX) {
        s->failed = 1; /* no generator asks for such strides; never run a wrong schedule */
        return;
    }
    lm_step *st = add(s, LM_STEP_COPY);
    if (!st) return;
    st->src_slot = (uint8_t)src_slot;
    st->src_off = src_off;
    st->dst_slot = (uint8_t)dst_slot;
    st->dst_off = dst_off;
    st->bytes = bytes;
    st->blocks = blocks;
    st->src_stride = (int16_t)src_stride;
    st->dst_stride = (int16_t)dst_stride;
}

void lm_sched_copy(lm_sched *s, int src_slot, size_t src_off, int dst_slot, size_t dst_off, size_t bytes)
{
    local(s, LM_STEP_COPY, src_slot, src_off, dst_slot, dst_off, bytes);
}

void lm_sched_reduce(lm_sched *s, int src_slot, size_t src_off, int dst_slot, size_t dst_off, size_t bytes)
{
    local(s, LM_STEP_REDUCE, src_slot, src_off, dst_slot, dst_off, bytes);
}

void lm_sched_post(lm_sched *s, int slot, size_t off, size_t mbox_off, size_t bytes, int readers)
{
    lm_step *st = add(s, LM_STEP_POST);
    if (!st) return;
    st->src_slot = (uint8_t)slot;
    st->src_off = off;
    st->dst_off = mbox_off;
    st->bytes = bytes;
    st->readers = (uint16_t)readers;
}

void lm_sched_fetch(lm_sched *s, int peer, size_t mbox_off, int slot, size_t off, size_t bytes, int reduce)
{
    lm_step *st = add(s, reduce ? LM_STEP_FETCH_REDUCE : LM_STEP_FETCH);
    if (!st) return;
    st->peer = peer;
    st->src_off = mbox_off;
    st->dst_slot = (uint8_t)slot;
    st->dst_off = off;
    st->bytes = bytes;
}

void lm_sched_by_address(lm_sched *s)
{
    int posted = 0;
    for (size_t i = 0; i < s->nsteps; i++) {
        lm_step *st = &s->steps[i];
        if (st->kind == LM_STEP_POST || st->kind == LM_STEP_FETCH || st->kind == LM_STEP_FETCH_REDUCE)
            st->by_address = 1;
        posted |= st->kind == LM_STEP_POST && st->readers > 0;
    }
    if (!posted) return;
    add(s, LM_STEP_WAIT_READ);
    lm_sched_round(s);
}

void lm_sched_round(lm_sched *s)
{
    if (s->failed) return;
    uint32_t begin = s->nrounds ? s->round_end[s->nrounds - 1] : 0;
    if (s->nsteps == begin) return;
    if (s->nrounds == s->rounds_cap) {
        uint32_t cap = 2 * s->rounds_cap;
        uint32_t *n = grow(s->round_end, s->inline_rounds, s->nrounds * sizeof *n, cap * sizeof *n);
        if (!n) {
            s->failed = 1;
            return;
        }
        s->round_end = n;
        s->rounds_cap = cap;
    }
    if (s->nsteps - begin > s->widest) s->widest = (uint32_t)(s->nsteps - begin);
    s->round_end[s->nrounds++] = (uint32_t)s->nsteps;
}

size_t lm_sched_scratch(lm_sched *s, size_t bytes)
{
    size_t off = (s->scratch_bytes + 63) & ~(size_t)63;
    s->scratch_bytes = off + bytes;
    return off;
}
