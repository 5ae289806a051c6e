/* PMI-2 and PMI-1 clients on the wire (MPICH's Hydra, srun --mpi=pmi2),
 * written against the protocol: no PMI library is loaded.
 *
 * The launcher passes a connected socket (PMI_FD) and the rank (PMI_RANK).
 * Both versions start with the same PMI-1 line, "cmd=init pmi_version=V
 * pmi_subversion=S"; the server's answer says which version it speaks.
 * PMI-1 then goes on in lines of "key=value" words ending in a newline;
 * PMI-2 in commands of "key=value;" pairs behind a 6-character decimal
 * length. One request is in flight at a time (a lock), and every request
 * gets exactly one answer, so no reader thread is needed.
 *
 * Placement comes from the job attribute PMI_process_mapping, a list of
 * (first node, nodes, ranks per node) blocks that the ranks fill in order,
 * repeating the list until every rank has a node ("(vector,(0,2,4))": ranks
 * 0-3 on node 0, 4-7 on node 1). It is kept as those few numbers and
 * evaluated, never expanded per rank.
 *
 * Values go as hex (the wires reserve ' ', '=', ';' and newlines); keys
 * carry the rank that put them ("lm<rank>.<key>"), the servers' stores
 * being one per job. LEANMPI_PMI_VERSION=1|2 asks for one version. */
#include "boot/boot_client.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define WIRE_MAX 4096

