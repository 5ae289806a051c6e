/* Network backend on libfabric (see ofi.h). Wire format of one message, in
 * one bounce buffer or one inject:
 *
 *   [0, 16)   prefix: sender's world rank and job, header length, sequence number
 *   [16, 80)  the AM header (LM_AM_HDR_MAX bytes reserved, hdr_len used)
 *   [80, ..)  the payload
 *
 * The payload sits at a fixed, 16-byte aligned offset, as in shm cells, so
 * a handler may read structures from it in place; the unused header bytes
 * cost up to 64 bytes a message on the wire, nothing next to a network
 * round trip. The sender's rank travels in the message: the receiver needs
 * no address-vector entry (and no reverse lookup) for a peer that writes to
 * it before it ever writes back.
 *
 * Order: the endpoint is asked for send-after-send order, which providers
 * give for the matching of messages, but a message the provider moves by
 * its own rendezvous (ofi_rxm: above 16 KiB) may complete after a later,
 * smaller one. The sequence number puts them back in order: an early one
 * waits, copied, until those before it have been delivered. */
#include "ofi.h"
#include "am_dispatch.h"
#include "mr_cache.h"
#include "util/lm_error.h"
#include "util/lm_hashmap.h"
#include "util/lm_mem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OFI_PREFIX 16u
#define OFI_PAYLOAD_AT (OFI_PREFIX + LM_AM_HDR_MAX)
/* Message buffers. With the provider's RMA read, a message above the eager
 * limit is read in place (expose / rget_async), so a buffer needs to hold
 * an eager message only: 16 KiB of payload. Without it, large messages
 * stream through messages, and large buffers let them go as few large
 * provider messages (which ofi_rxm moves by its own rendezvous): between
 * two virtual hosts a 1 MiB ping-pong took 2.0 ms in 16 KiB pieces, 0.74 ms
 * in 64 KiB and 0.45 ms in 256 KiB ones. */
#define OFI_BUF_EAGER (OFI_PAYLOAD_AT + 16u * 1024u)
#define OFI_BUF_STREAM (256u * 1024u)
#define OFI_SEND_BUFS 8 /* messages in flight that did not fit an inject */
#define OFI_RECV_BUFS 8 /* receives kept posted */
#define OFI_ADDR_KEY "ofi"
#define OFI_ADDR_MAX 256         /* LM_KVS_VALUE_MAX */
#define OFI_MISS_RETRY_NS 200000 /* ask the store again for a missing address after 0.2 ms */

typedef struct ofi_prefix {
    int32_t src; /* world rank in its job */
    uint16_t hdr_len;
    uint16_t job; /* the sender's job in the universe (boot.h) */
    uint32_t seq; /* per sender-receiver pair, from 0 */
    uint32_t reserved;
} ofi_prefix;
_Static_assert(sizeof(ofi_prefix) == OFI_PREFIX, "prefix size");

#if LM_HAVE_OFI
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <dirent.h>
#include <dlfcn.h>
#include <arpa/inet.h>
#include <netinet/in.h>

/* libfabric is loaded when the network is opened, not linked: linking it
 * maps its providers' libraries into every process, and one of them
 * (libinfinipath, psm's) sleeps about 200 ms in its constructor, so every
 * rank of every job, one node or not, paid 0.2 s at start-up and about
 * 2 MB of RSS (a 2-rank MPI_Init+MPI_Finalize job: 205 ms against 3 ms).
 * The five entry points this file calls go through this table; the rest of
 * the API is inline in the headers (calls through the objects' ops).
 * LEANMPI_OFI_LIBRARY names another libfabric (default libfabric.so.1). */
static struct {
    void *lib;
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *, struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
} F;
#define fi_getinfo F.getinfo
#define fi_freeinfo F.freeinfo
#define fi_dupinfo F.dupinfo
#define fi_fabric F.fabric
#define fi_strerror F.strerror

/* 0, or -1 with the reason in err. */
static int load_fabric(char *err, size_t cap)
{
    if (F.lib) return 0;
    const char *name = getenv("LEANMPI_OFI_LIBRARY");
    if (!name || !*name) name = "libfabric.so.1";
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) return snprintf(err, cap, "cannot load %s: %s", name, dlerror()), -1;
    struct {
        const char *sym;
        void **fn;
    } syms[] = {{"fi_getinfo", (void **)&F.getinfo},
                {"fi_freeinfo", (void **)&F.freeinfo},
                {"fi_dupinfo", (void **)&F.dupinfo},
                {"fi_fabric", (void **)&F.fabric},
                {"fi_strerror", (void **)&F.strerror}};
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (!(*syms[i].fn = dlsym(lib, syms[i].sym))) {
            snprintf(err, cap, "%s has no %s", name, syms[i].sym);
            dlclose(lib);
            return -1;
        }
    F.lib = lib; /* stays loaded: providers keep threads and handlers */
    return 0;
}

/* A message that completed before an earlier one of its sender. */
typedef struct ofi_stashed {
    struct ofi_stashed *next; /* by sequence number */
    uint32_t seq;
    size_t len;
    _Alignas(16) unsigned char data[];
} ofi_stashed;

