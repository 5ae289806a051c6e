#include "obj/errhandler.h"
#include "util/lm_error.h"
#include "util/lm_state.h"
#include "boot/boot.h"
#include "api/impl_gen.h"
#include <stdio.h>
#include <unistd.h>

#define PREDEF(i) LM_HANDLE(LM_KIND_ERRHANDLER, LM_TIER_BUILTIN, i)

int lm_errhandler_valid(MPI_Errhandler e)
{
    if (LM_HANDLE_KIND(e) != LM_KIND_ERRHANDLER) return 0;
    if (LM_HANDLE_TIER(e) == LM_TIER_BUILTIN) return LM_HANDLE_INDEX(e) < LM_ERRH_PREDEFINED_COUNT;
    return lm_object_lookup(e, LM_KIND_ERRHANDLER) != NULL;
}

int lm_errhandler_fits(MPI_Errhandler e, int target)
{
    if (!lm_errhandler_valid(e)) return 0;
    if (LM_HANDLE_TIER(e) == LM_TIER_BUILTIN) return 1;
    lm_errhandler *h = lm_object_lookup(e, LM_KIND_ERRHANDLER);
    return h->target == target;
}

static void die(int code, const char *message)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "LeanMPI: rank %d: %s\n", lm_world_rank(), message);
    if (n > 0) {
        ssize_t w = write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        (void)w;
    }
    lm_boot_abort(code ? code : 1, message);
}

int lm_errhandler_invoke(MPI_Errhandler e, int target, int obj, int code, const char *message)
{
    if (LM_HANDLE_TIER(e) == LM_TIER_BUILTIN) {
        switch (LM_HANDLE_INDEX(e)) {
        case LM_ERRH_RETURN_INDEX: return code;
        case LM_ERRH_FATAL_INDEX:
        case LM_ERRH_ABORT_INDEX:
        default: die(code, message);
        }
    }
    lm_errhandler *h = lm_object_lookup(e, LM_KIND_ERRHANDLER);
    if (!h || !h->fn) die(code, message);
    int c = code;
    switch (target) {
    case LM_ERRH_COMM: ((MPI_Comm_errhandler_function *)(void *)h->fn)(&obj, &c); break;
    case LM_ERRH_WIN: ((MPI_Win_errhandler_function *)(void *)h->fn)(&obj, &c); break;
    case LM_ERRH_FILE: ((MPI_File_errhandler_function *)(void *)h->fn)(&obj, &c); break;
    case LM_ERRH_SESSION: ((MPI_Session_errhandler_function *)(void *)h->fn)(&obj, &c); break;
    }
    return code;
}

void lm_errhandler_retain(MPI_Errhandler e)
{
    lm_errhandler *h = lm_object_lookup(e, LM_KIND_ERRHANDLER);
    if (h) h->obj.refcount++;
}

void lm_errhandler_release(MPI_Errhandler e)
{
    lm_errhandler *h = lm_object_lookup(e, LM_KIND_ERRHANDLER);
    if (h && --h->obj.refcount == 0) lm_object_free(h);
}

static int create(int target, void (*fn)(void), MPI_Errhandler *out)
{
    lm_errhandler *h = lm_object_alloc(LM_KIND_ERRHANDLER, sizeof *h);
    if (!h) return lm_err_noobj(MPI_ERR_NO_MEM, "MPI_Comm_create_errhandler", "out of memory");
    h->target = target;
    h->fn = fn;
    *out = h->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create(LM_ERRH_COMM, (void (*)(void))fn, errhandler);
}

int impl_MPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create(LM_ERRH_WIN, (void (*)(void))fn, errhandler);
}

int impl_MPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create(LM_ERRH_FILE, (void (*)(void))fn, errhandler);
}

int impl_MPI_Session_create_errhandler(MPI_Session_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create(LM_ERRH_SESSION, (void (*)(void))fn, errhandler);
}

int impl_MPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    if (!lm_errhandler_valid(*errhandler))
        return lm_err_noobj(MPI_ERR_ARG, "MPI_Errhandler_free", "invalid error handler");
    if (LM_HANDLE_TIER(*errhandler) == LM_TIER_DYNAMIC) lm_errhandler_release(*errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
