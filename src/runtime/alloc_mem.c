/* MPI_Alloc_mem / MPI_Free_mem. Blocks are aligned for any type (at least
 * 64 bytes, a cache line, or more with the "mpi_minimum_memory_alignment"
 * hint) and carry a header in front that links every live block, so that
 * MPI_Free_mem recognises a pointer MPI_Alloc_mem did not return (a short
 * walk of the live blocks, which are few in practice, and no read of memory
 * the pointer may not own). */
#include "obj/info.h"
#include "util/lm_error.h"
#include "api/impl_gen.h"
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MIN_ALIGN 64
#define MAX_ALIGN ((size_t)1 << 20)
/* beyond this no allocation is tried (and memory checkers that refuse
 * huge requests by aborting are not asked) */
#define MAX_SIZE ((uint64_t)1 << 40)

typedef struct block {
    struct block *prev, *next;
    void *user; /* what MPI_Alloc_mem returned */
    void *base; /* what posix_memalign returned */
} block;

_Static_assert(sizeof(block) <= MIN_ALIGN, "the header fits in front of the block");
_Static_assert(alignof(max_align_t) <= MIN_ALIGN, "blocks are aligned for any type");

static block *live;

static size_t alignment_hint(MPI_Info info)
{
    const char *v = info == MPI_INFO_NULL ? NULL : lm_info_value(lm_info_get(info), "mpi_minimum_memory_alignment");
    if (!v) return MIN_ALIGN;
    char *end;
    unsigned long long a = strtoull(v, &end, 10);
    /* a hint that is not a power of two within reason is ignored */
    if (*end || a == 0 || (a & (a - 1)) || a > MAX_ALIGN) return MIN_ALIGN;
    return a < MIN_ALIGN ? MIN_ALIGN : (size_t)a;
}

int impl_MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    const char *fname = "MPI_Alloc_mem";
    if (size < 0) return lm_err_noobj(MPI_ERR_SIZE, fname, "size %ld is negative", (long)size);
    size_t align = alignment_hint(info);
    if ((uint64_t)size > MAX_SIZE) return lm_err_noobj(MPI_ERR_NO_MEM, fname, "cannot allocate %ld bytes", (long)size);
    /* the header sits in the alignment unit before the block; a zero-byte
     * block is still a distinct pointer that MPI_Free_mem accepts */
    void *base;
    if (posix_memalign(&base, align, align + (size_t)size) != 0)
        return lm_err_noobj(MPI_ERR_NO_MEM, fname, "cannot allocate %ld bytes", (long)size);
    char *user = (char *)base + align;
    block *b = (block *)(user - sizeof(block));
    b->user = user;
    b->base = base;
    b->prev = NULL;
    b->next = live;
    if (live) live->prev = b;
    live = b;
    memcpy(baseptr, &user, sizeof user);
    return MPI_SUCCESS;
}

int impl_MPI_Free_mem(void *base)
{
    if (!base) return MPI_SUCCESS;
    block *b = live;
    while (b && b->user != base) b = b->next;
    if (!b) return lm_err_noobj(MPI_ERR_BASE, "MPI_Free_mem", "base was not returned by MPI_Alloc_mem");
    if (b->prev) b->prev->next = b->next;
    else live = b->next;
    if (b->next) b->next->prev = b->prev;
    free(b->base);
    return MPI_SUCCESS;
}
