/* Intercommunicator constructors (MPI_Intercomm_create, from groups, dup,
 * split, merge) and the remote-group queries; see comm/intercomm.h. */
#include "comm/intercomm.h"
#include "comm/context_id.h"
#include "coll/coll_basic.h"
#include "pt2pt/pt2pt.h"
#include "boot/boot.h"
#include "obj/errhandler.h"
#include "util/lm_error.h"
#include "util/lm_mem.h"
#include "api/impl_gen.h"
#include <stdlib.h>
#include <string.h>

/* Leader traffic on a peer communicator's (or MPI_COMM_WORLD's) collective
 * context: above every internal collective tag, with the user's tag below. */
#define TAG_HIGH (1 << 30)
/* Leader traffic on an intercommunicator's collective context: above the
 * tags of collective schedules (their sequence numbers), which may still
 * be in flight there. */
#define TAG_AGREE (TAG_HIGH | 64)
#define TAG_USER_MASK ((1 << 30) - 1)

/* Where a leader reaches the other leader. */
typedef struct {
    lm_comm *c;
    int peer, tag, ctx;
} channel;

/* What the leaders swap and then broadcast to their groups. */
typedef struct {
    uint32_t mask[LM_CONTEXT_MASK_WORDS];
    int err;         /* an MPI error class the sending side met (tell_remote) */
    int n;           /* payload entries that follow */
    int info[2];     /* per construction (merge: high flag, leader's world rank) */
    int leader_job;  /* merge: the leader's job in the universe (boot.h) */
    int from_remote; /* set where received: err is the other side's */
} xhdr;

static int swap(const channel *ch, const void *out, size_t outlen, void *in, size_t inlen)
{
    lm_request *s, *r;
    int rc = lm_irecv_bytes(in, inlen, ch->peer, ch->tag, ch->c, ch->ctx, &r);
    if (rc) return rc;
    rc = lm_isend_bytes(out, outlen, ch->peer, ch->tag, ch->c, ch->ctx, &s);
    int e2 = rc ? rc : lm_wait_release(s, MPI_STATUS_IGNORE);
    int e1 = lm_wait_release(r, MPI_STATUS_IGNORE);
    return e2 ? e2 : e1;
}

/* A side whose members did not all bring valid arguments (or whose local
 * agreement failed) ends the construction here: its leader swaps a header
 * carrying the error with the other leader, who meets it in agree() (or in
 * its own tell_remote when both sides failed), so that the remote group
 * fails too instead of waiting. */
static void tell_remote(const channel *ch, int err)
{
    xhdr h = {.err = err}, rh;
    swap(ch, &h, sizeof h, &rh, sizeof rh);
}

/* The agreement step shared by every construction (comm/intercomm.h),
 * collective over the hidden communicator H: h->n entries of elem bytes at
 * pay are sent (significant at the leader). On success rh is the remote
 * header with the combined mask and *rpay the remote payload (rh->n
 * entries; lm_free it), NULL if empty. When the remote side failed
 * (tell_remote), every member returns its error class and *remote_failed
 * is set. ch is significant only at the leader. */
static int agree(lm_comm *H, int leader, const channel *ch, xhdr *h, const void *pay, size_t elem, xhdr *rh,
                 void **rpay, int *remote_failed)
{
    *rpay = NULL;
    *remote_failed = 0;
    memset(rh, 0, sizeof *rh);
    lm_context_id_free_mask(h->mask);
    h->err = MPI_SUCCESS;
    int rc = lm_coll_allreduce(h->mask, LM_CONTEXT_MASK_WORDS, sizeof(uint32_t), lm_context_id_mask_and, NULL, H);
    if (rc) return rc;
    char *buf = NULL;
    if (H->rank == leader) {
        if ((rc = swap(ch, h, sizeof *h, rh, sizeof *rh)) != MPI_SUCCESS) {
            rh->err = rc;
        } else if (rh->err) {
            rh->from_remote = 1;
        } else {
            lm_context_id_mask_and(h->mask, rh->mask, LM_CONTEXT_MASK_WORDS, NULL);
            if (rh->n < 0) rh->err = MPI_ERR_INTERN;
            else if (!(buf = lm_malloc(LM_MEM_COMM, (size_t)rh->n * elem + 1))) rh->err = MPI_ERR_NO_MEM;
            else if ((rc = swap(ch, pay, (size_t)h->n * elem, buf, (size_t)rh->n * elem)) != MPI_SUCCESS) rh->err = rc;
        }
    }
    rc = lm_coll_bcast(rh, sizeof *rh, leader, H);
    if (!rc && rh->err) {
        rc = rh->err;
        *remote_failed = rh->from_remote;
    }
    if (!rc && H->rank != leader && !(buf = lm_malloc(LM_MEM_COMM, (size_t)rh->n * elem + 1))) rc = MPI_ERR_NO_MEM;
    if (!rc && rh->n && elem) rc = lm_coll_bcast(buf, (size_t)rh->n * elem, leader, H);
    if (rc) {
        lm_free(LM_MEM_COMM, buf);
        return rc;
    }
    *rpay = buf;
    return MPI_SUCCESS;
}

