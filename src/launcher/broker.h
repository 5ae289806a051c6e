/* The universe's broker in mpirun (boot/kvs_wire.h): open ports, accepts
 * and connects waiting on them, published service names. Pure bookkeeping,
 * no I/O: mpirun turns ranks' requests into these calls and the results
 * into answers. Sized by what the program has open, never by the job. */
#ifndef LM_LAUNCHER_BROKER_H
#define LM_LAUNCHER_BROKER_H
#include <stddef.h>

typedef struct lm_broker_port lm_broker_port;
typedef struct lm_broker_ticket lm_broker_ticket;
typedef struct lm_broker_name lm_broker_name;

typedef struct lm_broker {
    lm_broker_port *ports;
    lm_broker_ticket *tickets;
    lm_broker_name *names;
    int next_ticket, next_tag;
} lm_broker;

/* 0, -EEXIST (already open), -ENOMEM. */
int lm_broker_port_open(lm_broker *b, const char *port, int job, int rank);
/* 0, -ENOENT (not open). The accepts and connects waiting on it fail. */
int lm_broker_port_close(lm_broker *b, const char *port);
/* The same, for a port whose process cannot come (a spawned job that died
 * before MPI_Init): the waiting get -ECONNABORTED and why. */
int lm_broker_port_fail(lm_broker *b, const char *port, const char *why);
/* An accept (accepting) or connect by (job, rank) on port: its ticket, or
 * -ENOENT (port not open), -ENOMEM. When the other kind waits on the same
 * port, the two are paired (first come, first paired). */
int lm_broker_queue(lm_broker *b, const char *port, int accepting, int job, int rank);
/* 0 and the other leader and the connection's tag once paired (the ticket
 * is then gone), -EAGAIN while waiting, -ENOENT for an unknown ticket or
 * one whose port was closed, -ECONNABORTED with why[] for one whose port
 * failed (then gone too). */
int lm_broker_poll(lm_broker *b, int ticket, int *peer_job, int *peer_rank, int *tag, char *why, size_t whycap);
void lm_broker_cancel(lm_broker *b, int ticket);
/* A process ended: its ports close, its tickets go. */
void lm_broker_forget(lm_broker *b, int job, int rank);
/* 0, -EEXIST (the name is published), -ENOMEM. */
int lm_broker_publish(lm_broker *b, const char *service, const char *port);
/* 0 with the port, or -ENOENT. */
int lm_broker_lookup(const lm_broker *b, const char *service, char *port, size_t cap);
/* 0, -ENOENT (not published, or under another port). */
int lm_broker_unpublish(lm_broker *b, const char *service, const char *port);
void lm_broker_free(lm_broker *b);

#endif