/* What this rank keeps per peer it talked to, either way (R1). */
typedef struct ofi_peer {
    int has_addr;
    fi_addr_t addr;
    uint32_t send_seq; /* the next message to it */
    uint32_t recv_seq; /* the next message from it to deliver */
    ofi_stashed *stash;
} ofi_peer;

/* What a completion's op_context points to: each operation's record starts
 * with the provider's context and the kind of operation. */
enum ofi_op_kind { OP_SEND = 1, OP_RECV, OP_READ, OP_WRITE };
typedef struct ofi_op {
    struct fi_context2 ctx;
    int kind;
} ofi_op;

typedef struct ofi_buf {
    ofi_op op;            /* OP_SEND or OP_RECV */
    struct ofi_buf *next; /* free list (sends) */
    int dst;              /* sends: the peer, for error messages */
    unsigned char *data;  /* O.buf_size bytes in the arena, 64-byte aligned */
} ofi_buf;

/* A memory registration for the network's RMA: exposed send buffers and,
 * where the provider needs local registration, the buffers reads land in.
 * All live ones are listed, so finalize closes what a lost peer never read. */
typedef struct ofi_mr {
    struct fid_mr *mr;
    struct ofi_mr *prev, *next;
} ofi_mr;

/* A read of a peer's exposed memory (rendezvous by RMA read, one-sided
 * Get) or a write into it (one-sided Put). */
typedef struct ofi_rma {
    ofi_op op; /* OP_READ or OP_WRITE */
    int peer;
    ofi_mr *local; /* the local buffer's registration, where the provider needs one */
    lm_rget_done done;
    void *arg;
} ofi_rma;

static struct {
    int on;
    lm_ofi_config cfg;
    struct fi_info *info; /* the chosen one (a copy) */
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_cq *cq;
    struct fid_av *av;
    struct fid_ep *ep;
    struct fid_mr *mr; /* the arena, when the provider needs local registration */
    void *mr_desc;
    ofi_buf *pool;     /* OFI_SEND_BUFS sends, then OFI_RECV_BUFS receives */
    void *arena;       /* their data (allocated), */
    size_t buf_size;   /* each buffer's bytes: OFI_BUF_EAGER with RMA, else OFI_BUF_STREAM */
    int rma;           /* the endpoint reads peers' memory (FI_RMA) */
    ofi_mr *mrs;       /* live registrations */
    lm_mr_cache mrc;   /* exposed send buffers (off where registration pins) */
    uint64_t next_key; /* requested keys, where the provider does not choose them */
    ofi_buf *free_sends;
    int sends_in_flight;
    size_t inject_max;
    lm_hashmap peers; /* world rank -> ofi_peer */
    int miss_rank;    /* the last peer whose address was not there yet, and when */
    struct timespec miss_at;
    int finalizing;
    char error[256];
    lm_transport_counters cnt;
} O = {.miss_rank = -1};

static void set_error(const char *what, int rc)
{
    snprintf(O.error, sizeof O.error, "%s: %s", what, fi_strerror(rc < 0 ? -rc : rc));
}

const char *lm_ofi_error(void) { return O.error; }
const char *lm_ofi_provider(void) { return O.on ? O.info->fabric_attr->prov_name : NULL; }
size_t lm_ofi_max_payload(void) { return O.buf_size - OFI_PAYLOAD_AT; }

static int is_loopback(const struct fi_info *i)
{
    if (!i->src_addr) return 0;
    if (i->addr_format == FI_SOCKADDR_IN) {
        const struct sockaddr_in *a = i->src_addr;
        return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    }
    if (i->addr_format == FI_SOCKADDR_IN6) {
        const struct sockaddr_in6 *a = i->src_addr;
        return IN6_IS_ADDR_LOOPBACK(&a->sin6_addr) || IN6_IS_ADDR_LINKLOCAL(&a->sin6_addr);
    }
    return 0;
}

/* Providers in the order they are taken when several offer what the
 * transport needs (LEANMPI_OFI_PROVIDER names one instead): the hardware
 * ones first, then tcp with the ofi_rxm layer, then "net", libfabric's
 * native reliable-datagram provider on TCP. net is faster and leaner
 * (between two virtual hosts an 8-byte latency of 5.9-7.0 us against
 * 8.1-9.6, the same 1 MiB bandwidth within noise, a rank that had exchanged
 * messages of every protocol held 6 MiB instead of 41) but libfabric 1.17's
 * net broke connections under load: with 2 busy cores, a job of 3 hosts
 * whose ranks each spawned 3 processes ended with "Broken pipe" on a send
 * to a spawned process in 2 runs of 23, against none of 25 with
 * tcp;ofi_rxm (mpi.hosts.dpm_spawn.h3x1). */
static const char *const provider_preference[] = {"cxi", "efa", "psm3", "verbs;ofi_rxm", "tcp;ofi_rxm", "net"};
#define HARDWARE_PROVIDERS 4 /* the first ones above */

/* The first interface that other hosts can reach (IPv4 before IPv6 for the
 * socket providers), else the first of all: ranks whose hosts are names on
 * one machine reach each other on the loopback interface as well. Among
 * providers, the preference above; a provider not in it after those. */
