/* leanmpi-info: what this LeanMPI build provides.
 *   leanmpi-info                 summary (version, functions, parameters)
 *   leanmpi-info --unsupported   MPI functions that raise MPI_ERR_UNSUPPORTED_OPERATION
 *   leanmpi-info --implemented   MPI functions implemented
 *   leanmpi-info --params        control variables (LEANMPI_*) with values */
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

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--unsupported")) return list(0), 0;
    if (argc > 1 && !strcmp(argv[1], "--implemented")) return list(1), 0;
    if (argc > 1 && !strcmp(argv[1], "--params")) return params(), 0;
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