static struct {
    int fd;
    int version; /* 1 or 2 */
    char job[256];
    int rank;
    pthread_mutex_t lock;
    char buf[WIRE_MAX]; /* the last answer */
} P = {.fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- transport of one request and its answer ---- */

static int write_all(const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(P.fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_exact(char *p, size_t n)
{
    while (n) {
        ssize_t r = read(P.fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* A PMI-1 answer: one line, read a byte at a time so that nothing of a
 * later answer is consumed (answers are short and rare). */
static int read_line(void)
{
    size_t n = 0;
    for (;;) {
        if (n + 1 >= sizeof P.buf || read_exact(P.buf + n, 1) != 0) return -1;
        if (P.buf[n] == '\n') break;
        n++;
    }
    P.buf[n] = '\0';
    return 0;
}

static int read_v2(void)
{
    char len[7] = {0};
    if (read_exact(len, 6) != 0) return -1;
    char *end;
    long n = strtol(len, &end, 10);
    if (n <= 0 || n >= (long)sizeof P.buf) return -1;
    if (read_exact(P.buf, (size_t)n) != 0) return -1;
    P.buf[n] = '\0';
    return 0;
}

/* Send one command framed for its version (v1: a line, given without its
 * newline; v2: the pairs behind their length). */
static int send_cmd(int version, const char *cmd)
{
    char out[WIRE_MAX + 8];
    int n = version == 1 ? snprintf(out, sizeof out, "%s\n", cmd)
                         : snprintf(out, sizeof out, "%-6d%s", (int)strlen(cmd), cmd);
    if (n < 0 || n >= (int)sizeof out) return -1;
    return write_all(out, (size_t)n);
}

/* One command and its answer, read into P.buf. */
static int exchange(int version, const char *cmd)
{
    if (send_cmd(version, cmd) != 0) return -1;
    return version == 1 ? read_line() : read_v2();
}

/* The value of `key` in the answer, copied into out; 0, or -1 when absent.
 * v1 separates pairs by spaces, v2 by ';' (";;" stands for a ';' in a
 * value). */
static int field(const char *key, char *out, size_t cap)
{
    char sep = P.version == 2 ? ';' : ' ';
    size_t kl = strlen(key);
    const char *p = P.buf;
    while (*p) {
        while (*p == sep) p++;
        int match = !strncmp(p, key, kl) && p[kl] == '=';
        const char *v = strchr(p, '=');
        if (!v) return -1;
        v++;
        size_t o = 0;
        for (; *v && *v != '\n'; v++) {
            if (*v == sep) {
                if (sep != ';' || v[1] != ';') break;
                v++; /* ";;" */
            }
            if (match && o + 1 < cap) out[o++] = *v;
        }
        if (match) {
            out[o] = '\0';
            return 0;
        }
        p = v;
    }
    return -1;
}

static int field_int(const char *key, int *out)
{
    char v[32];
    if (field(key, v, sizeof v) != 0) return -1;
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v) return -1;
    *out = (int)x;
    return 0;
}

/* The answer's rc (0 when the server sends none) and its command name. */
static int answer_ok(const char *cmd)
{
    char c[64];
    int rc = 0;
    if (field("cmd", c, sizeof c) != 0 || strcmp(c, cmd) != 0) return 0;
    if (field_int("rc", &rc) == 0 && rc != 0) return 0;
    return 1;
}

/* ---- hex ---- */

void lm_boot_hex_encode(const void *value, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *v = value;
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[v[i] >> 4];
        out[2 * i + 1] = digits[v[i] & 15];
    }
    out[2 * len] = '\0';
}

static int nibble(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

long lm_boot_hex_decode(const char *hex, void *value, size_t cap)
{
    size_t n = strlen(hex);
    if (n % 2) return -1;
    unsigned char *v = value;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return -1;
        if (i < cap) v[i] = (unsigned char)(hi << 4 | lo);
    }
    return (long)(n / 2);
}

/* ---- the process mapping ---- */

/* "(vector,(0,2,4),(2,1,3))" -> the blocks of a VECTOR layout (the
 * layout's own meaning: node_segment.h); 0, or -1 when it does not parse
 * or needs more blocks than a layout holds. */
static int parse_mapping(const char *s, lm_layout *l)
{
    const char *p = strstr(s, "vector");
    if (!p) return -1;
    memset(l, 0, sizeof *l);
    l->kind = LM_LAYOUT_VECTOR;
    while ((p = strchr(p, '(')) != NULL) {
        lm_layout_block b;
        if (sscanf(p, "(%d,%d,%d)", &b.node, &b.nodes, &b.ppn) != 3) return -1;
        if (b.node < 0 || b.nodes <= 0 || b.ppn <= 0 || l->nblocks == LM_LAYOUT_BLOCKS_MAX) return -1;
        l->block[l->nblocks++] = b;
        if (b.node + b.nodes > l->node_count) l->node_count = b.node + b.nodes;
        p++;
    }
    return lm_layout_vector_valid(l) ? 0 : -1;
}

static int fill_placement(lm_boot_client_info *ci, const char *mapping, char *why, size_t cap)
{
    lm_layout l;
    if (parse_mapping(mapping, &l) != 0) {
        snprintf(why, cap, "the PMI server's process mapping '%s' is not a (vector,...) list of at most %d blocks",
                 mapping, LM_LAYOUT_BLOCKS_MAX);
        return -1;
    }
    l.world_size = ci->size;
    ci->node_count = l.node_count;
    ci->node_id = lm_layout_node_of(&l, ci->rank);
    ci->local_rank = lm_layout_local_rank_of(&l, ci->rank);
    ci->local_size = lm_layout_vector_ranks_on(&l, ci->node_id, ci->size);
    ci->first_local = lm_layout_world_rank_of(&l, ci->node_id, 0);
    ci->next_local = ci->local_size > 1 ? lm_layout_world_rank_of(&l, ci->node_id, 1) : -1;
    ci->nblocks = l.nblocks;
    memcpy(ci->block, l.block, sizeof l.block);
    return 0;
}

/* ---- the client ---- */

static void key_of(char *out, size_t cap, int rank, const char *key) { snprintf(out, cap, "lm%d.%s", rank, key); }

static int pmi_put(const char *key, const void *value, size_t len)
{
    char k[96], cmd[WIRE_MAX], hex[2 * 512 + 1];
    if (len > 512) return -EINVAL;
    key_of(k, sizeof k, P.rank, key);
    lm_boot_hex_encode(value, len, hex);
    if (P.version == 2) snprintf(cmd, sizeof cmd, "cmd=kvs-put;key=%s;value=%s;", k, hex);
    else snprintf(cmd, sizeof cmd, "cmd=put kvsname=%s key=%s value=%s", P.job, k, hex);
    pthread_mutex_lock(&P.lock);
    int ok = exchange(P.version, cmd) == 0 && answer_ok(P.version == 2 ? "kvs-put-response" : "put_result");
    pthread_mutex_unlock(&P.lock);
    return ok ? 0 : -EIO;
}

static int pmi_publish(void)
{
    pthread_mutex_lock(&P.lock);
    int ok = P.version == 2 ? exchange(2, "cmd=kvs-fence;") == 0 && answer_ok("kvs-fence-response")
                            : exchange(1, "cmd=barrier_in") == 0 && answer_ok("barrier_out");
    pthread_mutex_unlock(&P.lock);
    return ok ? 0 : -EIO;
}

static long pmi_get(int rank, const char *key, void *value, size_t cap)
{
    char k[96], cmd[WIRE_MAX], hex[WIRE_MAX], found[16] = "TRUE";
    key_of(k, sizeof k, rank, key);
    if (P.version == 2) snprintf(cmd, sizeof cmd, "cmd=kvs-get;jobid=%s;srcid=%d;key=%s;", P.job, rank, k);
    else snprintf(cmd, sizeof cmd, "cmd=get kvsname=%s key=%s", P.job, k);
    pthread_mutex_lock(&P.lock);
    long n = -EIO;
    if (exchange(P.version, cmd) == 0) {
        char c[64];
        int rc = 0;
        if (field("cmd", c, sizeof c) == 0 && !strcmp(c, P.version == 2 ? "kvs-get-response" : "get_result")) {
            field("found", found, sizeof found);
            field_int("rc", &rc);
            if (rc != 0 || strcasecmp(found, "TRUE") != 0 || field("value", hex, sizeof hex) != 0) n = -ENOENT;
            else if ((n = lm_boot_hex_decode(hex, value, cap)) < 0) n = -EIO;
        }
    }
    pthread_mutex_unlock(&P.lock);
    return n;
}

/* Words of a message that the wire would split are blanked. */
static void clean(char *dst, size_t cap, const char *msg)
{
    size_t i = 0;
    for (; msg && msg[i] && i + 1 < cap; i++) dst[i] = strchr(" =;\n\r", msg[i]) ? '_' : msg[i];
    dst[i] = '\0';
}

static void pmi_abort(int code, const char *message)
{
    /* Hydra (which sets MPI_LOCALNRANKS for its ranks) is not sent the
     * abort: its PMI-2 server has none ("Unrecognized PMI command"), and on
     * a PMI-1 abort it kills the job at once, sometimes before it forwarded
     * what the rank had just written to stderr (the reason). The exit that
     * follows ends the job there too, after the rank's output is drained. */
    if (getenv("MPI_LOCALNRANKS")) return;
    char cmd[WIRE_MAX], m[512];
    clean(m, sizeof m, message);
    if (P.version == 2) snprintf(cmd, sizeof cmd, "cmd=abort;isworld=TRUE;exitcode=%d;msg=%s;", code, m);
    else snprintf(cmd, sizeof cmd, "cmd=abort exitcode=%d", code);
    send_cmd(P.version, cmd); /* no answer comes */
}

static void pmi_finalize(void)
{
    pthread_mutex_lock(&P.lock);
    if (P.version == 2) exchange(2, "cmd=finalize;");
    else exchange(1, "cmd=finalize");
    pthread_mutex_unlock(&P.lock);
    close(P.fd);
    P.fd = -1;
}

static const lm_boot_client pmi2_client = {"pmi2", 0, pmi_put, pmi_publish, pmi_get, pmi_abort, pmi_finalize, NULL};
static const lm_boot_client pmi1_client = {"pmi1", 0, pmi_put, pmi_publish, pmi_get, pmi_abort, pmi_finalize, NULL};

static int env_num(const char *name, int *out)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s) return -1;
    long v = strtol(s, &end, 10);
    if (*end || v < 0 || v > 0x7fffffff) return -1;
    *out = (int)v;
    return 0;
}

static int start_v2(lm_boot_client_info *ci, char *mapping, size_t mcap, char *why, size_t cap)
{
    /* The job id is named where the launcher gives one: Slurm's server
     * refuses a fullinit without it, Hydra ignores it. */
    char cmd[192];
    const char *jobid = getenv("PMI_JOBID");
    if (jobid && *jobid && strlen(jobid) < 64 && !strpbrk(jobid, ";="))
        snprintf(cmd, sizeof cmd, "cmd=fullinit;pmijobid=%s;pmirank=%d;threaded=FALSE;", jobid, P.rank);
    else snprintf(cmd, sizeof cmd, "cmd=fullinit;pmirank=%d;threaded=FALSE;", P.rank);
    if (exchange(2, cmd) != 0 || !answer_ok("fullinit-response") || field_int("rank", &ci->rank) != 0 ||
        field_int("size", &ci->size) != 0) {
        snprintf(why, cap, "the PMI-2 server refused fullinit ('%.200s')", P.buf);
        return -1;
    }
    if (field_int("appnum", &ci->appnum) != 0) ci->appnum = 0;
    if (exchange(2, "cmd=job-getid;") != 0 || !answer_ok("job-getid-response") ||
        field("jobid", P.job, sizeof P.job) != 0) {
        snprintf(why, cap, "the PMI-2 server gave no job id ('%.200s')", P.buf);
        return -1;
    }
    char v[32];
    ci->universe_size = ci->size;
    if (exchange(2, "cmd=info-getjobattr;key=universeSize;") == 0 && answer_ok("info-getjobattr-response") &&
        field("value", v, sizeof v) == 0 && atoi(v) >= ci->size)
        ci->universe_size = atoi(v);
    if (exchange(2, "cmd=info-getjobattr;key=PMI_process_mapping;") != 0 || !answer_ok("info-getjobattr-response") ||
        field("value", mapping, mcap) != 0) {
        snprintf(why, cap, "the PMI-2 server has no PMI_process_mapping ('%.200s')", P.buf);
        return -1;
    }
    return 0;
}

static int start_v1(lm_boot_client_info *ci, char *mapping, size_t mcap, char *why, size_t cap)
{
    if (env_num("PMI_SIZE", &ci->size) != 0) {
        snprintf(why, cap, "PMI_SIZE is not set to a number");
        return -1;
    }
    ci->rank = P.rank;
    if (exchange(1, "cmd=get_my_kvsname") != 0 || !answer_ok("my_kvsname") ||
        field("kvsname", P.job, sizeof P.job) != 0) {
        snprintf(why, cap, "the PMI-1 server gave no kvsname ('%.200s')", P.buf);
        return -1;
    }
    if (exchange(1, "cmd=get_appnum") != 0 || !answer_ok("appnum") || field_int("appnum", &ci->appnum) != 0)
        ci->appnum = 0;
    ci->universe_size = ci->size;
    int u;
    if (exchange(1, "cmd=get_universe_size") == 0 && answer_ok("universe_size") && field_int("size", &u) == 0 &&
        u >= ci->size)
        ci->universe_size = u;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cmd=get kvsname=%s key=PMI_process_mapping", P.job);
    if (exchange(1, cmd) != 0 || !answer_ok("get_result") || field("value", mapping, mcap) != 0) {
        snprintf(why, cap, "the PMI-1 server has no PMI_process_mapping ('%.200s')", P.buf);
        return -1;
    }
    return 0;
}

int lm_boot_pmi_open(int forced, const lm_boot_client **client, lm_boot_client_info *info, char *why, size_t cap)
{
    int fd;
    if (env_num("PMI_FD", &fd) != 0 || env_num("PMI_RANK", &P.rank) != 0) {
        if (!forced) return 0;
        snprintf(why, cap,
                 "LEANMPI_BOOT=pmi, but PMI_FD and PMI_RANK are not set (no PMI launcher started this process)");
        return -1;
    }
    P.fd = fd;
    int want = 2;
    const char *v = getenv("LEANMPI_PMI_VERSION");
    if (v && *v) {
        if (strcmp(v, "1") && strcmp(v, "2")) {
            snprintf(why, cap, "LEANMPI_PMI_VERSION='%s': use 1 or 2", v);
            return -1;
        }
        want = atoi(v);
    }
    char cmd[96];
    snprintf(cmd, sizeof cmd, "cmd=init pmi_version=%d pmi_subversion=%d", want, want == 2 ? 0 : 1);
    int got = 0;
    if (exchange(1, cmd) != 0 || !answer_ok("response_to_init") || field_int("pmi_version", &got) != 0 ||
        (got != 1 && got != 2) || (v && *v && got != want)) {
        snprintf(why, cap, "the PMI server at PMI_FD=%d does not speak PMI-%d ('%.200s')", fd, want, P.buf);
        return -1;
    }
    P.version = got;
    char mapping[1024];
    memset(info, 0, sizeof *info);
    int rc = got == 2 ? start_v2(info, mapping, sizeof mapping, why, cap)
                      : start_v1(info, mapping, sizeof mapping, why, cap);
    if (rc != 0) return -1;
    if (info->rank != P.rank || info->size <= 0 || info->rank >= info->size) {
        snprintf(why, cap, "the PMI server says rank %d of %d, the environment rank %d", info->rank, info->size,
                 P.rank);
        return -1;
    }
    /* The launcher's environment and its server must describe one job:
     * a size that differs means this process is not part of the job the
     * server serves (a stale PMI_FD, a wrapper that rewrote PMI_SIZE). */
    int env_size;
    if (env_num("PMI_SIZE", &env_size) == 0 && env_size != info->size) {
        snprintf(why, cap, "the PMI server says the job has %d ranks, the environment (PMI_SIZE) %d", info->size,
                 env_size);
        return -1;
    }
    snprintf(info->job_id, sizeof info->job_id, "%.31s", P.job);
    if (fill_placement(info, mapping, why, cap) != 0) return -1;
    *client = got == 2 ? &pmi2_client : &pmi1_client;
    return 1;
}
