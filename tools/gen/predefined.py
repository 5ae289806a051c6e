"""Predefined MPI objects: the single source for the handle constants in
mpi.h and for the builtin datatype table compiled into the library.

A handle is an int: kind in bits 31..28, tier in 27..26 (0 NULL, 1 predefined,
2 dynamic), predefined index in the low bits (see src/util/lm_handle.h)."""

KIND = {
    "COMM": 1, "GROUP": 2, "DATATYPE": 3, "OP": 4, "ERRHANDLER": 5,
    "REQUEST": 6, "INFO": 7, "WIN": 8, "MESSAGE": 9, "SESSION": 10, "FILE": 11,
}
TIER_NULL, TIER_BUILTIN = 0, 1


def handle(kind, tier, index=0):
    # bit 31 stays clear: handles are non-negative ints (src/util/lm_handle.h)
    return (KIND[kind] << 27) | (tier << 25) | index


# (C type name, kind) -> its NULL handle constant.
NULL_HANDLES = [
    ("MPI_Comm", "MPI_COMM_NULL", "COMM"),
    ("MPI_Group", "MPI_GROUP_NULL", "GROUP"),
    ("MPI_Datatype", "MPI_DATATYPE_NULL", "DATATYPE"),
    ("MPI_Op", "MPI_OP_NULL", "OP"),
    ("MPI_Errhandler", "MPI_ERRHANDLER_NULL", "ERRHANDLER"),
    ("MPI_Request", "MPI_REQUEST_NULL", "REQUEST"),
    ("MPI_Info", "MPI_INFO_NULL", "INFO"),
    ("MPI_Win", "MPI_WIN_NULL", "WIN"),
    ("MPI_Message", "MPI_MESSAGE_NULL", "MESSAGE"),
    ("MPI_Session", "MPI_SESSION_NULL", "SESSION"),
    ("MPI_File", "MPI_FILE_NULL", "FILE"),
]

# Predefined objects other than datatypes, in index order per kind.
# Predefined objects the library hands out that the standard does not name
# (counted in LM_PREDEFINED_COUNT_*, so that their handles validate, but not
# in mpi.h): a request, LM_REQUEST_DONE in src/pt2pt/request.h, stands for
# every send that was complete when it started.
INTERNAL_PREDEFINED_COUNT = {"REQUEST": 1}

PREDEFINED = {
    "COMM": ["MPI_COMM_WORLD", "MPI_COMM_SELF"],
    "GROUP": ["MPI_GROUP_EMPTY"],
    "ERRHANDLER": ["MPI_ERRORS_ARE_FATAL", "MPI_ERRORS_RETURN", "MPI_ERRORS_ABORT"],
    "INFO": ["MPI_INFO_ENV"],
    "MESSAGE": ["MPI_MESSAGE_NO_PROC"],
    "OP": ["MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND", "MPI_BAND",
           "MPI_LOR", "MPI_BOR", "MPI_LXOR", "MPI_BXOR", "MPI_MINLOC",
           "MPI_MAXLOC", "MPI_REPLACE", "MPI_NO_OP"],
}