/* The new communicator's id from the mask both sides agreed on (agree()):
 * the candidate-and-vote protocol of comm/context_id.h, each side voting
 * over H and the leaders combining the two sides' votes; when the vote
 * fails, fresh masks are agreed the same way and it starts over. Every
 * member of both sides runs the same rounds. */
static int take_agreed(lm_comm *H, int leader, const channel *ch, uint32_t *mask, uint16_t *id)
{
    for (;;) {
        int cand = lm_context_id_candidate(mask);
        if (cand < 0) return MPI_ERR_INTERN; /* every id in use somewhere */
        int reserved = lm_context_id_reserve((uint16_t)cand);
        uint32_t v[2] = {(uint32_t)reserved, MPI_SUCCESS}; /* the vote, an error the leader met */
        int rc = lm_coll_allreduce(v, 1, sizeof(uint32_t), lm_context_id_mask_and, NULL, H);
        if (!rc && H->rank == leader) {
            uint32_t rv = 0;
            int e = swap(ch, v, sizeof v[0], &rv, sizeof rv);
            v[0] &= rv;
            v[1] = (uint32_t)e;
        }
        if (!rc) rc = lm_coll_bcast(v, sizeof v, leader, H);
        if (!rc) rc = (int)v[1];
        if (!rc && v[0]) {
            *id = (uint16_t)cand;
            return MPI_SUCCESS;
        }
        if (reserved) lm_context_id_release((uint16_t)cand);
        if (rc) return rc;
        /* taken meanwhile on some member of either side: fresh masks */
        xhdr h = {0};
        lm_context_id_free_mask(h.mask);
        rc = lm_coll_allreduce(h.mask, LM_CONTEXT_MASK_WORDS, sizeof(uint32_t), lm_context_id_mask_and, NULL, H);
        if (!rc && H->rank == leader) {
            uint32_t rm[LM_CONTEXT_MASK_WORDS];
            h.err = swap(ch, h.mask, sizeof h.mask, rm, sizeof rm);
            lm_context_id_mask_and(rm, h.mask, LM_CONTEXT_MASK_WORDS, NULL);
        }
        if (!rc) rc = lm_coll_bcast(&h, sizeof h, leader, H);
        if (!rc) rc = h.err;
        if (rc) return rc;
        memcpy(mask, h.mask, sizeof h.mask);
    }
}

/* What the members of a side report when the other side failed. */
static int remote_error(MPI_Comm comm, int err, const char *fname)
{
    return lm_err_comm(comm, err, fname, "the remote group failed (invalid arguments there, or its agreement)");
}

static void drop_comm(lm_comm *c)
{
    if (!c) return;
    MPI_Comm h = c->obj.handle;
    impl_MPI_Comm_free(&h);
}

void lm_intercomm_release(lm_comm *c)
{
    drop_comm(c->local_comm);
    c->local_comm = NULL;
}

/* A hidden intracommunicator over g (a reference is taken) on id. */
static lm_comm *new_hidden(lm_group *g, uint16_t id, lm_comm *parent)
{
    lm_group_retain(g);
    lm_comm *h = lm_comm_new_intra(g, id, parent);
    if (!h) {
        lm_group_release(g);
        lm_context_id_release(id);
    }
    return h;
}

