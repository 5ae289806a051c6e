/* LMTEST-LEANMPI-ONLY */
/* Misuse of the object calls under MPI_ERRORS_RETURN: groups, communicators
 * and datatypes used after they were freed, invalid group ranks and ranges,
 * invalid datatype constructor arguments, keyvals of the wrong object kind or
 * already freed, info keys and indices out of range, error codes and classes
 * that do not exist, thread queries without output and a second MPI_Init.
 * Each call must return the expected class and change
 * nothing (peers differ on several of these classes, hence LeanMPI only). */
#include "mpitest.h"

static int rank, size;

static void groups(void)
{
    MPI_Group world, g, stale, out = MPI_GROUP_NULL;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_MPI(MPI_Group_incl(world, 1, &rank, &g));
    stale = g;
    CHECK_MPI(MPI_Group_free(&g));
    CHECK(g == MPI_GROUP_NULL, "Group_free sets MPI_GROUP_NULL");
    int n, r, res;
    /* used after free */
    CHECK_ERRCLASS(MPI_Group_size(stale, &n), MPI_ERR_GROUP);
    CHECK_ERRCLASS(MPI_Group_rank(stale, &r), MPI_ERR_GROUP);
    CHECK_ERRCLASS(MPI_Group_compare(stale, world, &res), MPI_ERR_GROUP);
    CHECK_ERRCLASS(MPI_Group_union(world, stale, &out), MPI_ERR_GROUP);
    CHECK_ERRCLASS(MPI_Group_free(&stale), MPI_ERR_GROUP);
    MPI_Comm c = MPI_COMM_NULL;
    CHECK_ERRCLASS(MPI_Comm_create(MPI_COMM_WORLD, stale, &c), MPI_ERR_GROUP);
    CHECK_ERRCLASS(MPI_Group_size(MPI_GROUP_NULL, &n), MPI_ERR_GROUP);
    /* ranks outside the group, repeated ranks, bad ranges */
    int bad[2] = {size, 0};
    CHECK_ERRCLASS(MPI_Group_incl(world, 1, bad, &out), MPI_ERR_RANK);
    int neg = -1;
    CHECK_ERRCLASS(MPI_Group_excl(world, 1, &neg, &out), MPI_ERR_RANK);
    int twice[2] = {0, 0};
    if (size > 1) { /* with one process, two ranks are already too many (MPI_ERR_ARG below) */
        CHECK_ERRCLASS(MPI_Group_incl(world, 2, twice, &out), MPI_ERR_RANK);
        CHECK_ERRCLASS(MPI_Group_excl(world, 2, twice, &out), MPI_ERR_RANK);
    }
    CHECK_ERRCLASS(MPI_Group_incl(world, size + 1, bad, &out), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Group_incl(world, -1, bad, &out), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Group_incl(world, 1, NULL, &out), MPI_ERR_ARG);
    int zero_stride[1][3] = {{0, 0, 0}};
    CHECK_ERRCLASS(MPI_Group_range_incl(world, 1, zero_stride, &out), MPI_ERR_ARG);
    int beyond[1][3] = {{0, size, 1}};
    CHECK_ERRCLASS(MPI_Group_range_incl(world, 1, beyond, &out), MPI_ERR_RANK);
    CHECK_ERRCLASS(MPI_Group_range_excl(world, 1, beyond, &out), MPI_ERR_RANK);
    CHECK_ERRCLASS(MPI_Group_range_incl(world, -1, beyond, &out), MPI_ERR_ARG);
    int tr = size, tr_out;
    CHECK_ERRCLASS(MPI_Group_translate_ranks(world, 1, &tr, world, &tr_out), MPI_ERR_RANK);
    CHECK(out == MPI_GROUP_NULL, "a failed group constructor returned a group");
    /* every group handle the program receives is its own: one from
     * MPI_Comm_group is invalid once freed (also for a second free) while the
     * communicator, whose group it is, goes on */
    MPI_Group cg1, cg2;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &cg1));
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &cg2));
    stale = cg1;
    CHECK_MPI(MPI_Group_free(&cg1));
    CHECK_ERRCLASS(MPI_Group_size(stale, &n), MPI_ERR_GROUP);
    CHECK_ERRCLASS(MPI_Group_free(&stale), MPI_ERR_GROUP);
    CHECK_MPI(MPI_Group_compare(cg2, world, &res));
    CHECK_EQ(res, MPI_IDENT);
    CHECK_MPI(MPI_Group_free(&cg2));
    if (size >= 4) {
        /* the same for an irregular group (a list, shared by the handles) */
        int some[3] = {0, 1, 3};
        MPI_Group lg, h1, h2;
        MPI_Comm lc;
        CHECK_MPI(MPI_Group_incl(world, 3, some, &lg));
        CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, lg, &lc));
        CHECK_MPI(MPI_Group_free(&lg));
        if (lc != MPI_COMM_NULL) {
            CHECK_MPI(MPI_Comm_group(lc, &h1));
            CHECK_MPI(MPI_Comm_group(lc, &h2));
            stale = h1;
            CHECK_MPI(MPI_Group_free(&h1));
            CHECK_ERRCLASS(MPI_Group_rank(stale, &r), MPI_ERR_GROUP);
            CHECK_ERRCLASS(MPI_Group_free(&stale), MPI_ERR_GROUP);
            int wr[3] = {0, 1, 2}, tr3[3];
            CHECK_MPI(MPI_Group_translate_ranks(h2, 3, wr, world, tr3));
            CHECK(tr3[0] == 0 && tr3[1] == 1 && tr3[2] == 3, "translated %d %d %d", tr3[0], tr3[1], tr3[2]);
            CHECK_MPI(MPI_Group_free(&h2));
            CHECK_MPI(MPI_Comm_free(&lc));
        }
    }
    /* a predefined group cannot be freed; MPI_GROUP_EMPTY is a group */
    MPI_Group empty = MPI_GROUP_EMPTY;
    CHECK_MPI(MPI_Group_size(empty, &n));
    CHECK_EQ(n, 0);
    CHECK_MPI(MPI_Group_size(world, &n));
    CHECK_EQ(n, size);
    CHECK_MPI(MPI_Group_free(&world));
    mt_pass("errors_objects: groups after free, ranks outside the group, repeated ranks, bad ranges");
}

