/* Pipelined two copies of rendezvous messages.
 *
 * A single copy (process_vm_readv) pays a system call and the pinning of
 * every page it copies, which weighs most on messages of tens to hundreds
 * of KiB, and more on virtual machines. Such a message between two ranks
 * of a node goes through one of the receiver's node-shared pipes instead:
 * the sender copies piece after piece in while the receiver copies them
 * out, so that the two copies overlap and the message costs about one
 * memcpy plus one piece, and no system call.
 * Data with gaps is packed straight into the pipe and unpacked straight
 * out of it, so it needs no staging either.
 *
 * The receiver decides, when it matches the RTS: it claims a free pipe of
 * its own (no atomics: a receiver's pipes are its own to hand out), resets
 * it and sends PIPE (rreq: the pipe, size: the bytes it will take). The
 * sender's progress then fills the pipe and the receiver's empties it; the
 * sender's request completes when its last piece is in, the receiver's
 * when its last piece is out, which frees the pipe: no FIN. A receiver
 * with every pipe busy queues the message for the next pipe that frees; a
 * sender off the node takes the other protocols. Unlike a single copy, a pipe moves only while both sides
 * call MPI.
 *
 * LEANMPI_LARGE_COPY says which messages take a pipe: by default those
 * up to LEANMPI_PIPE_MAX bytes while every rank has a core of its own
 * (the measurements are at wants_pipe in pipe_copy.c), and every message
 * that cannot be copied once (data with gaps, single copy not permitted);
 * or always, or never. */
#ifndef LM_PT2PT_PIPE_COPY_H
#define LM_PT2PT_PIPE_COPY_H
#include <stddef.h>
#include <stdint.h>
#include "pt2pt/request.h"
#include "pt2pt/protocol.h"

void lm_pipe_copy_init(void);
/* Receiver, on a matched RTS for r: move n bytes (the sender's whole
 * message, or the part of it r has room for) through a pipe from
 * src_world; single_copy_possible: the alternative is a single copy
 * rather than a stream; exchanging: this rank has rendezvous sends of its
 * own in flight. 1 when started (r completes from a later progress call),
 * 0 when the message takes another protocol. *t0: nonzero when the way was
 * chosen by measured cost (copy_choice.h), the time of that choice: the
 * caller then records what the single copy cost. */
int lm_pipe_copy_start(lm_request *r, int src_world, uint64_t sreq, size_t n, int single_copy_possible, int exchanging,
                       uint64_t *t0);
/* Sender, on PIPE from receiver_world: fill the pipe from the request. */
void lm_pipe_copy_feed(int receiver_world, const lm_pkt *h);
/* Both sides: move what can move now. Returns the number of pieces. */
int lm_pipe_copy_progress(void);
/* Pipes being filled or emptied by this process. */
int lm_pipe_copy_busy(void);

#endif