/* The intercommunicator itself: local (a reference is taken), remote (its
 * reference passes), the hidden communicator H (passes). On failure all
 * three are given back. */
static lm_comm *new_inter(lm_group *local, lm_group *remote, uint16_t id, lm_comm *H, lm_comm *parent)
{
    lm_comm *c = NULL;
    if (remote) {
        lm_group_retain(local);
        c = lm_comm_new_intra(local, id, parent);
        if (!c) lm_group_release(local);
    }
    if (!c) {
        if (remote) lm_group_release(remote);
        lm_context_id_release(id);
        drop_comm(H);
        return NULL;
    }
    c->is_inter = 1;
    c->remote_group = remote;
    c->local_comm = H;
    return c;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Whether g and the world ranks w[0..m) share a process (sort both lists
 * together; a group never names a process twice). -1 when out of memory. */
static int overlaps(const lm_group *g, const int *w, int m)
{
    int n = g->size;
    int *all = lm_malloc(LM_MEM_COMM, ((size_t)n + (size_t)m) * sizeof *all + 1);
    if (!all) return -1;
    for (int i = 0; i < n; i++) all[i] = lm_group_world_rank(g, i);
    memcpy(all + n, w, (size_t)m * sizeof *w);
    qsort(all, (size_t)n + (size_t)m, sizeof *all, cmp_int);
    int dup = 0;
    for (int i = 1; i < n + m && !dup; i++) dup = all[i] == all[i - 1];
    lm_free(LM_MEM_COMM, all);
    return dup;
}

static int *world_list(const lm_group *g)
{
    int *w = lm_malloc(LM_MEM_COMM, (size_t)g->size * sizeof *w + 1);
    if (w)
        for (int i = 0; i < g->size; i++) w[i] = lm_group_world_rank(g, i);
    return w;
}

/* The local leader's channel to the remote leader in MPI_Intercomm_create
 * (peer_comm and remote_leader mean something only there): MPI_SUCCESS, or
 * the class of what makes the remote leader unreachable. */
static int leader_channel(lm_comm *L, MPI_Comm peer_comm, int remote_leader, int tag, channel *ch)
{
    lm_comm *P = lm_comm_get(peer_comm);
    if (!P) return MPI_ERR_COMM;
    if (remote_leader < 0 || remote_leader >= lm_comm_peer_size(P)) return MPI_ERR_RANK;
    if (lm_group_rank_of(L->group, lm_comm_world_rank(P, remote_leader)) != MPI_UNDEFINED)
        return MPI_ERR_RANK; /* the remote leader is one of ours: the groups overlap */
    *ch = (channel){P, remote_leader, TAG_HIGH | (tag & TAG_USER_MASK), P->context_id + 1};
    return MPI_SUCCESS;
}

int lm_intercomm_create_abstain(lm_comm *L, int err, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag)
{
    if (!L || L->is_inter) return err; /* refused alike everywhere by the call itself */
    channel ch = {0};
    uint16_t id;
    int bad;
    /* a tag outside 0..MPI_TAG_UB cannot be the remote leader's, so it
     * could not meet the message */
    int reach = L->rank == local_leader && tag >= 0 && tag <= TAG_USER_MASK &&
                leader_channel(L, peer_comm, remote_leader, tag, &ch) == MPI_SUCCESS;
    lm_context_id_allocate_checked(L, err, &id, &bad); /* ends with bad set: no id */
    if (reach) tell_remote(&ch, err);
    return err;
}

int impl_MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                              MPI_Comm *newintercomm)
{
    const char *fname = "MPI_Intercomm_create";
    lm_comm *L = lm_comm_get(local_comm);
    if (!L) return lm_err_comm(local_comm, MPI_ERR_COMM, fname, "invalid local_comm");
    if (L->is_inter) return lm_err_comm(local_comm, MPI_ERR_COMM, fname, "local_comm must be an intracommunicator");
    int leader = L->rank == local_leader;
    xhdr h = {.n = L->size}, rh;
    channel ch = {0};
    int *pay = NULL, err = MPI_SUCCESS;
    if (leader && !(err = leader_channel(L, peer_comm, remote_leader, tag, &ch)) && !(pay = world_list(L->group)))
        err = MPI_ERR_NO_MEM;
    /* the local group agrees on its verdict first; a failed side tells the
     * other through the leaders when its leader can reach the other one */
    uint16_t hid, id;
    int bad, rc = lm_context_id_allocate_checked(L, err, &hid, &bad);
    if (rc || bad) {
        if (ch.c) tell_remote(&ch, rc ? rc : bad);
        lm_free(LM_MEM_COMM, pay);
        if (rc) return lm_err_comm(local_comm, rc, fname, "context id agreement failed");
        if (err == MPI_ERR_COMM) return lm_err_comm(local_comm, err, fname, "invalid peer_comm at the local leader");
        if (err == MPI_ERR_RANK)
            return lm_err_comm(local_comm, err, fname,
                               "remote_leader is not a rank of peer_comm outside local_comm's group");
        if (err) return lm_err_comm(local_comm, err, fname, "out of memory");
        return lm_context_id_peer_invalid(local_comm, bad, fname);
    }
    lm_comm *H = new_hidden(L->group, hid, L);
    if (!H) {
        lm_free(LM_MEM_COMM, pay);
        return lm_err_comm(local_comm, MPI_ERR_NO_MEM, fname, "out of memory");
    }
    void *rpay;
    int remote_failed;
    rc = agree(H, local_leader, &ch, &h, pay, sizeof(int), &rh, &rpay, &remote_failed);
    lm_free(LM_MEM_COMM, pay);
    if (rc) {
        drop_comm(H);
        if (remote_failed) return remote_error(local_comm, rc, fname);
        return lm_err_comm(local_comm, rc, fname, "the leaders' exchange failed");
    }
    int ov = overlaps(L->group, rpay, rh.n);
    if (ov) {
        lm_free(LM_MEM_COMM, rpay);
        drop_comm(H);
        return ov < 0 ? lm_err_comm(local_comm, MPI_ERR_NO_MEM, fname, "out of memory")
                      : lm_err_comm(local_comm, MPI_ERR_GROUP, fname, "the local and remote groups overlap");
    }
    lm_group *rg = lm_group_new_list(rpay, rh.n);
    lm_free(LM_MEM_COMM, rpay);
    rc = take_agreed(H, local_leader, &ch, rh.mask, &id);
    if (rc) {
        if (rg) lm_group_release(rg);
        drop_comm(H);
        return lm_err_comm(local_comm, rc, fname, "no context id free on both groups");
    }
    lm_comm *c = new_inter(L->group, rg, id, H, L);
    if (!c) return lm_err_comm(local_comm, MPI_ERR_NO_MEM, fname, "out of memory");
    *newintercomm = c->obj.handle;
    return MPI_SUCCESS;
}