static void communicators(void)
{
    MPI_Comm c, stale, out = MPI_COMM_NULL;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    stale = c;
    CHECK_MPI(MPI_Comm_free(&c));
    CHECK(c == MPI_COMM_NULL, "Comm_free sets MPI_COMM_NULL");
    int r, x = 1;
    MPI_Group g;
    MPI_Request rq;
    CHECK_ERRCLASS(MPI_Comm_rank(stale, &r), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Comm_group(stale, &g), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Comm_dup(stale, &out), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Comm_split(stale, 0, 0, &out), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Send(&x, 1, MPI_INT, 0, 0, stale), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Isend(&x, 1, MPI_INT, 0, 0, stale, &rq), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Barrier(stale), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Allreduce(&x, &r, 1, MPI_INT, MPI_SUM, stale), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Comm_set_attr(stale, MPI_TAG_UB, &x), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Comm_set_name(stale, "stale"), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Comm_free(&stale), MPI_ERR_COMM);
    /* predefined communicators cannot be freed */
    MPI_Comm w = MPI_COMM_WORLD, s = MPI_COMM_SELF;
    CHECK_ERRCLASS(MPI_Comm_free(&w), MPI_ERR_COMM);
    CHECK_ERRCLASS(MPI_Comm_free(&s), MPI_ERR_COMM);
    CHECK(w == MPI_COMM_WORLD && s == MPI_COMM_SELF, "a failed free changed the handle");
    /* a group that is not a subgroup of the communicator's */
    MPI_Comm half = MPI_COMM_NULL;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank == 0, 0, &half));
    if (size > 1) {
        MPI_Group wg;
        CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        CHECK_MPI(MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN));
        /* every member passes world's group, larger than half's: erroneous everywhere */
        CHECK_ERRCLASS(MPI_Comm_create_group(half, wg, 0, &out), MPI_ERR_GROUP);
        CHECK_MPI(MPI_Group_free(&wg));
    }
    CHECK_MPI(MPI_Comm_free(&half));
    /* an intercommunicator: no topology, and invalid once freed */
    if (size > 1) {
        MPI_Comm local, ic, stale_ic;
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local));
        CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 61, &ic));
        CHECK_MPI(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
        int y[64];
        CHECK_ERRCLASS(MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, ic), MPI_ERR_TOPOLOGY);
        CHECK_ERRCLASS(MPI_Cartdim_get(ic, &r), MPI_ERR_TOPOLOGY);
        stale_ic = ic;
        CHECK_MPI(MPI_Comm_free(&ic));
        CHECK_ERRCLASS(MPI_Comm_remote_size(stale_ic, &r), MPI_ERR_COMM);
        CHECK_ERRCLASS(MPI_Intercomm_merge(stale_ic, 0, &out), MPI_ERR_COMM);
        CHECK_ERRCLASS(MPI_Comm_remote_group(stale_ic, &g), MPI_ERR_COMM);
        CHECK_MPI(MPI_Comm_free(&local));
    }
    /* a split type that does not exist, a negative tag, no request, a freed info */
    CHECK_ERRCLASS(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &out), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, -5, &out), MPI_ERR_TAG);
    CHECK_ERRCLASS(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_NULL, 0, &out), MPI_ERR_GROUP);
    CHECK_ERRCLASS(MPI_Comm_idup(MPI_COMM_WORLD, &out, NULL), MPI_ERR_ARG);
    MPI_Info info, stale_info;
    CHECK_MPI(MPI_Info_create(&info));
    stale_info = info;
    CHECK_MPI(MPI_Info_free(&info));
    CHECK_ERRCLASS(MPI_Comm_set_info(MPI_COMM_WORLD, stale_info), MPI_ERR_INFO);
    CHECK_ERRCLASS(MPI_Comm_set_name(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_NULL, &r), MPI_ERR_COMM);
    MPI_Op sum = MPI_SUM;
    CHECK_ERRCLASS(MPI_Op_free(&sum), MPI_ERR_OP);
    CHECK(out == MPI_COMM_NULL, "a failed constructor returned a communicator");
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &r));
    CHECK_EQ(r, rank);
    mt_pass("errors_objects: communicators after free, predefined ones not freed, groups that do not fit");
}

