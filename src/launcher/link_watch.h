/* A host's network links, watched by its launch agent: a link that goes
 * down mid-job (a pulled cable, `ip link set ... down`) would otherwise
 * leave ranks waiting on peers they can no longer reach for as long as TCP
 * keeps retrying. The agent records the links that carry IPv4 addresses
 * other than loopback when the job starts, and reports the first of them
 * that is no longer up and running (carrier lost). */
#ifndef LM_LAUNCHER_LINK_WATCH_H
#define LM_LAUNCHER_LINK_WATCH_H
#include <net/if.h>

#define LM_LINK_WATCH_MAX 16

typedef struct lm_link_watch {
    int n;
    char name[LM_LINK_WATCH_MAX][IF_NAMESIZE];
} lm_link_watch;

/* Record the links up and running now (none where the host has no network
 * but loopback: nothing is watched then). */
void lm_link_watch_init(lm_link_watch *w);
/* The name of a recorded link that is down now, or NULL. */
const char *lm_link_watch_down(const lm_link_watch *w);

#endif
