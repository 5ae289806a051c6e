/* Point-to-point engine, used by the MPI entry points and by collectives. */
#ifndef LM_PT2PT_H
#define LM_PT2PT_H
#include "pt2pt/request.h"

int lm_pt2pt_init(void);
void lm_pt2pt_finalize(void);

/* Progress everything once; returns events handled. */
int lm_progress(void);
/* Progress until *flag becomes non-zero (yields the core when oversubscribed). */
/* One step of a blocking wait: progress, and yield the core after a spell
 * of nothing to do (at once when ranks share cores). idle starts at 0. */
int lm_progress_wait(unsigned *idle);
void lm_progress_until(volatile int *flag);
/* Progress hooks: work that must advance at every progress call while it
 * is pending (buffered sends, cooperative copies, active nonblocking
 * collectives, later one-sided and network progress). A layer registers
 * its hook once (at its start) and switches it on while it has work, so
 * an idle hook costs nothing. Register returns the hook's slot, or -1 when
 * the table (LM_PROGRESS_HOOKS_MAX) is full. A hook returns the events it
 * handled. */
#define LM_PROGRESS_HOOKS_MAX 8
typedef int (*lm_progress_hook)(void);
int lm_progress_hook_register(lm_progress_hook fn);
void lm_progress_hook_set_active(int slot, int active);

/* Start a send/receive described by an initialised request (fields buf, len,
 * comm, ctx, peer, match_tag, mode). The request completes later. */
int lm_send_start(lm_request *r);
int lm_recv_start(lm_request *r);

/* Convenience for internal users (collectives): contiguous bytes, given context. */
int lm_isend_bytes(const void *buf, size_t len, int dest, int tag, lm_comm *c, int ctx, lm_request **out);
int lm_irecv_bytes(void *buf, size_t len, int src, int tag, lm_comm *c, int ctx, lm_request **out);
int lm_wait_release(lm_request *r, MPI_Status *st);
/* Blocking internal users (collectives) that would only wait for a request:
 * send contiguous bytes eagerly right now (*sent = 1), or say that a
 * request is needed (*sent = 0; nothing was sent). Returns MPI_SUCCESS or
 * an MPI error class (the transport failed). */
int lm_send_bytes_now(const void *buf, size_t len, int dest, int tag, lm_comm *c, int ctx, int *sent);
/* Receive into buf a message from src that has already arrived eagerly
 * (*received = 1; *err is MPI_SUCCESS or MPI_ERR_TRUNCATE), or
 * *received = 0: none has, post a request. Matches exactly what a receive
 * posted now would. Returns MPI_SUCCESS. */
int lm_recv_bytes_now(void *buf, size_t len, int src, int tag, int ctx, int *received, int *err);

/* Probe the unexpected queue (no progress); fills status if found. */
int lm_iprobe(int src, int tag, lm_comm *c, int ctx, int *flag, MPI_Status *st);
/* Remove a matching unexpected message for MPI_Mprobe; NULL if none. */
struct lm_unexpected *lm_mprobe_take(int src, int tag, lm_comm *c, int ctx, MPI_Status *st);
/* Receive a message taken by lm_mprobe_take into r (r->buf/len set). */
int lm_mrecv_start(lm_request *r, struct lm_unexpected *u);
/* Cancel a posted receive if still unmatched; returns 1 if cancelled. */
int lm_recv_cancel(lm_request *r);
/* Outstanding sends that still need this process (rendezvous, queued packets). */
int lm_pt2pt_busy(void);

#endif
