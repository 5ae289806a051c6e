/* Dispatch: my own rank -> self, a rank on my node -> shm, a rank on another
 * host -> the network: ofi where libfabric has a provider for network
 * hardware, tcp otherwise (tcp.h says why; LEANMPI_NETWORK=ofi|tcp|auto,
 * and LEANMPI_OFI_PROVIDER, which implies ofi). The network is opened
 * lazily, in jobs across hosts only: at
 * this rank's first message to another host, or when a rank on another host
 * asks for this rank's address (lm_boot_key_wanted, checked by progress), so
 * a rank that talks only within its host never opens a fabric: its memory
 * and start-up are those of a job on one node. The
 * last destination's shm peer
 * is cached so a stream to one peer (the latency-critical case) costs no
 * layout evaluation and no hash lookup per message. */
#include "transport.h"
#include "am_dispatch.h"
#include "boot/boot.h"
#include "cma.h"
#include "ofi.h"
#include "tcp.h"
#include "util/lm_cvar.h"
#include "util/lm_error.h"
#include "self.h"
#include "shm.h"
#include "shm_layout.h"
#include "transport_env.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

lm_am_handler lm_am_handlers[LM_AM_MAX_HANDLERS];

static struct {
    lm_transport_env env;
    int initialized;
    int ofi_on;     /* the network is open (net says which) */
    int net;        /* NET_OFI or NET_TCP */
    int ofi_lazy;   /* a job across hosts whose network is not open yet */
    int ofi_failed; /* opening it failed: T.error says why */
    char error[320];
    int last_world; /* cache: last shm destination */
    lm_shm_peer *last_peer;
} T = {.last_world = -1};

int lm_transport_local_rank(int world_rank)
{
    if (world_rank == T.env.world_rank) return T.env.local_rank;
    return T.env.local_rank_of ? T.env.local_rank_of(world_rank) : -1;
}

int lm_transport_init_env(const lm_transport_env *env)
{
    T.env = *env;
    T.last_world = -1;
    T.last_peer = NULL;
    lm_self_init(env->world_rank);
    lm_shm_config cfg = {env->fastbox_threshold, env->fastbox_max, env->fastbox_peers};
    int rc = lm_shm_init(env->shm_area, env->world_rank, env->local_rank, env->local_size, &cfg);
    if (rc != LM_OK) return rc;
    lm_cma_init(env->cma_enable);
    T.ofi_on = T.ofi_failed = 0;
    T.ofi_lazy = env->multi_node;
    T.error[0] = '\0';
    T.initialized = 1;
    return LM_OK;
}

/* Open the network now (see the top of this file). LM_OK, or LM_EIO with
 * the reason in T.error, said once on stderr: the MPI error the caller gets
 * names only the peer. */
enum { NET_OFI = 1, NET_TCP };

/* Which backend LEANMPI_NETWORK asks for: NET_OFI, NET_TCP, 0 for auto, -1
 * for a value it does not know. */
static int network_wanted(void)
{
    const char *v = getenv("LEANMPI_NETWORK");
    if (!v || !*v || !strcmp(v, "auto")) {
        const char *prov = getenv("LEANMPI_OFI_PROVIDER");
        return prov && *prov ? NET_OFI : 0;
    }
    if (!strcmp(v, "ofi")) return NET_OFI;
    if (!strcmp(v, "tcp")) return NET_TCP;
    return -1;
}

static int open_network(void)
{
    if (T.ofi_on) return LM_OK;
    if (T.ofi_failed || !T.ofi_lazy) return T.ofi_failed ? LM_EIO : LM_EPEER;
    int want = network_wanted(), rc = LM_EIO;
    T.ofi_lazy = 0;
    if (want < 0) {
        snprintf(T.error, sizeof T.error, "LEANMPI_NETWORK=%s: expected ofi, tcp or auto", getenv("LEANMPI_NETWORK"));
    } else if (want != NET_TCP) {
        lm_ofi_config oc = {.world_rank = T.env.world_rank,
                            .job = T.env.job,
                            .proc_id = T.env.proc_id,
                            .put = T.env.kvs_put,
                            .get = T.env.kvs_get,
                            .mr_cache_max = (int)lm_cvar(LM_CVAR_OFI_MR_CACHE),
                            .hardware_only = want == 0};
        rc = lm_ofi_init(&oc);
        if (rc == LM_OK) T.net = NET_OFI;
        else snprintf(T.error, sizeof T.error, "the network transport: %s", lm_ofi_error());
    }
    if (rc != LM_OK && want >= 0 && want != NET_OFI) {
        lm_tcp_config tc = {.world_rank = T.env.world_rank,
                            .job = T.env.job,
                            .proc_id = T.env.proc_id,
                            .put = T.env.kvs_put,
                            .get = T.env.kvs_get};
        rc = lm_tcp_init(&tc);
        if (rc == LM_OK) T.net = NET_TCP;
        else snprintf(T.error, sizeof T.error, "the network transport (tcp): %s", lm_tcp_error());
    }
    if (rc != LM_OK) {
        T.ofi_failed = 1;
        fprintf(stderr, "LeanMPI: rank %d: cannot reach ranks on other hosts: %s\n", T.env.world_rank, T.error);
        return LM_EIO;
    }
    T.error[0] = '\0';
    T.ofi_on = 1;
    return LM_OK;
}

