/* Dynamic processes (MPI-4.1 section 11.8-11.10): spawning jobs, ports with
 * accept and connect, the name service, join.
 *
 * mpirun is the universe's broker (boot/kvs_wire.h): it starts spawned
 * jobs, pairs an accept with a connect on one port, and keeps published
 * names. What it tells two leaders that meet is only who the other is and a
 * tag; the leaders then talk directly over a bridge (a two-process
 * communicator on LM_CONTEXT_BRIDGE) and build the intercommunicator as
 * MPI_Intercomm_create does (comm/intercomm.h: lm_intercomm_bridge).
 * Processes of another job are reached through the network transport, as
 * ranks on another host are.
 *
 * MPI_Comm_spawn is an accept on a port the root opens for it; the
 * children's MPI_Init connects to that port (LEANMPI_PARENT_PORT) over
 * their MPI_COMM_WORLD, and that intercommunicator is their parent.
 * MPI_Comm_join is an accept and a connect whose port travels over the
 * program's socket. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "comm/dynamic.h"
#include "comm/context_id.h"
#include "comm/intercomm.h"
#include "coll/coll_basic.h"
#include "pt2pt/pt2pt.h"
#include "obj/info.h"
#include "boot/boot.h"
#include "boot/kvs_wire.h"
#include "transport/transport.h"
#include "util/lm_cs.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "util/lm_state.h"
#include "api/impl_gen.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The intercommunicator to the parent job, MPI_COMM_NULL when there is
 * none or once it was freed or disconnected. */
static MPI_Comm parent_comm = MPI_COMM_NULL;

/* ---- requests to the launcher -------------------------------------------- */

/* One request and its answer: 0, or the answer's -errno with rep->text
 * saying why. */
static int ask(lm_ctl_request *req, size_t len, lm_ctl_reply *rep)
{
    req->job = lm_boot_job();
    req->rank = lm_world_rank();
    memset(rep, 0, offsetof(lm_ctl_reply, text) + 1);
    long n = lm_boot_ctl(req, len, rep, sizeof *rep);
    if (n == -ENOTSUP) {
        const char *why = lm_boot_no_launcher_reason();
        snprintf(rep->text, sizeof rep->text, "%s",
                 why ? why : "this process was not started by mpirun, which serves dynamic processes");
        return -ENOTSUP;
    }
    if (n < (long)offsetof(lm_ctl_reply, text)) {
        snprintf(rep->text, sizeof rep->text, "mpirun does not answer");
        return -EIO;
    }
    rep->text[sizeof rep->text - 1] = '\0';
    return rep->result;
}

static int ask_name(int type, const char *name, const char *port, int value, lm_ctl_reply *rep)
{
    lm_ctl_request *req = lm_calloc(LM_MEM_COMM, 1, sizeof *req);
    if (!req) {
        snprintf(rep->text, sizeof rep->text, "out of memory");
        return -ENOMEM;
    }
    req->type = type;
    req->value = value;
    if (name) snprintf(req->name, sizeof req->name, "%s", name);
    if (port) snprintf(req->port, sizeof req->port, "%s", port);
    int rc = ask(req, sizeof *req, rep);
    lm_free(LM_MEM_COMM, req);
    return rc;
}

/* Wait for the launcher to pair this accept or connect (ticket): progress
 * keeps going meanwhile, and other threads get the critical section. */
static int wait_ticket(int ticket, lm_ctl_reply *rep)
{
    long pause_ns = 20000;
    for (;;) {
        int rc = ask_name(LM_REQ_POLL, NULL, NULL, ticket, rep);
        if (rc != -EAGAIN) return rc;
        int events = 0;
        for (int i = 0; i < 8; i++) events += lm_progress();
        if (lm_cs_active()) lm_cs_handoff();
        if (!events) {
            nanosleep(&(struct timespec){0, pause_ns}, NULL);
            if (pause_ns < 2000000) pause_ns *= 2;
        }
    }
}

/* ---- accept and connect --------------------------------------------------- */

/* The bridge between this leader and the other one: rank 0 the accepting
 * leader, rank 1 the connecting one. */
static lm_comm *new_bridge(lm_comm *L, int accepting, int peer_id)
{
    int ids[2] = {accepting ? lm_world_rank() : peer_id, accepting ? peer_id : lm_world_rank()};
    lm_group *g = lm_group_new_list(ids, 2);
    if (!g) return NULL;
    lm_comm *b = lm_comm_new_intra(g, LM_CONTEXT_BRIDGE, L);
    if (!b) lm_group_release(g);
    return b;
}