static struct fi_info *first_reachable(struct fi_info *list, const char *prov)
{
    for (struct fi_info *i = list; i; i = i->next)
        if ((!prov || !strcmp(i->fabric_attr->prov_name, prov)) && !is_loopback(i) && i->addr_format != FI_SOCKADDR_IN6)
            return i;
    for (struct fi_info *i = list; i; i = i->next)
        if ((!prov || !strcmp(i->fabric_attr->prov_name, prov)) && !is_loopback(i)) return i;
    for (struct fi_info *i = list; prov && i; i = i->next)
        if (!strcmp(i->fabric_attr->prov_name, prov)) return i;
    return prov ? NULL : list;
}

static struct fi_info *choose(struct fi_info *list, int hardware_only)
{
    size_t n = hardware_only ? HARDWARE_PROVIDERS : sizeof provider_preference / sizeof provider_preference[0];
    for (size_t k = 0; k < n; k++) {
        struct fi_info *i = first_reachable(list, provider_preference[k]);
        if (i) return i;
    }
    return hardware_only ? NULL : first_reachable(list, NULL);
}

static int post_recv(ofi_buf *b)
{
    for (;;) {
        ssize_t rc = fi_recv(O.ep, b->data, O.buf_size, O.mr_desc, FI_ADDR_UNSPEC, &b->op.ctx);
        if (rc == 0) return LM_OK;
        if (rc != -FI_EAGAIN) {
            set_error("fi_recv", (int)rc);
            return LM_EIO;
        }
        fi_cq_read(O.cq, NULL, 0); /* let the provider progress */
    }
}

static int open_endpoint(void)
{
    int rc;
    if ((rc = fi_fabric(O.info->fabric_attr, &O.fabric, NULL))) return set_error("fi_fabric", rc), LM_EIO;
    if ((rc = fi_domain(O.fabric, O.info, &O.domain, NULL))) return set_error("fi_domain", rc), LM_EIO;
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_MSG, .size = 4 * (OFI_SEND_BUFS + OFI_RECV_BUFS)};
    if ((rc = fi_cq_open(O.domain, &cqa, &O.cq, NULL))) return set_error("fi_cq_open", rc), LM_EIO;
    struct fi_av_attr ava = {.type = FI_AV_TABLE};
    if ((rc = fi_av_open(O.domain, &ava, &O.av, NULL))) return set_error("fi_av_open", rc), LM_EIO;
    if ((rc = fi_endpoint(O.domain, O.info, &O.ep, NULL))) return set_error("fi_endpoint", rc), LM_EIO;
    if ((rc = fi_ep_bind(O.ep, &O.cq->fid, FI_TRANSMIT | FI_RECV))) return set_error("fi_ep_bind cq", rc), LM_EIO;
    if ((rc = fi_ep_bind(O.ep, &O.av->fid, 0))) return set_error("fi_ep_bind av", rc), LM_EIO;
    if ((rc = fi_enable(O.ep))) return set_error("fi_enable", rc), LM_EIO;
    size_t nbufs = OFI_SEND_BUFS + OFI_RECV_BUFS;
    O.buf_size = O.rma ? OFI_BUF_EAGER : OFI_BUF_STREAM;
    O.pool = lm_calloc(LM_MEM_TRANSPORT, nbufs, sizeof *O.pool);
    O.arena = lm_malloc(LM_MEM_TRANSPORT, nbufs * O.buf_size + 64);
    if (!O.pool || !O.arena) return snprintf(O.error, sizeof O.error, "no memory for the message buffers"), LM_ENOMEM;
    unsigned char *base = (unsigned char *)(((uintptr_t)O.arena + 63) & ~(uintptr_t)63);
    for (size_t i = 0; i < nbufs; i++) O.pool[i].data = base + i * O.buf_size;
    if (O.info->domain_attr->mr_mode & FI_MR_LOCAL) {
        rc = fi_mr_reg(O.domain, base, nbufs * O.buf_size, FI_SEND | FI_RECV, 0, 0, 0, &O.mr, NULL);
        if (rc) return set_error("fi_mr_reg", rc), LM_EIO;
        O.mr_desc = fi_mr_desc(O.mr);
    }
    O.free_sends = NULL;
    for (int i = OFI_SEND_BUFS - 1; i >= 0; i--) {
        O.pool[i].op.kind = OP_SEND;
        O.pool[i].next = O.free_sends;
        O.free_sends = &O.pool[i];
    }
    for (int i = OFI_SEND_BUFS; i < (int)nbufs; i++) {
        O.pool[i].op.kind = OP_RECV;
        if ((rc = post_recv(&O.pool[i])) != LM_OK) return rc;
    }
    return LM_OK;
}

