/* MPI_Get_hw_resource_info (MPI-4.1 section 11.4.4): a new info object
 * describing the hardware the calling process may run on at the moment of
 * the call. The standard leaves the keys to the implementation; LeanMPI
 * reports the processors of the process's affinity mask:
 *   leanmpi_cpu_count  how many there are
 *   leanmpi_cpu_list   which, as ranges ("0-3,8") */
#include "core/lm_error.h"
#include "binding/impl_gen.h"
#include <sched.h>
#include <stdio.h>
#include <string.h>

/* "a-b,c,..." of the processors in set, cut short (never mid-range) when
 * the value would not fit an info value. */
static void cpu_list(const cpu_set_t *set, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set)) continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set)) last++;
        char item[32];
        int n = last > c ? snprintf(item, sizeof item, "%s%d-%d", len ? "," : "", c, last)
                         : snprintf(item, sizeof item, "%s%d", len ? "," : "", c);
        if (n < 0 || len + (size_t)n + 1 > cap) break;
        memcpy(out + len, item, (size_t)n + 1);
        len += (size_t)n;
        c = last;
    }
}

int impl_MPI_Get_hw_resource_info(MPI_Info *hw_info)
{
    MPI_Info info;
    int rc = impl_MPI_Info_create(&info);
    if (rc != MPI_SUCCESS) return rc;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        char count[16], list[MPI_MAX_INFO_VAL];
        snprintf(count, sizeof count, "%d", CPU_COUNT(&set));
        cpu_list(&set, list, sizeof list);
        rc = impl_MPI_Info_set(info, "leanmpi_cpu_count", count);
        if (rc == MPI_SUCCESS && list[0]) rc = impl_MPI_Info_set(info, "leanmpi_cpu_list", list);
        if (rc != MPI_SUCCESS) {
            impl_MPI_Info_free(&info);
            return rc;
        }
    }
    *hw_info = info;
    return MPI_SUCCESS;
}
