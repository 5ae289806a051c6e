/* MPI_Info_create_env before MPI_Init gives the same keys as after it
 * (MPI-4.1 section 11.2.1), and the values that cannot change (command,
 * maxprocs, host, arch, wdir) are the same. */
#include "mpitest.h"

#define MAXKEYS 32

typedef struct {
    int n;
    char key[MAXKEYS][MPI_MAX_INFO_KEY];
    char val[MAXKEYS][256];
} snapshot;

static void take(MPI_Info info, snapshot *s)
{
    CHECK_MPI(MPI_Info_get_nkeys(info, &s->n));
    CHECK(s->n <= MAXKEYS, "%d keys", s->n);
    for (int i = 0; i < s->n; i++) {
        int len = 255, flag = 0;
        CHECK_MPI(MPI_Info_get_nthkey(info, i, s->key[i]));
        CHECK_MPI(MPI_Info_get_string(info, s->key[i], &len, s->val[i], &flag));
        CHECK(flag, "key %s has no value", s->key[i]);
    }
}

static const char *value(const snapshot *s, const char *key)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->key[i], key)) return s->val[i];
    return NULL;
}

int main(int argc, char **argv)
{
    snapshot before, after;
    MPI_Info info;
    CHECK_MPI(MPI_Info_create_env(argc, argv, &info));
    take(info, &before);
    CHECK_MPI(MPI_Info_free(&info));
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_MPI(MPI_Info_create_env(argc, argv, &info));
    take(info, &after);
    CHECK_MPI(MPI_Info_free(&info));
    CHECK(before.n == after.n, "%d keys before MPI_Init, %d after", before.n, after.n);
    for (int i = 0; i < after.n; i++) CHECK(value(&before, after.key[i]), "key %s only after MPI_Init", after.key[i]);
    static const char *steady[] = {"command", "maxprocs", "host", "arch", "wdir"};
    for (int i = 0; i < 5; i++) {
        const char *b = value(&before, steady[i]), *a = value(&after, steady[i]);
        CHECK(a && b && !strcmp(a, b), "%s: '%s' before MPI_Init, '%s' after", steady[i], b ? b : "(none)",
              a ? a : "(none)");
    }
    CHECK(atoi(value(&after, "maxprocs")) == size, "maxprocs %s, %d processes", value(&after, "maxprocs"), size);
    CHECK(value(&after, "thread_level"), "no thread_level");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("PASS info_env_before_init (%d keys)\n", after.n);
    MPI_Finalize();
    return 0;
}
