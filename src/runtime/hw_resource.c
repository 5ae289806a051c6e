/* MPI_Get_hw_resource_info: the facts about this process's hardware that
 * the kernel tells without a topology library. */
#include "util/lm_error.h"
#include "api/impl_gen.h"
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The CPUs this process may run on as a list of ranges ("0-3,6"). */
static void cpu_list(char *buf, size_t len)
{
    cpu_set_t set;
    buf[0] = '\0';
    if (sched_getaffinity(0, sizeof set, &set) != 0) return;
    size_t n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < len; c++) {
        if (!CPU_ISSET(c, &set)) continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) last++;
        int w = last > c ? snprintf(buf + n, len - n, "%s%d-%d", n ? "," : "", c, last)
                         : snprintf(buf + n, len - n, "%s%d", n ? "," : "", c);
        if (w < 0 || (size_t)w >= len - n) {
            buf[n] = '\0';
            return;
        }
        n += (size_t)w;
        c = last;
    }
}

int impl_MPI_Get_hw_resource_info(MPI_Info *hw_info)
{
    MPI_Info in;
    int rc = impl_MPI_Info_create(&in);
    if (rc) return rc;
    char cpus[MPI_MAX_INFO_VAL], num[32];
    cpu_set_t set;
    int usable = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_list(cpus, sizeof cpus);
    /* the one resource type this library can restrict processes to is the
     * node's shared memory (the type MPI_COMM_TYPE_HW_GUIDED splits by) */
    rc = impl_MPI_Info_set(in, "mpi_hw_resource_type", "mpi_shared_memory");
    if (!rc && usable > 0) {
        snprintf(num, sizeof num, "%d", usable);
        rc = impl_MPI_Info_set(in, "leanmpi_usable_cpus", num);
    }
    if (!rc && online > 0) {
        snprintf(num, sizeof num, "%ld", online);
        rc = impl_MPI_Info_set(in, "leanmpi_online_cpus", num);
    }
    if (!rc && cpus[0]) rc = impl_MPI_Info_set(in, "leanmpi_cpu_list", cpus);
    if (rc) {
        impl_MPI_Info_free(&in);
        return rc;
    }
    *hw_info = in;
    return MPI_SUCCESS;
}