static void close_all(void)
{
    if (O.mrc.drop) lm_mr_cache_clear(&O.mrc);
    while (O.mrs) {
        ofi_mr *m = O.mrs;
        O.mrs = m->next;
        fi_close(&m->mr->fid);
        lm_free(LM_MEM_TRANSPORT, m);
    }
    if (O.ep) fi_close(&O.ep->fid);
    if (O.mr) fi_close(&O.mr->fid);
    if (O.av) fi_close(&O.av->fid);
    if (O.cq) fi_close(&O.cq->fid);
    if (O.domain) fi_close(&O.domain->fid);
    if (O.fabric) fi_close(&O.fabric->fid);
    if (O.info) fi_freeinfo(O.info);
    lm_free(LM_MEM_TRANSPORT, O.pool);
    lm_free(LM_MEM_TRANSPORT, O.arena);
    O.arena = NULL;
    for (size_t i = 0; i < O.peers.capacity; i++) {
        if (O.peers.slots[i].key == LM_HASHMAP_EMPTY) continue;
        ofi_peer *p = O.peers.slots[i].value;
        while (p->stash) {
            ofi_stashed *m = p->stash;
            p->stash = m->next;
            lm_free(LM_MEM_TRANSPORT, m);
        }
        lm_free(LM_MEM_PEER_TABLE, p);
    }
    lm_hashmap_destroy(&O.peers);
    O.ep = NULL;
    O.mr = NULL;
    O.mr_desc = NULL;
    O.av = NULL;
    O.cq = NULL;
    O.domain = NULL;
    O.fabric = NULL;
    O.info = NULL;
    O.pool = NULL;
    O.free_sends = NULL;
    O.on = 0;
}

/* Provider settings that keep a rank's memory small, unless the user set
 * them: ofi_rxm posts MSG_RX_SIZE bounce buffers of 16 KiB on each
 * connection and sizes its pools by both depths (128 each by default: about
 * 70 MiB resident after init; 16 each: about 19 MiB); the tcp provider's
 * read-ahead buffer made a flood of 20000 unexpected 1 KiB messages cost
 * 175 MiB instead of 25 (with 256 KiB receives posted), for no latency or
 * bandwidth measurably gained between two virtual hosts. */
static const struct {
    const char *name, *value;
} provider_defaults[] = {
    {"FI_OFI_RXM_MSG_TX_SIZE", "16"},
    {"FI_OFI_RXM_MSG_RX_SIZE", "16"},
    {"FI_TCP_PREFETCH_RBUF_SIZE", "0"},
};

static int registration_names_addresses_only(void);
static void drop_cached(void *reg);

/* Whether this node has a device one of the hardware providers drives:
 * an RDMA device (verbs, efa; psm3 runs on verbs devices) or a Slingshot
 * NIC (cxi). Looked at before the provider scan, which made a job of 2 x 2
 * ranks on this machine take 0.29-0.34 s instead of 0.21 where it found
 * nothing to take. */
static int network_hardware_present(void)
{
    static const char *const classes[] = {"/sys/class/infiniband", "/sys/class/cxi"};
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        DIR *d = opendir(classes[i]);
        if (!d) continue;
        struct dirent *e;
        int found = 0;
        while (!found && (e = readdir(d))) found = e->d_name[0] != '.';
        closedir(d);
        if (found) return 1;
    }
    return 0;
}

int lm_ofi_init(const lm_ofi_config *cfg)
{
    if (cfg->hardware_only && !network_hardware_present()) {
        snprintf(O.error, sizeof O.error, "no network hardware for libfabric on this node");
        return LM_ENOTSUP;
    }
    for (size_t i = 0; i < sizeof provider_defaults / sizeof provider_defaults[0]; i++)
        setenv(provider_defaults[i].name, provider_defaults[i].value, 0);
    O.cfg = *cfg;
    O.error[0] = '\0';
    if (load_fabric(O.error, sizeof O.error) != 0) return LM_ENOTSUP;
    O.miss_rank = -1;
    O.sends_in_flight = 0;
    O.finalizing = 0;
    memset(&O.cnt, 0, sizeof O.cnt);
    lm_hashmap_init(&O.peers, LM_MEM_PEER_TABLE);
    struct fi_info *hints = fi_dupinfo(NULL); /* fi_allocinfo(), through the table */
    if (!hints) return snprintf(O.error, sizeof O.error, "fi_dupinfo(NULL) failed"), LM_ENOMEM;
    hints->caps = FI_MSG | FI_RMA; /* without RMA if no provider offers it: see below */
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->ep_attr->type = FI_EP_RDM;
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    hints->domain_attr->threading = FI_THREAD_DOMAIN; /* the MPI layer serializes its calls */
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    const char *prov = getenv("LEANMPI_OFI_PROVIDER");
    if (prov && *prov) hints->fabric_attr->prov_name = strdup(prov);
    struct fi_info *list = NULL;
    int rc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &list);
    O.rma = rc == 0 && list;
    if (!O.rma) { /* large messages then stream through messages */
        hints->caps = FI_MSG;
        rc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &list);
    }
    fi_freeinfo(hints);
    if (rc || !list) {
        snprintf(O.error, sizeof O.error, "no libfabric provider offers reliable ordered messages%s%s%s: %s",
                 prov && *prov ? " (LEANMPI_OFI_PROVIDER=" : "", prov && *prov ? prov : "", prov && *prov ? ")" : "",
                 fi_strerror(-rc));
        return LM_EIO;
    }
    struct fi_info *chosen = choose(list, O.cfg.hardware_only);
    if (!chosen) {
        fi_freeinfo(list);
        snprintf(O.error, sizeof O.error, "no libfabric provider for network hardware");
        return LM_ENOTSUP;
    }
    O.info = fi_dupinfo(chosen);
    fi_freeinfo(list);
    if (!O.info) return snprintf(O.error, sizeof O.error, "fi_dupinfo failed"), LM_ENOMEM;
    O.inject_max = O.info->tx_attr->inject_size;
    lm_mr_cache_init(&O.mrc, registration_names_addresses_only() ? O.cfg.mr_cache_max : 0, drop_cached);
    rc = open_endpoint();
    if (rc == LM_OK) {
        char addr[OFI_ADDR_MAX];
        size_t alen = sizeof addr;
        int grc = fi_getname(&O.ep->fid, addr, &alen);
        if (grc) {
            set_error("fi_getname", grc);
            rc = LM_EIO;
        } else if (!O.cfg.put || O.cfg.put(OFI_ADDR_KEY, addr, alen) != 0) {
            snprintf(O.error, sizeof O.error, "cannot publish the endpoint's address");
            rc = LM_EIO;
        }
    }
    if (rc != LM_OK) {
        close_all();
        return rc;
    }
    O.on = 1;
    return LM_OK;
}

