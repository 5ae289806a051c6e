/* What a rank asks of its launcher over the socket pair the launcher gave
 * it (LEANMPI_AGENT_FD): one request, one answer, one request at a time per
 * rank. Header only, shared by the bootstrap and the launcher.
 *
 * Direct modex (LM_REQ_KVS_GET): a rank asks its host's launch agent for a
 * key another host's rank put, on first use (never all-to-all at start);
 * the agent routes the request through the tree of agents to the agent of
 * the host that holds the key, which reads its node KVS and sends the
 * answer back the same way. A key of a process of another job of the
 * universe (spawned, or started before a connect) is read by mpirun, which
 * holds every job's segment.
 *
 * Dynamic processes (the rest): mpirun is the universe's broker. It starts
 * spawned jobs, keeps the open ports and pairs an accept with a connect on
 * one, and keeps the published service names. An accept or connect is
 * queued and then polled for (LM_REQ_POLL), so that no request holds the
 * socket while the rank waits: the rank keeps its progress (and its key
 * requests) going meanwhile. */
#ifndef LM_BOOT_KVS_WIRE_H
#define LM_BOOT_KVS_WIRE_H
#include <stdint.h>
#include "boot/kvs.h"

#define LM_JOB_MAX 2048 /* jobs in one universe (the first included) */

/* A process in the launcher's frames: a rank of the first job by its world
 * rank, a rank of job k > 0 as (k << 20) | rank (so such jobs hold at most
 * 2^20 ranks, and the first job's world ranks stay below 2^20 where other
 * jobs exist). */
#define LM_PROC_CODE_BITS 20
static inline int32_t lm_proc_code(int job, int rank)
{
    return job ? (int32_t)(((uint32_t)job << LM_PROC_CODE_BITS) | (uint32_t)rank) : rank;
}
static inline int lm_proc_code_job(int32_t code) { return code >> LM_PROC_CODE_BITS; }
static inline int lm_proc_code_rank(int32_t code) { return code & ((1 << LM_PROC_CODE_BITS) - 1); }

enum lm_req_type {
    LM_REQ_KVS_GET = 1, /* lm_kvs_request -> lm_kvs_reply */
    LM_REQ_SPAWN,       /* lm_ctl_request (port: the children's parent port) + lm_spawn_wire -> a = job */
    LM_REQ_PORT_OPEN,   /* port */
    LM_REQ_PORT_CLOSE,  /* port */
    LM_REQ_ACCEPT,      /* port -> a = ticket */
    LM_REQ_CONNECT,     /* port -> a = ticket */
    LM_REQ_POLL,        /* value = ticket -> -EAGAIN, or a, b = the peer leader's job and rank, c = tag */
    LM_REQ_CANCEL,      /* value = ticket */
    LM_REQ_PUBLISH,     /* name = service, port */
    LM_REQ_LOOKUP,      /* name = service -> text = port */
    LM_REQ_UNPUBLISH,   /* name = service */
};

typedef struct lm_kvs_request {
    int32_t type;             /* LM_REQ_KVS_GET */
    int32_t job;              /* the job of the rank that put the key (0: the first job) */
    int32_t rank;             /* its world rank there */
    char key[LM_KVS_KEY_MAX]; /* the node KVS key, as that rank's node stores it */
} lm_kvs_request;

typedef struct lm_kvs_reply {
    int32_t result; /* the value's length, or -ENOENT (not put yet), -EOPNOTSUPP */
    char value[LM_KVS_VALUE_MAX];
} lm_kvs_reply;

#define LM_CTL_TEXT_MAX 1024 /* MPI_MAX_PORT_NAME */

typedef struct lm_ctl_request {
    int32_t type;
    int32_t job, rank; /* who asks */
    int32_t value;
    char name[LM_CTL_TEXT_MAX];
    char port[LM_CTL_TEXT_MAX];
    /* LM_REQ_SPAWN: the commands follow (lm_spawn_wire) */
} lm_ctl_request;

/* Spawn request's commands, after lm_ctl_request: int32 count, then per
 * command int32 maxprocs, int32 argc, and argc + 3 strings, each ending in
 * a NUL: the command, the working directory ("": mpirun's), the host (""
 * any), then the arguments. */
#define LM_SPAWN_WIRE_MAX (64 * 1024)

typedef struct lm_ctl_reply {
    int32_t result; /* 0, or -errno */
    int32_t a, b, c;
    char text[LM_CTL_TEXT_MAX]; /* lookup: the port; failures: why */
} lm_ctl_reply;

#endif