static void datatypes(void)
{
    MPI_Datatype t, stale, out = MPI_DATATYPE_NULL;
    CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    stale = t;
    CHECK_MPI(MPI_Type_free(&t));
    CHECK(t == MPI_DATATYPE_NULL, "Type_free sets MPI_DATATYPE_NULL");
    int n, buf[8] = {0};
    MPI_Aint lb, ext;
    MPI_Count cn;
    /* a committed type used after free */
    CHECK_ERRCLASS(MPI_Type_size(stale, &n), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Type_get_extent(stale, &lb, &ext), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Type_commit(&stale), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Type_dup(stale, &out), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Type_contiguous(2, stale, &out), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Type_vector(2, 1, 2, stale, &out), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Pack_size(1, stale, MPI_COMM_WORLD, &n), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Send(buf, 1, stale, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Bcast(buf, 1, stale, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv(buf, 1, MPI_INT, rank, 1, buf + 1, 1, MPI_INT, rank, 1, MPI_COMM_WORLD, &st));
    CHECK_ERRCLASS(MPI_Get_count(&st, stale, &n), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Get_elements_x(&st, stale, &cn), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Type_free(&stale), MPI_ERR_TYPE);
    /* predefined types cannot be freed */
    MPI_Datatype pre = MPI_INT;
    CHECK_ERRCLASS(MPI_Type_free(&pre), MPI_ERR_TYPE);
    CHECK(pre == MPI_INT, "a failed free changed the handle");
    /* constructors: negative counts and block lengths, missing arrays, bad subarrays */
    CHECK_ERRCLASS(MPI_Type_contiguous(-1, MPI_INT, &out), MPI_ERR_COUNT);
    CHECK_ERRCLASS(MPI_Type_vector(-1, 1, 1, MPI_INT, &out), MPI_ERR_COUNT);
    CHECK_ERRCLASS(MPI_Type_vector(2, -1, 1, MPI_INT, &out), MPI_ERR_COUNT);
    CHECK_ERRCLASS(MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &out), MPI_ERR_TYPE);
    int bl[2] = {1, -1}, disp[2] = {0, 4};
    CHECK_ERRCLASS(MPI_Type_indexed(2, bl, disp, MPI_INT, &out), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Type_indexed(2, NULL, disp, MPI_INT, &out), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Type_indexed(2, bl, NULL, MPI_INT, &out), MPI_ERR_ARG);
    int bl1[2] = {1, 1};
    MPI_Aint adisp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DATATYPE_NULL};
    CHECK_ERRCLASS(MPI_Type_create_struct(2, bl1, adisp, types, &out), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Type_create_struct(2, bl1, adisp, NULL, &out), MPI_ERR_ARG);
    int sizes[2] = {4, 4}, subs[2] = {2, 5}, starts[2] = {0, 0};
    CHECK_ERRCLASS(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &out), MPI_ERR_ARG);
    int subs_ok[2] = {2, 2}, starts_bad[2] = {3, 0};
    CHECK_ERRCLASS(MPI_Type_create_subarray(2, sizes, subs_ok, starts_bad, MPI_ORDER_C, MPI_INT, &out), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Type_create_subarray(2, sizes, subs_ok, starts, 12345, MPI_INT, &out), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Type_create_subarray(0, sizes, subs_ok, starts, MPI_ORDER_C, MPI_INT, &out), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Type_create_hvector(-1, 1, 8, MPI_INT, &out), MPI_ERR_COUNT);
    CHECK_ERRCLASS(MPI_Type_create_resized(MPI_DATATYPE_NULL, 0, 8, &out), MPI_ERR_TYPE);
    CHECK_ERRCLASS(MPI_Type_create_indexed_block(2, -1, disp, MPI_INT, &out), MPI_ERR_COUNT);
    CHECK_ERRCLASS(MPI_Type_create_hindexed_block(2, 1, NULL, MPI_INT, &out), MPI_ERR_ARG);
    /* darray: a rank outside the process grid, a grid that does not match
     * the size, a distribution that does not exist */
    int gs[2] = {4, 4}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
    int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 2}, ps3[2] = {3, 1};
    int nodist[2] = {77, 77};
    CHECK_ERRCLASS(MPI_Type_create_darray(4, 4, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &out), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Type_create_darray(4, -1, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &out), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Type_create_darray(1, 0, 2, gs, dist, darg, ps3, MPI_ORDER_C, MPI_INT, &out), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Type_create_darray(4, 0, 2, gs, nodist, darg, ps, MPI_ORDER_C, MPI_INT, &out), MPI_ERR_ARG);
    /* no predefined type of that class and size; Fortran precisions nothing has */
    CHECK_ERRCLASS(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &out), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Type_match_size(999, 4, &out), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Type_create_f90_real(1000, 1000, &out), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Type_create_f90_integer(1000, &out), MPI_ERR_ARG);
    CHECK(out == MPI_DATATYPE_NULL, "a failed constructor returned a type");
    /* contents arrays shorter than the envelope says */
    MPI_Datatype c3;
    int ni3, na3, nd3, comb3, ints3[4];
    MPI_Aint addrs3[4];
    MPI_Datatype dts3[4];
    CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &c3));
    CHECK_MPI(MPI_Type_get_envelope(c3, &ni3, &na3, &nd3, &comb3));
    CHECK(ni3 == 1 && nd3 == 1, "contiguous envelope %d ints %d types", ni3, nd3);
    CHECK_ERRCLASS(MPI_Type_get_contents(c3, 0, 0, 0, ints3, addrs3, dts3), MPI_ERR_ARG);
    CHECK_MPI(MPI_Type_free(&c3));
    /* the envelope of a predefined type has no contents to get */
    int ni, na, nd, comb;
    CHECK_MPI(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb));
    CHECK_EQ(comb, MPI_COMBINER_NAMED);
    int ints[1];
    MPI_Aint addrs[1];
    MPI_Datatype dts[1];
    CHECK_ERRCLASS(MPI_Type_get_contents(MPI_INT, 1, 1, 1, ints, addrs, dts), MPI_ERR_TYPE);
    /* a type that is only uncommitted is valid for queries but not for communication */
    MPI_Datatype unc;
    CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &unc));
    CHECK_MPI(MPI_Type_size(unc, &n));
    CHECK_EQ(n, 3 * (int)sizeof(int));
    CHECK_ERRCLASS(MPI_Send(buf, 1, unc, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_MPI(MPI_Type_free(&unc));
    mt_pass("errors_objects: datatypes after free, predefined ones not freed, invalid constructor arguments");
}

static int delete_calls;
static int count_delete(MPI_Comm c, int k, void *v, void *x)
{
    (void)c, (void)k, (void)v, (void)x;
    delete_calls++;
    return MPI_SUCCESS;
}

static void keyvals(void)
{
    int ckey, tkey, wkey, flag, v = 7, *got;
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &ckey, NULL));
    CHECK_MPI(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tkey, NULL));
    CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &wkey, NULL));
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_contiguous(1, MPI_INT, &t));
    /* a keyval of the wrong object kind */
    CHECK_ERRCLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, tkey, &v), MPI_ERR_KEYVAL);
    CHECK_ERRCLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, wkey, &v), MPI_ERR_KEYVAL);
    CHECK_ERRCLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, tkey, &got, &flag), MPI_ERR_KEYVAL);
    CHECK_ERRCLASS(MPI_Comm_delete_attr(MPI_COMM_WORLD, wkey), MPI_ERR_KEYVAL);
    CHECK_ERRCLASS(MPI_Type_set_attr(t, ckey, &v), MPI_ERR_KEYVAL);
    CHECK_ERRCLASS(MPI_Type_get_attr(t, wkey, &got, &flag), MPI_ERR_KEYVAL);
    CHECK_ERRCLASS(MPI_Comm_free_keyval(&tkey), MPI_ERR_KEYVAL);
    CHECK_ERRCLASS(MPI_Type_free_keyval(&ckey), MPI_ERR_KEYVAL);
    /* a keyval that does not exist, predefined ones cannot be freed or set */
    CHECK_ERRCLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v), MPI_ERR_KEYVAL);
    CHECK_ERRCLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, 123456, &got, &flag), MPI_ERR_KEYVAL);
    int tag_ub = MPI_TAG_UB;
    CHECK_ERRCLASS(MPI_Comm_free_keyval(&tag_ub), MPI_ERR_KEYVAL);
    CHECK_ERRCLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v), MPI_ERR_KEYVAL);
    /* a freed keyval: its handle is MPI_KEYVAL_INVALID, the old value is stale;
     * an attribute set before the free still lives until deleted */
    CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_WORLD, ckey, &v));
    int stale = ckey;
    CHECK_MPI(MPI_Comm_free_keyval(&ckey));
    CHECK_EQ(ckey, MPI_KEYVAL_INVALID);
    CHECK_ERRCLASS(MPI_Comm_free_keyval(&ckey), MPI_ERR_KEYVAL);
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_MPI(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    CHECK_ERRCLASS(MPI_Comm_set_attr(dup, stale, &v), MPI_ERR_KEYVAL);
    CHECK_MPI(MPI_Comm_free(&dup));
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, stale, &got, &flag));
    CHECK(flag && got == &v, "the attribute set before the keyval was freed is still there");
    CHECK_MPI(MPI_Comm_delete_attr(MPI_COMM_WORLD, stale));
    CHECK_EQ(delete_calls, 1);
    CHECK_ERRCLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, stale, &got, &flag), MPI_ERR_KEYVAL);
    /* attributes on a freed type */
    MPI_Datatype stale_t = t;
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_ERRCLASS(MPI_Type_set_attr(stale_t, tkey, &v), MPI_ERR_TYPE);
    CHECK_MPI(MPI_Type_free_keyval(&tkey));
    CHECK_MPI(MPI_Win_free_keyval(&wkey));
    mt_pass("errors_objects: keyvals of the wrong kind, freed, predefined or unknown");
}