static int64_t ns_since(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)(now.tv_sec - t->tv_sec) * 1000000000 + (now.tv_nsec - t->tv_nsec);
}

static ofi_peer *peer_of(int rank)
{
    ofi_peer *p = lm_hashmap_get(&O.peers, rank);
    if (p) return p;
    p = lm_calloc(LM_MEM_PEER_TABLE, 1, sizeof *p);
    if (p && lm_hashmap_put(&O.peers, rank, p) != 0) {
        lm_free(LM_MEM_PEER_TABLE, p);
        p = NULL;
    }
    return p;
}

/* The peer, with its address inserted on first contact. LM_EAGAIN while
 * the peer has not published its address (it is still starting). */
static int peer_to(int dst, ofi_peer **out)
{
    ofi_peer *p = peer_of(dst);
    if (!p) return LM_EAGAIN;
    *out = p;
    if (p->has_addr) return LM_OK;
    if (dst == O.miss_rank && ns_since(&O.miss_at) < OFI_MISS_RETRY_NS) return LM_EAGAIN;
    char addr[OFI_ADDR_MAX];
    long n = O.cfg.get ? O.cfg.get(dst, OFI_ADDR_KEY, addr, sizeof addr) : -ENOENT;
    if (n == -ENOENT) {
        O.miss_rank = dst;
        clock_gettime(CLOCK_MONOTONIC, &O.miss_at);
        return LM_EAGAIN;
    }
    if (n <= 0 || n > (long)sizeof addr) return LM_EPEER;
    if (fi_av_insert(O.av, addr, 1, &p->addr, 0, NULL) != 1) return LM_EIO;
    p->has_addr = 1;
    if (O.miss_rank == dst) O.miss_rank = -1;
    return LM_OK;
}

static size_t pack(unsigned char *m, uint32_t seq, const void *hdr, size_t hdr_len, const void *p0, size_t l0,
                   const void *p1, size_t l1)
{
    ofi_prefix pre = {.src = O.cfg.world_rank, .hdr_len = (uint16_t)hdr_len, .job = (uint16_t)O.cfg.job, .seq = seq};
    memcpy(m, &pre, sizeof pre);
    memcpy(m + OFI_PREFIX, hdr, hdr_len);
    if (l0) memcpy(m + OFI_PAYLOAD_AT, p0, l0);
    if (l1) memcpy(m + OFI_PAYLOAD_AT + l0, p1, l1);
    return OFI_PAYLOAD_AT + l0 + l1;
}

int lm_ofi_send(int dst, const void *hdr, size_t hdr_len, const void *p0, size_t l0, const void *p1, size_t l1)
{
    if (!O.on) return LM_EPEER;
    if (hdr_len == 0 || hdr_len > LM_AM_HDR_MAX || l0 + l1 > O.buf_size - OFI_PAYLOAD_AT) return LM_EINVAL;
    ofi_peer *peer;
    int rc = peer_to(dst, &peer);
    if (rc != LM_OK) return rc;
    fi_addr_t to = peer->addr;
    size_t total = OFI_PAYLOAD_AT + l0 + l1;
    ssize_t frc;
    if (total <= O.inject_max && total <= OFI_PAYLOAD_AT + 1024) { /* no buffer held */
        _Alignas(16) unsigned char m[OFI_PAYLOAD_AT + 1024];
        pack(m, peer->send_seq, hdr, hdr_len, p0, l0, p1, l1);
        frc = fi_inject(O.ep, m, total, to);
    } else {
        if (!O.free_sends) lm_ofi_progress(); /* completions give buffers back */
        ofi_buf *b = O.free_sends;
        if (!b) {
            O.cnt.send_eagain++;
            return LM_EAGAIN;
        }
        pack(b->data, peer->send_seq, hdr, hdr_len, p0, l0, p1, l1);
        b->dst = dst;
        frc = fi_send(O.ep, b->data, total, O.mr_desc, to, &b->op.ctx);
        if (frc == 0) {
            O.free_sends = b->next;
            O.sends_in_flight++;
        }
    }
    if (frc == -FI_EAGAIN) {
        O.cnt.send_eagain++;
        lm_ofi_progress();
        return LM_EAGAIN;
    }
    if (frc) {
        set_error("send", (int)frc);
        return LM_EIO;
    }
    peer->send_seq++;
    O.cnt.am_sent++;
    O.cnt.am_bytes_sent += l0 + l1;
    return LM_OK;
}

