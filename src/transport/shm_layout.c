#include "shm_layout.h"
#include <stdlib.h>
#include <string.h>

#define PAGE 4096u

static uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* The fast-box slot layout lives in fastbox.h; only its size matters here,
 * and it is fixed by the constants: one cache line of control words, then
 * the ring. */
static uint64_t fb_slot_size(void) { return 64u + (uint64_t)LM_SHM_FB_RING_BYTES; }

static uint64_t arena_size_param(void)
{
    const char *s = getenv("LEANMPI_SHM_ARENA_SIZE");
    uint64_t v = LM_SHM_ARENA_DEFAULT;
    if (s && *s) {
        char *end;
        unsigned long long x = strtoull(s, &end, 0);
        if (*end == '\0' && x >= PAGE && x <= (1ull << 34)) v = x;
    }
    return round_up(v, PAGE);
}

static void compute(lm_shm_area *h, int local_size)
{
    memset(h, 0, sizeof *h);
    uint64_t n = local_size > 0 ? (uint64_t)local_size : 1;
    h->magic = LM_SHM_AREA_MAGIC;
    h->local_size = (int32_t)n;
    h->cell_size = LM_SHM_CELL_SIZE;
    h->cells_per_rank = LM_SHM_CELLS_PER_RANK;
    h->fb_slots = LM_SHM_FB_SLOTS;
    h->fb_ring_bytes = LM_SHM_FB_RING_BYTES;
    h->fb_payload_max = LM_SHM_FB_PAYLOAD_MAX;
    h->arena_size = arena_size_param();
    h->ctl_offset = PAGE;
    uint64_t off = round_up(h->ctl_offset + n * sizeof(lm_shm_rank_ctl), PAGE);
    h->cells_offset = off;
    h->cells_stride = (uint64_t)LM_SHM_CELLS_PER_RANK * LM_SHM_CELL_SIZE;
    off += n * h->cells_stride;
    h->fb_offset = off;
    /* Page-aligned per receiver so one receiver's boxes never share a page
     * (or a cache line) with another's. */
    h->fb_stride = round_up((uint64_t)LM_SHM_FB_SLOTS * fb_slot_size(), PAGE);
    off += n * h->fb_stride;
    h->pipes = LM_SHM_PIPES;
    h->pipe_bytes = LM_SHM_PIPE_BYTES;
    h->pipe_offset = off;
    off += n * LM_SHM_PIPES * (uint64_t)LM_SHM_PIPE_BYTES;
    h->arena_offset = off;
    off += n * h->arena_size;
    h->total_size = off;
}

size_t lm_shm_area_size(int local_size)
{
    lm_shm_area h;
    compute(&h, local_size);
    return (size_t)h.total_size;
}

void lm_shm_area_format(void *area, int local_size)
{
    lm_shm_area h;
    compute(&h, local_size);
    memset((char *)area + h.ctl_offset, 0, (size_t)h.local_size * sizeof(lm_shm_rank_ctl));
    memcpy(area, &h, sizeof h);
}

int lm_shm_area_check(const void *area, int local_size)
{
    const lm_shm_area *h = area;
    if (h->magic != LM_SHM_AREA_MAGIC || h->local_size != local_size) return -1;
    if (h->cell_size != LM_SHM_CELL_SIZE || h->fb_ring_bytes != LM_SHM_FB_RING_BYTES ||
        h->fb_payload_max != LM_SHM_FB_PAYLOAD_MAX || h->fb_slots != LM_SHM_FB_SLOTS || h->pipes != LM_SHM_PIPES ||
        h->pipe_bytes != LM_SHM_PIPE_BYTES)
        return -1;
    return 0;
}
