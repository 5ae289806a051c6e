"""The hand-written part of mpi.h: types and every MPI-4.1 constant, which the
standard's machine-readable API does not carry. Placeholders in braces are
filled by gen_mpi.py; literal braces are doubled."""

HEADER = r"""/* {banner} */
/* LeanMPI: the MPI-4.1 C interface. */
#ifndef LEANMPI_MPI_H
#define LEANMPI_MPI_H

#include <stddef.h>
#include <stdint.h>

#define LEANMPI 1
#define MPI_VERSION 4
#define MPI_SUBVERSION 1

#if defined(__GNUC__)
#define LEANMPI_API __attribute__((visibility("default")))
#else
#define LEANMPI_API
#endif

#ifdef __cplusplus
extern "C" {{
#endif

/* ---- basic types ---- */
/* MPI_Aint must hold any address; LeanMPI targets LP64, where long does. */
typedef long MPI_Aint;
typedef char leanmpi_aint_holds_a_pointer_[sizeof(long) == sizeof(void *) ? 1 : -1];
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

/* Handles are ints: kind, tier and index packed as in src/util/lm_handle.h. */
typedef int MPI_Comm;
typedef int MPI_Group;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Errhandler;
typedef int MPI_Request;
typedef int MPI_Info;
typedef int MPI_Win;
typedef int MPI_Message;
typedef int MPI_Session;
typedef int MPI_File;

/* The received element count is kept in bytes over 62 bits: the low 32 in
 * count_lo, the next 30 in count_hi_and_cancelled, whose top bit is the
 * cancelled flag. */
typedef struct MPI_Status {{
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    int count_lo;
    int count_hi_and_cancelled;
}} MPI_Status;

typedef struct MPI_F08_status {{
    MPI_Fint MPI_SOURCE;
    MPI_Fint MPI_TAG;
    MPI_Fint MPI_ERROR;
    MPI_Fint internal[2];
}} MPI_F08_status;

/* MPI_T handles are opaque pointers. */
typedef struct leanmpi_t_enum *MPI_T_enum;
typedef struct leanmpi_t_cvar_handle *MPI_T_cvar_handle;
typedef struct leanmpi_t_pvar_handle *MPI_T_pvar_handle;
typedef struct leanmpi_t_pvar_session *MPI_T_pvar_session;
typedef struct leanmpi_t_event_instance *MPI_T_event_instance;
typedef struct leanmpi_t_event_registration *MPI_T_event_registration;

typedef enum MPI_T_cb_safety {{
    MPI_T_CB_REQUIRE_NONE = 0,
    MPI_T_CB_REQUIRE_MPI_RESTRICTED = 1,
    MPI_T_CB_REQUIRE_THREAD_SAFE = 2,
    MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE = 3
}} MPI_T_cb_safety;

typedef enum MPI_T_source_order {{
    MPI_T_SOURCE_ORDERED = 0,
    MPI_T_SOURCE_UNORDERED = 1
}} MPI_T_source_order;

/* ---- handle constants ---- */
{handles}

/* ---- error classes ---- */
#define MPI_SUCCESS                   0
#define MPI_ERR_BUFFER                1
#define MPI_ERR_COUNT                 2
#define MPI_ERR_TYPE                  3
#define MPI_ERR_TAG                   4
#define MPI_ERR_COMM                  5
#define MPI_ERR_RANK                  6
#define MPI_ERR_REQUEST               7
#define MPI_ERR_ROOT                  8
#define MPI_ERR_GROUP                 9
#define MPI_ERR_OP                    10
#define MPI_ERR_TOPOLOGY              11
#define MPI_ERR_DIMS                  12
#define MPI_ERR_ARG                   13
#define MPI_ERR_UNKNOWN               14
#define MPI_ERR_TRUNCATE              15
#define MPI_ERR_OTHER                 16
#define MPI_ERR_INTERN                17
#define MPI_ERR_PENDING               18
#define MPI_ERR_IN_STATUS             19
#define MPI_ERR_ACCESS                20
#define MPI_ERR_AMODE                 21
#define MPI_ERR_ASSERT                22
#define MPI_ERR_BAD_FILE              23
#define MPI_ERR_BASE                  24
#define MPI_ERR_CONVERSION            25
#define MPI_ERR_DISP                  26
#define MPI_ERR_DUP_DATAREP           27
#define MPI_ERR_FILE_EXISTS           28
#define MPI_ERR_FILE_IN_USE           29
#define MPI_ERR_FILE                  30
#define MPI_ERR_INFO_KEY              31
#define MPI_ERR_INFO_NOKEY            32
#define MPI_ERR_INFO_VALUE            33
#define MPI_ERR_INFO                  34
#define MPI_ERR_IO                    35
#define MPI_ERR_KEYVAL                36
#define MPI_ERR_LOCKTYPE              37
#define MPI_ERR_NAME                  38
#define MPI_ERR_NO_MEM                39
#define MPI_ERR_NOT_SAME              40
#define MPI_ERR_NO_SPACE              41
#define MPI_ERR_NO_SUCH_FILE          42
#define MPI_ERR_PORT                  43
#define MPI_ERR_QUOTA                 44
#define MPI_ERR_READ_ONLY             45
#define MPI_ERR_RMA_CONFLICT          46
#define MPI_ERR_RMA_SYNC              47
#define MPI_ERR_SERVICE               48
#define MPI_ERR_SIZE                  49
#define MPI_ERR_SPAWN                 50
#define MPI_ERR_UNSUPPORTED_DATAREP   51
#define MPI_ERR_UNSUPPORTED_OPERATION 52
#define MPI_ERR_WIN                   53
#define MPI_ERR_RMA_RANGE             54
#define MPI_ERR_RMA_ATTACH            55
#define MPI_ERR_RMA_SHARED            56
#define MPI_ERR_RMA_FLAVOR            57
#define MPI_ERR_PROC_ABORTED          58
#define MPI_ERR_VALUE_TOO_LARGE       59
#define MPI_ERR_SESSION               60
#define MPI_ERR_ERRHANDLER            61
/* MPI_T error classes share the space of MPI error classes. */
#define MPI_T_ERR_MEMORY              62
#define MPI_T_ERR_NOT_INITIALIZED     63
#define MPI_T_ERR_CANNOT_INIT         64
#define MPI_T_ERR_INVALID_INDEX       65
#define MPI_T_ERR_INVALID_ITEM        66
#define MPI_T_ERR_INVALID_HANDLE      67
#define MPI_T_ERR_OUT_OF_HANDLES      68
#define MPI_T_ERR_OUT_OF_SESSIONS     69
#define MPI_T_ERR_INVALID_SESSION     70
#define MPI_T_ERR_CVAR_SET_NOT_NOW    71
#define MPI_T_ERR_CVAR_SET_NEVER      72
#define MPI_T_ERR_PVAR_NO_STARTSTOP   73
#define MPI_T_ERR_PVAR_NO_WRITE       74
#define MPI_T_ERR_PVAR_NO_ATOMIC      75
#define MPI_T_ERR_INVALID_NAME        76
#define MPI_T_ERR_INVALID             77
#define MPI_T_ERR_NOT_ACCESSIBLE      78
#define MPI_T_ERR_NOT_SUPPORTED       79
/* Last predefined class; user classes and codes are added above it. */
#define MPI_ERR_LASTCODE              79

/* ---- string lengths (including the terminating NUL) ---- */
#define MPI_MAX_PROCESSOR_NAME         256
#define MPI_MAX_ERROR_STRING           512
#define MPI_MAX_OBJECT_NAME            128
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_INFO_KEY               256
#define MPI_MAX_INFO_VAL               1024
#define MPI_MAX_PORT_NAME              1024
#define MPI_MAX_DATAREP_STRING         128
#define MPI_MAX_PSET_NAME_LEN          256
#define MPI_MAX_STRINGTAG_LEN          256

/* ---- ranks, tags and other special values ---- */
#define MPI_PROC_NULL    (-1)
#define MPI_ANY_SOURCE   (-2)
#define MPI_ROOT         (-3)
#define MPI_ANY_TAG      (-1)
#define MPI_UNDEFINED    (-32766)
#define MPI_KEYVAL_INVALID (-1)
#define MPI_BSEND_OVERHEAD 128
#define MPI_DISPLACEMENT_CURRENT ((MPI_Offset)-54278278)

/* Sentinel addresses: compared by value, never dereferenced. */
#define MPI_BOTTOM            ((void *)0)
#define MPI_IN_PLACE          ((void *)-1)
#define MPI_BUFFER_AUTOMATIC  ((void *)-2)
#define MPI_STATUS_IGNORE     ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE   ((MPI_Status *)0)
#define MPI_F08_STATUS_IGNORE   ((MPI_F08_status *)1)
#define MPI_F08_STATUSES_IGNORE ((MPI_F08_status *)1)
#define MPI_F_STATUS_IGNORE   ((MPI_Fint *)1)
#define MPI_F_STATUSES_IGNORE ((MPI_Fint *)1)
#define MPI_ERRCODES_IGNORE   ((int *)0)
#define MPI_ARGV_NULL         ((char **)0)
#define MPI_ARGVS_NULL        ((char ***)0)
/* Addresses of objects of the library rather than small constants: a
 * compiler that sees (int *)2 passed for an array warns of a read out of
 * bounds at every valid call. */
extern LEANMPI_API int *const MPI_UNWEIGHTED;
extern LEANMPI_API int *const MPI_WEIGHTS_EMPTY;

/* Fortran status layout as seen from C (MPI_Status_c2f / f2c). */
#define MPI_F_STATUS_SIZE 5
#define MPI_F_SOURCE 0
#define MPI_F_TAG    1
#define MPI_F_ERROR  2

/* ---- thread levels ---- */
#define MPI_THREAD_SINGLE     0
#define MPI_THREAD_FUNNELED   1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE   3

/* ---- comparison results ---- */
#define MPI_IDENT     0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR   2
#define MPI_UNEQUAL   3

/* ---- topologies ---- */
#define MPI_GRAPH      1
#define MPI_CART       2
#define MPI_DIST_GRAPH 3

/* ---- communicator split types ---- */
#define MPI_COMM_TYPE_SHARED          1
#define MPI_COMM_TYPE_HW_UNGUIDED     2
#define MPI_COMM_TYPE_HW_GUIDED       3
#define MPI_COMM_TYPE_RESOURCE_GUIDED 4

/* ---- predefined attribute keys (user keyvals are created above 64) ---- */
#define MPI_TAG_UB             1
#define MPI_HOST               2
#define MPI_IO                 3
#define MPI_WTIME_IS_GLOBAL    4
#define MPI_UNIVERSE_SIZE      5
#define MPI_APPNUM             6
#define MPI_LASTUSEDCODE       7
#define MPI_WIN_BASE           8
#define MPI_WIN_SIZE           9
#define MPI_WIN_DISP_UNIT      10
#define MPI_WIN_CREATE_FLAVOR  11
#define MPI_WIN_MODEL          12

/* ---- window flavors and memory models ---- */
#define MPI_WIN_FLAVOR_CREATE   1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC  3
#define MPI_WIN_FLAVOR_SHARED   4
#define MPI_WIN_SEPARATE 1
#define MPI_WIN_UNIFIED  2

/* ---- RMA assertions and lock types ---- */
#define MPI_MODE_NOCHECK   1024
#define MPI_MODE_NOSTORE   2048
#define MPI_MODE_NOPUT     4096
#define MPI_MODE_NOPRECEDE 8192
#define MPI_MODE_NOSUCCEED 16384
#define MPI_LOCK_EXCLUSIVE 1
#define MPI_LOCK_SHARED    2

/* ---- file access modes and seek ---- */
#define MPI_MODE_CREATE          1
#define MPI_MODE_RDONLY          2
#define MPI_MODE_WRONLY          4
#define MPI_MODE_RDWR            8
#define MPI_MODE_DELETE_ON_CLOSE 16
#define MPI_MODE_UNIQUE_OPEN     32
#define MPI_MODE_EXCL            64
#define MPI_MODE_APPEND          128
#define MPI_MODE_SEQUENTIAL      256
#define MPI_SEEK_SET 600
#define MPI_SEEK_CUR 602
#define MPI_SEEK_END 604

/* ---- datatype decoding ---- */
#define MPI_COMBINER_NAMED          1
#define MPI_COMBINER_DUP            2
#define MPI_COMBINER_CONTIGUOUS     3
#define MPI_COMBINER_VECTOR         4
#define MPI_COMBINER_HVECTOR        5
#define MPI_COMBINER_INDEXED        6
#define MPI_COMBINER_HINDEXED       7
#define MPI_COMBINER_INDEXED_BLOCK  8
#define MPI_COMBINER_HINDEXED_BLOCK 9
#define MPI_COMBINER_STRUCT         10
#define MPI_COMBINER_SUBARRAY       11
#define MPI_COMBINER_DARRAY         12
#define MPI_COMBINER_F90_REAL       13
#define MPI_COMBINER_F90_COMPLEX    14
#define MPI_COMBINER_F90_INTEGER    15
#define MPI_COMBINER_RESIZED        16
#define MPI_COMBINER_VALUE_INDEX    17

#define MPI_TYPECLASS_INTEGER 1
#define MPI_TYPECLASS_REAL    2
#define MPI_TYPECLASS_COMPLEX 3

#define MPI_DISTRIBUTE_BLOCK     0
#define MPI_DISTRIBUTE_CYCLIC    1
#define MPI_DISTRIBUTE_NONE      2
#define MPI_DISTRIBUTE_DFLT_DARG (-1)
#define MPI_ORDER_C       0
#define MPI_ORDER_FORTRAN 1

/* ---- MPI_T ---- */
#define MPI_T_VERBOSITY_USER_BASIC    1
#define MPI_T_VERBOSITY_USER_DETAIL   2
#define MPI_T_VERBOSITY_USER_ALL      3
#define MPI_T_VERBOSITY_TUNER_BASIC   4
#define MPI_T_VERBOSITY_TUNER_DETAIL  5
#define MPI_T_VERBOSITY_TUNER_ALL     6
#define MPI_T_VERBOSITY_MPIDEV_BASIC  7
#define MPI_T_VERBOSITY_MPIDEV_DETAIL 8
#define MPI_T_VERBOSITY_MPIDEV_ALL    9

#define MPI_T_BIND_NO_OBJECT      0
#define MPI_T_BIND_MPI_COMM       1
#define MPI_T_BIND_MPI_DATATYPE   2
#define MPI_T_BIND_MPI_ERRHANDLER 3
#define MPI_T_BIND_MPI_FILE       4
#define MPI_T_BIND_MPI_GROUP      5
#define MPI_T_BIND_MPI_OP         6
#define MPI_T_BIND_MPI_REQUEST    7
#define MPI_T_BIND_MPI_WIN        8
#define MPI_T_BIND_MPI_MESSAGE    9
#define MPI_T_BIND_MPI_INFO       10
#define MPI_T_BIND_MPI_SESSION    11

#define MPI_T_SCOPE_CONSTANT 0
#define MPI_T_SCOPE_READONLY 1
#define MPI_T_SCOPE_LOCAL    2
#define MPI_T_SCOPE_GROUP    3
#define MPI_T_SCOPE_GROUP_EQ 4
#define MPI_T_SCOPE_ALL      5
#define MPI_T_SCOPE_ALL_EQ   6

#define MPI_T_PVAR_CLASS_STATE         0
#define MPI_T_PVAR_CLASS_LEVEL         1
#define MPI_T_PVAR_CLASS_SIZE          2
#define MPI_T_PVAR_CLASS_PERCENTAGE    3
#define MPI_T_PVAR_CLASS_HIGHWATERMARK 4
#define MPI_T_PVAR_CLASS_LOWWATERMARK  5
#define MPI_T_PVAR_CLASS_COUNTER       6
#define MPI_T_PVAR_CLASS_AGGREGATE     7
#define MPI_T_PVAR_CLASS_TIMER         8
#define MPI_T_PVAR_CLASS_GENERIC       9

#define MPI_T_ENUM_NULL          ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL   ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_HANDLE_NULL   ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_SESSION_NULL  ((MPI_T_pvar_session)0)
#define MPI_T_PVAR_ALL_HANDLES   ((MPI_T_pvar_handle)1)

/* ---- callback function types ---- */
{callbacks}

/* ---- predefined callback functions ---- */
{predefined_functions}

/* ---- functions ---- */
{prototypes}

#ifdef __cplusplus
}}
#endif

#endif /* LEANMPI_MPI_H */
"""
