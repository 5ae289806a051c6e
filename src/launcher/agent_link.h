/* The control channel between mpirun and its launch agents, and between an
 * agent and the agents it started: framed messages over a pair of pipes
 * (the launch command's stdin and stdout, so that ssh or `ip netns exec`
 * carry it without any listening socket).
 *
 * A frame is a fixed header and `len` payload bytes. Writes never block:
 * frames are queued and written as the pipe takes them, so a slow reader
 * delays its own traffic only. Reads collect bytes until a whole frame is
 * there. Both ends are plain pipes, so there is nothing to leave behind. */
#ifndef LM_LAUNCHER_AGENT_LINK_H
#define LM_LAUNCHER_AGENT_LINK_H
#include <stddef.h>
#include <stdint.h>

enum lm_frame_type {
    LM_FRAME_JOB = 1,   /* down: the job description (payload: lm_job_wire) */
    LM_FRAME_STDIN,     /* down: bytes for rank 0's stdin; empty payload = end of file */
    LM_FRAME_STDIN_ACK, /* up: the agent wrote the last STDIN frame (one in flight at a time) */
    LM_FRAME_SIGNAL,    /* down, to every agent: value = signal for every rank */
    LM_FRAME_STARTED,   /* up: node `node` started its ranks */
    LM_FRAME_OUT,       /* up: bytes rank `rank` wrote on stream `value` (1 or 2) */
    LM_FRAME_EXIT,      /* up: rank `rank` ended; payload: lm_exit_wire */
    LM_FRAME_FAIL,      /* up: node `node` failed; payload: the reason, a string */
    LM_FRAME_DONE,      /* up: node `node` and everything below it ended */
    /* Direct modex (boot/kvs_wire.h), routed through the tree to `node`:
     * the agent of the host whose node KVS holds the key, then back. */
    LM_FRAME_KVS_GET,   /* process `rank` (lm_proc_code) on node `value` asks; payload: lm_kvs_request;
                           node -1: mpirun, which knows where another job runs */
    LM_FRAME_KVS_VALUE, /* the answer for process `rank`: value = length or -ENOENT; payload: the value */
    /* Dynamic processes (boot/kvs_wire.h), served by mpirun. */
    LM_FRAME_CTL,     /* up: process `rank` on node `node` asks (payload: its request); down: the answer */
    LM_FRAME_SPAWN,   /* down: start node `node`'s part of job `value` of `rank` processes; payload:
                         lm_spawn_part, the parent's port and a NUL, then the commands as in
                         LM_REQ_SPAWN */
    LM_FRAME_SPAWNED, /* up: job `value` started on node `node` (no payload), or not (payload: why) */
    LM_FRAME_UNSPAWN  /* down: end node `node`'s processes of job `value` (its start failed elsewhere) */
};

typedef struct lm_frame {
    uint32_t len; /* payload bytes */
    int32_t type; /* enum lm_frame_type */
    int32_t node; /* addressed node (down) or node it concerns (up) */
    int32_t rank;
    int32_t value;
    int32_t pad;
} lm_frame;

#define LM_FRAME_PAYLOAD_MAX (1u << 20)

/* How rank `rank` ended, as its agent saw it. */
typedef struct lm_exit_wire {
    int32_t wait_status; /* from waitpid */
    int32_t pid;
    int32_t state;         /* enum lm_rank_state in its segment at exit */
    int32_t abort_claimed; /* abort record: 0 none, 1 being written, 2 complete */
    int32_t abort_rank;
    int32_t abort_code;
    char abort_message[256];
} lm_exit_wire;

typedef struct lm_link {
    int rfd, wfd; /* read from the other end / write to it; -1 once closed */
    char *in;
    size_t in_len, in_cap, in_off; /* in_off: start of the first frame not yet handed out */
    unsigned long frames_in;       /* frames handed out so far: 0 = never heard from */
    char *out;
    size_t out_len, out_off, out_cap;
} lm_link;

void lm_link_init(lm_link *l, int rfd, int wfd);
/* Queue a frame and write what the pipe takes now. -1 if the link is closed
 * or memory ran out. */
int lm_link_send(lm_link *l, int type, int node, int rank, int value, const void *payload, size_t len);
/* Write queued bytes (POLLOUT). -1 once the reader is gone. */
int lm_link_flush(lm_link *l);
size_t lm_link_queued(const lm_link *l);
/* Read what is available (POLLIN). 0 while open, -1 at end of stream or on
 * a malformed frame. */
int lm_link_read(lm_link *l);
/* The next whole frame read, if any: its payload stays valid until the next
 * lm_link_read. Returns 1 for a frame, 0 for none. */
int lm_link_next(lm_link *l, lm_frame *f, const char **payload);
void lm_link_close(lm_link *l);

/* Building and reading payloads made of integers and strings. */
typedef struct lm_wbuf {
    char *p;
    size_t len, cap;
    int failed;
} lm_wbuf;
void lm_wbuf_int(lm_wbuf *b, int64_t v);
void lm_wbuf_str(lm_wbuf *b, const char *s);

typedef struct lm_rbuf {
    const char *p;
    size_t len, off;
    int failed;
} lm_rbuf;
int64_t lm_rbuf_int(lm_rbuf *b);
const char *lm_rbuf_str(lm_rbuf *b); /* points into the payload; "" once failed */

#endif
