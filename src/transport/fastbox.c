#include "fastbox.h"

int lm_fastbox_claim(lm_shm_area *a, int receiver, int my_local_rank, unsigned max_slots)
{
    if (max_slots > a->fb_slots) max_slots = a->fb_slots;
    for (unsigned i = 0; i < max_slots; i++) {
        lm_fastbox_slot *s = lm_fastbox_slot_at(a, receiver, i);
        /* Read first: a taken slot costs a shared read, not a line steal. */
        if (atomic_load_explicit(&s->owner, memory_order_relaxed) != 0) continue;
        int32_t expected = 0;
        if (atomic_compare_exchange_strong_explicit(&s->owner, &expected, my_local_rank + 1, memory_order_acq_rel,
                                                    memory_order_relaxed))
            return (int)i;
    }
    return -1;
}
