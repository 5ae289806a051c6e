/* leanmpi-info: what this LeanMPI build provides.
 *   leanmpi-info                 summary (version, functions, parameters)
 *   leanmpi-info --unsupported   MPI functions that raise MPI_ERR_UNSUPPORTED_OPERATION
 *   leanmpi-info --implemented   MPI functions implemented
 *   leanmpi-info --params        control variables (LEANMPI_*) with values, and the
 *                                performance variables MPI_T offers
 *   leanmpi-info --algorithms    collective algorithms, the selection table, overrides
 *   leanmpi-info --decompose COLL --np N --bytes B [--algorithm A] [--root R]
 *                [--type-size S] [--non-commutative] [--node-local]
 *                [--ranks-per-node K]
 *                (--node-local: the ranks share one node, where small data
 *                goes through node shared memory; --ranks-per-node: the
 *                ranks sit K to a host in rank order, where barrier, bcast
 *                and allreduce go hierarchical; default: spread over nodes)
 *                                every point-to-point message the collective
 *                                exchanges on N ranks, and the per-pair bytes
 *   leanmpi-info --boot          run as a process of a job (under any launcher):
 *                                the bootstrap it started with (native, pmix,
 *                                pmi2, pmi1, singleton) and where it runs */
#include "mpi.h"
#include "binding/function_table.h"
#include "boot/boot.h"
#include "coll/decompose.h"
#include "util/lm_cvar.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
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
    static const char *const classes[] = {"state",        "level",   "size",      "percentage", "highwatermark",
                                          "lowwatermark", "counter", "aggregate", "timer",      "generic"};
    int provided, num;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return;
    if (MPI_T_pvar_get_num(&num) == MPI_SUCCESS)
        for (int i = 0; i < num; i++) {
            char name[128], desc[256];
            int name_len = sizeof name, desc_len = sizeof desc, verb, cls, bind, ro, cont, atomic;
            MPI_Datatype dt;
            MPI_T_enum et;
            if (MPI_T_pvar_get_info(i, name, &name_len, &verb, &cls, &dt, &et, desc, &desc_len, &bind, &ro, &cont,
                                    &atomic) != MPI_SUCCESS)
                continue;
            printf("%-36s %-13s %s\n", name, cls >= 0 && cls < 10 ? classes[cls] : "?", desc);
        }
    MPI_T_finalize();
}

static void algorithms(void)
{
    const char *coll, *name, *summary, *alg;
    printf("Collective algorithms (force one with LEANMPI_<COLLECTIVE>_ALGORITHM=<name>):\n");
    for (int i = 0; lm_coll_algorithm_info(i, &coll, &name, &summary, NULL); i++)
        printf("  %-22s %-20s %s\n", coll, name, summary);
    printf("Selection table (first matching row; 0 = no limit; bytes: the block of one rank):\n");
    printf("  %-22s %10s %12s  %s\n", "collective", "max procs", "max bytes", "algorithm");
    int max_procs, over;
    size_t max_bytes;
    for (int i = 0; lm_coll_selection_row(i, &coll, &max_procs, &max_bytes, &alg, &over); i++)
        printf("  %-22s %10d %12zu  %s%s\n", coll, max_procs, max_bytes, alg,
               over ? "  (only where ranks outnumber the node's CPUs)" : "");
    printf("Overrides set in this environment:");
    int any = 0;
    for (int i = 0; lm_coll_algorithm_info(i, &coll, &name, &summary, NULL); i++) {
        if (i && lm_coll_algorithm_info(i - 1, &alg, &name, &summary, NULL) && !strcmp(alg, coll)) continue;
        char var[64];
        int n = snprintf(var, sizeof var, "LEANMPI_");
        for (const char *p = coll; *p && n < 50; p++) var[n++] = (char)toupper((unsigned char)*p);
        snprintf(var + n, sizeof var - (size_t)n, "_ALGORITHM");
        const char *v = getenv(var);
        if (v && *v) printf("%s %s=%s", any++ ? "," : "", var, v);
    }
    printf("%s\n", any ? "" : " none");
}

/* --decompose: messages in schedule order, then the byte matrix */
typedef struct {
    int np;
    size_t *sent; /* np x np: bytes from row to column */
} decomposition;

