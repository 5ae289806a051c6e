/* MPI_T categories, one per layer. "leanmpi_core" is the root: it holds the
 * core variables and the other categories. Which category a variable
 * belongs to is decided next to the variable (mpit_cvar.c, mpit_pvar.c);
 * this file only groups them. The set never changes while the process runs,
 * so MPI_T_category_changed always reports 0. */
#include "runtime/mpit.h"
#include "api/impl_gen.h"
#include <mpi.h>
#include <string.h>

static const struct {
    const char *name, *desc;
} cats[LM_MPIT_CAT_COUNT] = {
    [LM_MPIT_CAT_CORE] = {"leanmpi_core", "LeanMPI start-up and node segment; holds the other categories"},
    [LM_MPIT_CAT_TRANSPORT] = {"leanmpi_transport", "transport backends self, shm and cma: protocols and counters"},
    [LM_MPIT_CAT_PT2PT] = {"leanmpi_pt2pt", "point-to-point protocols: eager, rendezvous, flow control, shared copies"},
    [LM_MPIT_CAT_MEMORY] = {"leanmpi_memory", "memory accounting per component"},
    [LM_MPIT_CAT_ONESIDED] = {"leanmpi_onesided",
                              "one-sided communication: remote atomics, locks, owner-served requests"},
    [LM_MPIT_CAT_COLL] = {"leanmpi_coll", "collectives: the algorithm each communicator's last collective runs"},
};

static int check_index(int cat_index)
{
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    if (cat_index < 0 || cat_index >= LM_MPIT_CAT_COUNT) return MPI_T_ERR_INVALID_INDEX;
    return MPI_SUCCESS;
}

/* Fill up to len indices of the variables in category cat; returns how many
 * there are in all. */
static int members(int cat, int (*count)(void), int (*category)(int), int len, int indices[])
{
    int n = 0, total = count();
    for (int i = 0; i < total; i++)
        if (category(i) == cat) {
            if (indices && n < len) indices[n] = i;
            n++;
        }
    return n;
}

static int subcategories(int cat, int len, int indices[])
{
    if (cat != LM_MPIT_CAT_CORE) return 0;
    int n = 0;
    for (int c = 0; c < LM_MPIT_CAT_COUNT; c++) {
        if (c == LM_MPIT_CAT_CORE) continue;
        if (indices && n < len) indices[n] = c;
        n++;
    }
    return n;
}

int impl_MPI_T_category_get_num(int *num_cat)
{
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    if (num_cat) *num_cat = LM_MPIT_CAT_COUNT;
    return MPI_SUCCESS;
}

int impl_MPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len, int *num_cvars,
                                 int *num_pvars, int *num_categories)
{
    int rc = check_index(cat_index);
    if (rc != MPI_SUCCESS) return rc;
    lm_mpit_copy_string(cats[cat_index].name, name, name_len);
    lm_mpit_copy_string(cats[cat_index].desc, desc, desc_len);
    if (num_cvars) *num_cvars = members(cat_index, lm_mpit_cvar_count, lm_mpit_cvar_category, 0, NULL);
    if (num_pvars) *num_pvars = members(cat_index, lm_mpit_pvar_count, lm_mpit_pvar_category, 0, NULL);
    if (num_categories) *num_categories = subcategories(cat_index, 0, NULL);
    return MPI_SUCCESS;
}

int impl_MPI_T_category_get_index(const char *name, int *cat_index)
{
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    if (!name) return MPI_T_ERR_INVALID_NAME;
    for (int c = 0; c < LM_MPIT_CAT_COUNT; c++)
        if (strcmp(cats[c].name, name) == 0) {
            if (cat_index) *cat_index = c;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

int impl_MPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    int rc = check_index(cat_index);
    if (rc != MPI_SUCCESS) return rc;
    if (len < 0) return MPI_T_ERR_INVALID;
    members(cat_index, lm_mpit_cvar_count, lm_mpit_cvar_category, len, indices);
    return MPI_SUCCESS;
}

int impl_MPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    int rc = check_index(cat_index);
    if (rc != MPI_SUCCESS) return rc;
    if (len < 0) return MPI_T_ERR_INVALID;
    members(cat_index, lm_mpit_pvar_count, lm_mpit_pvar_category, len, indices);
    return MPI_SUCCESS;
}

int impl_MPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    int rc = check_index(cat_index);
    if (rc != MPI_SUCCESS) return rc;
    if (len < 0) return MPI_T_ERR_INVALID;
    subcategories(cat_index, len, indices);
    return MPI_SUCCESS;
}

/* There are no events (mpit.c), so every category holds none. */
int impl_MPI_T_category_get_num_events(int cat_index, int *num_events)
{
    int rc = check_index(cat_index);
    if (rc != MPI_SUCCESS) return rc;
    if (num_events) *num_events = 0;
    return MPI_SUCCESS;
}

int impl_MPI_T_category_get_events(int cat_index, int len, int indices[])
{
    (void)indices;
    int rc = check_index(cat_index);
    if (rc != MPI_SUCCESS) return rc;
    if (len < 0) return MPI_T_ERR_INVALID;
    return MPI_SUCCESS;
}

int impl_MPI_T_category_changed(int *update_number)
{
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    if (update_number) *update_number = 0;
    return MPI_SUCCESS;
}
