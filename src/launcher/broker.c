/* See broker.h. Lists, searched linearly: a program has a handful of ports,
 * waiting leaders and names at a time. */
#include "broker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lm_broker_port {
    lm_broker_port *next;
    int job, rank; /* who opened it */
    char *name;
};

struct lm_broker_ticket {
    lm_broker_ticket *next;
    int id;
    char *port;
    int accepting;
    int job, rank;
    int paired; /* 1: peer and tag are set; -1: the port closed */
    int peer_job, peer_rank, tag;
    char *why; /* the port failed (lm_broker_port_fail): why, for the waiting process */
};

struct lm_broker_name {
    lm_broker_name *next;
    char *service, *port;
};

static lm_broker_port **find_port(lm_broker *b, const char *name)
{
    lm_broker_port **p = &b->ports;
    while (*p && strcmp((*p)->name, name) != 0) p = &(*p)->next;
    return p;
}

int lm_broker_port_open(lm_broker *b, const char *port, int job, int rank)
{
    if (*find_port(b, port)) return -EEXIST;
    lm_broker_port *p = calloc(1, sizeof *p);
    if (!p || !(p->name = strdup(port))) {
        free(p);
        return -ENOMEM;
    }
    p->job = job;
    p->rank = rank;
    p->next = b->ports;
    b->ports = p;
    return 0;
}

static void drop_port(lm_broker *b, lm_broker_port **at, const char *why)
{
    lm_broker_port *p = *at;
    for (lm_broker_ticket *t = b->tickets; t; t = t->next)
        if (!t->paired && strcmp(t->port, p->name) == 0) {
            t->paired = -1;
            if (why) t->why = strdup(why);
        }
    *at = p->next;
    free(p->name);
    free(p);
}

int lm_broker_port_close(lm_broker *b, const char *port)
{
    lm_broker_port **at = find_port(b, port);
    if (!*at) return -ENOENT;
    drop_port(b, at, NULL);
    return 0;
}

int lm_broker_port_fail(lm_broker *b, const char *port, const char *why)
{
    lm_broker_port **at = find_port(b, port);
    if (!*at) return -ENOENT;
    drop_port(b, at, why);
    return 0;
}

int lm_broker_queue(lm_broker *b, const char *port, int accepting, int job, int rank)
{
    if (!*find_port(b, port)) return -ENOENT;
    lm_broker_ticket *t = calloc(1, sizeof *t);
    if (!t || !(t->port = strdup(port))) {
        free(t);
        return -ENOMEM;
    }
    t->id = ++b->next_ticket;
    t->accepting = accepting;
    t->job = job;
    t->rank = rank;
    /* the oldest waiting one of the other kind on this port */
    lm_broker_ticket *other = NULL;
    for (lm_broker_ticket *o = b->tickets; o; o = o->next)
        if (!o->paired && o->accepting != accepting && strcmp(o->port, port) == 0) other = o;
    if (other) {
        int tag = ++b->next_tag;
        *t = (lm_broker_ticket){.id = t->id,
                                .port = t->port,
                                .accepting = accepting,
                                .job = job,
                                .rank = rank,
                                .paired = 1,
                                .peer_job = other->job,
                                .peer_rank = other->rank,
                                .tag = tag};
        other->paired = 1;
        other->peer_job = job;
        other->peer_rank = rank;
        other->tag = tag;
    }
    t->next = b->tickets; /* newest first: the search above finds the oldest last */
    b->tickets = t;
    return t->id;
}

static lm_broker_ticket **find_ticket(lm_broker *b, int id)
{
    lm_broker_ticket **t = &b->tickets;
    while (*t && (*t)->id != id) t = &(*t)->next;
    return t;
}

static void drop_ticket(lm_broker_ticket **at)
{
    lm_broker_ticket *t = *at;
    *at = t->next;
    free(t->port);
    free(t->why);
    free(t);
}

int lm_broker_poll(lm_broker *b, int ticket, int *peer_job, int *peer_rank, int *tag, char *why, size_t whycap)
{
    lm_broker_ticket **at = find_ticket(b, ticket);
    lm_broker_ticket *t = *at;
    if (!t) return -ENOENT;
    if (!t->paired) return -EAGAIN;
    int rc = t->paired > 0 ? 0 : t->why ? -ECONNABORTED : -ENOENT;
    if (t->why && whycap) snprintf(why, whycap, "%s", t->why);
    *peer_job = t->peer_job;
    *peer_rank = t->peer_rank;
    *tag = t->tag;
    drop_ticket(at);
    return rc;
}

void lm_broker_cancel(lm_broker *b, int ticket)
{
    lm_broker_ticket **at = find_ticket(b, ticket);
    if (*at) drop_ticket(at);
}

void lm_broker_forget(lm_broker *b, int job, int rank)
{
    for (lm_broker_ticket **t = &b->tickets; *t;) {
        if ((*t)->job == job && (*t)->rank == rank) drop_ticket(t);
        else t = &(*t)->next;
    }
    for (lm_broker_port **p = &b->ports; *p;) {
        if ((*p)->job == job && (*p)->rank == rank) drop_port(b, p, NULL);
        else p = &(*p)->next;
    }
}

static lm_broker_name **find_name(const lm_broker *b, const char *service)
{
    lm_broker_name **n = (lm_broker_name **)&b->names;
    while (*n && strcmp((*n)->service, service) != 0) n = &(*n)->next;
    return n;
}

int lm_broker_publish(lm_broker *b, const char *service, const char *port)
{
    if (*find_name(b, service)) return -EEXIST;
    lm_broker_name *n = calloc(1, sizeof *n);
    if (!n || !(n->service = strdup(service)) || !(n->port = strdup(port))) {
        if (n) free(n->service);
        free(n);
        return -ENOMEM;
    }
    n->next = b->names;
    b->names = n;
    return 0;
}

int lm_broker_lookup(const lm_broker *b, const char *service, char *port, size_t cap)
{
    lm_broker_name *n = *find_name(b, service);
    if (!n) return -ENOENT;
    snprintf(port, cap, "%s", n->port);
    return 0;
}

int lm_broker_unpublish(lm_broker *b, const char *service, const char *port)
{
    lm_broker_name **at = find_name(b, service);
    lm_broker_name *n = *at;
    if (!n || (port && strcmp(n->port, port) != 0)) return -ENOENT;
    *at = n->next;
    free(n->service);
    free(n->port);
    free(n);
    return 0;
}

void lm_broker_free(lm_broker *b)
{
    while (b->ports) drop_port(b, &b->ports, NULL);
    while (b->tickets) drop_ticket(&b->tickets);
    while (b->names) lm_broker_unpublish(b, b->names->service, NULL);
}