static void drop_bridge(lm_comm *b)
{
    if (!b) return;
    MPI_Comm h = b->obj.handle;
    impl_MPI_Comm_free(&h);
}

static int errclass_of(int rc, int fallback)
{
    switch (rc) {
    case -ENOMEM: return MPI_ERR_NO_MEM;
    case -ENOENT: return MPI_ERR_PORT;
    case -ENOTSUP: return MPI_ERR_UNSUPPORTED_OPERATION;
    default: return fallback;
    }
}

/* The collective part of MPI_Comm_accept and MPI_Comm_connect on L; at the
 * root, *why says what failed before (err). */
static int meet(lm_comm *L, int root, int accepting, int err, int peer_job, int peer_rank, int tag, lm_comm **out,
                char *why, size_t whycap)
{
    lm_comm *bridge = NULL;
    /* every member may now hear from the other job, which reaches it
     * through the network */
    lm_transport_network_expected();
    if (!err && L->rank == root) {
        int peer_id = lm_boot_proc_id(peer_job, peer_rank);
        if (peer_id < 0 || !(bridge = new_bridge(L, accepting, peer_id))) {
            err = MPI_ERR_NO_MEM;
            snprintf(why, whycap, "out of memory");
        }
    }
    int remote_failed;
    int rc = lm_intercomm_bridge(L, root, err, bridge, accepting ? 1 : 0, tag, out, &remote_failed);
    drop_bridge(bridge);
    if (rc && !err) {
        snprintf(why, whycap, "%s",
                 remote_failed            ? "the other side failed"
                 : rc == MPI_ERR_GROUP    ? "the two groups share a process"
                 : rc == MPI_ERR_NO_MEM   ? "out of memory"
                 : L->rank == root || err ? "the leaders' agreement failed"
                                          : "the root failed");
    }
    return rc;
}

/* At the root: ask the launcher to pair this side on port, and wait. */
static int pair_on_port(const char *port, int accepting, int *pjob, int *prank, int *tag, char *why, size_t whycap)
{
    lm_ctl_reply rep;
    int rc = ask_name(accepting ? LM_REQ_ACCEPT : LM_REQ_CONNECT, NULL, port, 0, &rep);
    if (rc == 0) rc = wait_ticket(rep.a, &rep);
    if (rc) {
        snprintf(why, whycap, "%s", rep.text[0] ? rep.text : "the launcher refused");
        return errclass_of(rc, MPI_ERR_PORT);
    }
    *pjob = rep.a;
    *prank = rep.b;
    *tag = rep.c;
    return MPI_SUCCESS;
}

static int check_root_comm(MPI_Comm comm, int root, void *out, const char *fname, lm_comm **L)
{
    int rc;
    *L = lm_comm_checked(comm, fname, &rc);
    if (!*L) return rc;
    if ((*L)->is_inter) return lm_err_comm(comm, MPI_ERR_COMM, fname, "comm must be an intracommunicator");
    if (root < 0 || root >= (*L)->size)
        return lm_err_comm(comm, MPI_ERR_ROOT, fname, "root %d is not a rank of comm (size %d)", root, (*L)->size);
    if (!out) return lm_err_comm(comm, MPI_ERR_ARG, fname, "the output handle is NULL");
    return MPI_SUCCESS;
}

static int accept_or_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm,
                             int accepting)
{
    const char *fname = accepting ? "MPI_Comm_accept" : "MPI_Comm_connect";
    lm_comm *L;
    int rc = check_root_comm(comm, root, newcomm, fname, &L);
    if (rc) return rc;
    char why[LM_CTL_TEXT_MAX] = "";
    int err = MPI_SUCCESS, pjob = 0, prank = 0, tag = 0;
    if (L->rank == root) {
        if (!port_name) err = MPI_ERR_ARG, snprintf(why, sizeof why, "port_name is NULL");
        else if (info != MPI_INFO_NULL && !lm_info_get(info))
            err = MPI_ERR_INFO, snprintf(why, sizeof why, "invalid info");
        else err = pair_on_port(port_name, accepting, &pjob, &prank, &tag, why, sizeof why);
    }
    lm_comm *c = NULL;
    rc = meet(L, root, accepting, err, pjob, prank, tag, &c, why, sizeof why);
    if (rc) {
        *newcomm = MPI_COMM_NULL;
        if (L->rank != root && !why[0]) snprintf(why, sizeof why, "the root failed");
        return lm_err_comm(comm, rc, fname, "%s", why);
    }
    *newcomm = c->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    return accept_or_connect(port_name, info, root, comm, newcomm, 1);
}

