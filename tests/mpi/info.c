/* MPI_Info: set / get / delete / dup / free, key order, value truncation,
 * MPI_Info_get_string's length protocol, MPI_INFO_ENV and
 * MPI_Info_create_env, and the error classes under MPI_ERRORS_RETURN. */
#include "mpitest.h"

static void check_key(MPI_Info info, int n, const char *want)
{
    char key[MPI_MAX_INFO_KEY + 1];
    CHECK_MPI(MPI_Info_get_nthkey(info, n, key));
    CHECK(!strcmp(key, want), "key %d is \"%s\", expected \"%s\"", n, key, want);
}

static void check_value(MPI_Info info, const char *key, const char *want)
{
    char val[64];
    int flag = -1, len = -1;
    CHECK_MPI(MPI_Info_get_valuelen(info, key, &len, &flag));
    if (!want) {
        CHECK_EQ(flag, 0);
        return;
    }
    CHECK_EQ(flag, 1);
    CHECK_EQ(len, (int)strlen(want));
    CHECK_MPI(MPI_Info_get(info, key, (int)sizeof val - 1, val, &flag));
    CHECK(flag && !strcmp(val, want), "%s = \"%s\", expected \"%s\"", key, val, want);
}

static int nkeys(MPI_Info info)
{
    int n = -1;
    CHECK_MPI(MPI_Info_get_nkeys(info, &n));
    return n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    MPI_Info info, copy;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_EQ(nkeys(info), 0);
    CHECK_MPI(MPI_Info_set(info, "alpha", "1"));
    CHECK_MPI(MPI_Info_set(info, "beta", "two"));
    CHECK_MPI(MPI_Info_set(info, "gamma", "abcdef"));
    CHECK_EQ(nkeys(info), 3);
    /* replacing a value keeps the key's place */
    CHECK_MPI(MPI_Info_set(info, "beta", "2"));
    CHECK_EQ(nkeys(info), 3);
    check_key(info, 0, "alpha");
    check_key(info, 1, "beta");
    check_key(info, 2, "gamma");
    check_value(info, "alpha", "1");
    check_value(info, "beta", "2");
    check_value(info, "delta", NULL);
    mt_pass("set, get, nkeys, nthkey");

    /* MPI_Info_get copies at most valuelen characters, then a NUL */
    char val[16];
    int flag = -1;
#ifndef MPICH_VERSION
    /* MPICH fails with MPI_ERR_INFO_VALUE instead of truncating */
    memset(val, 'x', sizeof val);
    CHECK_MPI(MPI_Info_get(info, "gamma", 3, val, &flag));
    CHECK(flag && !strcmp(val, "abc"), "truncated value \"%s\"", val);
#endif
#if MPI_VERSION >= 4
    /* MPI_Info_get_string: buflen in is the buffer size, out the size needed */
    int buflen = 0;
    CHECK_MPI(MPI_Info_get_string(info, "gamma", &buflen, val, &flag));
    CHECK(flag && buflen == 7, "flag %d buflen %d", flag, buflen);
    buflen = 4;
    memset(val, 'x', sizeof val);
    CHECK_MPI(MPI_Info_get_string(info, "gamma", &buflen, val, &flag));
    CHECK(flag && buflen == 7 && !strcmp(val, "abc"), "flag %d buflen %d \"%s\"", flag, buflen, val);
    buflen = (int)sizeof val;
    CHECK_MPI(MPI_Info_get_string(info, "gamma", &buflen, val, &flag));
    CHECK(flag && buflen == 7 && !strcmp(val, "abcdef"), "flag %d buflen %d \"%s\"", flag, buflen, val);
    buflen = (int)sizeof val;
    CHECK_MPI(MPI_Info_get_string(info, "delta", &buflen, val, &flag));
    CHECK_EQ(flag, 0);
#endif
    mt_pass("value lengths");

    /* dup is a separate copy */
    CHECK_MPI(MPI_Info_dup(info, &copy));
    CHECK_MPI(MPI_Info_delete(info, "alpha"));
    CHECK_EQ(nkeys(info), 2);
    check_key(info, 0, "beta");
    check_value(info, "alpha", NULL);
    CHECK_EQ(nkeys(copy), 3);
    check_key(copy, 0, "alpha");
    check_value(copy, "alpha", "1");
    CHECK_MPI(MPI_Info_set(copy, "epsilon", "5"));
    check_value(info, "epsilon", NULL);
    CHECK_MPI(MPI_Info_free(&copy));
    CHECK(copy == MPI_INFO_NULL, "MPI_Info_free sets MPI_INFO_NULL");
    mt_pass("delete, dup, free");

    /* errors */
    char longkey[1000], longval[5000];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    memset(longval, 'v', sizeof longval - 1);
    longval[sizeof longval - 1] = '\0';
    CHECK_ERRCLASS(MPI_Info_set(info, longkey, "1"), MPI_ERR_INFO_KEY);
    CHECK_ERRCLASS(MPI_Info_set(info, "k", longval), MPI_ERR_INFO_VALUE);
    CHECK_ERRCLASS(MPI_Info_delete(info, "alpha"), MPI_ERR_INFO_NOKEY);
#ifdef MPICH_VERSION
    /* MPICH reports MPI_INFO_NULL as MPI_ERR_ARG */
    CHECK(MPI_Info_set(MPI_INFO_NULL, "k", "v") != MPI_SUCCESS, "MPI_INFO_NULL accepted");
    CHECK(MPI_Info_get_nkeys(MPI_INFO_NULL, &flag) != MPI_SUCCESS, "MPI_INFO_NULL accepted");
#else
    CHECK_ERRCLASS(MPI_Info_set(MPI_INFO_NULL, "k", "v"), MPI_ERR_INFO);
    CHECK_ERRCLASS(MPI_Info_get_nkeys(MPI_INFO_NULL, &flag), MPI_ERR_INFO);
#endif
    char key[MPI_MAX_INFO_KEY + 1];
#ifdef OPEN_MPI
    /* Open MPI reports an out-of-range n as MPI_ERR_INFO_KEY */
    CHECK(MPI_Info_get_nthkey(info, 2, key) != MPI_SUCCESS, "n = nkeys accepted");
    CHECK(MPI_Info_get_nthkey(info, -1, key) != MPI_SUCCESS, "n = -1 accepted");
#else
    CHECK_ERRCLASS(MPI_Info_get_nthkey(info, 2, key), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Info_get_nthkey(info, -1, key), MPI_ERR_ARG);
#endif
    CHECK_EQ(nkeys(info), 2);
#ifdef LEANMPI
    /* a freed info handle is detected (elsewhere handles are pointers and
     * using a freed one is undefined) */
    MPI_Info stale;
    CHECK_MPI(MPI_Info_dup(info, &copy));
    stale = copy;
    CHECK_MPI(MPI_Info_free(&copy));
    CHECK_ERRCLASS(MPI_Info_get_nkeys(stale, &flag), MPI_ERR_INFO);
    CHECK_ERRCLASS(MPI_Info_set(info, "", "1"), MPI_ERR_INFO_KEY);
    CHECK_ERRCLASS(MPI_Info_set(MPI_INFO_ENV, "k", "v"), MPI_ERR_INFO);
#endif
    CHECK_MPI(MPI_Info_free(&info));
    mt_pass("error classes");

    /* MPI_INFO_ENV: every key has a value; create_env has the same keys */
    int n = nkeys(MPI_INFO_ENV);
    for (int i = 0; i < n; i++) {
        int len = -1;
        CHECK_MPI(MPI_Info_get_nthkey(MPI_INFO_ENV, i, key));
        CHECK_MPI(MPI_Info_get_valuelen(MPI_INFO_ENV, key, &len, &flag));
        CHECK(flag && len >= 0, "MPI_INFO_ENV key %s", key);
    }
#ifdef LEANMPI
    char v[MPI_MAX_INFO_VAL];
    const char *must[] = {"command", "host", "arch", "wdir", "maxprocs", "thread_level"};
    for (int i = 0; i < 6; i++) {
        CHECK_MPI(MPI_Info_get(MPI_INFO_ENV, must[i], MPI_MAX_INFO_VAL - 1, v, &flag));
        CHECK(flag && v[0], "MPI_INFO_ENV has no %s", must[i]);
    }
    CHECK_MPI(MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL - 1, v, &flag));
    CHECK_EQ(atoi(v), mt_size(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL - 1, v, &flag));
    CHECK(strstr(v, "info") != NULL, "command is \"%.100s\"", v);
#endif
#if MPI_VERSION >= 4
    MPI_Info env;
    CHECK_MPI(MPI_Info_create_env(0, NULL, &env));
    CHECK_EQ(nkeys(env), n);
    CHECK_MPI(MPI_Info_free(&env));
#endif
    mt_pass("MPI_INFO_ENV");
    MPI_Finalize();
    return 0;
}
