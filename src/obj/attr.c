/* Keyvals and attribute caching on communicators, datatypes and windows.
 *
 * A keyval is an index into one process-wide table; ids are handed out in
 * increasing order and never reused, so comparing ids gives the creation
 * order that copy callbacks must run in. A keyval freed by the program stays
 * in the table (unusable by new calls) until the last attribute using it is
 * deleted: each attribute holds a reference.
 *
 * An object's attributes are a small array in the order they were set, NULL
 * until the first one (most objects never have any). */
#include "obj/attr.h"
#include "obj/comm.h"
#include "util/lm_cs.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* User keyvals start above every predefined one (MPI_TAG_UB .. window keyvals). */
#define KEYVAL_BASE 64

/* MPI_Comm and MPI_Datatype are both int, so the comm and type callback
 * types are one and the same function type. */
typedef int lm_copy_fn(int, int, void *, void *, void *, int *);
typedef int lm_delete_fn(int, int, void *, void *);

typedef struct keyval {
    enum lm_kind kind;
    lm_copy_fn *copy;
    lm_delete_fn *del;
    void *extra;
    int refs;   /* the program's reference (until freed) + one per attribute */
    bool freed; /* freed by the program: no new use */
} keyval;

static keyval **keyvals;
static int nkeyvals, capkeyvals;

typedef struct attr_entry {
    int keyval;
    void *val;
} attr_entry;

struct lm_attr_list {
    int n, cap;
    attr_entry e[];
};

static int find(const struct lm_attr_list *l, int id);

static keyval *kv_at(int id)
{
    int i = id - KEYVAL_BASE;
    return (i >= 0 && i < nkeyvals) ? keyvals[i] : NULL;
}

/* A keyval the program may still use on an object of this kind. */
static keyval *kv_usable(int id, enum lm_kind kind)
{
    keyval *k = kv_at(id);
    return (k && !k->freed && k->kind == kind) ? k : NULL;
}

/* For reading and deleting: also a keyval the program has freed, as long as
 * this object still holds an attribute with it (MPI-4.1 section 7.7.2: those
 * attributes are deleted explicitly, by the keyval value they were set with). */
static keyval *kv_held(int id, enum lm_kind kind, const struct lm_attr_list *l)
{
    keyval *k = kv_at(id);
    if (!k || k->kind != kind) return NULL;
    return !k->freed || find(l, id) >= 0 ? k : NULL;
}

static void kv_release(int id)
{
    keyval *k = kv_at(id);
    if (k && --k->refs == 0) {
        keyvals[id - KEYVAL_BASE] = NULL;
        lm_free(LM_MEM_COMM, k);
    }
}

static const char *kind_word(enum lm_kind kind)
{
    return kind == LM_KIND_COMM ? "communicator" : kind == LM_KIND_WIN ? "window" : "datatype";
}