int impl_MPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    return accept_or_connect(port_name, info, root, comm, newcomm, 0);
}

/* ---- ports and names ------------------------------------------------------ */

/* A port or name request on behalf of fname: MPI_SUCCESS, or the error
 * raised with the launcher's reason (`missing`: the class when what it
 * names is not there). */
static int name_request(const char *fname, int type, const char *name, const char *port, int missing, lm_ctl_reply *rep)
{
    int rc = ask_name(type, name, port, 0, rep);
    if (!rc) return MPI_SUCCESS;
    return lm_err_noobj(rc == -ENOENT ? missing : errclass_of(rc, missing), fname, "%s", rep->text);
}

int impl_MPI_Open_port(MPI_Info info, char *port_name)
{
    (void)info; /* no info keys are interpreted */
    static int next_port;
    if (!port_name) return lm_err_noobj(MPI_ERR_ARG, "MPI_Open_port", "port_name is NULL");
    char name[64];
    snprintf(name, sizeof name, "leanmpi-port:%d:%d:%d", lm_boot_job(), lm_world_rank(), next_port++);
    lm_ctl_reply rep;
    int rc = name_request("MPI_Open_port", LM_REQ_PORT_OPEN, NULL, name, MPI_ERR_PORT, &rep);
    if (rc == MPI_SUCCESS) snprintf(port_name, MPI_MAX_PORT_NAME, "%s", name);
    return rc;
}

int impl_MPI_Close_port(const char *port_name)
{
    lm_ctl_reply rep;
    return name_request("MPI_Close_port", LM_REQ_PORT_CLOSE, NULL, port_name, MPI_ERR_PORT, &rep);
}

int impl_MPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    (void)info;
    lm_ctl_reply rep;
    return name_request("MPI_Publish_name", LM_REQ_PUBLISH, service_name, port_name, MPI_ERR_SERVICE, &rep);
}

int impl_MPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    (void)info;
    lm_ctl_reply rep;
    return name_request("MPI_Unpublish_name", LM_REQ_UNPUBLISH, service_name, port_name, MPI_ERR_SERVICE, &rep);
}

int impl_MPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    (void)info;
    if (!port_name) return lm_err_noobj(MPI_ERR_ARG, "MPI_Lookup_name", "port_name is NULL");
    lm_ctl_reply rep;
    int rc = name_request("MPI_Lookup_name", LM_REQ_LOOKUP, service_name, NULL, MPI_ERR_NAME, &rep);
    if (rc == MPI_SUCCESS) snprintf(port_name, MPI_MAX_PORT_NAME, "%s", rep.text);
    return rc;
}

/* ---- spawn ---------------------------------------------------------------- */

typedef struct wbuf {
    char *p;
    size_t len, cap;
    int failed;
} wbuf;

static void put_bytes(wbuf *w, const void *b, size_t n)
{
    if (w->failed) return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->len + n) cap *= 2;
        char *p = cap > sizeof(lm_ctl_request) + LM_SPAWN_WIRE_MAX ? NULL : lm_realloc(LM_MEM_COMM, w->p, cap);
        if (!p) {
            w->failed = 1;
            return;
        }
        w->p = p;
        w->cap = cap;
    }
    memcpy(w->p + w->len, b, n);
    w->len += n;
}

static void put_int(wbuf *w, int32_t v) { put_bytes(w, &v, sizeof v); }
static void put_str(wbuf *w, const char *s) { put_bytes(w, s ? s : "", strlen(s ? s : "") + 1); }

/* The commands of a spawn, at the root; MPI_SUCCESS or a class with why. */
static int encode_spawn(wbuf *w, int count, char *cmds[], char **argvs[], const int maxprocs[], const MPI_Info infos[],
                        int *total, char *why, size_t whycap)
{
    put_int(w, count);
    *total = 0;
    for (int i = 0; i < count; i++) {
        if (!cmds[i]) return snprintf(why, whycap, "command %d is NULL", i), MPI_ERR_ARG;
        if (maxprocs[i] < 0) return snprintf(why, whycap, "maxprocs %d is negative", maxprocs[i]), MPI_ERR_ARG;
        const struct lm_info *inf = NULL;
        if (infos && infos[i] != MPI_INFO_NULL && !(inf = lm_info_get(infos[i])))
            return snprintf(why, whycap, "invalid info for command %d", i), MPI_ERR_INFO;
        int argc = 0;
        char **argv = argvs ? argvs[i] : NULL;
        while (argv && argv[argc]) argc++;
        put_int(w, maxprocs[i]);
        put_int(w, argc);
        put_str(w, cmds[i]);
        put_str(w, inf ? lm_info_value(inf, "wdir") : NULL);
        put_str(w, inf ? lm_info_value(inf, "host") : NULL);
        for (int k = 0; k < argc; k++) put_str(w, argv[k]);
        *total += maxprocs[i];
    }
    if (w->failed)
        return snprintf(why, whycap, "the commands and arguments exceed %d bytes", LM_SPAWN_WIRE_MAX), MPI_ERR_SPAWN;
    return MPI_SUCCESS;
}