static void deliver_now(int src, const unsigned char *m, size_t len)
{
    ofi_prefix pre;
    memcpy(&pre, m, sizeof pre);
    size_t plen = len - OFI_PAYLOAD_AT;
    O.cnt.am_received++;
    O.cnt.am_bytes_received += plen;
    lm_am_deliver(src, m + OFI_PREFIX, pre.hdr_len, m + OFI_PAYLOAD_AT, plen);
}

/* Deliver a received message in its sender's order: now if it is the next
 * one (then the stashed ones that follow it), else keep a copy until then. */
static void deliver(const unsigned char *m, size_t len)
{
    ofi_prefix pre;
    memcpy(&pre, m, sizeof pre);
    if (len < OFI_PAYLOAD_AT || pre.hdr_len == 0 || pre.hdr_len > LM_AM_HDR_MAX) {
        fprintf(stderr, "LeanMPI: dropped a malformed network message (%zu bytes)\n", len);
        return;
    }
    /* A sender of another job is named by the id this process gives it. */
    int src = pre.job == O.cfg.job ? pre.src : O.cfg.proc_id ? O.cfg.proc_id(pre.job, pre.src) : -1;
    ofi_peer *p = src >= 0 ? peer_of(src) : NULL;
    if (!p) lm_fatal("the network transport: no memory for the state of rank %d of job %d", (int)pre.src, pre.job);
    if (pre.seq != p->recv_seq) {
        ofi_stashed *s = lm_malloc(LM_MEM_TRANSPORT, sizeof *s + len);
        if (!s) lm_fatal("the network transport: no memory to reorder a message from rank %d", (int)pre.src);
        s->seq = pre.seq;
        s->len = len;
        memcpy(s->data, m, len);
        ofi_stashed **at = &p->stash;
        while (*at && (int32_t)((*at)->seq - pre.seq) < 0) at = &(*at)->next;
        s->next = *at;
        *at = s;
        return;
    }
    p->recv_seq++;
    deliver_now(src, m, len);
    /* The handler may have sent, never received: p and its stash are stable. */
    while (p->stash && p->stash->seq == p->recv_seq) {
        ofi_stashed *s = p->stash;
        p->stash = s->next;
        p->recv_seq++;
        deliver_now(src, s->data, s->len);
        lm_free(LM_MEM_TRANSPORT, s);
    }
}

/* ---- rendezvous by RMA read -------------------------------------------- */

static ofi_mr *register_mr(const void *buf, size_t len, uint64_t access)
{
    ofi_mr *m = lm_calloc(LM_MEM_TRANSPORT, 1, sizeof *m);
    if (!m) return NULL;
    uint64_t key = (O.info->domain_attr->mr_mode & FI_MR_PROV_KEY) ? 0 : ++O.next_key;
    int rc = fi_mr_reg(O.domain, buf, len, access, 0, key, 0, &m->mr, NULL);
    if (rc == 0 && (O.info->domain_attr->mr_mode & FI_MR_ENDPOINT)) {
        rc = fi_mr_bind(m->mr, &O.ep->fid, 0);
        if (rc == 0) rc = fi_mr_enable(m->mr);
        if (rc) fi_close(&m->mr->fid);
    }
    if (rc) {
        lm_free(LM_MEM_TRANSPORT, m);
        return NULL;
    }
    m->next = O.mrs;
    if (O.mrs) O.mrs->prev = m;
    O.mrs = m;
    return m;
}

static void unregister_mr(ofi_mr *m)
{
    if (!m) return;
    if (m->prev) m->prev->next = m->next;
    else O.mrs = m->next;
    if (m->next) m->next->prev = m->prev;
    fi_close(&m->mr->fid);
    lm_free(LM_MEM_TRANSPORT, m);
}

/* Whether the provider's registrations only name virtual addresses (the
 * socket providers): a peer's read then copies whatever is mapped there
 * when it reads, so a registration kept after its message cannot serve
 * stale pages, and one whose memory was unmapped is never read again (a
 * hit needs a buffer the program passes, hence mapped). Hardware
 * providers pin pages: a kept registration could outlive a free and a new
 * mapping at the same address, so exposures there are not cached (their
 * libfabric cache watches the memory itself). */
static int registration_names_addresses_only(void)
{
    static const char *const software[] = {"tcp", "net", "sockets", "udp", "shm"};
    const char *prov = O.info->fabric_attr->prov_name;
    size_t core = strcspn(prov, ";");
    for (size_t i = 0; i < sizeof software / sizeof software[0]; i++)
        if (strlen(software[i]) == core && !strncmp(prov, software[i], core)) return 1;
    return 0;
}

static void drop_cached(void *reg) { unregister_mr(reg); }