static int raise(enum lm_kind kind, int h, int cls, const char *fname, const char *fmt, ...) LM_PRINTF(5, 6);
static int raise(enum lm_kind kind, int h, int cls, const char *fname, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* datatype errors have no handler of their own (they go to MPI_COMM_SELF's) */
    if (kind == LM_KIND_COMM) return lm_err_comm(h, cls, fname, "%s", msg);
    if (kind == LM_KIND_WIN) return lm_err_win(h, cls, fname, "%s", msg);
    return lm_err_noobj(cls, fname, "%s", msg);
}

/* Why keyval id cannot serve an object of this kind, for the message. */
static const char *unusable(int id, enum lm_kind kind, char *buf, size_t n)
{
    keyval *k = kv_at(id);
    if (id >= MPI_TAG_UB && id <= MPI_WIN_MODEL) snprintf(buf, n, "keyval %d is predefined (read-only)", id);
    else if (!k) snprintf(buf, n, "keyval %d does not exist", id);
    else if (k->kind != kind)
        snprintf(buf, n, "keyval %d is for %ss, not %ss", id, kind_word(k->kind), kind_word(kind));
    else snprintf(buf, n, "keyval %d was freed", id);
    return buf;
}

/* The class of an invalid object of this kind. */
static int invalid_class(enum lm_kind kind)
{
    return kind == LM_KIND_COMM ? MPI_ERR_COMM : kind == LM_KIND_WIN ? MPI_ERR_WIN : MPI_ERR_TYPE;
}

/* Where each kind of object keeps its list. Communicators are objects of
 * this layer; datatypes and windows live above it and register theirs. */
static lm_attr_list_fn lists[LM_KIND_COUNT];

void lm_attr_register_kind(enum lm_kind kind, lm_attr_list_fn list_of_handle) { lists[kind] = list_of_handle; }

static struct lm_attr_list **list_of(enum lm_kind kind, int h)
{
    if (kind == LM_KIND_COMM) {
        lm_comm *c = lm_comm_get(h);
        return c ? &c->attrs : NULL;
    }
    return lists[kind] ? lists[kind](h) : NULL;
}

static int find(const struct lm_attr_list *l, int id)
{
    for (int i = 0; l && i < l->n; i++)
        if (l->e[i].keyval == id) return i;
    return -1;
}

/* The user's callbacks run outside the library's critical section
 * (lm_cs_suspend): one written in Python takes the interpreter lock, which
 * another thread may hold while it waits for the section.  Callers look the
 * attribute list up again after each call. */
static int call_delete(lm_delete_fn *del, int h, int id, void *val, void *extra)
{
    unsigned held = lm_cs_suspend();
    int rc = del(h, id, val, extra);
    lm_cs_resume(held);
    return rc;
}

static int call_copy(lm_copy_fn *copy, int h, int id, void *extra, void *val, void **out, int *flag)
{
    unsigned held = lm_cs_suspend();
    int rc = copy(h, id, extra, val, out, flag);
    lm_cs_resume(held);
    return rc;
}

/* Append (keyval id, val); takes a reference on the keyval. */
static int append(struct lm_attr_list **lp, int id, void *val)
{
    struct lm_attr_list *l = *lp;
    if (!l || l->n == l->cap) {
        int cap = l ? 2 * l->cap : 2;
        struct lm_attr_list *nl = lm_realloc(LM_MEM_COMM, l, sizeof *nl + (size_t)cap * sizeof(attr_entry));
        if (!nl) return MPI_ERR_NO_MEM;
        if (!l) nl->n = 0;
        nl->cap = cap;
        *lp = l = nl;
    }
    l->e[l->n++] = (attr_entry){id, val};
    kv_at(id)->refs++;
    return MPI_SUCCESS;
}

/* Remove entry i; drops its keyval reference; frees an emptied list. */
static void remove_at(struct lm_attr_list **lp, int i)
{
    struct lm_attr_list *l = *lp;
    int id = l->e[i].keyval;
    memmove(&l->e[i], &l->e[i + 1], (size_t)(l->n - i - 1) * sizeof(attr_entry));
    if (--l->n == 0) {
        lm_free(LM_MEM_COMM, l);
        *lp = NULL;
    }
    kv_release(id);
}

/* Run the delete callback of attribute id on object h, then remove it. The
 * list is looked up again after the callback, which may itself change it. */
static int delete_one(enum lm_kind kind, int h, int id)
{
    struct lm_attr_list **lp = list_of(kind, h);
    int i = find(*lp, id);
    if (i < 0) return MPI_SUCCESS;
    keyval *k = kv_at(id);
    void *val = (*lp)->e[i].val;
    if (k->del) {
        int rc = call_delete(k->del, h, id, val, k->extra);
        if (rc != MPI_SUCCESS) return rc;
        lp = list_of(kind, h);
        i = find(*lp, id);
        if (i < 0) return MPI_SUCCESS;
    }
    remove_at(lp, i);
    return MPI_SUCCESS;
}

int lm_attr_delete_all(enum lm_kind kind, int handle, struct lm_attr_list **list)
{
    (void)list; /* looked up again by handle after every callback */
    struct lm_attr_list **lp;
    while ((lp = list_of(kind, handle)) && *lp) {
        int rc = delete_one(kind, handle, (*lp)->e[(*lp)->n - 1].keyval);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

void lm_attr_discard(struct lm_attr_list **list)
{
    while (*list) remove_at(list, (*list)->n - 1);
}

static int by_keyval(const void *a, const void *b)
{
    const attr_entry *x = a, *y = b;
    return (x->keyval > y->keyval) - (x->keyval < y->keyval);
}

int lm_attr_copy(enum lm_kind kind, int old_handle, struct lm_attr_list *src, int new_handle, struct lm_attr_list **dst)
{
    *dst = NULL;
    if (!src) return MPI_SUCCESS;
    /* a snapshot: callbacks may set or delete attributes on the old object */
    int n = src->n;
    attr_entry *snap = lm_malloc(LM_MEM_COMM, (size_t)n * sizeof *snap);
    if (!snap) return MPI_ERR_NO_MEM;
    memcpy(snap, src->e, (size_t)n * sizeof *snap);
    qsort(snap, (size_t)n, sizeof *snap, by_keyval);
    for (int i = 0; i < n; i++) kv_at(snap[i].keyval)->refs++;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        keyval *k = kv_at(snap[i].keyval);
        if (!k->copy) continue;
        void *out = NULL;
        int flag = 0;
        rc = call_copy(k->copy, old_handle, snap[i].keyval, k->extra, snap[i].val, &out, &flag);
        if (rc == MPI_SUCCESS && flag) rc = append(dst, snap[i].keyval, out);
    }
    for (int i = 0; i < n; i++) kv_release(snap[i].keyval);
    lm_free(LM_MEM_COMM, snap);
    if (rc != MPI_SUCCESS) {
        /* the copies already made are released through their delete
         * callbacks, as if the new object had been freed */
        while (*dst) {
            attr_entry e = (*dst)->e[(*dst)->n - 1];
            keyval *k = kv_at(e.keyval);
            if (k->del) call_delete(k->del, new_handle, e.keyval, e.val, k->extra);
            remove_at(dst, (*dst)->n - 1);
        }
    }
    return rc;
}

void lm_attr_finalize_comms(void)
{
    /* MPI-4.1 section 11.2.2: MPI_COMM_SELF's attributes go first, at the
     * very start of MPI_Finalize, most recently set first */
    lm_comm *self = lm_comm_get(MPI_COMM_SELF);
    if (self) lm_attr_delete_all(LM_KIND_COMM, MPI_COMM_SELF, &self->attrs);
    lm_comm *world = lm_comm_get(MPI_COMM_WORLD);
    if (world) lm_attr_delete_all(LM_KIND_COMM, MPI_COMM_WORLD, &world->attrs);
}

void lm_attr_finalize(void)
{
    /* keyvals still referenced belong to objects the program never freed;
     * no MPI call can reach them after this point */
    for (int i = 0; i < nkeyvals; i++) lm_free(LM_MEM_COMM, keyvals[i]);
    lm_free(LM_MEM_COMM, keyvals);
    keyvals = NULL;
    nkeyvals = capkeyvals = 0;
}

/* ---- keyvals ---- */

static int create_keyval(enum lm_kind kind, lm_copy_fn *copy, lm_delete_fn *del, int *id, void *extra,
                         const char *fname)
{
    if (nkeyvals == capkeyvals) {
        int cap = capkeyvals ? 2 * capkeyvals : 8;
        keyval **nk = lm_realloc(LM_MEM_COMM, keyvals, (size_t)cap * sizeof *nk);
        if (!nk) return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
        keyvals = nk;
        capkeyvals = cap;
    }
    keyval *k = lm_calloc(LM_MEM_COMM, 1, sizeof *k);
    if (!k) return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
    *k = (keyval){.kind = kind, .copy = copy, .del = del, .extra = extra, .refs = 1};
    keyvals[nkeyvals] = k;
    *id = KEYVAL_BASE + nkeyvals++;
    return MPI_SUCCESS;
}

static int free_keyval(enum lm_kind kind, int *id, const char *fname)
{
    keyval *k = kv_usable(*id, kind);
    char why[96];
    if (!k) return lm_err_noobj(MPI_ERR_KEYVAL, fname, "%s", unusable(*id, kind, why, sizeof why));
    k->freed = true;
    kv_release(*id);
    *id = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* ---- generic set / get / delete ---- */

static int set_attr(enum lm_kind kind, int h, int id, void *val, const char *fname)
{
    struct lm_attr_list **lp = list_of(kind, h);
    if (!lp) return raise(kind, h, invalid_class(kind), fname, "invalid %s", kind_word(kind));
    char why[96];
    if (!kv_usable(id, kind)) return raise(kind, h, MPI_ERR_KEYVAL, fname, "%s", unusable(id, kind, why, sizeof why));
    int rc;
    if (find(*lp, id) >= 0) {
        /* the old value goes through its delete callback first; if that
         * fails, the attribute keeps the old value */
        kv_at(id)->refs++; /* keep the keyval while its entry is replaced */
        rc = delete_one(kind, h, id);
        if (rc == MPI_SUCCESS) rc = append(list_of(kind, h), id, val);
        kv_release(id);
        if (rc != MPI_SUCCESS) return raise(kind, h, rc, fname, "delete callback of keyval %d failed", id);
        return MPI_SUCCESS;
    }
    rc = append(lp, id, val);
    return rc ? raise(kind, h, rc, fname, "out of memory") : MPI_SUCCESS;
}

static int get_attr(enum lm_kind kind, int h, int id, void *out, int *flag, const char *fname)
{
    struct lm_attr_list **lp = list_of(kind, h);
    if (!lp) return raise(kind, h, invalid_class(kind), fname, "invalid %s", kind_word(kind));
    char why[96];
    if (!kv_held(id, kind, *lp))
        return raise(kind, h, MPI_ERR_KEYVAL, fname, "%s", unusable(id, kind, why, sizeof why));
    int i = find(*lp, id);
    *flag = i >= 0;
    if (i >= 0) *(void **)out = (*lp)->e[i].val;
    return MPI_SUCCESS;
}

static int delete_attr(enum lm_kind kind, int h, int id, const char *fname)
{
    struct lm_attr_list **lp = list_of(kind, h);
    if (!lp) return raise(kind, h, invalid_class(kind), fname, "invalid %s", kind_word(kind));
    char why[96];
    if (!kv_held(id, kind, *lp))
        return raise(kind, h, MPI_ERR_KEYVAL, fname, "%s", unusable(id, kind, why, sizeof why));
    if (find(*lp, id) < 0)
        return raise(kind, h, MPI_ERR_KEYVAL, fname, "keyval %d has no attribute on this %s", id, kind_word(kind));
    int rc = delete_one(kind, h, id);
    return rc ? raise(kind, h, rc, fname, "delete callback of keyval %d failed", id) : MPI_SUCCESS;
}

int lm_attr_get(enum lm_kind kind, int handle, int keyval, void *attribute_val, int *flag, const char *fname)
{
    return get_attr(kind, handle, keyval, attribute_val, flag, fname);
}

/* ---- communicators ---- */

int impl_MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del, int *keyval,
                                void *extra_state)
{
    return create_keyval(LM_KIND_COMM, copy, del, keyval, extra_state, "MPI_Comm_create_keyval");
}

int impl_MPI_Comm_free_keyval(int *keyval) { return free_keyval(LM_KIND_COMM, keyval, "MPI_Comm_free_keyval"); }

int impl_MPI_Comm_set_attr(MPI_Comm comm, int keyval, void *attribute_val)
{
    return set_attr(LM_KIND_COMM, comm, keyval, attribute_val, "MPI_Comm_set_attr");
}

int impl_MPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
    return delete_attr(LM_KIND_COMM, comm, keyval, "MPI_Comm_delete_attr");
}

/* The MPI-1 names, deprecated but still part of the standard. */
int impl_MPI_Keyval_create(MPI_Copy_function *copy, MPI_Delete_function *del, int *keyval, void *extra_state)
{
    return create_keyval(LM_KIND_COMM, copy, del, keyval, extra_state, "MPI_Keyval_create");
}

int impl_MPI_Keyval_free(int *keyval) { return free_keyval(LM_KIND_COMM, keyval, "MPI_Keyval_free"); }

int impl_MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return set_attr(LM_KIND_COMM, comm, keyval, attribute_val, "MPI_Attr_put");
}

