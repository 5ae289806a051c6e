/* MPI_T control variables: the lm_cvar table, one MPI_T variable per entry.
 *
 * Names are the environment variables' own ("LEANMPI_EAGER_LIMIT"), so what
 * a tool shows is what a user sets. Every value is an integer of C type
 * long, offered as MPI_COUNT (the only signed 64-bit type MPI_T allows for
 * control variables). All are bound to no object. Variables read once when
 * a layer starts are MPI_T_SCOPE_READONLY (writes: MPI_T_ERR_CVAR_SET_NEVER);
 * MEMREPORT, read at MPI_Finalize, is MPI_T_SCOPE_LOCAL and writable. */
#include "runtime/mpit.h"
#include "util/lm_cvar.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <mpi.h>
#include <stdio.h>
#include <string.h>

struct leanmpi_t_cvar_handle {
    int index;
    struct leanmpi_t_cvar_handle *next;
};

/* Live handles; a handle is valid only while it is on this list, so a freed
 * or made-up one is reported instead of dereferenced. */
static struct leanmpi_t_cvar_handle *handles;

int lm_mpit_cvar_count(void) { return LM_CVAR_COUNT; }

int lm_mpit_cvar_category(int i)
{
    switch (lm_cvar_table[i].group) {
    case LM_CVAR_GROUP_PT2PT: return LM_MPIT_CAT_PT2PT;
    case LM_CVAR_GROUP_TRANSPORT: return LM_MPIT_CAT_TRANSPORT;
    case LM_CVAR_GROUP_MEMORY: return LM_MPIT_CAT_MEMORY;
    case LM_CVAR_GROUP_CORE:
    default: return LM_MPIT_CAT_CORE;
    }
}

static int cvar_scope(int i) { return lm_cvar_table[i].writable ? MPI_T_SCOPE_LOCAL : MPI_T_SCOPE_READONLY; }

static int cvar_verbosity(int i)
{
    return lm_cvar_table[i].audience == LM_CVAR_USER ? MPI_T_VERBOSITY_USER_BASIC : MPI_T_VERBOSITY_TUNER_BASIC;
}

static void cvar_name(int i, char *buf, size_t n) { snprintf(buf, n, "LEANMPI_%s", lm_cvar_table[i].name); }

int impl_MPI_T_cvar_get_num(int *num_cvar)
{
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    if (num_cvar) *num_cvar = LM_CVAR_COUNT;
    return MPI_SUCCESS;
}

int impl_MPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
                             MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope)
{
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    if (cvar_index < 0 || cvar_index >= LM_CVAR_COUNT) return MPI_T_ERR_INVALID_INDEX;
    char full[128];
    cvar_name(cvar_index, full, sizeof full);
    lm_mpit_copy_string(full, name, name_len);
    lm_mpit_copy_string(lm_cvar_table[cvar_index].description, desc, desc_len);
    if (verbosity) *verbosity = cvar_verbosity(cvar_index);
    if (datatype) *datatype = MPI_COUNT;
    if (enumtype) *enumtype = MPI_T_ENUM_NULL;
    if (bind) *bind = MPI_T_BIND_NO_OBJECT;
    if (scope) *scope = cvar_scope(cvar_index);
    return MPI_SUCCESS;
}

int impl_MPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    if (!name) return MPI_T_ERR_INVALID_NAME;
    for (int i = 0; i < LM_CVAR_COUNT; i++) {
        char full[128];
        cvar_name(i, full, sizeof full);
        if (strcmp(full, name) == 0) {
            if (cvar_index) *cvar_index = i;
            return MPI_SUCCESS;
        }
    }
    return MPI_T_ERR_INVALID_NAME;
}

static struct leanmpi_t_cvar_handle **find(MPI_T_cvar_handle h)
{
    for (struct leanmpi_t_cvar_handle **p = &handles; *p; p = &(*p)->next)
        if (*p == h) return p;
    return NULL;
}

int impl_MPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count)
{
    (void)obj_handle; /* every variable is bound to no object */
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    if (cvar_index < 0 || cvar_index >= LM_CVAR_COUNT) return MPI_T_ERR_INVALID_INDEX;
    if (!handle) return MPI_T_ERR_INVALID;
    struct leanmpi_t_cvar_handle *h = lm_malloc(LM_MEM_CORE, sizeof *h);
    if (!h) return MPI_T_ERR_OUT_OF_HANDLES;
    h->index = cvar_index;
    h->next = handles;
    handles = h;
    *handle = h;
    if (count) *count = 1;
    return MPI_SUCCESS;
}

int impl_MPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    struct leanmpi_t_cvar_handle **p = handle ? find(*handle) : NULL;
    if (!p) return MPI_T_ERR_INVALID_HANDLE;
    struct leanmpi_t_cvar_handle *h = *p;
    *p = h->next;
    lm_free(LM_MEM_CORE, h);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

int impl_MPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    if (!find(handle)) return MPI_T_ERR_INVALID_HANDLE;
    if (!buf) return MPI_T_ERR_INVALID;
    MPI_Count v = lm_cvar((enum lm_cvar_id)handle->index);
    memcpy(buf, &v, sizeof v);
    return MPI_SUCCESS;
}

int impl_MPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    if (!lm_mpit_active()) return MPI_T_ERR_NOT_INITIALIZED;
    if (!find(handle)) return MPI_T_ERR_INVALID_HANDLE;
    if (cvar_scope(handle->index) == MPI_T_SCOPE_READONLY) return MPI_T_ERR_CVAR_SET_NEVER;
    if (!buf) return MPI_T_ERR_INVALID;
    MPI_Count v;
    memcpy(&v, buf, sizeof v);
    if (lm_cvar_set((enum lm_cvar_id)handle->index, (long)v) != 0) return MPI_T_ERR_INVALID;
    return MPI_SUCCESS;
}

void lm_mpit_cvar_release_all(void)
{
    while (handles) {
        struct leanmpi_t_cvar_handle *h = handles;
        handles = h->next;
        lm_free(LM_MEM_CORE, h);
    }
}