static void print_message(int rank, int is_send, int step, int peer, size_t bytes, void *arg)
{
    decomposition *d = arg;
    if (!is_send) return;
    printf("%4d %6d %6d %12zu\n", step, rank, peer, bytes);
    d->sent[(size_t)rank * (size_t)d->np + (size_t)peer] += bytes;
}

static int decompose(int argc, char **argv)
{
    lm_coll_query q = {.np = 0, .commutative = 1, .type_size = 1};
    int have_bytes = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--decompose") && v) q.collective = argv[++i];
        else if (!strcmp(a, "--np") && v) q.np = atoi(argv[++i]);
        else if (!strcmp(a, "--bytes") && v) q.bytes = (size_t)strtoull(argv[++i], NULL, 10), have_bytes = 1;
        else if (!strcmp(a, "--algorithm") && v) q.algorithm = argv[++i];
        else if (!strcmp(a, "--root") && v) q.root = atoi(argv[++i]);
        else if (!strcmp(a, "--type-size") && v) q.type_size = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--non-commutative")) q.commutative = 0;
        else if (!strcmp(a, "--node-local")) q.node_local = 1;
        else if (!strcmp(a, "--ranks-per-node") && v) q.ranks_per_node = atoi(argv[++i]);
        else {
            fprintf(stderr, "leanmpi-info: unknown or incomplete option '%s'\n", a);
            return 2;
        }
    }
    if (!q.collective || q.np < 1 || !have_bytes) {
        fprintf(stderr, "usage: leanmpi-info --decompose COLL --np N --bytes B [--algorithm A] [--root R] "
                        "[--type-size S] [--non-commutative] [--node-local] [--ranks-per-node K]\n");
        return 2;
    }
    decomposition d = {q.np, calloc((size_t)q.np * (size_t)q.np, sizeof(size_t))};
    if (!d.sent) return 1;
    const char *alg = NULL;
    char err[256];
    printf("# %s on %d processes, %zu bytes per block, root %d\n", q.collective, q.np, q.bytes, q.root);
    printf("#step    src    dst        bytes\n");
    if (lm_coll_decompose(&q, print_message, &d, &alg, err, sizeof err)) {
        fprintf(stderr, "leanmpi-info: %s\n", err);
        free(d.sent);
        return 2;
    }
    printf("# algorithm: %s\n", alg);
    printf("# bytes exchanged per pair (sent + received); row i, column j\n");
    for (int i = 0; i < q.np; i++) {
        for (int j = 0; j < q.np; j++) {
            size_t ij = d.sent[(size_t)i * (size_t)q.np + (size_t)j], ji = d.sent[(size_t)j * (size_t)q.np + (size_t)i];
            printf("%s%zu", j ? " " : "", ij + ji);
        }
        printf("\n");
    }
    free(d.sent);
    return 0;
}

/* One line per process: which bootstrap MPI_Init took, and what it gave. */
static int boot(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
    int rank, size, lrank, lsize;
    MPI_Comm node;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &lrank);
    MPI_Comm_size(node, &lsize);
    char host[MPI_MAX_PROCESSOR_NAME];
    int hl;
    MPI_Get_processor_name(host, &hl);
    printf("bootstrap %s rank %d of %d on %s, local %d of %d\n", lm_boot_name(), rank, size, host, lrank, lsize);
    MPI_Comm_free(&node);
    return MPI_Finalize() == MPI_SUCCESS ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--boot")) return boot(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "--algorithms")) return algorithms(), 0;
    if (argc > 1 && !strcmp(argv[1], "--decompose")) return decompose(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "--unsupported")) return list(0), 0;
    if (argc > 1 && !strcmp(argv[1], "--implemented")) return list(1), 0;
    if (argc > 1 && !strcmp(argv[1], "--params")) {
        params();
        printf("Performance variables (MPI_T):\n");
        pvars();
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "usage: leanmpi-info [--unsupported | --implemented | --params | --algorithms | --boot |\n"
                        "                     --decompose COLL --np N --bytes B [--algorithm A] [--root R]\n"
                        "                     [--type-size S] [--non-commutative] [--node-local]\n"
                        "                     [--ranks-per-node K]]\n");
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
