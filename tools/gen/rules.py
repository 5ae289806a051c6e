"""Argument-validation rules: which check each parameter kind gets, and the
function-specific exceptions. The checks themselves are small C functions in
src/binding/validate.h; this file only decides which to call."""

import re

# Functions that work before MPI_Init / after MPI_Finalize (MPI-4.1 11.4.1,
# plus the Sessions and tool interfaces, which have their own life cycle).
NO_INIT_CHECK_PREFIXES = ("MPI_T_", "MPI_Session_", "MPI_Info_")
NO_INIT_CHECK = {
    "MPI_Init", "MPI_Init_thread", "MPI_Initialized", "MPI_Finalized",
    "MPI_Get_version", "MPI_Get_library_version", "MPI_Error_class",
    "MPI_Error_string", "MPI_Abort", "MPI_Errhandler_free",
    "MPI_Group_from_session_pset", "MPI_Comm_create_from_group",
    "MPI_Intercomm_create_from_groups", "MPI_Group_free",
}

# No argument validation at all: MPI_T functions return MPI_T_ERR_* codes
# themselves and never invoke an error handler (MPI-4.1 15.3.2), so every
# check, NULL names included, is left to the implementation.
NO_VALIDATION_PREFIXES = ("MPI_T_",)

# Hot one-sided calls whose implementations check every argument
# themselves, in one condition before anything else, and explain a refusal
# out of line (src/rma/rma_sync.c): the wrapper checks initialization only,
# so that a valid call looks at each argument once.
IMPL_VALIDATES = {"MPI_Win_lock", "MPI_Win_unlock", "MPI_Win_lock_all", "MPI_Win_unlock_all", "MPI_Win_flush",
                  "MPI_Win_flush_local",
                  # arguments significant only at the root (src/comm/dynamic.c)
                  "MPI_Comm_spawn", "MPI_Comm_spawn_multiple", "MPI_Comm_accept", "MPI_Comm_connect"}

# Calls whose implementation also defines `fast_MPI_X(args..., int *rc)`:
# it takes the plain case, whose arguments it can see are valid at a glance
# (src/pt2pt/send_recv.c, src/rma/rma_comm.c, src/rma/rma_acc.c), sets *rc and returns nonzero;
# for anything else it returns 0 having done nothing, and the entry point
# runs the generated checks and impl_MPI_X as usual, so every refusal is
# explained the same way.
FAST_PATH = {"MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Put", "MPI_Get", "MPI_Accumulate",
             "MPI_Fetch_and_op", "MPI_Compare_and_swap"}

# Implemented directly in hand-written binding files (no validation wrapper,
# no impl_ hook): trivial or unable to forward their arguments (varargs).
DIRECT = re.compile(
    r"^MPI_(Wtime|Wtick|Aint_add|Aint_diff|Pcontrol|[A-Za-z]+_c2f|[A-Za-z]+_f2c"
    r"|Status_(c2f|f2c|c2f08|f082c|f2f08|f082f))$")

# Parameter declarations the standard's data (pympistandard 0.2.0) gets
# wrong, with the declaration the MPI-4.1 document gives.
PARAM_DECL_FIXES = {
    ("MPI_Info_create_env", "char argv[]"): "char *argv[]",
}

# Parameters the standard's data marks root-only though every process uses
# them (MPI_Scatterv_init's receive buffer, as in MPI_Scatterv).
ROOT_ONLY_FIXES = {
    ("MPI_Scatterv_init", "recvbuf"): False,
}

# Present in the standard's data but not part of MPI-4.1 (MPI-5 ABI).
NOT_IN_MPI41 = re.compile(r"^MPI_(Abi_.*|[A-Za-z]+_toint|[A-Za-z]+_fromint)$")

# Collectives whose send buffer may be MPI_IN_PLACE, and those whose receive
# buffer may be (scatter at the root).
_INPLACE_SEND = {"Allgather", "Allgatherv", "Allreduce", "Alltoall", "Alltoallv",
                 "Alltoallw", "Gather", "Gatherv", "Reduce", "Reduce_scatter",
                 "Reduce_scatter_block", "Scan", "Exscan"}
_INPLACE_RECV = {"Scatter", "Scatterv"}
_ROOTED = {"Bcast", "Gather", "Gatherv", "Scatter", "Scatterv", "Reduce"}


def coll_base(fname):
    """MPI_Iallreduce_init_c -> Allreduce (None when not a collective)."""
    base = fname[4:]
    base = re.sub(r"_c$", "", base)
    base = re.sub(r"_init$", "", base)
    if base in _INPLACE_SEND | _INPLACE_RECV | _ROOTED | {"Barrier"}:
        return base
    if base.startswith("I") and base[1:].capitalize() in _INPLACE_SEND | _INPLACE_RECV | _ROOTED | {"Barrier"}:
        return base[1:].capitalize()
    return None


