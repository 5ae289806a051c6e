/* Framed messages over pipes between mpirun and its launch agents. */
#include "agent_link.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void lm_link_init(lm_link *l, int rfd, int wfd)
{
    memset(l, 0, sizeof *l);
    l->rfd = rfd;
    l->wfd = wfd;
}

static int reserve(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 4096;
    while (n < need) n *= 2;
    char *p = realloc(*buf, n);
    if (!p) return -1;
    *buf = p;
    *cap = n;
    return 0;
}

size_t lm_link_queued(const lm_link *l) { return l->out_len - l->out_off; }

int lm_link_flush(lm_link *l)
{
    while (l->wfd >= 0 && l->out_off < l->out_len) {
        ssize_t w = write(l->wfd, l->out + l->out_off, l->out_len - l->out_off);
        if (w > 0) {
            l->out_off += (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && errno == EAGAIN) {
            return 0;
        } else {
            close(l->wfd); /* the reader is gone: nothing queued can arrive */
            l->wfd = -1;
        }
    }
    if (l->wfd < 0) return -1;
    l->out_off = l->out_len = 0;
    return 0;
}

int lm_link_send(lm_link *l, int type, int node, int rank, int value, const void *payload, size_t len)
{
    if (l->wfd < 0 || len > LM_FRAME_PAYLOAD_MAX) return -1;
    lm_frame f = {.len = (uint32_t)len, .type = type, .node = node, .rank = rank, .value = value};
    if (l->out_off && l->out_off == l->out_len) l->out_off = l->out_len = 0;
    if (reserve(&l->out, &l->out_cap, l->out_len + sizeof f + len)) return -1;
    memcpy(l->out + l->out_len, &f, sizeof f);
    if (len) memcpy(l->out + l->out_len + sizeof f, payload, len);
    l->out_len += sizeof f + len;
    return lm_link_flush(l);
}

int lm_link_read(lm_link *l)
{
    if (l->rfd < 0) return -1;
    if (l->in_off) { /* drop the frames handed out: one move per read, not per frame */
        memmove(l->in, l->in + l->in_off, l->in_len - l->in_off);
        l->in_len -= l->in_off;
        l->in_off = 0;
    }
    for (int round = 0; round < 4; round++) {
        if (reserve(&l->in, &l->in_cap, l->in_len + 65536)) return -1;
        ssize_t r = read(l->rfd, l->in + l->in_len, l->in_cap - l->in_len);
        if (r > 0) {
            l->in_len += (size_t)r;
            continue;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) return 0;
        close(l->rfd);
        l->rfd = -1;
        return -1;
    }
    return 0;
}

int lm_link_next(lm_link *l, lm_frame *f, const char **payload)
{
    size_t avail = l->in_len - l->in_off;
    if (avail < sizeof *f) return 0;
    memcpy(f, l->in + l->in_off, sizeof *f);
    if (f->len > LM_FRAME_PAYLOAD_MAX) { /* not one of ours: treat as a broken link */
        l->in_len = l->in_off = 0;
        if (l->rfd >= 0) close(l->rfd);
        l->rfd = -1;
        return 0;
    }
    if (avail < sizeof *f + f->len) return 0;
    *payload = l->in + l->in_off + sizeof *f; /* valid until the next lm_link_read */
    l->in_off += sizeof *f + f->len;
    l->frames_in++;
    return 1;
}

void lm_link_close(lm_link *l)
{
    if (l->rfd >= 0) close(l->rfd);
    if (l->wfd >= 0 && l->wfd != l->rfd) close(l->wfd);
    free(l->in);
    free(l->out);
    memset(l, 0, sizeof *l);
    l->rfd = l->wfd = -1;
}

static void wbuf_put(lm_wbuf *b, const void *p, size_t n)
{
    if (b->failed || reserve(&b->p, &b->cap, b->len + n)) {
        b->failed = 1;
        return;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void lm_wbuf_int(lm_wbuf *b, int64_t v) { wbuf_put(b, &v, sizeof v); }

void lm_wbuf_str(lm_wbuf *b, const char *s) { wbuf_put(b, s, strlen(s) + 1); }

int64_t lm_rbuf_int(lm_rbuf *b)
{
    int64_t v = 0;
    if (b->failed || b->len - b->off < sizeof v) {
        b->failed = 1;
        return 0;
    }
    memcpy(&v, b->p + b->off, sizeof v);
    b->off += sizeof v;
    return v;
}

const char *lm_rbuf_str(lm_rbuf *b)
{
    const char *end = b->failed ? NULL : memchr(b->p + b->off, '\0', b->len - b->off);
    if (!end) {
        b->failed = 1;
        return "";
    }
    const char *s = b->p + b->off;
    b->off = (size_t)(end - b->p) + 1;
    return s;
}