/* The string tag as a point-to-point tag (FNV-1a). */
/* The universe names (job, rank) of g's members, two ints each. */
static int *name_list(const lm_group *g)
{
    int *w = lm_malloc(LM_MEM_COMM, 2 * (size_t)g->size * sizeof *w + 1);
    if (w)
        for (int i = 0; i < g->size; i++)
            if (lm_boot_proc_name(lm_group_world_rank(g, i), &w[2 * i], &w[2 * i + 1]) != 0) {
                lm_free(LM_MEM_COMM, w);
                return NULL;
            }
    return w;
}

/* This process's ids for n names (lm_free them); NULL out of memory. */
static int *ids_of_names(const int *names, int n)
{
    int *ids = lm_malloc(LM_MEM_COMM, (size_t)n * sizeof *ids + 1);
    for (int i = 0; ids && i < n; i++)
        if ((ids[i] = lm_boot_proc_id(names[2 * i], names[2 * i + 1])) < 0) {
            lm_free(LM_MEM_COMM, ids);
            ids = NULL;
        }
    return ids;
}

int lm_intercomm_bridge(lm_comm *L, int leader, int err, lm_comm *bridge, int peer, int tag, lm_comm **out,
                        int *remote_failed)
{
    *out = NULL;
    *remote_failed = 0;
    channel ch = {0};
    if (L->rank == leader && bridge)
        ch = (channel){bridge, peer, TAG_HIGH | (tag & TAG_USER_MASK), LM_CONTEXT_BRIDGE + 1};
    int *pay = NULL;
    if (!err && L->rank == leader && !(pay = name_list(L->group))) err = MPI_ERR_NO_MEM;
    uint16_t hid, id;
    int bad, rc = lm_context_id_allocate_checked(L, err, &hid, &bad);
    if (rc || bad) {
        if (ch.c) tell_remote(&ch, rc ? rc : bad);
        lm_free(LM_MEM_COMM, pay);
        return rc ? rc : bad;
    }
    lm_comm *H = new_hidden(L->group, hid, L);
    if (!H) {
        lm_free(LM_MEM_COMM, pay);
        return MPI_ERR_NO_MEM;
    }
    xhdr h = {.n = L->size}, rh;
    void *rpay;
    rc = agree(H, leader, &ch, &h, pay, 2 * sizeof(int), &rh, &rpay, remote_failed);
    lm_free(LM_MEM_COMM, pay);
    if (rc) {
        drop_comm(H);
        return rc;
    }
    int *ids = ids_of_names(rpay, rh.n);
    lm_free(LM_MEM_COMM, rpay);
    /* an overlap is seen alike on both sides, which then both stop here */
    int ov = ids ? overlaps(L->group, ids, rh.n) : -1;
    lm_group *rg = ov ? NULL : lm_group_new_list(ids, rh.n);
    lm_free(LM_MEM_COMM, ids);
    if (!rg) {
        drop_comm(H);
        return ov > 0 ? MPI_ERR_GROUP : MPI_ERR_NO_MEM;
    }
    rc = take_agreed(H, leader, &ch, rh.mask, &id);
    if (rc) {
        lm_group_release(rg);
        drop_comm(H);
        return rc;
    }
    lm_comm *c = new_inter(L->group, rg, id, H, L);
    if (!c) return MPI_ERR_NO_MEM;
    *out = c;
    return MPI_SUCCESS;
}

