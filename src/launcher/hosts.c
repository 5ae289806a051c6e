/* Host lists and rank placement for jobs across nodes. */
#include "hosts.h"
#include "boot/node_segment.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HOST_NAME_CAP 256

static int parse_slots(const char *prog, const char *where, const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v <= 0 || v > INT_MAX) {
        fprintf(stderr, "%s: %s: '%s' is not a positive number of slots\n", prog, where, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int valid_name(const char *name)
{
    if (!*name || strlen(name) >= HOST_NAME_CAP) return 0;
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("-._", *p)) return 0;
    return 1;
}

int lm_hosts_add(const char *prog, const char *where, lm_hostlist *hl, const char *name, int slots)
{
    if (!valid_name(name)) {
        fprintf(stderr, "%s: %s: '%s' is not a host name\n", prog, where, name);
        return -1;
    }
    for (int i = 0; i < hl->n; i++)
        if (strcmp(hl->h[i].name, name) == 0) {
            fprintf(stderr, "%s: %s: host %s is listed twice (give it one entry with all its slots)\n", prog, where,
                    name);
            return -1;
        }
    lm_host *grown = realloc(hl->h, (size_t)(hl->n + 1) * sizeof *grown);
    if (!grown) return -1;
    hl->h = grown;
    char *copy = strdup(name);
    if (!copy) return -1;
    hl->h[hl->n++] = (lm_host){.name = copy, .slots = slots, .nranks = 0};
    return 0;
}

/* "name" or "name:N" */
static int add_entry(const char *prog, const char *where, lm_hostlist *hl, char *entry)
{
    int slots = 1;
    char *colon = strchr(entry, ':');
    if (colon) {
        *colon = '\0';
        if (parse_slots(prog, where, colon + 1, &slots)) return -1;
    }
    return lm_hosts_add(prog, where, hl, entry, slots);
}

int lm_hosts_parse_list(const char *prog, const char *spec, lm_hostlist *hl)
{
    char *copy = strdup(spec);
    if (!copy) return -1;
    int rc = 0;
    char *save = NULL;
    int any = 0;
    for (char *e = strtok_r(copy, ",", &save); e && rc == 0; e = strtok_r(NULL, ",", &save)) {
        rc = add_entry(prog, "--host", hl, e);
        any = 1;
    }
    if (rc == 0 && !any) {
        fprintf(stderr, "%s: --host needs at least one host name\n", prog);
        rc = -1;
    }
    free(copy);
    return rc;
}

int lm_hosts_parse_file(const char *prog, const char *path, lm_hostlist *hl)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "%s: cannot read the host file %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    char line[1024], where[64 + PATH_MAX];
    int lineno = 0, rc = 0, before = hl->n;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        snprintf(where, sizeof where, "%s line %d", path, lineno);
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *save = NULL, *name = strtok_r(line, " \t\r\n", &save);
        if (!name) continue;
        int slots = 1;
        char *colon = strchr(name, ':');
        if (colon) {
            *colon = '\0';
            rc = parse_slots(prog, where, colon + 1, &slots);
        }
        for (char *w = strtok_r(NULL, " \t\r\n", &save); w && rc == 0; w = strtok_r(NULL, " \t\r\n", &save)) {
            if (strncmp(w, "slots=", 6) == 0) {
                rc = parse_slots(prog, where, w + 6, &slots);
            } else if (strncmp(w, "max_slots=", 10) == 0) {
                int ignored;
                rc = parse_slots(prog, where, w + 10, &ignored);
            } else {
                fprintf(stderr, "%s: %s: unknown word '%s' (use: name slots=N)\n", prog, where, w);
                rc = -1;
            }
        }
        if (rc == 0) rc = lm_hosts_add(prog, where, hl, name, slots);
    }
    fclose(f);
    if (rc == 0 && hl->n == before) {
        fprintf(stderr, "%s: the host file %s names no host\n", prog, path);
        rc = -1;
    }
    return rc;
}

int lm_hosts_total_slots(const lm_hostlist *hl)
{
    long s = 0;
    for (int i = 0; i < hl->n; i++) s += hl->h[i].slots;
    return s > INT_MAX ? INT_MAX : (int)s;
}

int lm_hosts_place(const char *prog, lm_hostlist *hl, int *nranks, int oversubscribe, int *ranks_per_node)
{
    int slots = lm_hosts_total_slots(hl);
    int n = *nranks ? *nranks : slots;
    if (n > slots && !oversubscribe) {
        fprintf(stderr,
                "%s: %d ranks but the hosts have only %d slots; give more hosts or slots, or allow "
                "--oversubscribe\n",
                prog, n, slots);
        return -1;
    }
    int left = n;
    if (n > slots) { /* oversubscribed: spread evenly */
        int per = (n + hl->n - 1) / hl->n;
        for (int i = 0; i < hl->n; i++) {
            hl->h[i].nranks = left < per ? left : per;
            left -= hl->h[i].nranks;
        }
    } else {
        for (int i = 0; i < hl->n; i++) {
            hl->h[i].nranks = left < hl->h[i].slots ? left : hl->h[i].slots;
            left -= hl->h[i].nranks;
        }
    }
    int used = 0;
    while (used < hl->n && hl->h[used].nranks > 0) used++;
    for (int i = used; i < hl->n; i++) free(hl->h[i].name);
    hl->n = used;
    /* the layout must hold the placement: runs of hosts with equal counts */
    int *counts = malloc(sizeof *counts * (size_t)used);
    if (!counts) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return -1;
    }
    for (int i = 0; i < used; i++) counts[i] = hl->h[i].nranks;
    lm_layout l;
    int fits = lm_layout_from_counts(&l, counts, used) == 0;
    free(counts);
    if (!fits) {
        fprintf(stderr,
                "%s: filling the slots in order gives more than %d runs of hosts with the same number of ranks; "
                "this version places ranks in at most %d such runs: give neighbouring hosts equal slots\n",
                prog, LM_LAYOUT_BLOCKS_MAX, LM_LAYOUT_BLOCKS_MAX);
        return -1;
    }
    *nranks = n;
    *ranks_per_node = hl->h[0].nranks;
    return 0;
}

int lm_host_is_local(const char *name)
{
    char me[HOST_NAME_CAP];
    if (strcmp(name, "localhost") == 0) return 1;
    if (gethostname(me, sizeof me) != 0) return 0;
    me[sizeof me - 1] = '\0';
    if (strcmp(name, me) == 0) return 1;
    /* "node1" names "node1.example.org" and the other way round */
    size_t a = strlen(name), b = strlen(me);
    if (a < b && me[a] == '.' && strncmp(name, me, a) == 0) return 1;
    if (b < a && name[b] == '.' && strncmp(name, me, b) == 0) return 1;
    return 0;
}

void lm_hosts_free(lm_hostlist *hl)
{
    for (int i = 0; i < hl->n; i++) free(hl->h[i].name);
    free(hl->h);
    hl->h = NULL;
    hl->n = 0;
}

int lm_hosts_find(const lm_hostlist *hl, const char *name)
{
    for (int i = 0; i < hl->n; i++)
        if (strcmp(hl->h[i].name, name) == 0) return i;
    return -1;
}
