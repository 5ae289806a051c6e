/* MPI_T life cycle (reference counted, independent of MPI_Init/Finalize),
 * and the MPI 4.0 event and source interface, which has nothing to offer:
 * there are no events and no sources, so the counts are 0 and every index,
 * name or handle given is invalid rather than unsupported. */
#include "runtime/mpit.h"
#include "coll/coll_alg.h"
#include "util/lm_cs.h"
#include "api/impl_gen.h"
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int init_count;

int lm_mpit_active(void) { return init_count > 0; }

void lm_mpit_copy_string(const char *src, char *dst, int *len)
{
    if (!len) return;
    int need = (int)strlen(src) + 1;
    if (!dst || *len <= 0) {
        *len = need;
        return;
    }
    int n = need <= *len ? need - 1 : *len - 1;
    memcpy(dst, src, (size_t)n);
    dst[n] = '\0';
    *len = n + 1;
}

int impl_MPI_T_init_thread(int required, int *provided)
{
    /* MPI_T calls run in the library's critical section like every other
     * call, so MPI_THREAD_MULTIPLE is granted the same way (lm_cs.h). */
    int level = required < MPI_THREAD_SINGLE     ? MPI_THREAD_SINGLE
                : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                                 : required;
    if (level == MPI_THREAD_MULTIPLE) lm_cs_enable();
    if (provided) *provided = level;
    init_count++;
    return MPI_SUCCESS;
}

int impl_MPI_T_finalize(void)
{
    if (init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
    if (--init_count == 0) {
        lm_mpit_pvar_release_all();
        lm_mpit_cvar_release_all();
    }
    return MPI_SUCCESS;
}

#define LM_MPIT_REQUIRE_ACTIVE()                           \
    do {                                                   \
        if (!init_count) return MPI_T_ERR_NOT_INITIALIZED; \
    } while (0)

int impl_MPI_T_source_get_num(int *num_sources)
{
    LM_MPIT_REQUIRE_ACTIVE();
    if (num_sources) *num_sources = 0;
    return MPI_SUCCESS;
}

int impl_MPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                               MPI_T_source_order *ordering, MPI_Count *ticks_per_second, MPI_Count *max_ticks,
                               MPI_Info *info)
{
    (void)source_index, (void)name, (void)name_len, (void)desc, (void)desc_len;
    (void)ordering, (void)ticks_per_second, (void)max_ticks, (void)info;
    LM_MPIT_REQUIRE_ACTIVE();
    return MPI_T_ERR_INVALID_INDEX;
}

int impl_MPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    (void)source_index, (void)timestamp;
    LM_MPIT_REQUIRE_ACTIVE();
    return MPI_T_ERR_INVALID_INDEX;
}

int impl_MPI_T_event_get_num(int *num_events)
{
    LM_MPIT_REQUIRE_ACTIVE();
    if (num_events) *num_events = 0;
    return MPI_SUCCESS;
}

int impl_MPI_T_event_get_index(const char *name, int *event_index)
{
    (void)name, (void)event_index;
    LM_MPIT_REQUIRE_ACTIVE();
    return MPI_T_ERR_INVALID_NAME;
}

int impl_MPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                              MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[], int *num_elements,
                              MPI_T_enum *enumtype, MPI_Info *info, char *desc, int *desc_len, int *bind)
{
    (void)event_index, (void)name, (void)name_len, (void)verbosity, (void)array_of_datatypes;
    (void)array_of_displacements, (void)num_elements, (void)enumtype, (void)info, (void)desc;
    (void)desc_len, (void)bind;
    LM_MPIT_REQUIRE_ACTIVE();
    return MPI_T_ERR_INVALID_INDEX;
}

int impl_MPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                                  MPI_T_event_registration *event_registration)
{
    (void)event_index, (void)obj_handle, (void)info, (void)event_registration;
    LM_MPIT_REQUIRE_ACTIVE();
    return MPI_T_ERR_INVALID_INDEX;
}

/* No registration or instance can exist, so every call that takes one is
 * given an invalid handle. */
int impl_MPI_T_event_handle_free(MPI_T_event_registration r, void *user_data,
                                 MPI_T_event_free_cb_function free_cb_function)
{
    (void)r, (void)user_data, (void)free_cb_function;
    LM_MPIT_REQUIRE_ACTIVE();
    return MPI_T_ERR_INVALID_HANDLE;
}

