#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, pipe2, memrchr */
#endif
#include "output_forward.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A line longer than this is forwarded in pieces rather than held forever. */
#define LINE_MAX_HELD (64 * 1024)
#define CHUNK (64 * 1024)

static int g_tag;
static int g_dst_dead[3];                 /* our stdout/stderr went away (EPIPE): drop output */
static const lm_outstream *g_mid_line[3]; /* stream whose unfinished line ends the output */

void lm_out_set_tagging(int on) { g_tag = on; }

void lm_out_init(lm_outstream *s, int fd, int dst, int rank)
{
    s->fd = fd;
    s->dst = dst;
    s->rank = rank;
    s->partial = NULL;
    s->partial_len = 0;
}

/* Blocking write of everything. Our stdout may have been left non-blocking
 * by whoever started us, so EAGAIN waits for room instead of losing data. */
static void write_all(int dst, const char *p, size_t n)
{
    while (n && !g_dst_dead[dst]) {
        ssize_t w = write(dst, p, n);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
        } else if (w < 0 && errno == EAGAIN) {
            struct pollfd pfd = {.fd = dst, .events = POLLOUT};
            poll(&pfd, 1, 100);
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else {
            g_dst_dead[dst] = 1;
        }
    }
}

/* Staging buffer: many short tagged lines become one write(). */
static char g_out[2 * CHUNK];
static size_t g_out_len;
static int g_out_dst;

static void stage_flush(void)
{
    if (g_out_len) write_all(g_out_dst, g_out, g_out_len);
    g_out_len = 0;
}

static void stage(int dst, const char *p, size_t n)
{
    if (dst != g_out_dst) stage_flush();
    g_out_dst = dst;
    if (g_out_len + n > sizeof g_out) {
        stage_flush();
        if (n > sizeof g_out) {
            write_all(dst, p, n);
            return;
        }
    }
    memcpy(g_out + g_out_len, p, n);
    g_out_len += n;
}

/* Emit text made of whole lines (or a final/forced piece without newline). */
static void emit(lm_outstream *s, const char *p, size_t n, int force_newline)
{
    if (!g_tag) {
        /* Byte for byte, except that another rank's text never continues a
         * line some rank left unfinished (its last words without newline):
         * that line is ended first. */
        if (!n) return;
        if (g_mid_line[s->dst] && g_mid_line[s->dst] != s) stage(s->dst, "\n", 1);
        stage(s->dst, p, n);
        g_mid_line[s->dst] = p[n - 1] == '\n' ? NULL : s;
        return;
    }
    char prefix[48];
    int plen = snprintf(prefix, sizeof prefix, "[1,%d]<%s>:", s->rank, s->dst == 1 ? "stdout" : "stderr");
    while (n) {
        const char *nl = memchr(p, '\n', n);
        size_t len = nl ? (size_t)(nl - p) + 1 : n;
        stage(s->dst, prefix, (size_t)plen);
        stage(s->dst, p, len);
        /* Tagged output stays one line per prefix even for an unfinished
         * last line, so the next rank's prefix starts on its own line. */
        if (!nl && force_newline) stage(s->dst, "\n", 1);
        p += len;
        n -= len;
    }
}

static void hold(lm_outstream *s, const char *p, size_t n)
{
    if (s->partial_len + n > LINE_MAX_HELD) {
        if (s->partial_len) {
            emit(s, s->partial, s->partial_len, 1);
            s->partial_len = 0;
        }
        if (n > LINE_MAX_HELD) {
            emit(s, p, n, 1);
            return;
        }
    }
    if (!s->partial) {
        s->partial = malloc(LINE_MAX_HELD);
        if (!s->partial) { /* cannot hold it: forward it as it is */
            emit(s, p, n, 1);
            return;
        }
    }
    memcpy(s->partial + s->partial_len, p, n);
    s->partial_len += n;
}

static void end_stream(lm_outstream *s)
{
    if (s->partial_len) emit(s, s->partial, s->partial_len, 1);
    free(s->partial);
    s->partial = NULL;
    s->partial_len = 0;
}

/* Forward the whole lines of chunk[0..r) and hold the rest. */
static void feed(lm_outstream *s, const char *chunk, size_t r)
{
    const char *last_nl = memrchr(chunk, '\n', r);
    if (!last_nl) {
        hold(s, chunk, r);
        return;
    }
    size_t whole = (size_t)(last_nl - chunk) + 1;
    if (s->partial_len) {
        /* Finish the held line first, in the same staged write. */
        const char *nl = memchr(chunk, '\n', whole);
        size_t first = (size_t)(nl - chunk) + 1;
        if (s->partial_len + first <= LINE_MAX_HELD) {
            memcpy(s->partial + s->partial_len, chunk, first);
            emit(s, s->partial, s->partial_len + first, 0);
        } else {
            emit(s, s->partial, s->partial_len, 1);
            emit(s, chunk, first, 0);
        }
        s->partial_len = 0;
        emit(s, chunk + first, whole - first, 0);
    } else {
        emit(s, chunk, whole, 0);
    }
    if (r > whole) hold(s, chunk + whole, r - whole);
}

void lm_out_feed(lm_outstream *s, const char *data, size_t len)
{
    if (len) {
        feed(s, data, len);
    } else {
        end_stream(s);
    }
    stage_flush();
}

int lm_out_pump(lm_outstream *s)
{
    static char chunk[CHUNK];
    if (s->fd < 0) return 0;
    /* Bounded number of reads so one chatty rank cannot starve the others
     * (or delay signal handling); poll brings us back here. */
    for (int round = 0; round < 4; round++) {
        ssize_t r = read(s->fd, chunk, sizeof chunk);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) break;
        if (r <= 0) {
            end_stream(s);
            close(s->fd);
            s->fd = -1;
            stage_flush();
            return 0;
        }
        feed(s, chunk, (size_t)r);
    }
    stage_flush();
    return 1;
}