static int hash_tag(const char *s)
{
    uint32_t x = 2166136261u;
    for (; *s; s++) x = (x ^ (unsigned char)*s) * 16777619u;
    return (int)(x & TAG_USER_MASK);
}

/* Without a parent communicator the processes talk over MPI_COMM_WORLD's
 * collective context, addressed by world rank: groups here are sets of
 * world ranks, so this covers every group derived from MPI_COMM_WORLD's. */
int impl_MPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group,
                                          int remote_leader, const char *stringtag, MPI_Info info,
                                          MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    (void)info; /* no info keys are interpreted */
    const char *fname = "MPI_Intercomm_create_from_groups";
    lm_comm *W = lm_comm_get(MPI_COMM_WORLD);
    if (!W) return lm_err_noobj(MPI_ERR_UNSUPPORTED_OPERATION, fname, "needs the processes of MPI_COMM_WORLD");
    lm_group *g = lm_group_get(local_group), *r = lm_group_get(remote_group);
    if (!g || !r) return lm_err_noobj(MPI_ERR_GROUP, fname, "invalid group");
    if (g->my_rank == MPI_UNDEFINED)
        return lm_err_noobj(MPI_ERR_GROUP, fname, "the calling process is not in local_group");
    /* from here on the members of local_group know each other: what is
     * wrong with the rest of the arguments is agreed on among them, and
     * told to the remote group where its leader can be reached */
    const char *why = NULL;
    int err = MPI_SUCCESS;
    if (local_leader >= g->size) err = MPI_ERR_RANK, why = "local_leader is not a rank of local_group";
    else if (remote_leader >= r->size) err = MPI_ERR_RANK, why = "remote_leader is not a rank of remote_group";
    else {
        int *rw = world_list(r);
        int ov = rw ? overlaps(g, rw, r->size) : -1;
        lm_free(LM_MEM_COMM, rw);
        if (ov) err = ov < 0 ? MPI_ERR_NO_MEM : MPI_ERR_GROUP;
        if (ov) why = ov < 0 ? "out of memory" : "local_group and remote_group overlap";
    }
    int tag = hash_tag(stringtag);
    channel ch = {0};
    if (g->my_rank == local_leader && remote_leader < r->size)
        ch = (channel){W, lm_group_rank_of(W->group, lm_group_world_rank(r, remote_leader)), TAG_HIGH | tag,
                       W->context_id + 1};
    uint16_t hid, id;
    int bad, rc = lm_context_id_allocate_group_checked(W, g, tag, err, &hid, &bad);
    if (rc || bad) {
        if (ch.c) tell_remote(&ch, rc ? rc : bad);
        if (rc) return lm_err_noobj(rc, fname, "context id agreement failed");
        if (err) return lm_err_noobj(err, fname, "%s", why);
        return lm_err_noobj(bad, fname, "another process of local_group passed invalid arguments");
    }
    lm_comm *H = new_hidden(g, hid, W);
    if (!H) return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
    xhdr h = {.n = 0, .info = {g->size, r->size}}, rh;
    void *rpay;
    int remote_failed;
    rc = agree(H, local_leader, &ch, &h, NULL, 0, &rh, &rpay, &remote_failed);
    lm_free(LM_MEM_COMM, rpay);
    /* each side must see the other's group as the other sees itself */
    if (!rc && (rh.info[0] != r->size || rh.info[1] != g->size)) rc = MPI_ERR_GROUP;
    if (!rc) rc = take_agreed(H, local_leader, &ch, rh.mask, &id);
    if (rc) {
        drop_comm(H);
        if (remote_failed) return lm_err_noobj(rc, fname, "the remote group failed (invalid arguments there)");
        return lm_err_noobj(rc, fname,
                            rc == MPI_ERR_GROUP ? "the two sides disagree on the group sizes"
                                                : "the leaders' agreement failed");
    }
    lm_group_retain(r);
    lm_comm *c = new_inter(g, r, id, H, W);
    if (!c) return lm_err_noobj(MPI_ERR_NO_MEM, fname, "out of memory");
    lm_errhandler_retain(errhandler);
    lm_errhandler_release(c->errhandler);
    c->errhandler = errhandler;
    *newintercomm = c->obj.handle;
    return MPI_SUCCESS;
}

