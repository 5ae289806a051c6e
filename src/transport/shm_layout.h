/* Layout of the shm transport's area inside the node segment.
 *
 * The launcher sizes and formats the area (lm_shm_area_size/format are linked
 * into it through leanmpi_segment, so this file needs only libc and C11
 * atomics); ranks read every size back from the area header, so they always
 * agree with whoever formatted it.
 *
 *   header          one page: sizes and offsets of the parts below
 *   rank control    per local rank: its receive queue and its cell free queue
 *   cells           per local rank: LM_SHM_CELLS_PER_RANK cells of LM_SHM_CELL_SIZE
 *   fast boxes      per local rank (as receiver): LM_SHM_FB_SLOTS slots
 *   arenas          per local rank: memory for lm_transport_shared_alloc
 *
 * The area must be zero-filled when formatted (a fresh memfd or anonymous
 * mapping is). Formatting writes only the header and the control blocks, so
 * cell, fast-box and arena pages are first touched by the rank that uses
 * them: a rank that talks to nobody costs a few pages, whatever local_size
 * says. */
#ifndef LM_SHM_LAYOUT_H
#define LM_SHM_LAYOUT_H
#include <stddef.h>
#include <stdint.h>
#include "shm_queue.h"

/* Cells: 64 x 16 KiB per rank. 16 KiB holds an eager message up to the
 * default eager limit in one cell; 64 of them let a rank keep a burst to
 * several peers in flight before it must progress. */
#define LM_SHM_CELL_SIZE 16384u
#define LM_SHM_CELLS_PER_RANK 64u
#define LM_SHM_CELL_HDR 64u    /* link, source, lengths, ordering */
#define LM_SHM_CELL_AM_HDR 64u /* room reserved for the AM header */
#define LM_SHM_CELL_PAYLOAD (LM_SHM_CELL_SIZE - LM_SHM_CELL_HDR - LM_SHM_CELL_AM_HDR)

/* Fast boxes: each receiver offers LM_SHM_FB_SLOTS single-producer rings of
 * LM_SHM_FB_RING_BYTES bytes. Records take what they need in whole cache
 * lines (fastbox.h), so an 8-byte message uses one line and a ring holds
 * 512 of them, while messages up to LM_SHM_FB_PAYLOAD_MAX bytes (the
 * small-message range where latency matters) still fit. The cvar
 * FASTBOX_MAX can lower the slot count a receiver serves, never raise it
 * above this. */
/* Pipes: each rank owns LM_SHM_PIPES buffers through which a node-local
 * sender streams a large message to it, the sender copying in while the
 * receiver copies out (the protocol is pt2pt/pipe_copy.c's). Sized for a
 * page of control words and four pieces of 64 KiB, which keep both sides
 * busy; four pipes serve an alltoall of 5 ranks at once. 1 MiB of address
 * space per rank, touched only when used. */
#define LM_SHM_PIPES 4u
#define LM_SHM_PIPE_BYTES (8192u + (256u << 10))

#define LM_SHM_FB_SLOTS 8u
#define LM_SHM_FB_RING_BYTES 32768u /* power of two */
#define LM_SHM_FB_PAYLOAD_MAX 8192u
/* Larger payloads go into a ring only between turns of a request-response
 * pair (shm.c, lm_shm_send). */
#define LM_SHM_FB_STREAM_MAX 4096u
/* A sender goes back to its ring's start only from within this many bytes
 * of a lap's start (fastbox.h, lm_fastbox_rewind; shm.c says when). */
#define LM_SHM_FB_REWIND_NEAR 1024u

/* One-sided arena per rank; LEANMPI_SHM_ARENA_SIZE (bytes) overrides it,
 * read by the formatter (the launcher), which records it in the header. */
#define LM_SHM_ARENA_DEFAULT (1u << 20)

#define LM_SHM_AREA_MAGIC 0x4c4d53484d415233ull /* "LMSHMAR3" */

typedef struct lm_shm_area {
    uint64_t magic;
    int32_t local_size;
    uint32_t cell_size, cells_per_rank;
    uint32_t fb_slots, fb_ring_bytes, fb_payload_max;
    uint64_t arena_size;
    uint64_t ctl_offset;   /* lm_shm_rank_ctl[local_size] */
    uint64_t cells_offset; /* + local_rank * cells_stride */
    uint64_t cells_stride;
    uint64_t fb_offset; /* + local_rank * fb_stride */
    uint64_t fb_stride;
    uint32_t pipes, pipe_bytes;
    uint64_t pipe_offset;  /* + local_rank * pipes * pipe_bytes */
    uint64_t arena_offset; /* + local_rank * arena_size */
    uint64_t total_size;
} lm_shm_area;

typedef struct lm_shm_rank_ctl {
    lm_shm_queue recv; /* cells addressed to this rank */
    lm_shm_queue free; /* this rank's cells handed back by receivers */
} lm_shm_rank_ctl;

size_t lm_shm_area_size(int local_size);
void lm_shm_area_format(void *area, int local_size);
/* 0 if area holds a formatted area for local_size ranks, else -1. */
int lm_shm_area_check(const void *area, int local_size);

static inline lm_shm_rank_ctl *lm_shm_area_ctl(lm_shm_area *a, int local_rank)
{
    return (lm_shm_rank_ctl *)((char *)a + a->ctl_offset) + local_rank;
}
static inline uint64_t lm_shm_area_cell_offset(const lm_shm_area *a, int local_rank, uint32_t i)
{
    return a->cells_offset + (uint64_t)local_rank * a->cells_stride + (uint64_t)i * a->cell_size;
}
static inline int lm_shm_area_cell_owner(const lm_shm_area *a, uint64_t off)
{
    return (int)((off - a->cells_offset) / a->cells_stride);
}
static inline void *lm_shm_area_fb_base(lm_shm_area *a, int receiver_local_rank)
{
    return (char *)a + a->fb_offset + (uint64_t)receiver_local_rank * a->fb_stride;
}
static inline void *lm_shm_area_pipe(lm_shm_area *a, int local_rank, uint32_t i)
{
    return (char *)a + a->pipe_offset + ((uint64_t)local_rank * a->pipes + i) * a->pipe_bytes;
}
static inline void *lm_shm_area_arena(lm_shm_area *a, int local_rank)
{
    return (char *)a + a->arena_offset + (uint64_t)local_rank * a->arena_size;
}

#endif
