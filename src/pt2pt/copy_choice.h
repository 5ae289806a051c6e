/* Which way a large rendezvous message within a node goes, pipes (two
 * copies, pipelined, pipe_copy.h) or the single copy (coop_copy.h, or one
 * process_vm_readv), chosen by what each way has cost this receiver so far.
 *
 * Why measured: which way wins depends on the machine and on its state,
 * not only on what a single copy costs against a memcpy (the probe of
 * lm_transport_single_copy_cost). On the 2-core reference machine the
 * pipes took a 1 MiB ping-pong in 34.5 us against 66 by single copy one
 * day (2026-11-28), 116-132 against 63-70 another (2026-11-29, the probe
 * saying the same both days): the pipes' cost follows how fast lines move
 * between the two cores, which a virtual machine's placement changes.
 *
 * The receiver times each message whose way was free to choose, from the
 * match to its completion, per size class (powers of two from 16 KiB),
 * and keeps a moving average of nanoseconds per byte for each way. The
 * first messages of a class try the guess (pipes up to PIPE_MAX, above it
 * the probe's word), then the other way;
 * then the cheaper way goes, and every EXPLORE-th message of the class the
 * other one, so that a change of state is noticed. */
#ifndef LM_PT2PT_COPY_CHOICE_H
#define LM_PT2PT_COPY_CHOICE_H
#include <stddef.h>
#include <stdint.h>

typedef enum lm_copy_way { LM_COPY_SINGLE = 0, LM_COPY_PIPE = 1 } lm_copy_way;

/* Messages of an exchange (the receiver has rendezvous sends of its own in
 * flight) are measured apart from one-way traffic: with both cores busy
 * in both directions, the pipes' two copies compete with the other
 * direction, and the cheaper way is often not the one-way traffic's. */
typedef enum lm_copy_regime { LM_COPY_ONE_WAY = 0, LM_COPY_EXCHANGE = 1 } lm_copy_regime;

/* The way for a message of n bytes; guess: the way to take before any
 * measurement. */
lm_copy_way lm_copy_choose(size_t n, lm_copy_regime regime, lm_copy_way guess);
/* The way measured cheaper for n bytes so far (the guess until both ways
 * have been measured): what lm_copy_choose takes when it is not trying
 * the other. */
lm_copy_way lm_copy_best(size_t n, lm_copy_regime regime, lm_copy_way guess);
/* Size class of n (0 .. LM_COPY_CLASSES-1), for those who share choices. */
#define LM_COPY_CLASSES 10
int lm_copy_class(size_t n);
/* A message of n bytes, sent the way lm_copy_choose said, took ns from the
 * match to its completion. */
void lm_copy_record(lm_copy_way way, lm_copy_regime regime, size_t n, uint64_t ns);
/* The same for messages of one way that run at the same time (a window of
 * them): each is charged from when it started or the previous one of its
 * way completed, whichever is later, so that the charges add up to the
 * time the way was busy (a throughput, not a latency inflated by the
 * others in flight). started: when it started (lm_copy_clock_ns). */
void lm_copy_record_overlapped(lm_copy_way way, lm_copy_regime regime, size_t n, uint64_t started);
/* The clock the timings use. */
uint64_t lm_copy_clock_ns(void);
/* Forget every measurement (a new MPI_Init). */
void lm_copy_choice_reset(void);

#endif