void lm_transport_network_expected(void)
{
    if (T.initialized && !T.ofi_on && !T.ofi_failed) T.ofi_lazy = 1;
}

const char *lm_transport_error(void) { return T.error[0] ? T.error : "the shared-memory area is not usable"; }

const char *lm_transport_network(void)
{
    if (!T.ofi_on) return NULL;
    return T.net == NET_TCP ? "tcp" : lm_ofi_provider();
}

static pid_t boot_pid_of(int world_rank) { return (pid_t)lm_boot_pid_of(world_rank); }

/* Fault injection (LEANMPI_FAULT_SEND_AFTER): sends that may still go
 * through before every later one fails with LM_EIO; -1: off. It lets the
 * tests prove that a broken transport gives the program an MPI error class,
 * or ends the job, and never a hang. */
static long fault_sends_left = -1;

int lm_transport_init(void)
{
    const lm_boot_info *b = lm_boot();
    if (!b || !b->segment) return LM_EINVAL;
    lm_node_segment *seg = b->segment;
    void *area = lm_node_segment_at(seg, seg->transport_offset);
    if (lm_shm_area_check(area, b->local_size) != 0) {
        /* A segment made without the launcher (singleton) may come
         * unformatted; nobody else maps it, so formatting here is safe. */
        if (b->local_size != 1 || seg->transport_size < lm_shm_area_size(1)) return LM_EINVAL;
        lm_shm_area_format(area, 1);
    }
    lm_transport_env env = {
        .world_rank = b->world_rank,
        .local_rank = b->local_rank,
        .local_size = b->local_size,
        .shm_area = area,
        .local_rank_of = lm_boot_local_rank_of, /* -1 off-node */
        .pid_of = boot_pid_of,
        .fastbox_threshold = (int)lm_cvar(LM_CVAR_FASTBOX_THRESHOLD),
        .fastbox_max = (int)lm_cvar(LM_CVAR_FASTBOX_MAX),
        .fastbox_peers = (int)lm_cvar(LM_CVAR_FASTBOX_PEERS),
        .cma_enable = (int)lm_cvar(LM_CVAR_CMA_ENABLE),
        .space_first = b->space_first,
        .space_count = b->space_count,
        .multi_node = seg->layout.node_count > 1,
        .kvs_put = lm_boot_put,
        .kvs_get = lm_boot_get,
        .key_wanted = lm_boot_key_wanted,
        .job = lm_boot_job(),
        .proc_id = lm_boot_proc_id,
    };
    long fault_after = lm_cvar(LM_CVAR_FAULT_SEND_AFTER);
    fault_sends_left = fault_after > 0 ? fault_after : -1;
    int rc = lm_transport_init_env(&env);
    /* Under another launcher's server no one asks a rank for its address
     * on demand: a job across hosts opens its network now and publishes
     * the address (every rank alike: under PMI that is a fence). */
    if (rc == LM_OK && env.multi_node && !lm_boot_publishes_on_demand()) {
        rc = open_network();
        if (rc == LM_OK && lm_boot_publish() != 0) {
            snprintf(T.error, sizeof T.error, "the launcher's server did not take this rank's network address");
            rc = LM_EIO;
        }
    }
    return rc;
}

void lm_transport_finalize(void)
{
    if (!T.initialized) return;
    if (T.ofi_on && T.net == NET_TCP) lm_tcp_finalize();
    else if (T.ofi_on) lm_ofi_finalize();
    T.ofi_on = T.ofi_lazy = T.ofi_failed = T.net = 0;
    lm_self_finalize();
    lm_shm_finalize();
    T.last_world = -1;
    T.last_peer = NULL;
    T.initialized = 0;
}

void lm_transport_register_am(uint8_t am_id, lm_am_handler handler)
{
    if (am_id < LM_AM_MAX_HANDLERS) lm_am_handlers[am_id] = handler;
}

