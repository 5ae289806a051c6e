/* Raising errors at the MPI boundary: the one place where user error
 * handlers run. A generated entry point whose implementation returned an
 * error code hands it here with the function's name; the implementation
 * recorded the object to raise it on (util/lm_error.h), and its handler
 * decides what the program gets back. */
#include "binding/validate.h"
#include "obj/errhandler.h"
#include "rma/win.h"
#include "runtime/session.h"

/* MPI_COMM_SELF's handler: errors tied to no object, or to one that is gone. */
static int raise_on_self(int code)
{
    lm_comm *c = lm_comm_get(MPI_COMM_SELF);
    if (!c) return code;
    return lm_errhandler_invoke(c->errhandler, LM_ERRH_COMM, c->obj.handle, code, lm_err_last_message());
}

int lm_raise_at_boundary(const char *fname, int code)
{
    lm_err_record r;
    if (!lm_err_take(code, &r)) {
        /* a code that came back with no record of its own */
        lm_err_note(code, fname, "the call failed");
        r = (lm_err_record){.cls = code, .on = LM_ERR_ON_NOTHING};
    }
    if (lm_initialized_state() != LM_STATE_INITIALIZED) return code;
    const char *msg = lm_err_last_message();
    MPI_Errhandler e;
    switch (r.on) {
    case LM_ERR_ON_COMM: {
        /* an invalid communicator argument is reported on MPI_COMM_WORLD, as
         * users who set a handler usually set it there */
        lm_comm *c = lm_comm_get(r.handle);
        if (!c) c = lm_comm_get(MPI_COMM_WORLD);
        if (!c) return code;
        return lm_errhandler_invoke(c->errhandler, LM_ERRH_COMM, c->obj.handle, code, msg);
    }
    case LM_ERR_ON_WIN:
        if (lm_win_errhandler(r.handle, &e)) return lm_errhandler_invoke(e, LM_ERRH_WIN, r.handle, code, msg);
        return raise_on_self(code);
    case LM_ERR_ON_SESSION:
        if (lm_session_errhandler(r.handle, &e)) return lm_errhandler_invoke(e, LM_ERRH_SESSION, r.handle, code, msg);
        return raise_on_self(code);
    case LM_ERR_ON_HANDLER:
        return lm_errhandler_invoke(r.errhandler, r.errh_kind,
                                    r.errh_kind == LM_ERRH_SESSION ? (int)MPI_SESSION_NULL : (int)MPI_COMM_NULL, code,
                                    msg);
    case LM_ERR_ON_NOTHING:
    default: return raise_on_self(code);
    }
}
