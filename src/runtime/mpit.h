/* Shared pieces of the MPI tool information interface (MPI_T): the
 * initialization count, the string convention of the *_get_info calls, and
 * the category of each variable, which the category module reads from the
 * cvar and pvar modules so that each variable is described in one place. */
#ifndef LM_MPIT_H
#define LM_MPIT_H

/* Categories, one per layer; "core" is the root and holds the others. */
enum lm_mpit_category {
    LM_MPIT_CAT_CORE,
    LM_MPIT_CAT_TRANSPORT,
    LM_MPIT_CAT_PT2PT,
    LM_MPIT_CAT_MEMORY,
    LM_MPIT_CAT_ONESIDED,
    LM_MPIT_CAT_COLL,
    LM_MPIT_CAT_COUNT
};

/* Non-zero between the first MPI_T_init_thread and the matching last
 * MPI_T_finalize; MPI_T calls return MPI_T_ERR_NOT_INITIALIZED otherwise. */
int lm_mpit_active(void);

/* MPI-4.1 15.3.3: with a NULL buffer or a length of 0, only the needed
 * length (with the NUL) is returned; otherwise the string is copied,
 * truncated to the buffer, and *len says how many characters were stored
 * including the NUL. A NULL len ignores the argument. */
void lm_mpit_copy_string(const char *src, char *dst, int *len);

int lm_mpit_cvar_count(void);
int lm_mpit_cvar_category(int cvar_index);
int lm_mpit_pvar_count(void);
int lm_mpit_pvar_category(int pvar_index);

/* The one enumeration (MPI_T_enum): the collective algorithms, whose items
 * name "collective:algorithm" with the value of MPI_T's coll_algorithm
 * (item 0 "none", value -1). */
struct leanmpi_t_enum;
extern struct leanmpi_t_enum lm_mpit_coll_algorithms;

/* Called when the last MPI_T_finalize ends the tool session: every handle
 * and session becomes invalid. */
void lm_mpit_cvar_release_all(void);
void lm_mpit_pvar_release_all(void);

#endif