static lm_shm_peer *shm_peer_of(int dst)
{
    int local = lm_transport_local_rank(dst);
    if (local < 0) return NULL;
    lm_shm_peer *p = lm_shm_peer_get(local);
    if (p) {
        T.last_world = dst;
        T.last_peer = p;
    }
    return p;
}

int lm_transport_am_sendv(int dst, const void *hdr, size_t hdr_len, const void *p0, size_t l0, const void *p1,
                          size_t l1)
{
    if (__builtin_expect(fault_sends_left >= 0, 0)) {
        if (fault_sends_left == 0) return LM_EIO;
        fault_sends_left--;
    }
    if (dst == T.last_world) return lm_shm_send(T.last_peer, hdr, hdr_len, p0, l0, p1, l1);
    if (!T.initialized || dst < 0) return LM_EINVAL;
    if (dst == T.env.world_rank) {
        if (l0 + l1 > lm_shm_max_payload()) return LM_EINVAL;
        return lm_self_send(hdr, hdr_len, p0, l0, p1, l1);
    }
    if (lm_transport_local_rank(dst) < 0) {
        int rc = open_network();
        if (rc != LM_OK) return rc;
        return T.net == NET_TCP ? lm_tcp_send(dst, hdr, hdr_len, p0, l0, p1, l1)
                                : lm_ofi_send(dst, hdr, hdr_len, p0, l0, p1, l1);
    }
    lm_shm_peer *p = shm_peer_of(dst);
    if (!p) return LM_EAGAIN; /* out of memory for the peer state: may pass */
    return lm_shm_send(p, hdr, hdr_len, p0, l0, p1, l1);
}

size_t lm_transport_max_payload(int dst)
{
    /* Self could take more, but one limit for every local peer keeps the
     * protocols' chunking identical whoever the peer is. */
    if ((T.ofi_on || T.ofi_lazy) && dst != T.env.world_rank && lm_transport_local_rank(dst) < 0) {
        /* the limit depends on what the network offers: asked only before
         * sending to that peer, so this is when it opens anyway */
        if (open_network() == LM_OK) return T.net == NET_TCP ? lm_tcp_max_payload() : lm_ofi_max_payload();
    }
    return lm_shm_max_payload();
}

/* A single copy between this process and a peer's address space, either
 * way: memcpy for oneself, cma for a peer on this node. */
int lm_transport_same_space(int world_rank)
{
    return (unsigned)(world_rank - T.env.space_first) < (unsigned)T.env.space_count;
}

static int single_copy(int peer, void *local, uint64_t remote_addr, size_t len, int write)
{
    if (!T.initialized) return LM_EINVAL;
    /* this process, or a rank in its address space: the address is valid here */
    if (peer == T.env.world_rank || lm_transport_same_space(peer)) {
        void *remote = (void *)(uintptr_t)remote_addr;
        memcpy(write ? remote : local, write ? local : remote, len);
        lm_self_count_copy(len);
        return LM_OK;
    }
    /* Another host: no single copy (yet); the caller streams through AMs. */
    if (lm_transport_local_rank(peer) < 0) return T.ofi_on || T.ofi_lazy ? LM_ENOTSUP : LM_EPEER;
    pid_t pid = T.env.pid_of ? T.env.pid_of(peer) : 0;
    if (pid <= 0) return LM_ENOTSUP;
    return write ? lm_cma_write(pid, remote_addr, local, len) : lm_cma_read(pid, local, remote_addr, len);
}

int lm_transport_rget(int src, void *local, uint64_t remote_addr, size_t len)
{
    return single_copy(src, local, remote_addr, len, 0);
}

int lm_transport_rput(int dst, uint64_t remote_addr, const void *local, size_t len)
{
    return single_copy(dst, (void *)local, remote_addr, len, 1);
}

int lm_transport_expose(int dst, const void *buf, size_t len, uint64_t *addr, uint64_t *rkey, void **handle)
{
    if (!T.initialized || dst == T.env.world_rank || lm_transport_local_rank(dst) >= 0) return LM_ENOTSUP;
    if (open_network() != LM_OK) return LM_ENOTSUP;
    if (T.net == NET_TCP) return lm_tcp_expose(buf, len, addr, rkey, handle);
    return lm_ofi_expose(buf, len, addr, rkey, handle);
}

void lm_transport_unexpose(void *handle)
{
    if (!handle) return;
    if (T.net == NET_TCP) lm_tcp_unexpose(handle);
    else lm_ofi_unexpose(handle);
}

