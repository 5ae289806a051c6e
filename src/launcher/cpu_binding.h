/* Binding a rank to the CPUs a rankfile's slot= names. Slots count from 0
 * among the CPUs this launcher may use (its affinity mask), so that "slot=1"
 * means the second usable CPU inside a container or cgroup too, as Open
 * MPI's logical numbering does. */
#ifndef LM_LAUNCHER_CPU_BINDING_H
#define LM_LAUNCHER_CPU_BINDING_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t */
#endif
#include <sched.h>
#include <stddef.h>

/* "0,2-3" -> the set of those usable CPUs. 0, or -1 with why (a slot past
 * the usable CPUs, a malformed list). */
int lm_cpus_from_slots(const char *slots, cpu_set_t *out, char *why, size_t whycap);

#endif