# Builtin datatypes, in predefined-index order. Each entry:
#   (MPI name, C type used for sizeof/_Alignof, type kind, pair (first, second) or None)
# Type kinds become LM_TK_<kind>. A pair's C type is a struct the generator
# declares in builtin_types_gen.c so offsetof gives the real layout.
# Fortran types use gfortran's default sizes: INTEGER 4, REAL 4,
# DOUBLE PRECISION 8, LOGICAL 4, CHARACTER 1.
DATATYPES = [
    ("MPI_CHAR", "char", "CHAR", None),
    ("MPI_SIGNED_CHAR", "signed char", "INT", None),
    ("MPI_UNSIGNED_CHAR", "unsigned char", "UINT", None),
    ("MPI_BYTE", "unsigned char", "BYTE", None),
    ("MPI_WCHAR", "wchar_t", "INT" , None),
    ("MPI_SHORT", "short", "INT", None),
    ("MPI_UNSIGNED_SHORT", "unsigned short", "UINT", None),
    ("MPI_INT", "int", "INT", None),
    ("MPI_UNSIGNED", "unsigned int", "UINT", None),
    ("MPI_LONG", "long", "INT", None),
    ("MPI_UNSIGNED_LONG", "unsigned long", "UINT", None),
    ("MPI_LONG_LONG_INT", "long long", "INT", None),
    ("MPI_UNSIGNED_LONG_LONG", "unsigned long long", "UINT", None),
    ("MPI_FLOAT", "float", "FLOAT", None),
    ("MPI_DOUBLE", "double", "FLOAT", None),
    ("MPI_LONG_DOUBLE", "long double", "FLOAT", None),
    ("MPI_C_BOOL", "_Bool", "BOOL", None),
    ("MPI_INT8_T", "int8_t", "INT", None),
    ("MPI_INT16_T", "int16_t", "INT", None),
    ("MPI_INT32_T", "int32_t", "INT", None),
    ("MPI_INT64_T", "int64_t", "INT", None),
    ("MPI_UINT8_T", "uint8_t", "UINT", None),
    ("MPI_UINT16_T", "uint16_t", "UINT", None),
    ("MPI_UINT32_T", "uint32_t", "UINT", None),
    ("MPI_UINT64_T", "uint64_t", "UINT", None),
    ("MPI_AINT", "MPI_Aint", "INT", None),
    ("MPI_COUNT", "MPI_Count", "INT", None),
    ("MPI_OFFSET", "MPI_Offset", "INT", None),
    ("MPI_C_COMPLEX", "float _Complex", "COMPLEX", None),
    ("MPI_C_FLOAT_COMPLEX", "float _Complex", "COMPLEX", None),
    ("MPI_C_DOUBLE_COMPLEX", "double _Complex", "COMPLEX", None),
    ("MPI_C_LONG_DOUBLE_COMPLEX", "long double _Complex", "COMPLEX", None),
    ("MPI_PACKED", "unsigned char", "BYTE", None),
    ("MPI_CXX_BOOL", "_Bool", "BOOL", None),
    ("MPI_CXX_FLOAT_COMPLEX", "float _Complex", "COMPLEX", None),
    ("MPI_CXX_DOUBLE_COMPLEX", "double _Complex", "COMPLEX", None),
    ("MPI_CXX_LONG_DOUBLE_COMPLEX", "long double _Complex", "COMPLEX", None),
    # Value-index pairs for MPI_MINLOC / MPI_MAXLOC.
    ("MPI_FLOAT_INT", "float", "PAIR", ("MPI_FLOAT", "MPI_INT")),
    ("MPI_DOUBLE_INT", "double", "PAIR", ("MPI_DOUBLE", "MPI_INT")),
    ("MPI_LONG_INT", "long", "PAIR", ("MPI_LONG", "MPI_INT")),
    ("MPI_2INT", "int", "PAIR", ("MPI_INT", "MPI_INT")),
    ("MPI_SHORT_INT", "short", "PAIR", ("MPI_SHORT", "MPI_INT")),
    ("MPI_LONG_DOUBLE_INT", "long double", "PAIR", ("MPI_LONG_DOUBLE", "MPI_INT")),
    # Fortran types (gfortran defaults).
    ("MPI_INTEGER", "int32_t", "INT", None),
    ("MPI_REAL", "float", "FLOAT", None),
    ("MPI_DOUBLE_PRECISION", "double", "FLOAT", None),
    ("MPI_COMPLEX", "float _Complex", "COMPLEX", None),
    ("MPI_DOUBLE_COMPLEX", "double _Complex", "COMPLEX", None),
    ("MPI_LOGICAL", "int32_t", "LOGICAL", None),
    ("MPI_CHARACTER", "char", "CHAR", None),
    ("MPI_INTEGER1", "int8_t", "INT", None),
    ("MPI_INTEGER2", "int16_t", "INT", None),
    ("MPI_INTEGER4", "int32_t", "INT", None),
    ("MPI_INTEGER8", "int64_t", "INT", None),
    ("MPI_INTEGER16", "LM_INT128_T", "INT", None),
    ("MPI_REAL4", "float", "FLOAT", None),
    ("MPI_REAL8", "double", "FLOAT", None),
    ("MPI_REAL16", "LM_REAL16_T", "FLOAT", None),
    ("MPI_COMPLEX8", "float _Complex", "COMPLEX", None),
    ("MPI_COMPLEX16", "double _Complex", "COMPLEX", None),
    ("MPI_COMPLEX32", "LM_COMPLEX32_T", "COMPLEX", None),
    ("MPI_2REAL", "float", "PAIR", ("MPI_REAL", "MPI_REAL")),
    ("MPI_2DOUBLE_PRECISION", "double", "PAIR", ("MPI_DOUBLE_PRECISION", "MPI_DOUBLE_PRECISION")),
    ("MPI_2INTEGER", "int32_t", "PAIR", ("MPI_INTEGER", "MPI_INTEGER")),
]

# Other names for the same predefined datatype (MPI lists them as synonyms).
DATATYPE_SYNONYMS = [("MPI_LONG_LONG", "MPI_LONG_LONG_INT")]

# Optional Fortran types that have no C counterpart here: MPI says an
# unsupported optional type is MPI_DATATYPE_NULL.
DATATYPE_UNSUPPORTED = ["MPI_REAL2", "MPI_COMPLEX4"]

TYPE_KINDS = ["INT", "UINT", "FLOAT", "COMPLEX", "BOOL", "LOGICAL", "BYTE", "CHAR", "PAIR"]


def datatype_index(name):
    for i, d in enumerate(DATATYPES):
        if d[0] == name:
            return i
    raise KeyError(name)


def handle_constants():
    """(type, name, value) for every handle constant, in header order."""
    out = []
    for ctype, name, kind in NULL_HANDLES:
        out.append((ctype, name, handle(kind, TIER_NULL)))
    ctype_of = {k: t for t, _, k in NULL_HANDLES}
    for kind, names in PREDEFINED.items():
        for i, name in enumerate(names):
            out.append((ctype_of[kind], name, handle(kind, TIER_BUILTIN, i)))
    for i, d in enumerate(DATATYPES):
        out.append(("MPI_Datatype", d[0], handle("DATATYPE", TIER_BUILTIN, i)))
    return out