int lm_ofi_expose(const void *buf, size_t len, uint64_t *addr, uint64_t *rkey, void **handle)
{
    if (!O.on || !O.rma || len == 0 || len > O.info->ep_attr->max_msg_size) return LM_ENOTSUP;
    lm_mr_entry *e = lm_mr_cache_get(&O.mrc, buf, len, FI_REMOTE_READ);
    if (!e) {
        ofi_mr *m = register_mr(buf, len, FI_REMOTE_READ);
        if (!m) return LM_ENOTSUP;
        e = lm_mr_cache_add(&O.mrc, buf, len, FI_REMOTE_READ, m);
        if (!e) {
            unregister_mr(m);
            return LM_ENOTSUP;
        }
    }
    /* without FI_MR_VIRT_ADDR a read's address is an offset in the region */
    *addr = (O.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)buf
                                                             : (uint64_t)((uintptr_t)buf - e->base);
    *rkey = fi_mr_key(((ofi_mr *)e->reg)->mr);
    *handle = e;
    return LM_OK;
}

void lm_ofi_unexpose(void *handle)
{
    if (O.on) lm_mr_cache_put(&O.mrc, handle);
}

/* Memory of a one-sided window, readable and writable by every peer for
 * the window's lifetime: registered on its own, outside the cache of
 * send buffers (its handle is the registration). */
int lm_ofi_expose_rma(void *buf, size_t len, uint64_t *addr, uint64_t *rkey, void **handle)
{
    if (!O.on || !O.rma || len == 0 || len > O.info->ep_attr->max_msg_size) return LM_ENOTSUP;
    ofi_mr *m = register_mr(buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE);
    if (!m) return LM_ENOTSUP;
    *addr = (O.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)buf : 0;
    *rkey = fi_mr_key(m->mr);
    *handle = m;
    return LM_OK;
}

/* After finalize the registration was closed with the endpoint. */
void lm_ofi_unexpose_rma(void *handle)
{
    if (O.on) unregister_mr(handle);
}

/* One RMA operation of len bytes between local and (addr, rkey) of peer;
 * done(arg) runs from a later progress call once it is complete at the
 * peer too (a write is asked for delivery completion: the bytes are in the
 * peer's memory, not only on their way). */
