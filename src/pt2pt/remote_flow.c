/* Flow control toward receivers on other hosts (remote_flow.h): two small
 * sets of world ranks, the senders this receiver told it is congested and
 * the receivers that told this sender so. Both stay empty while nobody
 * floods anybody, and the sender's check is then one load. */
#include "pt2pt/remote_flow.h"
#include "pt2pt/engine_internal.h"
#include "util/lm_error.h"
#include "util/lm_hashmap.h"
#include "util/lm_state.h"

static lm_hashmap told;      /* senders told "on" (value: any non-NULL) */
static lm_hashmap congested; /* receivers that said "on" */
static int told_count, congested_count;
static int maps_ready;

static void ready(void)
{
    if (maps_ready) return;
    lm_hashmap_init(&told, LM_MEM_PT2PT);
    lm_hashmap_init(&congested, LM_MEM_PT2PT);
    maps_ready = 1;
}

static void notify(int dst, int on)
{
    lm_pkt h = {.am_id = LM_AM_PT2PT, .type = LM_PKT_CONGESTED, .size = (uint64_t)on};
    lm_pt2pt_post_control(dst, &h);
}

void lm_remote_flow_over(int src_world)
{
    if (src_world == lm_world_rank()) return; /* its own sends read its own counter */
    ready();
    if (lm_hashmap_get(&told, src_world)) return;
    if (lm_hashmap_put(&told, src_world, (void *)1) != 0)
        lm_fatal("out of memory for the flow control of rank %d", src_world);
    told_count++;
    notify(src_world, 1);
}

static void tell_off(int key, void *value, void *arg)
{
    (void)value, (void)arg;
    notify(key, 0);
}

void lm_remote_flow_relieved(void)
{
    if (!told_count) return;
    lm_hashmap_foreach(&told, tell_off, NULL);
    lm_hashmap_destroy(&told);
    lm_hashmap_init(&told, LM_MEM_PT2PT);
    told_count = 0;
}

int lm_remote_flow_told_any(void) { return told_count != 0; }

void lm_remote_flow_notice(int receiver_world, int on)
{
    ready();
    if (on) {
        if (lm_hashmap_get(&congested, receiver_world)) return;
        if (lm_hashmap_put(&congested, receiver_world, (void *)1) != 0)
            lm_fatal("out of memory for the flow control of rank %d", receiver_world);
        congested_count++;
    } else if (lm_hashmap_remove(&congested, receiver_world)) {
        congested_count--;
    }
}

int lm_remote_flow_congested(int dst_world) { return congested_count && lm_hashmap_get(&congested, dst_world) != NULL; }

void lm_remote_flow_reset(void)
{
    if (!maps_ready) return;
    lm_hashmap_destroy(&told);
    lm_hashmap_destroy(&congested);
    told_count = congested_count = 0;
    maps_ready = 0;
}
