/* Error raising for the generated argument checks: route to the error
 * handler of the object the call is about. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include "binding/validate.h"

int lm_raise(const lm_errctx *ctx, int errclass, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    switch (ctx->kind) {
    case LM_KIND_COMM: return lm_err_comm(ctx->handle, errclass, ctx->fn, "%s", msg);
    case LM_KIND_WIN: return lm_err_win(ctx->handle, errclass, ctx->fn, "%s", msg);
    case LM_KIND_FILE: return lm_err_file(ctx->handle, errclass, ctx->fn, "%s", msg);
    case LM_KIND_SESSION: return lm_err_session(ctx->handle, errclass, ctx->fn, "%s", msg);
    default: return lm_err_noobj(errclass, ctx->fn, "%s", msg);
    }
}

int lm_raise_not_initialized(const lm_errctx *ctx, int state)
{
    if (state == LM_STATE_FORKED)
        lm_fatal("%s called in process %d, a child that fork() made of this rank; only the rank's own process may "
                 "use MPI",
                 ctx->fn, (int)getpid());
    return lm_raise(ctx, MPI_ERR_OTHER, "called %s", state == 0 ? "before MPI_Init" : "after MPI_Finalize");
}