/* Leader (local rank 0) to leader over the intercommunicator itself. */
static channel via(lm_comm *p) { return (channel){p, 0, TAG_AGREE, p->context_id + 1}; }

/* The first step of every construction on an existing intercommunicator
 * p: the local group agrees on its members' verdicts on their arguments
 * (local_err) and on an id for a hidden communicator. When some member's
 * arguments were invalid (or the agreement failed) the leader tells the
 * remote group (tell_remote), so that both sides fail instead of one
 * waiting; every member then returns that error class. */
static int begin_on(lm_comm *p, int local_err, uint16_t *hid)
{
    int bad, rc = lm_context_id_allocate_checked(p->local_comm, local_err, hid, &bad);
    if (!rc && !bad) return MPI_SUCCESS;
    if (!rc) rc = bad;
    if (p->local_comm->rank == 0) {
        channel ch = via(p);
        tell_remote(&ch, rc);
    }
    return rc;
}

int lm_intercomm_abstain(lm_comm *p, int err)
{
    uint16_t hid;
    if (p && p->is_inter) begin_on(p, err, &hid);
    return err;
}

lm_comm *lm_intercomm_dup_pending(lm_comm *p)
{
    lm_group_retain(p->group);
    lm_comm *c = lm_comm_new_intra(p->group, LM_CONTEXT_PENDING, p);
    if (!c) {
        lm_group_release(p->group);
        return NULL;
    }
    c->is_inter = 1;
    lm_group_retain(p->remote_group);
    c->remote_group = p->remote_group;
    return c;
}

int lm_intercomm_dup_settle(lm_comm *c, const uint16_t ids[2])
{
    c->local_comm = new_hidden(c->group, ids[1], c);
    if (!c->local_comm) {
        lm_context_id_release(ids[0]);
        return MPI_ERR_NO_MEM;
    }
    c->context_id = ids[0];
    return MPI_SUCCESS;
}