int impl_MPI_T_event_handle_get_info(MPI_T_event_registration r, MPI_Info *info_used)
{
    (void)r, (void)info_used;
    LM_MPIT_REQUIRE_ACTIVE();
    return MPI_T_ERR_INVALID_HANDLE;
}

int impl_MPI_T_event_handle_set_info(MPI_T_event_registration r, MPI_Info info)
{
    (void)r, (void)info;
    LM_MPIT_REQUIRE_ACTIVE();
    return MPI_T_ERR_INVALID_HANDLE;
}

int impl_MPI_T_event_register_callback(MPI_T_event_registration r, MPI_T_cb_safety cb_safety, MPI_Info info,
                                       void *user_data, MPI_T_event_cb_function event_cb_function)
{
    (void)r, (void)cb_safety, (void)info, (void)user_data, (void)event_cb_function;
    LM_MPIT_REQUIRE_ACTIVE();
    return MPI_T_ERR_INVALID_HANDLE;
}

int impl_MPI_T_event_callback_get_info(MPI_T_event_registration r, MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    (void)r, (void)cb_safety, (void)info_used;
    LM_MPIT_REQUIRE_ACTIVE();
    return MPI_T_ERR_INVALID_HANDLE;
}

int impl_MPI_T_event_callback_set_info(MPI_T_event_registration r, MPI_T_cb_safety cb_safety, MPI_Info info)
{
    (void)r, (void)cb_safety, (void)info;
    LM_MPIT_REQUIRE_ACTIVE();
    return MPI_T_ERR_INVALID_HANDLE;
}

int impl_MPI_T_event_set_dropped_handler(MPI_T_event_registration r,
                                         MPI_T_event_dropped_cb_function dropped_cb_function)
{
    (void)r, (void)dropped_cb_function;
    LM_MPIT_REQUIRE_ACTIVE();
    return MPI_T_ERR_INVALID_HANDLE;
}

int impl_MPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    (void)event_instance, (void)buffer;
    LM_MPIT_REQUIRE_ACTIVE();
    return MPI_T_ERR_INVALID_HANDLE;
}

int impl_MPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    (void)event_instance, (void)element_index, (void)buffer;
    LM_MPIT_REQUIRE_ACTIVE();
    return MPI_T_ERR_INVALID_HANDLE;
}

int impl_MPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    (void)event_instance, (void)source_index;
    LM_MPIT_REQUIRE_ACTIVE();
    return MPI_T_ERR_INVALID_HANDLE;
}

int impl_MPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    (void)event_instance, (void)event_timestamp;
    LM_MPIT_REQUIRE_ACTIVE();
    return MPI_T_ERR_INVALID_HANDLE;
}

/* The collective algorithms (mpit.h): one item per algorithm of
 * lm_coll_algs, after "none". */
struct leanmpi_t_enum {
    const char *name;
};
struct leanmpi_t_enum lm_mpit_coll_algorithms = {"coll_algorithm"};

int impl_MPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    LM_MPIT_REQUIRE_ACTIVE();
    if (enumtype != &lm_mpit_coll_algorithms) return MPI_T_ERR_INVALID_HANDLE;
    if (num) *num = 1 + lm_coll_nalgs;
    lm_mpit_copy_string(enumtype->name, name, name_len);
    return MPI_SUCCESS;
}

int impl_MPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
    LM_MPIT_REQUIRE_ACTIVE();
    if (enumtype != &lm_mpit_coll_algorithms) return MPI_T_ERR_INVALID_HANDLE;
    if (index < 0 || index > lm_coll_nalgs) return MPI_T_ERR_INVALID_INDEX;
    char item[96] = "none";
    if (index > 0) {
        const lm_coll_alg *g = &lm_coll_algs[index - 1];
        snprintf(item, sizeof item, "%s:%s", lm_coll_kind_name(g->kind), g->name);
        for (char *c = item; *c; c++)
            if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
    }
    if (value) *value = index - 1;
    lm_mpit_copy_string(item, name, name_len);
    return MPI_SUCCESS;
}