static int rma_async(int kind, int peer_rank, void *local, uint64_t addr, uint64_t rkey, size_t len, lm_rget_done done,
                     void *arg)
{
    if (!O.on || !O.rma || len > O.info->ep_attr->max_msg_size) return LM_ENOTSUP;
    ofi_peer *peer;
    int prc = peer_to(peer_rank, &peer);
    if (prc == LM_EAGAIN && kind == OP_WRITE) return LM_EAGAIN; /* its address is not published yet */
    if (prc != LM_OK) return LM_ENOTSUP;                        /* a read's peer wrote to us: rare */
    ofi_rma *op = lm_calloc(LM_MEM_TRANSPORT, 1, sizeof *op);
    if (!op) return LM_ENOMEM;
    op->op.kind = kind;
    op->peer = peer_rank;
    op->done = done;
    op->arg = arg;
    void *desc = NULL;
    if (O.info->domain_attr->mr_mode & FI_MR_LOCAL) {
        op->local = register_mr(local, len, kind == OP_READ ? FI_READ : FI_WRITE);
        if (!op->local) {
            lm_free(LM_MEM_TRANSPORT, op);
            return LM_ENOTSUP;
        }
        desc = fi_mr_desc(op->local->mr);
    }
    struct iovec iov = {.iov_base = local, .iov_len = len};
    struct fi_rma_iov riov = {.addr = addr, .len = len, .key = rkey};
    struct fi_msg_rma msg = {.msg_iov = &iov,
                             .desc = &desc,
                             .iov_count = 1,
                             .addr = peer->addr,
                             .rma_iov = &riov,
                             .rma_iov_count = 1,
                             .context = &op->op.ctx};
    for (;;) {
        ssize_t rc = kind == OP_READ ? fi_readmsg(O.ep, &msg, FI_COMPLETION)
                                     : fi_writemsg(O.ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
        if (rc == 0) break;
        if (rc != -FI_EAGAIN) {
            unregister_mr(op->local);
            lm_free(LM_MEM_TRANSPORT, op);
            return LM_ENOTSUP;
        }
        fi_cq_read(O.cq, NULL, 0); /* let the provider move; completions stay queued */
    }
    if (kind == OP_READ) {
        O.cnt.rget_ops++;
        O.cnt.rget_bytes += len;
    } else {
        O.cnt.rput_ops++;
        O.cnt.rput_bytes += len;
    }
    return LM_OK;
}

int lm_ofi_rget_async(int src, void *local, uint64_t addr, uint64_t rkey, size_t len, lm_rget_done done, void *arg)
{
    return rma_async(OP_READ, src, local, addr, rkey, len, done, arg);
}

int lm_ofi_rput_async(int dst, const void *local, uint64_t addr, uint64_t rkey, size_t len, lm_rget_done done,
                      void *arg)
{
    return rma_async(OP_WRITE, dst, (void *)local, addr, rkey, len, done, arg);
}

static void rma_done(ofi_rma *op)
{
    lm_rget_done done = op->done;
    void *arg = op->arg;
    unregister_mr(op->local);
    lm_free(LM_MEM_TRANSPORT, op);
    done(arg);
}

/* A failed operation: a send that cannot reach its peer would leave the
 * protocol above waiting for ever, so the job ends with the cause. */
static void on_error(void)
{
    struct fi_cq_err_entry e = {0};
    if (fi_cq_readerr(O.cq, &e, 0) != 1) return;
    ofi_op *op = e.op_context;
    if (e.err == FI_ECANCELED || O.finalizing) {
        if (op && op->kind == OP_SEND) {
            ofi_buf *b = (ofi_buf *)op;
            b->next = O.free_sends;
            O.free_sends = b;
            O.sends_in_flight--;
        }
        return;
    }
    char peer[64] = "";
    if (op && op->kind == OP_SEND) snprintf(peer, sizeof peer, " to rank %d", ((ofi_buf *)op)->dst);
    if (op && op->kind == OP_READ) snprintf(peer, sizeof peer, " reading from rank %d", ((ofi_rma *)op)->peer);
    if (op && op->kind == OP_WRITE) snprintf(peer, sizeof peer, " writing to rank %d", ((ofi_rma *)op)->peer);
    lm_fatal("the network transport (%s) failed%s: %s", O.info->fabric_attr->prov_name, peer,
             fi_cq_strerror(O.cq, e.prov_errno, e.err_data, NULL, 0));
}

int lm_ofi_progress(void)
{
    if (!O.on) return 0;
    struct fi_cq_msg_entry ev[16];
    int handled = 0;
    for (;;) {
        ssize_t n = fi_cq_read(O.cq, ev, 16);
        if (n == -FI_EAGAIN) break;
        if (n == -FI_EAVAIL) {
            on_error();
            continue;
        }
        if (n < 0) break;
        for (ssize_t i = 0; i < n; i++) {
            ofi_op *op = ev[i].op_context;
            if (!op) continue;
            if (op->kind == OP_SEND) {
                ofi_buf *b = (ofi_buf *)op;
                b->next = O.free_sends;
                O.free_sends = b;
                O.sends_in_flight--;
            } else if (op->kind == OP_RECV) {
                ofi_buf *b = (ofi_buf *)op;
                deliver(b->data, ev[i].len);
                if (post_recv(b) != LM_OK) lm_fatal("the network transport: %s", O.error);
            } else {
                rma_done((ofi_rma *)op);
            }
        }
        handled += (int)n;
        if (n < 16) break;
    }
    return handled;
}

void lm_ofi_finalize(void)
{
    if (!O.on) return;
    /* Sends in flight hold buffers the provider still reads: wait for them,
     * boundedly (a peer that is gone cannot complete them). */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (O.sends_in_flight > 0 && ns_since(&t0) < 2000000000LL) lm_ofi_progress();
    O.finalizing = 1;
    close_all();
}

void lm_ofi_counters(lm_transport_counters *out)
{
    *out = O.cnt;
    out->mr_registrations = O.mrc.registrations;
    out->mr_cache_hits = O.mrc.hits;
}

#else /* built without libfabric */

int lm_ofi_init(const lm_ofi_config *cfg)
{
    (void)cfg;
    return LM_ENOTSUP;
}
void lm_ofi_finalize(void) {}
const char *lm_ofi_error(void)
{
    return "this LeanMPI was built without libfabric (install libfabric-dev and rebuild)";
}
const char *lm_ofi_provider(void) { return NULL; }
int lm_ofi_send(int dst, const void *hdr, size_t hdr_len, const void *p0, size_t l0, const void *p1, size_t l1)
{
    (void)dst, (void)hdr, (void)hdr_len, (void)p0, (void)l0, (void)p1, (void)l1;
    return LM_EPEER;
}
size_t lm_ofi_max_payload(void) { return OFI_BUF_EAGER - OFI_PAYLOAD_AT; }
int lm_ofi_progress(void) { return 0; }
int lm_ofi_expose(const void *buf, size_t len, uint64_t *addr, uint64_t *rkey, void **handle)
{
    (void)buf, (void)len, (void)addr, (void)rkey, (void)handle;
    return LM_ENOTSUP;
}
void lm_ofi_unexpose(void *handle) { (void)handle; }
int lm_ofi_expose_rma(void *buf, size_t len, uint64_t *addr, uint64_t *rkey, void **handle)
{
    (void)buf, (void)len, (void)addr, (void)rkey, (void)handle;
    return LM_ENOTSUP;
}
void lm_ofi_unexpose_rma(void *handle) { (void)handle; }
int lm_ofi_rput_async(int dst, const void *local, uint64_t addr, uint64_t rkey, size_t len, lm_rget_done done,
                      void *arg)
{
    (void)dst, (void)local, (void)addr, (void)rkey, (void)len, (void)done, (void)arg;
    return LM_ENOTSUP;
}
int lm_ofi_rget_async(int src, void *local, uint64_t addr, uint64_t rkey, size_t len, lm_rget_done done, void *arg)
{
    (void)src, (void)local, (void)addr, (void)rkey, (void)len, (void)done, (void)arg;
    return LM_ENOTSUP;
}
void lm_ofi_counters(lm_transport_counters *out) { memset(out, 0, sizeof *out); }

#endif
