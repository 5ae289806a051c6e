/* Each rank's one-sided arena: a bounded region of the area that only its
 * owner allocates from, so the allocator needs no synchronisation. Blocks
 * are 64-byte aligned (atomics never straddle a cache line) and carry a
 * header that peers read to bounds-check every access. Bump allocation with
 * a first-fit free list; freeing the topmost block lowers the bump pointer.
 * Pages are touched only as blocks are handed out. */
#include "shm.h"
#include "shm_layout.h"
#include <stdint.h>

#define BLOCK_MAGIC 0x4c4d424bu /* "LMBK" */
#define ALIGN 64u

typedef struct arena_block {
    uint64_t size;      /* data bytes after this header */
    uint64_t next_free; /* offset of the next free block + 1; 0: end */
    uint32_t magic;
    uint32_t in_use;
    char pad[ALIGN - 24];
} arena_block;

static struct {
    lm_shm_area *area;
    char *base; /* my arena */
    uint64_t size, top;
    uint64_t free_head; /* offset + 1; 0: empty */
} A;

void lm_shm_arena_init(lm_shm_area *area, int local_rank)
{
    A.area = area;
    A.base = lm_shm_area_arena(area, local_rank);
    A.size = area->arena_size;
    A.top = 0;
    A.free_head = 0;
}

void lm_shm_arena_finalize(void) { A.base = NULL; }

static inline arena_block *block_at(char *arena, uint64_t off) { return (arena_block *)(arena + off); }

void *lm_shm_arena_alloc(size_t len, uint64_t *rkey)
{
    if (!A.base) return NULL;
    uint64_t size = ((uint64_t)(len ? len : 1) + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
    uint64_t *link = &A.free_head;
    for (uint64_t f = A.free_head; f; f = block_at(A.base, f - 1)->next_free) {
        arena_block *b = block_at(A.base, f - 1);
        if (b->size >= size) {
            *link = b->next_free;
            /* Split when the rest can hold another block. */
            if (b->size - size >= 2 * ALIGN) {
                uint64_t roff = f - 1 + sizeof(arena_block) + size;
                arena_block *r = block_at(A.base, roff);
                r->size = b->size - size - sizeof(arena_block);
                r->magic = BLOCK_MAGIC;
                r->in_use = 0;
                r->next_free = A.free_head;
                A.free_head = roff + 1;
                b->size = size;
            }
            b->in_use = 1;
            b->next_free = 0;
            *rkey = f - 1 + sizeof(arena_block);
            return (char *)b + sizeof(arena_block);
        }
        link = &b->next_free;
    }
    if (A.top + sizeof(arena_block) + size > A.size) return NULL;
    arena_block *b = block_at(A.base, A.top);
    b->size = size;
    b->next_free = 0;
    b->magic = BLOCK_MAGIC;
    b->in_use = 1;
    *rkey = A.top + sizeof(arena_block);
    A.top += sizeof(arena_block) + size;
    return (char *)b + sizeof(arena_block);
}

void lm_shm_arena_free(void *p)
{
    if (!p || !A.base) return;
    arena_block *b = (arena_block *)((char *)p - sizeof(arena_block));
    if ((char *)b < A.base || (char *)p >= A.base + A.size || b->magic != BLOCK_MAGIC || !b->in_use) return;
    b->in_use = 0;
    uint64_t off = (uint64_t)((char *)b - A.base);
    if (off + sizeof(arena_block) + b->size == A.top) {
        A.top = off;
        b->magic = 0;
        return;
    }
    b->next_free = A.free_head;
    A.free_head = off + 1;
}

void *lm_shm_arena_resolve(int local_rank, uint64_t rkey, size_t offset, size_t len)
{
    lm_shm_area *a = A.area;
    if (!a || local_rank < 0 || local_rank >= a->local_size) return NULL;
    if (rkey < sizeof(arena_block) || rkey % ALIGN != 0 || rkey > a->arena_size) return NULL;
    char *arena = lm_shm_area_arena(a, local_rank);
    arena_block *b = block_at(arena, rkey - sizeof(arena_block));
    if (b->magic != BLOCK_MAGIC || !b->in_use || offset > b->size || len > b->size - offset) return NULL;
    return arena + rkey + offset;
}
