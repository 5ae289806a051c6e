/* leanmpi-info: what this LeanMPI build provides.
 *   leanmpi-info                 summary (version, functions, parameters)
 *   leanmpi-info --unsupported   MPI functions that raise MPI_ERR_UNSUPPORTED_OPERATION
 *   leanmpi-info --implemented   MPI functions implemented
 *   leanmpi-info --params        control variables (LEANMPI_*) with values, and the
 *                                performance variables MPI_T offers */
#include "mpi.h"
#include "binding/function_table.h"
#include "core/lm_cvar.h"
#include <stdio.h>
#include <string.h>

static void list(int implemented)
{
    for (size_t i = 0; i < lm_function_count(); i++)
        if (lm_function_implemented(i) == implemented) printf("%s\n", lm_function_name(i));
}

static void params(void)
{
    long v;
    const lm_cvar_desc *d;
    for (int i = 0; (d = lm_cvar_describe(i, &v)) != NULL; i++)
        printf("LEANMPI_%-20s = %-10ld (default %ld) %s\n", d->name, v, d->default_value, d->description);
}

/* Performance variables, through MPI_T itself: names and descriptions only,
 * since the values mean little in a process that ran no MPI program. */
static void pvars(void)
{
    static const char *const classes[] = {"state", "level", "size", "percentage", "highwatermark",
                                          "lowwatermark", "counter", "aggregate", "timer", "generic"};
    int provided, num;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return;
    if (MPI_T_pvar_get_num(&num) == MPI_SUCCESS)
        for (int i = 0; i < num; i++) {
            char name[128], desc[256];
            int name_len = sizeof name, desc_len = sizeof desc, verb, cls, bind, ro, cont, atomic;
            MPI_Datatype dt;
            MPI_T_enum et;
            if (MPI_T_pvar_get_info(i, name, &name_len, &verb, &cls, &dt, &et, desc, &desc_len, &bind, &ro,
                                    &cont, &atomic) != MPI_SUCCESS)
                continue;
            printf("%-36s %-13s %s\n", name, cls >= 0 && cls < 10 ? classes[cls] : "?", desc);
        }
    MPI_T_finalize();
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--unsupported")) return list(0), 0;
    if (argc > 1 && !strcmp(argv[1], "--implemented")) return list(1), 0;
    if (argc > 1 && !strcmp(argv[1], "--params")) {
        params();
        printf("Performance variables (MPI_T):\n");
        pvars();
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "usage: leanmpi-info [--unsupported | --implemented | --params]\n");
        return 2;
    }
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    size_t impl = 0, n = lm_function_count();
    for (size_t i = 0; i < n; i++) impl += (size_t)lm_function_implemented(i);
    printf("%s\n", version);
    printf("MPI functions: %zu implemented, %zu not yet (leanmpi-info --unsupported lists them)\n", impl, n - impl);
    printf("Control variables:\n");
    params();
    return 0;
}