/* At the root: open a port for the children, have the launcher start them
 * and wait for their leader on it. */
static int start_children(int count, char *cmds[], char **argvs[], const int maxprocs[], const MPI_Info infos[],
                          int *total, char *port, int *pjob, int *prank, int *tag, char *why, size_t whycap)
{
    wbuf w = {0};
    lm_ctl_request head = {.type = LM_REQ_SPAWN};
    put_bytes(&w, &head, sizeof head);
    int err = encode_spawn(&w, count, cmds, argvs, maxprocs, infos, total, why, whycap);
    if (!err && *total == 0) err = MPI_ERR_SPAWN, snprintf(why, whycap, "no process to start (maxprocs 0)");
    if (err) {
        lm_free(LM_MEM_COMM, w.p);
        return err;
    }
    int rc = impl_MPI_Open_port(MPI_INFO_NULL, port);
    if (rc) {
        lm_free(LM_MEM_COMM, w.p);
        const char *m = lm_err_last_message();
        snprintf(why, whycap, "cannot open a port for the children%s%s", m ? ": " : "", m ? m : "");
        return rc == MPI_ERR_UNSUPPORTED_OPERATION ? MPI_ERR_SPAWN : rc;
    }
    lm_ctl_request *req = (lm_ctl_request *)w.p;
    snprintf(req->port, sizeof req->port, "%s", port);
    lm_ctl_reply rep;
    rc = ask(req, w.len, &rep);
    lm_free(LM_MEM_COMM, w.p);
    if (rc) {
        snprintf(why, whycap, "%s", rep.text[0] ? rep.text : "the launcher refused");
        impl_MPI_Close_port(port);
        port[0] = '\0';
        return MPI_ERR_SPAWN;
    }
    return pair_on_port(port, 1, pjob, prank, tag, why, whycap);
}

static int spawn(const char *fname, int count, char *cmds[], char **argvs[], const int maxprocs[],
                 const MPI_Info infos[], int root, MPI_Comm comm, MPI_Comm *intercomm, int errcodes[])
{
    lm_comm *L;
    int rc = check_root_comm(comm, root, intercomm, fname, &L);
    if (rc) return rc;
    char why[LM_CTL_TEXT_MAX] = "", port[MPI_MAX_PORT_NAME] = "";
    int32_t head[2] = {MPI_SUCCESS, 0}; /* the root's verdict, the number of children */
    int pjob = 0, prank = 0, tag = 0;
    if (L->rank == root) {
        if (count < 1) head[0] = MPI_ERR_ARG, snprintf(why, sizeof why, "count %d is not positive", count);
        else if (!cmds || !maxprocs)
            head[0] = MPI_ERR_ARG, snprintf(why, sizeof why, "the commands or maxprocs are NULL");
        else
            head[0] = start_children(count, cmds, argvs, maxprocs, infos, &head[1], port, &pjob, &prank, &tag, why,
                                     sizeof why);
    }
    /* everyone learns the count, for the error codes */
    rc = lm_coll_bcast(head, sizeof head, root, L);
    if (rc) return lm_err_comm(comm, rc, fname, "cannot share the root's outcome");
    lm_comm *c = NULL;
    rc = meet(L, root, 1, L->rank == root ? head[0] : MPI_SUCCESS, pjob, prank, tag, &c, why, sizeof why);
    if (port[0]) impl_MPI_Close_port(port);
    if (errcodes)
        for (int i = 0; i < head[1]; i++) errcodes[i] = rc ? MPI_ERR_SPAWN : MPI_SUCCESS;
    if (rc) {
        *intercomm = MPI_COMM_NULL;
        if (!why[0]) snprintf(why, sizeof why, "the root failed");
        return lm_err_comm(comm, rc == MPI_ERR_PORT ? MPI_ERR_SPAWN : rc, fname, "%s", why);
    }
    *intercomm = c->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                        MPI_Comm *intercomm, int array_of_errcodes[])
{
    char *cmds[1] = {(char *)command};
    char **argvs[1] = {argv};
    return spawn("MPI_Comm_spawn", 1, command ? cmds : NULL, argvs, &maxprocs, &info, root, comm, intercomm,
                 array_of_errcodes);
}

