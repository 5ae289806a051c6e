/* See link_watch.h. getifaddrs reports each link's flags from the kernel
 * (a netlink dump): IFF_UP is the administrative state, IFF_RUNNING the
 * carrier, which a veth loses when its peer goes down. */
#include "link_watch.h"

#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static int usable(const struct ifaddrs *a)
{
    unsigned up = IFF_UP | IFF_RUNNING;
    return (a->ifa_flags & up) == up && !(a->ifa_flags & IFF_LOOPBACK);
}

void lm_link_watch_init(lm_link_watch *w)
{
    w->n = 0;
    struct ifaddrs *all;
    if (getifaddrs(&all) != 0) return;
    for (struct ifaddrs *a = all; a && w->n < LM_LINK_WATCH_MAX; a = a->ifa_next) {
        if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !usable(a)) continue;
        int seen = 0;
        for (int i = 0; i < w->n && !seen; i++) seen = strcmp(w->name[i], a->ifa_name) == 0;
        if (!seen) snprintf(w->name[w->n++], IF_NAMESIZE, "%s", a->ifa_name);
    }
    freeifaddrs(all);
}

const char *lm_link_watch_down(const lm_link_watch *w)
{
    if (!w->n) return NULL;
    struct ifaddrs *all;
    if (getifaddrs(&all) != 0) return NULL; /* cannot tell: say nothing */
    const char *down = NULL;
    for (int i = 0; i < w->n && !down; i++) {
        int up = 0;
        for (struct ifaddrs *a = all; a && !up; a = a->ifa_next) up = !strcmp(a->ifa_name, w->name[i]) && usable(a);
        if (!up) down = w->name[i];
    }
    freeifaddrs(all);
    return down;
}