int impl_MPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return impl_MPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}

int impl_MPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return delete_attr(LM_KIND_COMM, comm, keyval, "MPI_Attr_delete");
}

/* ---- windows (MPI_Win_get_attr, which answers the predefined window
 * attributes, is in rma/win.c) ---- */

int impl_MPI_Win_create_keyval(MPI_Win_copy_attr_function *copy, MPI_Win_delete_attr_function *del, int *keyval,
                               void *extra_state)
{
    return create_keyval(LM_KIND_WIN, (lm_copy_fn *)copy, (lm_delete_fn *)del, keyval, extra_state,
                         "MPI_Win_create_keyval");
}

int impl_MPI_Win_free_keyval(int *keyval) { return free_keyval(LM_KIND_WIN, keyval, "MPI_Win_free_keyval"); }

int impl_MPI_Win_set_attr(MPI_Win win, int keyval, void *attribute_val)
{
    return set_attr(LM_KIND_WIN, win, keyval, attribute_val, "MPI_Win_set_attr");
}

int impl_MPI_Win_delete_attr(MPI_Win win, int keyval)
{
    return delete_attr(LM_KIND_WIN, win, keyval, "MPI_Win_delete_attr");
}

/* ---- datatypes ---- */

int impl_MPI_Type_create_keyval(MPI_Type_copy_attr_function *copy, MPI_Type_delete_attr_function *del, int *keyval,
                                void *extra_state)
{
    return create_keyval(LM_KIND_DATATYPE, copy, del, keyval, extra_state, "MPI_Type_create_keyval");
}

int impl_MPI_Type_free_keyval(int *keyval) { return free_keyval(LM_KIND_DATATYPE, keyval, "MPI_Type_free_keyval"); }

int impl_MPI_Type_set_attr(MPI_Datatype datatype, int keyval, void *attribute_val)
{
    return set_attr(LM_KIND_DATATYPE, datatype, keyval, attribute_val, "MPI_Type_set_attr");
}

int impl_MPI_Type_get_attr(MPI_Datatype datatype, int keyval, void *attribute_val, int *flag)
{
    return get_attr(LM_KIND_DATATYPE, datatype, keyval, attribute_val, flag, "MPI_Type_get_attr");
}

int impl_MPI_Type_delete_attr(MPI_Datatype datatype, int keyval)
{
    return delete_attr(LM_KIND_DATATYPE, datatype, keyval, "MPI_Type_delete_attr");
}