int lm_transport_rget_async(int src, void *local, uint64_t addr, uint64_t rkey, size_t len, lm_rget_done done,
                            void *arg)
{
    if (!T.ofi_on || src == T.env.world_rank || lm_transport_local_rank(src) >= 0) return LM_ENOTSUP;
    if (T.net == NET_TCP) return lm_tcp_rget_async(src, local, addr, rkey, len, done, arg);
    return lm_ofi_rget_async(src, local, addr, rkey, len, done, arg);
}

int lm_transport_expose_rma(void *buf, size_t len, uint64_t *addr, uint64_t *rkey, void **handle)
{
    if (!T.initialized || open_network() != LM_OK) return LM_ENOTSUP;
    if (T.net == NET_TCP) return lm_tcp_expose_rma(buf, len, addr, rkey, handle);
    return lm_ofi_expose_rma(buf, len, addr, rkey, handle);
}

void lm_transport_unexpose_rma(void *handle)
{
    if (!handle || !T.ofi_on) return;
    if (T.net == NET_TCP) lm_tcp_unexpose(handle);
    else lm_ofi_unexpose_rma(handle);
}

int lm_transport_rput_async(int dst, const void *local, uint64_t addr, uint64_t rkey, size_t len, lm_rget_done done,
                            void *arg)
{
    if (!T.ofi_on || dst == T.env.world_rank || lm_transport_local_rank(dst) >= 0) return LM_ENOTSUP;
    if (T.net == NET_TCP) return lm_tcp_rput_async(dst, local, addr, rkey, len, done, arg);
    return lm_ofi_rput_async(dst, local, addr, rkey, len, done, arg);
}

const char *lm_transport_rget_mechanism(int world_rank)
{
    if (world_rank == T.env.world_rank || lm_transport_same_space(world_rank)) return "memcpy";
    if (lm_transport_local_rank(world_rank) >= 0 && lm_cma_available()) return "cma";
    return "none";
}

double lm_transport_single_copy_cost(void) { return lm_cma_cost_ratio(); }

int lm_transport_pipes(size_t *bytes)
{
    if (!T.initialized) {
        if (bytes) *bytes = 0;
        return 0;
    }
    return lm_shm_pipes(bytes);
}

void lm_transport_count_pipe(size_t sent, size_t received) { lm_shm_count_pipe(sent, received); }

void *lm_transport_pipe(int world_rank, int index)
{
    if (!T.initialized) return NULL;
    return lm_shm_pipe(lm_transport_local_rank(world_rank), index);
}

int lm_transport_progress(void)
{
    /* Fast boxes first (inside shm progress), then the shm queue, then self. */
    int n = lm_shm_progress() + lm_self_progress();
    if (T.ofi_on) n += T.net == NET_TCP ? lm_tcp_progress() : lm_ofi_progress();
    else if (__builtin_expect(T.ofi_lazy, 0) && T.env.key_wanted && T.env.key_wanted() && open_network() != LM_OK)
        lm_fatal("rank %d: a rank on another host waits for this one, but %s", T.env.world_rank, T.error);
    return n;
}

static void add(lm_transport_counters *a, const lm_transport_counters *b)
{
    a->am_sent += b->am_sent;
    a->am_bytes_sent += b->am_bytes_sent;
    a->am_received += b->am_received;
    a->am_bytes_received += b->am_bytes_received;
    a->rget_ops += b->rget_ops;
    a->rget_bytes += b->rget_bytes;
    a->pipe_bytes_sent += b->pipe_bytes_sent;
    a->pipe_bytes_received += b->pipe_bytes_received;
    a->fastbox_sent += b->fastbox_sent;
    a->queue_sent += b->queue_sent;
    a->send_eagain += b->send_eagain;
    a->mr_registrations += b->mr_registrations;
    a->mr_cache_hits += b->mr_cache_hits;
    a->rput_ops += b->rput_ops;
    a->rput_bytes += b->rput_bytes;
}

void lm_transport_get_counters(const char *backend, lm_transport_counters *out)
{
    lm_transport_counters c;
    memset(out, 0, sizeof *out);
    int all = !backend || !*backend || strcmp(backend, "all") == 0;
    if (all || strcmp(backend, "self") == 0) {
        lm_self_counters(&c);
        add(out, &c);
    }
    if (all || strcmp(backend, "shm") == 0) {
        lm_shm_counters(&c);
        add(out, &c);
    }
    if (all || strcmp(backend, "cma") == 0) {
        lm_cma_counters(&c);
        add(out, &c);
    }
    if (all || strcmp(backend, "ofi") == 0) {
        lm_ofi_counters(&c);
        add(out, &c);
    }
    if (all || strcmp(backend, "tcp") == 0) {
        lm_tcp_counters(&c);
        add(out, &c);
    }
}