int lm_intercomm_dup(lm_comm *p, lm_comm **out)
{
    uint16_t ids[2];
    int rc = lm_context_id_allocate_inter(p, ids);
    if (rc) return rc;
    lm_comm *c = lm_intercomm_dup_pending(p);
    if (!c) {
        lm_context_id_release(ids[0]);
        lm_context_id_release(ids[1]);
        return MPI_ERR_NO_MEM;
    }
    if ((rc = lm_intercomm_dup_settle(c, ids)) != MPI_SUCCESS) {
        drop_comm(c);
        return rc;
    }
    *out = c;
    return MPI_SUCCESS;
}

typedef struct {
    int key, rank, world;
} member;

static int by_key(const void *a, const void *b)
{
    const member *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The group of the processes of g whose (color, key) entries in tab have
 * color, ordered by key then rank; NULL when there are none (or no memory,
 * told apart by *nomem). */
static lm_group *color_group(const lm_group *g, const int *tab, int color, int *nomem)
{
    int n = 0;
    for (int i = 0; i < g->size; i++) n += tab[2 * i] == color;
    if (!n) return NULL;
    member *m = lm_malloc(LM_MEM_COMM, (size_t)n * sizeof *m);
    if (!m) {
        *nomem = 1;
        return NULL;
    }
    n = 0;
    for (int i = 0; i < g->size; i++)
        if (tab[2 * i] == color) m[n++] = (member){tab[2 * i + 1], i, lm_group_world_rank(g, i)};
    qsort(m, (size_t)n, sizeof *m, by_key);
    int *w = (int *)m; /* reuse the table for the member list */
    for (int i = 0; i < n; i++) w[i] = m[i].world;
    lm_group *r = lm_group_new_list(w, n);
    lm_free(LM_MEM_COMM, m);
    if (!r) *nomem = 1;
    return r;
}

int lm_intercomm_split(lm_comm *p, int color, int key, lm_comm **out)
{
    *out = NULL;
    lm_comm *L = p->local_comm;
    int *tab = lm_malloc(LM_MEM_COMM, (size_t)L->size * 2 * sizeof *tab);
    uint16_t hid = 0, id;
    int rc = begin_on(p, tab ? MPI_SUCCESS : MPI_ERR_NO_MEM, &hid);
    if (rc) {
        lm_free(LM_MEM_COMM, tab);
        return rc;
    }
    int mine[2] = {color, key};
    rc = lm_coll_allgather(mine, sizeof mine, tab, L);
    if (rc) {
        lm_free(LM_MEM_COMM, tab);
        lm_context_id_release(hid);
        return rc;
    }
    channel ch = via(p);
    xhdr h = {.n = L->size}, rh;
    void *rpay;
    int remote_failed;
    rc = agree(L, 0, &ch, &h, tab, sizeof mine, &rh, &rpay, &remote_failed);
    if (!rc && rh.n != p->remote_group->size) rc = MPI_ERR_INTERN;
    if (!rc) rc = take_agreed(L, 0, &ch, rh.mask, &id);
    if (rc) {
        lm_free(LM_MEM_COMM, tab);
        lm_free(LM_MEM_COMM, rpay);
        lm_context_id_release(hid);
        return rc;
    }
    int nomem = 0;
    lm_group *lg = NULL, *rg = NULL;
    if (color != MPI_UNDEFINED) {
        lg = color_group(p->group, tab, color, &nomem);
        rg = color_group(p->remote_group, rpay, color, &nomem);
    }
    lm_free(LM_MEM_COMM, tab);
    lm_free(LM_MEM_COMM, rpay);
    if (!lg || !rg) {
        /* undefined color, or no partner of this color on the other side */
        if (lg) lm_group_release(lg);
        if (rg) lm_group_release(rg);
        lm_context_id_release(hid);
        lm_context_id_release(id);
        return nomem ? MPI_ERR_NO_MEM : MPI_SUCCESS;
    }
    lm_comm *H = new_hidden(lg, hid, L);
    lm_comm *c = H ? new_inter(lg, rg, id, H, p) : NULL;
    if (!H) {
        lm_group_release(rg);
        lm_context_id_release(id);
    }
    lm_group_release(lg);
    if (!c) return MPI_ERR_NO_MEM;
    *out = c;
    return MPI_SUCCESS;
}

int impl_MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    const char *fname = "MPI_Intercomm_merge";
    lm_comm *p = lm_comm_get(intercomm);
    if (!p) return lm_err_comm(intercomm, MPI_ERR_COMM, fname, "invalid communicator");
    if (!p->is_inter) return lm_err_comm(intercomm, MPI_ERR_COMM, fname, "intercomm is not an intercommunicator");
    /* the hidden id of begin_on() is not needed: the merged communicator's
     * id must be free on both sides (take_agreed) */
    uint16_t hid, id;
    int rc = begin_on(p, MPI_SUCCESS, &hid);
    if (rc) return lm_err_comm(intercomm, rc, fname, "another process passed invalid arguments");
    lm_context_id_release(hid);
    channel ch = via(p);
    /* the leader's universe name orders two sides that passed the same
     * high, also when they are two jobs (whose world ranks may be equal) */
    int ljob = 0, lrank = 0;
    lm_boot_proc_name(lm_group_world_rank(p->group, 0), &ljob, &lrank);
    xhdr h = {.n = 0, .info = {high != 0, lrank}, .leader_job = ljob}, rh;
    void *rpay;
    int remote_failed;
    rc = agree(p->local_comm, 0, &ch, &h, NULL, 0, &rh, &rpay, &remote_failed);
    lm_free(LM_MEM_COMM, rpay);
    if (!rc) rc = take_agreed(p->local_comm, 0, &ch, rh.mask, &id);
    if (rc && remote_failed) return remote_error(intercomm, rc, fname);
    if (rc) return lm_err_comm(intercomm, rc, fname, "the leaders' agreement failed");
    /* the side that passed high = false comes first; when both passed the
     * same, the side whose leader has the lower (job, world rank) */
    int first = h.info[0] != rh.info[0]         ? h.info[0] < rh.info[0]
                : h.leader_job != rh.leader_job ? h.leader_job < rh.leader_job
                                                : h.info[1] < rh.info[1];
    const lm_group *a = first ? p->group : p->remote_group, *b = first ? p->remote_group : p->group;
    int *w = lm_malloc(LM_MEM_COMM, ((size_t)a->size + (size_t)b->size) * sizeof *w);
    lm_group *g = NULL;
    if (w) {
        for (int i = 0; i < a->size; i++) w[i] = lm_group_world_rank(a, i);
        for (int i = 0; i < b->size; i++) w[a->size + i] = lm_group_world_rank(b, i);
        g = lm_group_new_list(w, a->size + b->size);
        lm_free(LM_MEM_COMM, w);
    }
    lm_comm *c = g ? lm_comm_new_intra(g, id, p) : NULL;
    if (!c) {
        if (g) lm_group_release(g);
        lm_context_id_release(id);
        return lm_err_comm(intercomm, MPI_ERR_NO_MEM, fname, "out of memory");
    }
    *newintracomm = c->obj.handle;
    return MPI_SUCCESS;
}

static lm_comm *get_inter(MPI_Comm comm, const char *fname, int *rc)
{
    lm_comm *c = lm_comm_get(comm);
    if (!c) *rc = lm_err_comm(comm, MPI_ERR_COMM, fname, "invalid communicator");
    else if (!c->is_inter) *rc = lm_err_comm(comm, MPI_ERR_COMM, fname, "comm is not an intercommunicator");
    else return c;
    return NULL;
}

int impl_MPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    int rc;
    lm_comm *c = get_inter(comm, "MPI_Comm_remote_size", &rc);
    if (!c) return rc;
    *size = c->remote_group->size;
    return MPI_SUCCESS;
}

int impl_MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    int rc;
    lm_comm *c = get_inter(comm, "MPI_Comm_remote_group", &rc);
    if (!c) return rc;
    lm_group *g = lm_group_share(c->remote_group);
    if (!g) return lm_err_comm(comm, MPI_ERR_NO_MEM, "MPI_Comm_remote_group", "out of memory");
    *group = g->obj.handle;
    return MPI_SUCCESS;
}
