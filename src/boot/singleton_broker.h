/* A launcher for a process that was started without one (singleton_broker.c).
 *
 * Dynamic processes need a broker: something that starts jobs, pairs
 * accepts with connects and keeps published names. A singleton has none,
 * so its first request starts one: the mpirun that belongs to this
 * library, in its singleton mode, which adopts the singleton as job 0 of
 * a universe and serves its request socket as it serves its own ranks'. */
#ifndef LM_SINGLETON_BROKER_H
#define LM_SINGLETON_BROKER_H

/* Start the broker for this process, whose node segment is seg_fd.
 * Returns this process's end of the request socket (close-on-exec), or -1
 * with why filled in. */
int lm_singleton_broker_start(int seg_fd, char *why, unsigned whycap);

#endif
