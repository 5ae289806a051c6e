/* Datatypes. Predefined types come from the generated table
 * (builtin_types_gen.c); derived types are dynamic objects built by
 * constructors.c, their layout kept as loops by typemap.c. */
#ifndef LM_DATATYPE_H
#define LM_DATATYPE_H
#include <stdbool.h>
#include "mpi.h"
#include "util/lm_handle.h"

typedef struct lm_datatype {
    lm_object obj;
    MPI_Count size; /* bytes of data */
    MPI_Aint lb, extent;
    MPI_Aint true_lb, true_extent;
    bool committed;
    bool contiguous; /* count elements are count * extent bytes copied as is from true_lb */
    bool predefined;
    int basic_id;               /* predefined: its index; derived: -1 */
    int basic_size;             /* size of the basic element it is made of (0 if mixed) */
    int combiner;               /* MPI_COMBINER_* that made it */
    const char *name;           /* predefined: its MPI name; NULL otherwise */
    struct lm_attr_list *attrs; /* cached attributes, NULL when none */
    /* one element's data as segments of loops (typemap.h), shared by
     * reference with the types built on it */
    struct lm_layout *layout;
    MPI_Count nelems;     /* basic elements in one element */
    int align;            /* largest alignment of the basic types inside */
    bool explicit_bounds; /* lb/ub set by MPI_Type_create_resized (here or inside) */
    /* constructor arguments, for MPI_Type_get_envelope/get_contents: the
     * numbers in the standard's order (integers before addresses), and
     * whether a large-count (_c) constructor made the type */
    bool large_args;
    MPI_Count nargs, ntypes;
    MPI_Count *args;
    MPI_Datatype *types;
    char *set_name; /* the name MPI_Type_set_name gave (owned), NULL for none */
} lm_datatype;

/* Data of count elements is count * size bytes starting at true_lb, copied
 * as is (no gaps, no padding): the point-to-point fast paths apply. */
static inline bool lm_datatype_dense(const lm_datatype *t) { return t->contiguous && t->size == t->extent; }

/* Move stream bytes [off, off + len) of the packed form of count elements
 * of t laid out from buf (the user's buffer: displacements are relative to
 * it) to or from flat. Never touches bytes outside the type's blocks. */
void lm_typemap_pack(const lm_datatype *t, const void *buf, MPI_Count count, MPI_Count off, void *flat, size_t len);
void lm_typemap_unpack(const lm_datatype *t, void *buf, MPI_Count count, MPI_Count off, const void *flat, size_t len);
/* Basic elements in the first `bytes` bytes of a packed stream of t; -1 if
 * bytes ends inside a basic element. */
MPI_Count lm_typemap_elements(const lm_datatype *t, MPI_Count bytes);
/* The reverse: bytes of the packed stream that hold n basic elements. */
MPI_Count lm_typemap_element_bytes(const lm_datatype *t, MPI_Count n);
/* Drop a reference (user handle, a request, a derived type built on it);
 * the last one frees a derived type. */
void lm_datatype_release(lm_datatype *t);
/* Take a reference (predefined types need none). */
static inline void lm_datatype_retain(lm_datatype *t)
{
    if (!t->predefined) t->obj.refcount++;
}
/* MPI_Type_dup: give t (a copy of o) its own layout and o as its contents. */
int lm_datatype_dup_layout(lm_datatype *t, lm_datatype *o);

/* The datatype for a handle, or NULL if invalid or freed. Inline: every
 * call that moves data resolves one or two. */
extern lm_datatype *lm_datatype_builtin;
extern unsigned lm_datatype_nbuiltin; /* 0 before MPI_Init and after MPI_Finalize */
static inline lm_datatype *lm_datatype_get(MPI_Datatype h)
{
    if (LM_HANDLE_KIND(h) != LM_KIND_DATATYPE) return NULL;
    if (LM_HANDLE_TIER(h) == LM_TIER_BUILTIN) {
        unsigned i = LM_HANDLE_INDEX(h);
        return i < lm_datatype_nbuiltin ? &lm_datatype_builtin[i] : NULL;
    }
    return lm_object_lookup(h, LM_KIND_DATATYPE);
}
int lm_datatype_init_builtin(void);
/* At MPI_Finalize: predefined handles resolve to NULL from then on. */
void lm_datatype_finalize(void);
/* The Fortran 90 parameterized types made so far (f90_types.c). */
void lm_f90_types_finalize(void);

#endif