def inplace_allowed(fname, pname):
    # MPI_Get_address takes any address, the buffer sentinels included
    if fname == "MPI_Get_address" and pname == "location":
        return True
    base = coll_base(fname)
    if base in _INPLACE_SEND and pname == "sendbuf":
        return True
    if base in _INPLACE_RECV and pname == "recvbuf":
        return True
    return False


def is_rooted(fname):
    return coll_base(fname) in _ROOTED


# Arguments of rooted collectives that both the root and the other processes
# use (the broadcast data, the reduced count and type). On an
# intercommunicator they are significant at MPI_ROOT as well as in the
# other group, and only MPI_PROC_NULL ignores them.
_BOTH_SIDES = {"Bcast": {"buffer", "count", "datatype"}, "Reduce": {"count", "datatype"}}


def significant_at_root_too(fname, pname):
    return pname in _BOTH_SIDES.get(coll_base(fname), ())


# Buffers whose element count and type are not the two parameters right
# after them: the send side of the reductions. A NULL one with data to move
# is MPI_ERR_BUFFER as for any other buffer.
_REDUCTION_SEND = {"Allreduce", "Reduce", "Scan", "Exscan"}


def buffer_described_by(fname, pname):
    base = coll_base(fname)
    if base in _REDUCTION_SEND and pname == "sendbuf":
        return ("count", "datatype")
    if base == "Reduce_scatter_block" and pname == "sendbuf":
        return ("recvcount", "datatype")
    if re.match(r"^MPI_Reduce_local(_c)?$", fname) and pname == "inbuf":
        return ("count", "datatype")
    return None


# Receive-side sources and tags accept the wildcards. Partitioned receives
# do not (MPI-4.1 4.2.2).
_RECV_FUNCS = re.compile(r"^MPI_(Recv|Irecv|Recv_init|Probe|Iprobe|Mprobe|Improbe"
                         r"|Sendrecv|Isendrecv|Sendrecv_replace|Isendrecv_replace)(_c)?$")


def allows_any_source(fname, pname):
    return bool(_RECV_FUNCS.match(fname)) and pname == "source"


def allows_any_tag(fname, pname):
    if pname == "recvtag":
        return True
    return bool(_RECV_FUNCS.match(fname)) and pname == "tag"


# (function, parameter) pairs left to the implementation because their
# validity depends on state only it knows.
SKIP = {
    ("MPI_Intercomm_create", "peer_comm"),      # significant only at the leader
    ("MPI_Intercomm_create", "remote_leader"),  # a rank in peer_comm
    ("MPI_Status_set_source", "source"),
    ("MPI_Status_set_tag", "tag"),
}

# Out pointers that may be NULL (the standard lets the caller skip them).
NULL_OK = {
    ("MPI_Info_get_string", "value"),
    ("MPI_Session_get_nth_pset", "pset_name"),
}

# Null handles these calls accept: MPI-4.1 gives a null handle a name of its
# own ("MPI_COMM_NULL", ...) for the get_name calls (not for set_name).
NULL_HANDLE_OK = {
    ("MPI_Comm_get_name", "comm"),
    ("MPI_Type_get_name", "datatype"),
    ("MPI_Win_get_name", "win"),
}

# Freeing these predefined objects is an error.
# Collective communicator constructors over an intracommunicator: a check
# that fails after the communicator is known still takes part in the
# constructor's first collective step (the context-id agreement, or the
# topology constructors' argument comparison), so that the other processes
# fail with it instead of waiting for it (src/comm/context_id.h,
# src/comm/topo_create.h).
ABSTAIN = {
    "MPI_Comm_dup": "lm_context_id_abstain_dup",
    "MPI_Comm_dup_with_info": "lm_context_id_abstain_dup",
    "MPI_Comm_idup": "lm_context_id_abstain_dup",
    "MPI_Comm_idup_with_info": "lm_context_id_abstain_dup",
    "MPI_Comm_split": "lm_context_id_abstain",
    "MPI_Comm_split_type": "lm_context_id_abstain",
    "MPI_Comm_create": "lm_context_id_abstain",
    "MPI_Intercomm_merge": "lm_intercomm_abstain",
    # the local leader also needs what reaches the remote leader
    "MPI_Intercomm_create": ("lm_intercomm_create_abstain", "local_leader, peer_comm, remote_leader, tag"),
    "MPI_Cart_create": "lm_topo_abstain",
    "MPI_Cart_sub": "lm_topo_abstain",
    "MPI_Graph_create": "lm_topo_abstain",
    "MPI_Dist_graph_create": "lm_topo_abstain",
    "MPI_Dist_graph_create_adjacent": "lm_topo_abstain",
}

