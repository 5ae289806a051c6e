/* Slots to CPU sets (cpu_binding.h). */
#include "cpu_binding.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The CPU number of the k-th usable CPU, or -1. */
static int usable_cpu(const cpu_set_t *usable, long k)
{
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, usable) && k-- == 0) return c;
    return -1;
}

static int parse_index(const char *s, char **end, long *out)
{
    if (*s < '0' || *s > '9') return -1;
    errno = 0;
    *out = strtol(s, end, 10);
    return errno || *out >= CPU_SETSIZE ? -1 : 0;
}

int lm_cpus_from_slots(const char *slots, cpu_set_t *out, char *why, size_t whycap)
{
    cpu_set_t usable;
    if (sched_getaffinity(0, sizeof usable, &usable) != 0) {
        snprintf(why, whycap, "cannot read the usable CPUs: %s", strerror(errno));
        return -1;
    }
    CPU_ZERO(out);
    const char *p = slots;
    while (*p) {
        long lo, hi;
        char *end;
        if (parse_index(p, &end, &lo) != 0) goto malformed;
        hi = lo;
        if (*end == '-' && parse_index(end + 1, &end, &hi) != 0) goto malformed;
        if (hi < lo) goto malformed;
        for (long k = lo; k <= hi; k++) {
            int c = usable_cpu(&usable, k);
            if (c < 0) {
                snprintf(why, whycap, "slot %ld is past the %d CPUs usable here (slots count from 0)", k,
                         CPU_COUNT(&usable));
                return -1;
            }
            CPU_SET(c, out);
        }
        if (*end == ',' && end[1]) end++;
        else if (*end) goto malformed;
        p = end;
    }
    if (CPU_COUNT(out) > 0) return 0;
malformed:
    snprintf(why, whycap, "slot '%s' is not a list of CPU numbers and ranges (such as 0,2-3)", slots);
    return -1;
}
