/* Reading a rankfile (rankfile.h). */
#include "rankfile.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANKFILE_LINE_CAP 1024

/* A line as read: rank, host name and slot text (or NULL), all pointing
 * into the line. */
typedef struct rank_line {
    long rank;
    char *host, *slot;
} rank_line;

/* "rank N=HOST [slot=CPUS]"; 1 for a rank line, 0 for a blank or comment
 * line, -1 with a message. */
static int parse_line(const char *prog, const char *where, char *line, rank_line *out)
{
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char *save = NULL, *word = strtok_r(line, " \t\r\n", &save);
    if (!word) return 0;
    if (strcmp(word, "rank") != 0) {
        fprintf(stderr, "%s: %s: expected 'rank N=host slot=CPUS', found '%s'\n", prog, where, word);
        return -1;
    }
    char *assign = strtok_r(NULL, " \t\r\n", &save), *eq = assign ? strchr(assign, '=') : NULL;
    if (!eq) {
        fprintf(stderr, "%s: %s: expected 'rank N=host' after 'rank'\n", prog, where);
        return -1;
    }
    *eq = '\0';
    char *end;
    errno = 0;
    out->rank = strtol(assign, &end, 10);
    if (!*assign || *end || errno || out->rank < 0 || out->rank >= INT_MAX) {
        fprintf(stderr, "%s: %s: '%s' is not a rank number\n", prog, where, assign);
        return -1;
    }
    out->host = eq + 1;
    if (out->host[0] == '+') {
        fprintf(stderr, "%s: %s: relative host '%s' is not supported; name the host\n", prog, where, out->host);
        return -1;
    }
    out->slot = NULL;
    for (char *w = strtok_r(NULL, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
        char *v = strncmp(w, "slot=", 5) == 0 ? w + 5 : strncmp(w, "slots=", 6) == 0 ? w + 6 : NULL;
        if (!v) {
            fprintf(stderr, "%s: %s: unknown word '%s' (use: rank N=host slot=CPUS)\n", prog, where, w);
            return -1;
        }
        if (!*v || strspn(v, "0123456789,-") != strlen(v)) {
            fprintf(stderr,
                    "%s: %s: slot '%s' is not a list of CPUs (numbers and ranges such as 0,2-3; "
                    "socket:core slots are not supported)\n",
                    prog, where, v);
            return -1;
        }
        out->slot = v;
    }
    return 1;
}

/* Grows rf to hold rank r (entries start unset: host -1). */
static int make_room(lm_rankfile *rf, int *cap, long r)
{
    if (r < *cap) return 0;
    int grown = *cap ? *cap : 16;
    while (grown <= r) grown = grown > INT_MAX / 2 ? INT_MAX : grown * 2;
    int32_t *host = realloc(rf->host, (size_t)grown * sizeof *host);
    if (host) rf->host = host;
    char **cpus = host ? realloc(rf->cpus, (size_t)grown * sizeof *cpus) : NULL;
    if (cpus) rf->cpus = cpus;
    if (!host || !cpus) return -1;
    for (int i = *cap; i < grown; i++) {
        rf->host[i] = -1;
        rf->cpus[i] = NULL;
    }
    *cap = grown;
    return 0;
}

/* The host of a line: in the given list (listed = 1), or appended. */
static int host_index(const char *prog, const char *where, lm_hostlist *hl, int listed, const char *name)
{
    int h = lm_hosts_find(hl, name);
    if (h >= 0) return h;
    if (listed) {
        fprintf(stderr, "%s: %s: host %s is not among the hosts of --host/--hostfile\n", prog, where, name);
        return -1;
    }
    if (lm_hosts_add(prog, where, hl, name, 0) != 0) return -1;
    return hl->n - 1;
}

static int read_lines(const char *prog, const char *path, FILE *f, lm_hostlist *hl, int listed, lm_rankfile *rf)
{
    char line[RANKFILE_LINE_CAP], where[64 + PATH_MAX];
    int lineno = 0, cap = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        snprintf(where, sizeof where, "%s line %d", path, lineno);
        if (!strchr(line, '\n') && !feof(f)) {
            fprintf(stderr, "%s: %s: line longer than %d characters\n", prog, where, RANKFILE_LINE_CAP - 2);
            return -1;
        }
        rank_line rl;
        int got = parse_line(prog, where, line, &rl);
        if (got < 0) return -1;
        if (got == 0) continue;
        int h = host_index(prog, where, hl, listed, rl.host);
        if (h < 0) return -1;
        if (make_room(rf, &cap, rl.rank) != 0) {
            fprintf(stderr, "%s: out of memory reading %s\n", prog, path);
            return -1;
        }
        if (rf->host[rl.rank] >= 0) {
            fprintf(stderr, "%s: %s: rank %ld is placed twice\n", prog, where, rl.rank);
            return -1;
        }
        rf->host[rl.rank] = h;
        if (rl.slot && !(rf->cpus[rl.rank] = strdup(rl.slot))) {
            fprintf(stderr, "%s: out of memory reading %s\n", prog, path);
            return -1;
        }
        if (rl.rank >= rf->n) rf->n = (int)rl.rank + 1;
    }
    if (ferror(f)) {
        fprintf(stderr, "%s: cannot read the rankfile %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    if (rf->n == 0) {
        fprintf(stderr, "%s: the rankfile %s places no rank\n", prog, path);
        return -1;
    }
    for (int r = 0; r < rf->n; r++)
        if (rf->host[r] < 0) {
            fprintf(stderr, "%s: the rankfile %s places ranks up to %d but not rank %d\n", prog, path, rf->n - 1, r);
            return -1;
        }
    return 0;
}

/* Each host's ranks, within its slots unless oversubscribe; hosts without
 * ranks leave the list (indices in rf->host follow). */
static int count_and_trim(const char *prog, const char *path, lm_hostlist *hl, int listed, int oversubscribe,
                          lm_rankfile *rf)
{
    for (int h = 0; h < hl->n; h++) hl->h[h].nranks = 0;
    for (int r = 0; r < rf->n; r++) hl->h[rf->host[r]].nranks++;
    int *renumber = malloc(sizeof *renumber * (size_t)hl->n), kept = 0;
    if (!renumber) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return -1;
    }
    for (int h = 0; h < hl->n; h++) {
        lm_host *x = &hl->h[h];
        if (!listed) x->slots = x->nranks;
        if (x->nranks > x->slots && !oversubscribe) {
            fprintf(stderr, "%s: the rankfile %s puts %d ranks on host %s, which has %d slots; allow --oversubscribe\n",
                    prog, path, x->nranks, x->name, x->slots);
            free(renumber);
            return -1;
        }
        if (x->nranks == 0) {
            free(x->name);
            renumber[h] = -1;
        } else {
            hl->h[kept] = *x;
            renumber[h] = kept++;
        }
    }
    hl->n = kept;
    for (int r = 0; r < rf->n; r++) rf->host[r] = renumber[rf->host[r]];
    free(renumber);
    return 0;
}

int lm_rankfile_read(const char *prog, const char *path, lm_hostlist *hl, int oversubscribe, lm_rankfile *rf)
{
    *rf = (lm_rankfile){0};
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "%s: cannot read the rankfile %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    int listed = hl->n > 0;
    int rc = read_lines(prog, path, f, hl, listed, rf);
    fclose(f);
    if (rc == 0) rc = count_and_trim(prog, path, hl, listed, oversubscribe, rf);
    if (rc != 0) lm_rankfile_free(rf);
    return rc;
}

void lm_rankfile_free(lm_rankfile *rf)
{
    if (rf->cpus)
        for (int r = 0; r < rf->n; r++) free(rf->cpus[r]);
    free(rf->cpus);
    free(rf->host);
    *rf = (lm_rankfile){0};
}