static void infos(void)
{
    MPI_Info info, stale;
    char key[MPI_MAX_INFO_KEY + 1], longkey[MPI_MAX_INFO_KEY + 2], val[8];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    int flag, n, len = (int)sizeof val;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "a", "1"));
    CHECK_ERRCLASS(MPI_Info_set(info, longkey, "1"), MPI_ERR_INFO_KEY);
    CHECK_ERRCLASS(MPI_Info_get_string(info, longkey, &len, val, &flag), MPI_ERR_INFO_KEY);
    CHECK_ERRCLASS(MPI_Info_delete(info, longkey), MPI_ERR_INFO_KEY);
    CHECK_ERRCLASS(MPI_Info_get_nthkey(info, 1, key), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Info_get_nthkey(info, -1, key), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Info_delete(info, "missing"), MPI_ERR_INFO_NOKEY);
    CHECK_ERRCLASS(MPI_Info_set(info, "b", NULL), MPI_ERR_INFO_VALUE);
    CHECK_ERRCLASS(MPI_Info_set(info, NULL, "1"), MPI_ERR_INFO_KEY);
    MPI_Info out = MPI_INFO_NULL;
    CHECK_ERRCLASS(MPI_Info_dup(MPI_INFO_NULL, &out), MPI_ERR_INFO);
    MPI_Info null_info = MPI_INFO_NULL;
    CHECK_ERRCLASS(MPI_Info_free(&null_info), MPI_ERR_INFO);
    MPI_Info env = MPI_INFO_ENV;
    CHECK_ERRCLASS(MPI_Info_free(&env), MPI_ERR_INFO);
    CHECK_MPI(MPI_Info_get_nkeys(info, &n));
    CHECK_EQ(n, 1);
    stale = info;
    CHECK_MPI(MPI_Info_free(&info));
    CHECK_ERRCLASS(MPI_Info_get_nkeys(stale, &n), MPI_ERR_INFO);
    CHECK_ERRCLASS(MPI_Info_set(stale, "a", "2"), MPI_ERR_INFO);
    CHECK_ERRCLASS(MPI_Info_dup(stale, &out), MPI_ERR_INFO);
    CHECK_ERRCLASS(MPI_Info_free(&stale), MPI_ERR_INFO);
    /* a freed info given as hints */
    MPI_Comm dup = MPI_COMM_NULL;
    CHECK_ERRCLASS(MPI_Comm_dup_with_info(MPI_COMM_WORLD, stale, &dup), MPI_ERR_INFO);
    CHECK(out == MPI_INFO_NULL && dup == MPI_COMM_NULL, "a failed call returned an object");
    mt_pass("errors_objects: info keys too long, bad nth key, missing keys, infos after free");
}