int impl_MPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                                 const int array_of_maxprocs[], const MPI_Info array_of_info[], int root, MPI_Comm comm,
                                 MPI_Comm *intercomm, int array_of_errcodes[])
{
    return spawn("MPI_Comm_spawn_multiple", count, array_of_commands, array_of_argv, array_of_maxprocs, array_of_info,
                 root, comm, intercomm, array_of_errcodes);
}

/* ---- the parent, disconnect, join ----------------------------------------- */

int lm_dynamic_connect_parent(void)
{
    const char *port = getenv("LEANMPI_PARENT_PORT");
    if (!port || !*port) return MPI_SUCCESS;
    MPI_Comm c;
    /* every child has come this far before the parent is met: one that
     * ended before MPI_Init leaves the rest here, unpaired, and the
     * launcher fails the spawn (the parent is never left waiting on a
     * partner that cannot answer) */
    int rc = impl_MPI_Barrier(MPI_COMM_WORLD);
    if (!rc) rc = accept_or_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &c, 0);
    if (rc) return rc;
    parent_comm = c;
    impl_MPI_Comm_set_name(c, "MPI_COMM_PARENT");
    return MPI_SUCCESS;
}

int impl_MPI_Comm_get_parent(MPI_Comm *parent)
{
    /* a freed parent handle no longer names it (MPI-4.1 11.8.2) */
    if (parent_comm != MPI_COMM_NULL && !lm_comm_get(parent_comm)) parent_comm = MPI_COMM_NULL;
    *parent = parent_comm;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_disconnect(MPI_Comm *comm)
{
    int rc;
    lm_comm *c = lm_comm_checked(*comm, "MPI_Comm_disconnect", &rc);
    if (!c) return rc;
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return lm_err_comm(*comm, MPI_ERR_COMM, "MPI_Comm_disconnect", "cannot disconnect a predefined communicator");
    /* everything sent on it has arrived once every member got this far */
    rc = impl_MPI_Barrier(*comm);
    if (rc) return rc;
    MPI_Comm h = *comm;
    rc = impl_MPI_Comm_free(comm);
    if (rc == MPI_SUCCESS && h == parent_comm) parent_comm = MPI_COMM_NULL;
    return rc;
}

static int write_all(int fd, const void *b, size_t n)
{
    const char *p = b;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *b, size_t n)
{
    char *p = b;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Both sides write their universe names; the smaller one accepts on a port
 * it opens and writes over the socket, the other connects to it. */
int impl_MPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    const char *fname = "MPI_Comm_join";
    if (!intercomm) return lm_err_noobj(MPI_ERR_ARG, fname, "intercomm is NULL");
    int32_t me[2] = {lm_boot_job(), lm_world_rank()}, other[2];
    if (write_all(fd, me, sizeof me) || read_all(fd, other, sizeof other))
        return lm_err_noobj(MPI_ERR_OTHER, fname, "cannot exchange over descriptor %d: %s", fd,
                            errno ? strerror(errno) : "closed by the other side");
    if (me[0] == other[0] && me[1] == other[1])
        return lm_err_noobj(MPI_ERR_ARG, fname, "both ends of descriptor %d are this process", fd);
    int accepting = me[0] < other[0] || (me[0] == other[0] && me[1] < other[1]);
    char port[MPI_MAX_PORT_NAME] = "";
    int rc;
    if (accepting) {
        rc = impl_MPI_Open_port(MPI_INFO_NULL, port);
        uint32_t len = rc ? 0 : (uint32_t)strlen(port) + 1;
        if (write_all(fd, &len, sizeof len) || (len && write_all(fd, port, len)))
            rc = rc ? rc : lm_err_noobj(MPI_ERR_OTHER, fname, "cannot write the port over descriptor %d", fd);
        if (!rc) rc = impl_MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, intercomm);
        if (port[0]) impl_MPI_Close_port(port);
        return rc;
    }
    uint32_t len = 0;
    if (read_all(fd, &len, sizeof len) || len > sizeof port || (len && read_all(fd, port, len)))
        return lm_err_noobj(MPI_ERR_OTHER, fname, "cannot read the port over descriptor %d", fd);
    if (!len) return lm_err_noobj(MPI_ERR_OTHER, fname, "the other side could not open a port");
    port[sizeof port - 1] = '\0';
    return impl_MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, intercomm);
}
