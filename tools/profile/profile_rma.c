/* leanmpi-profile: one-sided communication. Every operation is recorded
 * against its target (as a rank of MPI_COMM_WORLD) with the bytes it moves
 * either way (a get's data comes back, an accumulate with a result goes
 * both ways), in the profile's "rma" list. A window's members as world
 * ranks are found once and kept as an attribute of the window. */
#include "profile_records.h"
#include <stdlib.h>

typedef struct win_info {
    int size;
    int world[];
} win_info;

static int win_keyval = MPI_KEYVAL_INVALID;
static MPI_Win last_win = MPI_WIN_NULL;
static win_info *last_info;

static int drop_win_info(MPI_Win win, int key, void *val, void *extra)
{
    (void)key, (void)extra;
    lmp_lock();
    if (win == last_win) last_win = MPI_WIN_NULL;
    lmp_unlock();
    free(val);
    return MPI_SUCCESS;
}

static win_info *info_of(MPI_Win win)
{
    if (win == last_win) return last_info;
    if (win_keyval == MPI_KEYVAL_INVALID &&
        PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, drop_win_info, &win_keyval, NULL) != MPI_SUCCESS)
        return NULL;
    void *val;
    int found = 0;
    win_info *wi = NULL;
    if (PMPI_Win_get_attr(win, win_keyval, &val, &found) == MPI_SUCCESS && found) {
        wi = val;
    } else {
        MPI_Group g, world;
        int n = 0;
        if (PMPI_Win_get_group(win, &g) != MPI_SUCCESS) return NULL;
        PMPI_Group_size(g, &n);
        wi = malloc(sizeof *wi + sizeof(int) * (size_t)n);
        int *ranks = malloc(sizeof *ranks * (size_t)(n ? n : 1));
        if (wi && ranks) {
            wi->size = n;
            for (int i = 0; i < n; i++) ranks[i] = i;
            PMPI_Comm_group(MPI_COMM_WORLD, &world);
            PMPI_Group_translate_ranks(g, n, ranks, world, wi->world);
            for (int i = 0; i < n; i++)
                if (wi->world[i] == MPI_UNDEFINED) wi->world[i] = -1;
            PMPI_Group_free(&world);
            PMPI_Win_set_attr(win, win_keyval, wi);
        } else {
            free(wi);
            wi = NULL;
        }
        free(ranks);
        PMPI_Group_free(&g);
    }
    last_win = win;
    return last_info = wi;
}

static void note(MPI_Win win, int target, uint64_t bytes)
{
    if (!lmp_profiling() || target == MPI_PROC_NULL || target < 0) return;
    lmp_lock();
    win_info *wi = info_of(win);
    int world = wi && target < wi->size ? wi->world[target] : -1;
    lmp_unlock();
    lmp_note_rma(world, bytes);
}

int MPI_Put(const void *o, int oc, MPI_Datatype ot, int target, MPI_Aint disp, int tc, MPI_Datatype tt, MPI_Win win)
{
    note(win, target, lmp_type_bytes(oc, ot));
    return PMPI_Put(o, oc, ot, target, disp, tc, tt, win);
}
int MPI_Rput(const void *o, int oc, MPI_Datatype ot, int target, MPI_Aint disp, int tc, MPI_Datatype tt, MPI_Win win,
             MPI_Request *req)
{
    note(win, target, lmp_type_bytes(oc, ot));
    return PMPI_Rput(o, oc, ot, target, disp, tc, tt, win, req);
}
int MPI_Get(void *o, int oc, MPI_Datatype ot, int target, MPI_Aint disp, int tc, MPI_Datatype tt, MPI_Win win)
{
    note(win, target, lmp_type_bytes(oc, ot));
    return PMPI_Get(o, oc, ot, target, disp, tc, tt, win);
}
int MPI_Rget(void *o, int oc, MPI_Datatype ot, int target, MPI_Aint disp, int tc, MPI_Datatype tt, MPI_Win win,
             MPI_Request *req)
{
    note(win, target, lmp_type_bytes(oc, ot));
    return PMPI_Rget(o, oc, ot, target, disp, tc, tt, win, req);
}
int MPI_Accumulate(const void *o, int oc, MPI_Datatype ot, int target, MPI_Aint disp, int tc, MPI_Datatype tt,
                   MPI_Op op, MPI_Win win)
{
    note(win, target, lmp_type_bytes(oc, ot));
    return PMPI_Accumulate(o, oc, ot, target, disp, tc, tt, op, win);
}
int MPI_Raccumulate(const void *o, int oc, MPI_Datatype ot, int target, MPI_Aint disp, int tc, MPI_Datatype tt,
                    MPI_Op op, MPI_Win win, MPI_Request *req)
{
    note(win, target, lmp_type_bytes(oc, ot));
    return PMPI_Raccumulate(o, oc, ot, target, disp, tc, tt, op, win, req);
}
int MPI_Get_accumulate(const void *o, int oc, MPI_Datatype ot, void *r, int rc, MPI_Datatype rt, int target,
                       MPI_Aint disp, int tc, MPI_Datatype tt, MPI_Op op, MPI_Win win)
{
    note(win, target, lmp_type_bytes(oc, ot) + lmp_type_bytes(rc, rt));
    return PMPI_Get_accumulate(o, oc, ot, r, rc, rt, target, disp, tc, tt, op, win);
}
int MPI_Rget_accumulate(const void *o, int oc, MPI_Datatype ot, void *r, int rc, MPI_Datatype rt, int target,
                        MPI_Aint disp, int tc, MPI_Datatype tt, MPI_Op op, MPI_Win win, MPI_Request *req)
{
    note(win, target, lmp_type_bytes(oc, ot) + lmp_type_bytes(rc, rt));
    return PMPI_Rget_accumulate(o, oc, ot, r, rc, rt, target, disp, tc, tt, op, win, req);
}
int MPI_Fetch_and_op(const void *o, void *r, MPI_Datatype type, int target, MPI_Aint disp, MPI_Op op, MPI_Win win)
{
    note(win, target, 2 * lmp_type_bytes(1, type));
    return PMPI_Fetch_and_op(o, r, type, target, disp, op, win);
}
int MPI_Compare_and_swap(const void *o, const void *c, void *r, MPI_Datatype type, int target, MPI_Aint disp,
                         MPI_Win win)
{
    note(win, target, 3 * lmp_type_bytes(1, type));
    return PMPI_Compare_and_swap(o, c, r, type, target, disp, win);
}