static void error_codes(void)
{
    int cls, len;
    char s[MPI_MAX_ERROR_STRING + 1];
    /* codes and classes that do not exist */
    CHECK_ERRCLASS(MPI_Error_class(MPI_ERR_LASTCODE + 1000, &cls), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Error_class(-5, &cls), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Error_string(MPI_ERR_LASTCODE + 1000, s, &len), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Error_string(-5, s, &len), MPI_ERR_ARG);
    int code;
    CHECK_ERRCLASS(MPI_Add_error_code(MPI_ERR_LASTCODE + 1000, &code), MPI_ERR_ARG);
    /* predefined codes and classes are not the user's to change */
    CHECK_ERRCLASS(MPI_Add_error_string(MPI_ERR_TYPE, "mine"), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Remove_error_class(MPI_ERR_TYPE), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Remove_error_code(MPI_ERR_TYPE), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Remove_error_string(MPI_ERR_TYPE), MPI_ERR_ARG);
    /* a user class with a code cannot go before its code; a removed code is unknown */
    int ucls, ucode;
    CHECK_MPI(MPI_Add_error_class(&ucls));
    CHECK_MPI(MPI_Add_error_code(ucls, &ucode));
    CHECK_MPI(MPI_Add_error_string(ucode, "user code"));
    char longstr[MPI_MAX_ERROR_STRING + 8];
    memset(longstr, 'x', sizeof longstr - 1);
    longstr[sizeof longstr - 1] = '\0';
    CHECK_ERRCLASS(MPI_Add_error_string(ucode, longstr), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Remove_error_class(ucls), MPI_ERR_ARG);
    CHECK_MPI(MPI_Remove_error_string(ucode));
    CHECK_MPI(MPI_Remove_error_code(ucode));
    CHECK_ERRCLASS(MPI_Error_class(ucode, &cls), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Remove_error_code(ucode), MPI_ERR_ARG);
    CHECK_MPI(MPI_Remove_error_class(ucls));
    CHECK_ERRCLASS(MPI_Add_error_code(ucls, &code), MPI_ERR_ARG);
    /* error handlers: a null one cannot be set, one of another object kind neither */
    MPI_Errhandler weh;
    CHECK_MPI(MPI_Win_create_errhandler((MPI_Win_errhandler_function *)(void (*)(void))count_delete, &weh));
    CHECK_ERRCLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, weh), MPI_ERR_ARG);
    MPI_Errhandler stale = weh;
    CHECK_MPI(MPI_Errhandler_free(&weh));
    CHECK_ERRCLASS(MPI_Errhandler_free(&stale), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Comm_call_errhandler(MPI_COMM_NULL, MPI_ERR_OTHER), MPI_ERR_COMM);
    /* the handler in place is still MPI_ERRORS_RETURN */
    MPI_Errhandler eh;
    CHECK_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "a failed Comm_set_errhandler changed the handler");
    CHECK_MPI(MPI_Errhandler_free(&eh));
    mt_pass("errors_objects: unknown error codes, predefined ones kept, user classes removed in order, handlers");
}

static void threads(int *argc, char ***argv)
{
    int provided = -1, flag = -1;
    CHECK_ERRCLASS(MPI_Query_thread(NULL), MPI_ERR_ARG);
    CHECK_ERRCLASS(MPI_Is_thread_main(NULL), MPI_ERR_ARG);
    /* the world model is initialized once */
    CHECK_ERRCLASS(MPI_Init(argc, argv), MPI_ERR_OTHER);
    CHECK_ERRCLASS(MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided), MPI_ERR_OTHER);
    CHECK_MPI(MPI_Query_thread(&provided));
    CHECK_EQ(provided, MPI_THREAD_SINGLE);
    CHECK_MPI(MPI_Is_thread_main(&flag));
    CHECK_EQ(flag, 1);
    mt_pass("errors_objects: thread queries without output, MPI_Init twice");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    rank = mt_rank(MPI_COMM_WORLD);
    size = mt_size(MPI_COMM_WORLD);
    mt_errors_return();
    groups();
    communicators();
    datatypes();
    keyvals();
    infos();
    error_codes();
    threads(&argc, &argv);
    MPI_Finalize();
    return 0;
}