FREE_REJECTS_PREDEFINED = {"MPI_Comm_free", "MPI_Type_free", "MPI_Op_free", "MPI_Info_free"}

# Scalar count-like kinds: kind -> (error class, minimum value).
COUNT_KINDS = {
    "POLYXFER_NUM_ELEM_NNI": ("MPI_ERR_COUNT", 0),
    "XFER_NUM_ELEM_NNI": ("MPI_ERR_COUNT", 0),
    "POLYDTYPE_NUM_ELEM_NNI": ("MPI_ERR_COUNT", 0),
    "ARRAY_LENGTH_NNI": ("MPI_ERR_COUNT", 0),
    "ARRAY_LENGTH_PI": ("MPI_ERR_ARG", 1),
    "POLYNUM_BYTES_NNI": ("MPI_ERR_ARG", 0),
    "ALLOC_MEM_NUM_BYTES": ("MPI_ERR_SIZE", 0),
    "WINDOW_SIZE": ("MPI_ERR_SIZE", 0),
    "POLYRMA_DISPLACEMENT": ("MPI_ERR_DISP", 1),
    "RMA_DISPLACEMENT_NNI": ("MPI_ERR_DISP", 0),
    "NUM_DIMS": ("MPI_ERR_DIMS", 0),
}

# Handle kinds: kind -> (C check function, null allowed by default, error class).
# The check functions take (ctx, handle, name, null_ok).
HANDLE_CHECKS = {
    "GROUP": "lm_check_group",
    "OPERATION": "lm_check_op",
    "INFO": "lm_check_info",
    "ERRHANDLER": "lm_check_errhandler",
    "WINDOW": "lm_check_win",
    "FILE": "lm_check_file",
    "SESSION": "lm_check_session",
    "MESSAGE": "lm_check_message",
    "REQUEST": "lm_check_request",
}


def info_null_ok(fname):
    # MPI_INFO_NULL means "no hints" everywhere except in the info calls.
    return not fname.startswith("MPI_Info_")



def request_null_ok(fname):
    # Wait/Test on MPI_REQUEST_NULL completes at once; others need a request.
    return bool(re.match(r"^MPI_(Wait|Test|Request_get_status)", fname))


# Kinds whose out/inout pointers are never checked for NULL.
NO_NULL_CHECK_KINDS = {"BUFFER", "STATUS", "ARGUMENT_COUNT", "ARGUMENT_LIST",
                       "LOGICAL_OPTIONAL", "ERROR_CODE", "VARARGS", "F08_STATUS",
                       "F90_STATUS"}


def error_string_class(fname, pname):
    if fname.startswith("MPI_Info_") and pname == "key":
        return "MPI_ERR_INFO_KEY"
    if fname.startswith("MPI_Info_") and pname == "value":
        return "MPI_ERR_INFO_VALUE"
    return "MPI_ERR_ARG"


FAMILIES = [
    ("tool", r"^MPI_T_"),
    ("io", r"^MPI_(File_|Register_datarep)"),
    ("rma", r"^MPI_(Win_|R?put|R?get|R?accumulate|Get_accumulate|Rget_accumulate"
            r"|Fetch_and_op|Compare_and_swap|Alloc_mem|Free_mem)"),
    ("coll", r"^MPI_(I?(allgather|allgatherv|allreduce|alltoall|alltoallv|alltoallw|barrier"
             r"|bcast|exscan|gather|gatherv|reduce|reduce_scatter|reduce_scatter_block|scan"
             r"|scatter|scatterv|neighbor_\w+)(_init)?(_c)?|Reduce_local(_c)?)$"),
    ("datatype", r"^MPI_(Type_|Pack|Unpack|Get_address|Get_count|Get_elements|Status_set_elements)"),
    ("pt2pt", r"^MPI_(I?[bsr]?send|I?recv|Send_init|Bsend_init|Ssend_init|Rsend_init|Recv_init"
              r"|I?sendrecv|I?m?probe|Improbe|I?mrecv|Wait|Test|Start|Cancel|Request_|Buffer_"
              r"|P(send|recv)_init|Pready|Parrived|Grequest_|Status_|Comm_(attach|detach|flush|iflush)_buffer"
              r"|Session_(attach|detach|flush|iflush)_buffer)"),
    ("comm", r"^MPI_(Comm_|Group_|Intercomm_|Cart|Graph|Dist_graph|Dims_create|Topo_test"
             r"|Attr_|Keyval_|Open_port|Close_port|Lookup_name|Publish_name|Unpublish_name)"),
    ("env", r"."),
]


def family(fname):
    for fam, pat in FAMILIES:
        if re.match(pat, fname, re.I):
            return fam
    return "env"
