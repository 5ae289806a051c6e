/* User-defined error classes, codes and strings.
 *
 * One table indexed by (code - MPI_ERR_LASTCODE - 1). Removed entries go on
 * a free list and their numbers are handed out again, so a program that
 * adds and removes classes for ever keeps a table as large as what it has
 * live at once, and every add and remove is O(1): a class counts its codes
 * instead of searching for them. (Using a removed code is erroneous; it may
 * name a newer entry.) */
#include "obj/user_errors.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include <stdio.h>
#include "api/impl_gen.h"
#include <string.h>

struct user_error {
    int cls; /* own code for a class, the parent class for a code */
    bool live;
    bool is_class;
    int codes;     /* a class: its live codes */
    int next_free; /* removed: the index of the next free entry, -1 at the end */
    char *text;    /* NULL until MPI_Add_error_string */
};

static struct user_error *table;
static int count, capacity; /* entries ever used (the high-water mark), allocated */
static int free_head = -1;

static struct user_error *lookup(int code)
{
    int i = code - MPI_ERR_LASTCODE - 1;
    if (i < 0 || i >= count || !table[i].live) return NULL;
    return &table[i];
}

int lm_user_error_class(int code)
{
    struct user_error *e = lookup(code);
    return e ? e->cls : -1;
}

const char *lm_user_error_string(int code)
{
    struct user_error *e = lookup(code);
    return e ? e->text : NULL;
}

int lm_user_error_last_used(void) { return MPI_ERR_LASTCODE + count; }

void lm_user_errors_release(void)
{
    for (int i = 0; i < count; i++) lm_free(LM_MEM_CORE, table[i].text);
    lm_free(LM_MEM_CORE, table);
    table = NULL;
    count = capacity = 0;
    free_head = -1;
}

static int add(const char *fname, int cls, bool is_class, int *out)
{
    int i = free_head;
    if (i >= 0) {
        free_head = table[i].next_free;
    } else {
        if (count == capacity) {
            int n = capacity ? 2 * capacity : 16;
            struct user_error *t = lm_realloc(LM_MEM_CORE, table, (size_t)n * sizeof *t);
            if (!t) return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
            table = t;
            capacity = n;
        }
        i = count++;
    }
    int code = MPI_ERR_LASTCODE + 1 + i;
    table[i] = (struct user_error){.cls = is_class ? code : cls, .live = true, .is_class = is_class, .next_free = -1};
    if (!is_class && cls > MPI_ERR_LASTCODE) lookup(cls)->codes++;
    *out = code;
    return MPI_SUCCESS;
}

int impl_MPI_Add_error_class(int *errorclass) { return add("MPI_Add_error_class", 0, true, errorclass); }

int impl_MPI_Add_error_code(int errorclass, int *errorcode)
{
    struct user_error *c = lookup(errorclass);
    bool valid = (errorclass >= MPI_SUCCESS && errorclass <= MPI_ERR_LASTCODE) || (c && c->is_class);
    if (!valid) return lm_err_noobj(MPI_ERR_ARG, "MPI_Add_error_code", "%d is not an error class", errorclass);
    return add("MPI_Add_error_code", errorclass, false, errorcode);
}

int impl_MPI_Add_error_string(int errorcode, const char *string)
{
    struct user_error *e = lookup(errorcode);
    if (!e)
        return lm_err_noobj(MPI_ERR_ARG, "MPI_Add_error_string", "%d is not a user-defined error class or code",
                            errorcode);
    size_t len = strlen(string);
    if (len >= MPI_MAX_ERROR_STRING)
        return lm_err_noobj(MPI_ERR_ARG, "MPI_Add_error_string",
                            "the string is %zu characters long, at most %d are allowed", len, MPI_MAX_ERROR_STRING - 1);
    char *t = lm_malloc(LM_MEM_CORE, len + 1);
    if (!t) return lm_err_noobj(MPI_ERR_NO_MEM, "MPI_Add_error_string", "out of memory");
    memcpy(t, string, len + 1);
    lm_free(LM_MEM_CORE, e->text);
    e->text = t;
    return MPI_SUCCESS;
}

/* Removal (MPI-4.1 section 9.5): a class may go only once it has no codes
 * left, and a class or code only once its string has been removed. */
static int remove_entry(const char *fname, int code, bool want_class)
{
    struct user_error *e = lookup(code);
    if (!e || e->is_class != want_class)
        return lm_err_noobj(MPI_ERR_ARG, fname, "%d is not a user-defined error %s", code,
                            want_class ? "class" : "code");
    if (want_class && e->codes)
        return lm_err_noobj(MPI_ERR_ARG, fname, "error class %d still has %d code%s", code, e->codes,
                            e->codes == 1 ? "" : "s");
    if (e->text)
        return lm_err_noobj(MPI_ERR_ARG, fname, "error %s %d still has a string (MPI_Remove_error_string first)",
                            want_class ? "class" : "code", code);
    if (!want_class && e->cls > MPI_ERR_LASTCODE) lookup(e->cls)->codes--;
    e->live = false;
    e->next_free = free_head;
    free_head = (int)(e - table);
    return MPI_SUCCESS;
}

int impl_MPI_Remove_error_class(int errorclass) { return remove_entry("MPI_Remove_error_class", errorclass, true); }

int impl_MPI_Remove_error_code(int errorcode) { return remove_entry("MPI_Remove_error_code", errorcode, false); }

int impl_MPI_Remove_error_string(int errorcode)
{
    struct user_error *e = lookup(errorcode);
    if (!e)
        return lm_err_noobj(MPI_ERR_ARG, "MPI_Remove_error_string", "%d is not a user-defined error class or code",
                            errorcode);
    lm_free(LM_MEM_CORE, e->text);
    e->text = NULL;
    return MPI_SUCCESS;
}

/* ---- MPI_Error_class and MPI_Error_string: predefined and user codes ---- */

int impl_MPI_Error_class(int errorcode, int *errorclass)
{
    if (errorcode >= MPI_SUCCESS && errorcode <= MPI_ERR_LASTCODE) {
        *errorclass = errorcode;
        return MPI_SUCCESS;
    }
    int cls = lm_user_error_class(errorcode);
    if (cls < 0) return lm_err_noobj(MPI_ERR_ARG, "MPI_Error_class", "invalid error code %d", errorcode);
    *errorclass = cls;
    return MPI_SUCCESS;
}

int impl_MPI_Error_string(int errorcode, char *string, int *resultlen)
{
    const char *t = lm_error_class_text(errorcode);
    if (!t && errorcode > MPI_ERR_LASTCODE) {
        if (lm_user_error_class(errorcode) < 0)
            return lm_err_noobj(MPI_ERR_ARG, "MPI_Error_string", "invalid error code %d", errorcode);
        t = lm_user_error_string(errorcode); /* the empty string until one is added */
        if (!t) t = "";
    } else if (!t) {
        if (errorcode < MPI_SUCCESS)
            return lm_err_noobj(MPI_ERR_ARG, "MPI_Error_string", "invalid error code %d", errorcode);
        t = "error";
    }
    int n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", t);
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}
