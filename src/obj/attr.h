/* Attribute caching (keyvals and per-object attribute lists) for
 * communicators, datatypes and windows. An object with no attribute has a NULL list:
 * attributes cost nothing until first used. */
#ifndef LM_ATTR_H
#define LM_ATTR_H
#include "mpi.h"
#include "util/lm_handle.h"

struct lm_attr_list;

/* Kinds of object above this layer that carry attributes (datatypes,
 * windows) register how to find an object's list: NULL for an invalid
 * handle. Communicators are known here. */
typedef struct lm_attr_list **(*lm_attr_list_fn)(int handle);
void lm_attr_register_kind(enum lm_kind kind, lm_attr_list_fn list_of_handle);

/* Run the copy callbacks of src's attributes, in keyval creation order, for
 * a duplicate (new_handle) of old_handle; the copies kept go to *dst. On a
 * callback error, the copies made so far are deleted again and the
 * callback's code is returned. */
int lm_attr_copy(enum lm_kind kind, int old_handle, struct lm_attr_list *src, int new_handle,
                 struct lm_attr_list **dst);
/* Delete every attribute of an object being freed, most recently set first.
 * Stops at the first failing delete callback and returns its code (the
 * attributes not yet deleted stay). */
int lm_attr_delete_all(enum lm_kind kind, int handle, struct lm_attr_list **list);
/* Release a list without callbacks (objects that outlive MPI_Finalize). */
void lm_attr_discard(struct lm_attr_list **list);
/* Get for a user keyval (the predefined ones are answered by their module). */
int lm_attr_get(enum lm_kind kind, int handle, int keyval, void *attribute_val, int *flag, const char *fname);
/* At the very start of MPI_Finalize: MPI_COMM_SELF's attributes, then
 * MPI_COMM_WORLD's, are deleted with their callbacks. */
void lm_attr_finalize_comms(void);
/* At the end of MPI_Finalize: the keyval table. */
void lm_attr_finalize(void);

#endif
